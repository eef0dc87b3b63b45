"""SHD501 padded-unpadded-width-mismatch (seed 001): one libcst analysis per
function (``PaddedUnpaddedWidthMismatch``), gated by the text its findings
need."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import libcst as cst

from linter.syntax import call_name, child_nodes, dotted, int_literal, keyword_args, last_name, name_matches, positional_args, walk_fast
from checks.padded_unpadded_width_mismatch.widths import (
    Tensor,
    Width,
    along_width,
    ceil_numerator,
    counterexample,
    describe,
    flat,
    forget,
    is_zero,
    leaf_set,
    pattern_stems,
    plain_origin,
    same_value,
    shape_read,
    slice_has_lower,
    stem_set,
)
from checks.padded_unpadded_width_mismatch.across_classes import (
    component_calls,
    handoffs,
    input_width_outputs,
    input_width_source,
)
from checks.padded_unpadded_width_mismatch.class_helpers import helpers_of
from checks.padded_unpadded_width_mismatch.declared_widths import UnpaddedOutputs
from checks.padded_unpadded_width_mismatch.needles import CDIV_NAMES, declared
from checks.facts.classes import ClassIndex
from linter.needles import Needles
from linter.rule import Option, Rule, RuleContext
from linter.syntax import function_params
from linter.types import Note, Severity, Span

DEFAULT_PADDED_NAMES = ("*_padded", "padded_*", "*_padded_*")
# Names that say "not padded" although they contain the word.
_NOT_PADDED = ("*unpadded*", "*non_padded*", "*not_padded*", "*nonpadded*")
DEFAULT_ROUNDING = (
    "round_up",
    "_round_up",
    "round_up_to_multiple",
    "align",
    "align_up",
    "_align",
    "ceil_to",
    "round_to_multiple",
    "next_multiple_of",
)
_CDIV = frozenset(CDIV_NAMES)

# Allocators and where their shape is. `*_like` copies the width of its argument.
_ALLOC = frozenset({"empty", "zeros", "ones", "full", "empty_strided", "randn", "rand"})
_ALLOC_METHOD = frozenset({"new_empty", "new_zeros", "new_ones", "new_full"})
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like"})
_UNINIT = frozenset({"empty", "new_empty", "empty_strided", "empty_like"})

# In-place elementwise methods: both operands must have the same width (or
# broadcast), so a padded buffer meeting an unpadded tensor as a whole fails.
_INPLACE_STRICT = frozenset(
    {"copy_", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_"}
)
# Augmented assignments that combine two tensors elementwise (libcst class names).
_AUG_OPS = frozenset({"AddAssign", "SubtractAssign", "MultiplyAssign", "DivideAssign"})

# Consumers that read every element of an operand along its width: a garbage
# tail in an `empty` buffer leaks into every output.
_GEMM = frozenset({"matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "linear", "mv",
                   "tensordot", "inner"})
_REDUCE = frozenset({"sum", "mean", "norm", "amax", "amin", "max", "min", "prod",
                     "logsumexp", "softmax", "log_softmax", "var", "std"})
_ZEROING = frozenset({"zero_", "fill_", "zeros_"})


@dataclass
class _Scope:
    """A class or function being visited, and what the visit saw of a
    function's own calls (not of nested definitions'): what decides whether
    the analyses can find anything in it, before they walk it."""

    node: cst.ClassDef | cst.FunctionDef
    # an allocation the rule may track
    allocates: bool = False
    # a rounding or ceiling division call, or a floor (``(X + n - 1) // n * n``)
    rounds: bool = False
    # an allocation with a padded name in its shape
    padded_name: bool = False
    # an allocation at an input parameter's width (``input_width_source``)
    input_width: bool = False
    _params: set[str] | None = None

    @property
    def padded(self) -> bool:
        """Whether a buffer at a padded width may be allocated: a padded
        width is a padded name in an allocation's shape, or comes from a
        rounding (inline or bound to a name); either way, with an allocation."""
        return self.allocates and (self.rounds or self.padded_name)

    def params(self) -> set[str]:
        if self._params is None:
            assert isinstance(self.node, cst.FunctionDef)
            self._params = set(function_params(self.node)) - {"self", "cls"}
        return self._params


class PaddedUnpaddedWidthMismatch(Rule):
    """## What it finds
    In one function, a buffer sized by a padded width — `round_up(X, n)`,
    `align(X, n)`, `cdiv(X, n) * n`, `(X + n - 1) // n * n`, or a name such as
    `hidden_size_padded` — exchanging data as a whole with a tensor of the
    unpadded width `X`: `dst.copy_(src)`, `out=dst`, `dst.add_(src)`, `dst += src`,
    with no slice to `X` on either side. Also an `empty`-allocated padded buffer
    that is written only up to `X` and then handed whole to a GEMM or a
    reduction, with its tail never zeroed and the result never sliced back.

    The unpadded side is known when it is allocated with `X` in the same
    position of its shape, or when `X` was read from its shape
    (`X = y.shape[-1]`, `m, X = y.shape`).

    Across functions and classes: a method that allocates its output at the
    width of an input parameter (`torch.empty_like(hidden_states)`,
    `x.new_empty(x.shape)`, `(*x.shape[:-1], x.size(-1))`) and hands it,
    together with a result the class computed through one of its parts
    (`fused_out = self._fused_experts(...)`, reaching
    `self.fused_experts.workspace_shapes(...)` through the class's own
    helpers), to one step (`self._finalize(output, fused_out)`,
    `output.copy_(fused_out)`), where some implementation of that part's
    declared type (the `__init__` parameter's annotation, or an annotated
    attribute) declares its output at an unpadded width in the method reached
    (`return (M, self.hidden_dim_unpadded)`, `return self.hidden_dim_unpadded`).
    The finding is at the allocation; a note points at the declaration.

    ## Why it breaks
    Quantised MoE kernels pad the hidden width (2880 → 3072 for a multiple of
    256). When one side of a copy is padded and the other is not, the copy fails
    with `The size of tensor a (3072) must match the size of tensor b (2880)`,
    typically only on the expert-parallel path whose prepare/finalize step owns
    the output buffer (vLLM 0.21-0.32: gpt-oss MXFP4 with
    `--enable-expert-parallel`, the TRT-LLM MXFP4 experts writing 2880 wide
    into an output sized from the 3072-wide padded input). An uninitialised tail that reaches a GEMM or a reduction
    silently mixes garbage (possibly NaN) into every output.

    ## Example
    See the flagged and correct corpus examples below.

    ## Fix
    Across classes, size the output from the width the part declares for its
    output (ask it: `self.fused_experts.output_hidden_dim(x.size(-1))`), not
    from the input's shape. Otherwise write through a slice
    (`out[:, :hidden].copy_(y)`), slice the result back
    (`out = out[:, :hidden]`), allocate the padded buffer with `zeros` and write
    into a slice, zero the tail before the GEMM, or pass the padded width to the
    callee that fills the buffer.

    ## Options
    - `padded-names` (list of globs, case-insensitive, last name component):
      names of padded widths. Default: `*_padded`, `padded_*`, `*_padded_*`.
      Names containing `unpadded`, `non_padded` or `not_padded` never count.
    - `rounding-functions` (list of names, last component): functions whose
      result rounds their first argument up to a multiple of the second.
      Default: `round_up`, `_round_up`, `round_up_to_multiple`, `align`,
      `align_up`, `_align`, `ceil_to`, `round_to_multiple`, `next_multiple_of`.
    Both options are honoured everywhere, the text prefilter included: a
    file is analysed only if its text calls `torch.<name>`, a bare `<name>`
    or a `new_*` method, with `<name>` one of `empty`, `empty_strided`,
    `zeros`, `ones`, `full`, `rand`, `randn`, or a `*_like` call of `empty`,
    `zeros`, `ones`, `full`, and holds an exchange or consumer token (`copy_`,
    `add_`, `sub_`, `mul_`, `div_`, `lerp_`, `+=`, `-=`, `*=`, `/=`, `out`,
    `]`) or `self`; and in it a function or method only if its text holds
    one of those words, one of those tokens, and either a padded width's
    spelling (a `padded-names` glob's literal part in any case, a
    `rounding-functions` name, `cdiv`, `ceil_div`, `ceildiv`, `div_ceil`,
    `div_round_up`, or `) // n *`) or an input's width (`*_like`,
    `x.shape[-1]`, `x.size(-1)`, `x.size()`, `x.shape` closing a shape). A
    glob with no literal part drops the padded-width condition.

    Left out on purpose: a padded buffer a helper method allocates and
    returns (the helper's rounding is not followed), a part whose type is
    not declared, `out=` on custom ops (a kernel may fill a padded output on
    purpose), and tensors whose width the function cannot see.
    """

    code = "SHD501"
    name = "padded-unpadded-width-mismatch"
    summary = "A padded-width buffer exchanges data whole with an unpadded tensor"
    severity = Severity.WARNING
    tags = ("correctness", "shapes")
    options = {
        "padded-names": Option(DEFAULT_PADDED_NAMES, "list[str]", "Globs naming padded widths."),
        "rounding-functions": Option(
            DEFAULT_ROUNDING, "list[str]", "Functions that round a width up to a multiple."
        ),
    }
    facts = ("classes", "unpadded_output_widths", "component_types")
    # every finding lies in one function body and needs there the text
    # ``needles.declared`` asks for; what the analysis reads besides is the
    # names of the classes holding it (their headers are kept), the project
    # facts and, across classes, the calls of the class's own methods, which
    # it reads from the file's ``ast`` (``class_helpers``): no other
    # definition need be parsed
    needles, definition_needles = declared({k: o.default for k, o in options.items()})
    follows_definitions = False

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        return declared(options)

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._padded_names: tuple[str, ...] = tuple(self.opts["padded-names"])
        self._rounding: frozenset[str] = frozenset(self.opts["rounding-functions"])
        self._stack: list[_Scope] = []

    # -- widths ----------------------------------------------------------------------
    def _is_padded_name(self, name: str | None) -> bool:
        return (
            name is not None
            and name_matches(name, self._padded_names)
            and not name_matches(name, _NOT_PADDED)
        )

    def _stems(self, name: str) -> frozenset[str]:
        return pattern_stems(name, self._padded_names)

    def _rounded_base(self, e: cst.CSTNode) -> tuple[cst.BaseExpression, int | None] | None:
        """(X, n) when ``e`` rounds X up to a multiple of n (n when a literal)."""
        while isinstance(e, cst.Call) and last_name(call_name(e)) in {"int"} and e.args:
            e = e.args[0].value
        if isinstance(e, cst.Call):
            leaf = last_name(call_name(e))
            args = positional_args(e)
            if leaf in self._rounding and len(args) >= 2:
                return args[0], int_literal(args[1])
            return None
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                a = a
                # cdiv(X, n) * n
                if isinstance(a, cst.Call) and last_name(call_name(a)) in _CDIV:
                    args = positional_args(a)
                    if len(args) == 2 and same_value(args[1], b):
                        return args[0], int_literal(b)
                # (X + n - 1) // n * n
                if isinstance(a, cst.BinaryOperation) and isinstance(a.operator, cst.FloorDivide):
                    if same_value(a.right, b):
                        x = ceil_numerator(a.left, b)
                        if x is not None:
                            return x, int_literal(b)
        return None

    def _width_of(self, e: cst.CSTNode, widths: dict[str, Width]) -> Width | None:
        e = e
        key = dotted(e)
        if key is not None and key in widths:
            return widths[key]
        rb = self._rounded_base(e)
        if rb is not None:
            base, mult = rb
            b = self.ctx.code_for(base)
            return Width(
                True, self.ctx.code_for(e), f"rounded up from `{b}`", stem_set(base), mult
            )
        if key is not None and self._is_padded_name(key):
            return Width(True, key, f"the padded name `{key}`", self._stems(key))
        return None

    # -- the walk ----------------------------------------------------------------------
    # The traversal only notes which functions allocate a tensor at all; the
    # analysis runs on those alone, when the function is left.
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.append(_Scope(node))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append(_Scope(node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        scope = self._stack.pop()
        if scope.padded:
            self._analyse(scope.node)  # (a padded width implies an allocation)
        if scope.input_width and self._stack and isinstance(self._stack[-1].node, cst.ClassDef):
            self._across_classes(scope.node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._stack or isinstance(self._stack[-1].node, cst.ClassDef):
            return
        scope = self._stack[-1]
        f = node.func
        leaf = f.attr.value if isinstance(f, cst.Attribute) else getattr(f, "value", None)
        if leaf in self._rounding or leaf in _CDIV:
            scope.rounds = True
        if leaf in _ALLOC or leaf in _ALLOC_METHOD or leaf in _LIKE:
            scope.allocates = True
            if not scope.padded_name and any(
                self._is_padded_name(dotted(dim)) for dim in self._shape_args(node, leaf)
            ):
                scope.padded_name = True
            if not scope.input_width and input_width_source(node, scope.params()) is not None:
                scope.input_width = True

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._stack and isinstance(node.operator, cst.FloorDivide):
            self._stack[-1].rounds = True

    def _analyse(self, node: cst.FunctionDef) -> None:
        widths: dict[str, Width] = {}
        tensors: dict[str, Tensor] = {}
        # name → (tensor, dim) whose shape the name was read from
        shape_src: dict[str, tuple[str, int]] = {}
        subscripted: set[str] = set()
        pending: list[tuple[cst.CSTNode, Tensor, str, str | None]] = []
        # Pre-order over the function (nested definitions are analysed on
        # their own), remembering each node's parent.
        nodes: list[cst.CSTNode] = []
        parent: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [node.body]
        while stack:
            n = stack.pop()
            nodes.append(n)
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(n, cst.Subscript):
                k = dotted(n.value)
                if k:
                    subscripted.add(k)
            kids = child_nodes(n)
            for c in kids:
                parent[id(c)] = n
            stack.extend(reversed(kids))
        for n in nodes:
            if isinstance(n, cst.Assign):
                self._on_assign(n, widths, tensors, shape_src)
            elif isinstance(n, cst.AugAssign):
                if type(n.operator).__name__ in _AUG_OPS:
                    self._exchange(n, n.target, n.value, tensors, shape_src, widths, what=None)
            elif isinstance(n, cst.Call):
                self._on_call(n, parent, tensors, shape_src, widths, pending)
        for site, t, consumer, result in pending:
            if t.tail_zeroed or (result is not None and result in subscripted):
                continue
            upto = t.written_upto or "n"
            tail = along_width(t, f"{upto}:", f"{upto}, -1")
            written = along_width(t, f":{upto}", f"0, {upto}")
            self.report(
                site,
                f"`{t.name}` is allocated with `empty` at the padded width "
                f"{describe(t.width)}, written only up to the unpadded width, then passed "
                f"whole to `{consumer}`: its uninitialised tail is read",
                notes=[
                    f"`{t.name}` comes from {flat(t.where)}",
                    "the padded tail holds garbage (possibly NaN) that the GEMM or reduction "
                    "mixes into every output",
                    f"zero the tail (`{t.name}{tail}.zero_()`), allocate with "
                    f"`zeros`, or pass the slice `{t.name}{written}`",
                ],
            )

    # -- across functions and classes --------------------------------------------------
    def _across_classes(self, node: cst.FunctionDef) -> None:
        """An output allocated at its input's width, handed with a component's
        result to one step, where an implementation of that component's
        declared type declares an unpadded output width."""
        if not all(isinstance(entry.node, cst.ClassDef) for entry in self._stack):
            return  # a class inside a function: nothing outside can name it
        params = set(function_params(node)) - {"self", "cls"}
        outputs = input_width_outputs(node, params)
        if not outputs:
            return
        classes = self.ctx.facts.index("classes")
        declared = self.ctx.facts.index("unpadded_output_widths")
        if not isinstance(classes, ClassIndex) or not isinstance(declared, UnpaddedOutputs):
            return
        local = ".".join(entry.node.name.value for entry in self._stack)
        types = self._component_types(local, classes)
        if not types:
            return
        methods: Mapping[str, list[str]] | None = None
        for out in outputs:
            for handoff in handoffs(node, out.name):
                if methods is None:
                    methods = helpers_of(
                        self.ctx.ast_tree(), self.ctx.text, local, node.name.value, lambda: self.ctx.code_for(node)
                    )
                for part, method in component_calls(handoff.producer, methods):
                    if part not in types:
                        continue
                    found = declared.implementations(types[part], method, classes)
                    if found:
                        self._report_across(out, handoff, part, types[part], found)
                        break
                else:
                    continue
                break

    def _component_types(self, local: str, classes: ClassIndex) -> dict[str, str]:
        """The declared types of the parts the class holds, its bases' too
        (each type qualified in the module that declares it)."""
        facts = self.ctx.facts.raw("component_types")
        here = f"{self.ctx.module_name}.{local}" if self.ctx.module_name else local
        owners = [(self.ctx.module_name, local)]
        owners += [(c.module, c.name) for q, c in classes.mro(here)[1:]]
        out: dict[str, str] = {}
        for module, name in owners:
            for part, t in ((facts.get(module) or {}).get(name) or {}).items():
                out.setdefault(part, classes.resolve(module, t))
        return out

    def _report_across(self, out: Any, handoff: Any, part: str, type_name: str, found: list[Any]) -> None:
        d = found[0]
        owner = d.owner.rsplit(".", 1)[-1]
        type_name = type_name.rsplit(".", 1)[-1]
        step = flat(self.ctx.code_for(handoff.call))
        if len(step) > 70:
            step = f"{call_name(handoff.call) or 'the call'}(..., {out.name}, ..., {handoff.result}, ...)"
        others = sorted({x.owner.rsplit(".", 1)[-1] for x in found[1:]} - {owner})
        notes: list[Note | str] = [
            Note(
                f"`{owner}.{d.method}` declares its output at the unpadded width `{d.width}`"
                + (f" (also: {', '.join(f'`{o}`' for o in others)})" if others else ""),
                d.path,
                Span(d.line, d.col, d.end_line, d.end_col),
            ),
            f"`{handoff.result}` comes from `self.{part}` (`{type_name}`) through "
            f"`{call_name(handoff.producer)}(...)`; when `{owner}` runs on an input padded past "
            f"`{d.width}`, any implementation of `{step}` that writes `{handoff.result}` into "
            f"`{out.name}` (as a finalize combining expert-parallel ranks into the caller's buffer "
            f"does) raises `RuntimeError: The size of tensor a (3072) must match the size of "
            f"tensor b (2880)` (gpt-oss: 2880 padded to 3072)",
            f"size `{out.name}` from the width `self.{part}` declares for its output (ask it, as "
            f"`workspace_shapes`/an output-width method does), not from `{out.source}`'s shape",
        ]
        self.report(
            out.node,
            f"`{flat(self.ctx.code_for(out.node))}` takes the width of the input `{out.source}`, "
            f"which may be padded, but `{owner}` (a `{type_name}`) declares its output at the "
            f"unpadded width `{d.width}`, and `{step}` receives both `{out.name}` and its result "
            f"`{handoff.result}`",
            notes=notes,
        )

    def _on_assign(
        self,
        n: cst.Assign,
        widths: dict[str, Width],
        tensors: dict[str, Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> None:
        value = n.value
        for t in n.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript):
                self._on_subscript_write(tgt, value, tensors)
                continue
            if isinstance(tgt, (cst.Tuple, cst.List)):
                self._on_unpack(tgt, value, widths, tensors, shape_src)
                continue
            key = dotted(tgt)
            if key is None:
                continue
            forget(key, tensors, widths, shape_src)
            w = self._width_of(value, widths) if self._rounded_base(value) else None
            if w is not None:
                widths[key] = Width(
                    True, key, f"`{key} = {self.ctx.code_for(value)}`", w.stems, w.multiple
                )
                continue
            src = shape_read(value)
            if src is not None:
                shape_src[key] = src
                continue
            t = self._alloc(value, key, widths, tensors, shape_src)
            if t is not None:
                tensors[key] = t

    def _on_unpack(
        self,
        tgt: cst.Tuple | cst.List,
        value: cst.BaseExpression,
        widths: dict[str, Width],
        tensors: dict[str, Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> None:
        names = [dotted(e.value) for e in tgt.elements]
        for k in names:
            if k:
                forget(k, tensors, widths, shape_src)
        owner = None
        v = value
        if isinstance(v, cst.Attribute) and v.attr.value == "shape":
            owner = dotted(v.value)
        elif (
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Attribute)
            and v.func.attr.value == "size"
            and not v.args
        ):
            owner = dotted(v.func.value)
        if owner is None or any(isinstance(e.value, cst.StarredElement) for e in tgt.elements):
            return
        count = len(names)
        for i, k in enumerate(names):
            if k:
                shape_src[k] = (owner, i - count)

    def _alloc(
        self,
        value: cst.BaseExpression,
        key: str,
        widths: dict[str, Width],
        tensors: dict[str, Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> Tensor | None:
        v = value
        if not isinstance(v, cst.Call):
            return None
        name = call_name(v) or ""
        leaf = last_name(name) or ""
        if leaf == "to" and isinstance(v.func, cst.Attribute):
            if not isinstance(v.func.value, cst.Call):
                return None
            return self._alloc(v.func.value, key, widths, tensors, shape_src)
        if leaf in _LIKE:
            args = positional_args(v)
            src = tensors.get(dotted(args[0]) or "") if args else None
            if src is None:
                return None
            return Tensor(
                key, src.width, src.dim, leaf in _UNINIT, f"`{key} = {self.ctx.code_for(v)}`",
                src.ndim, list(src.plain_dims),
            )
        torch_alloc = leaf in _ALLOC and (
            not isinstance(v.func, cst.Attribute) or name == f"torch.{leaf}"
        )
        if not (torch_alloc or leaf in _ALLOC_METHOD):
            return None
        shape = self._shape_args(v, leaf)
        if not shape:
            return None
        n = len(shape)
        found_padded: list[tuple[int, Width]] = []
        found_plain: list[tuple[int, Width]] = []
        for i, dim in enumerate(shape):
            w = self._width_of(dim, widths)
            if w is not None and w.padded:
                found_padded.append((i - n, w))
                continue
            k = dotted(dim)
            if k is not None:
                found_plain.append(
                    (i - n, Width(False, k, plain_origin(k, shape_src), leaf_set(k)))
                )
        uninit = leaf in _UNINIT
        where = f"`{key} = {self.ctx.code_for(v)}`"
        if len(found_padded) == 1:
            d, w = found_padded[0]
            return Tensor(key, w, d, uninit, where, n)
        if found_padded:
            return None
        # An unpadded tensor: remember every named dim; the exchange check
        # decides which one pairs with a padded width.
        if found_plain:
            return Tensor(
                key, found_plain[-1][1], found_plain[-1][0], uninit, where, n, found_plain
            )
        return None

    def _shape_args(self, call: cst.Call, leaf: str) -> list[cst.BaseExpression]:
        kw = keyword_args(call)
        args = positional_args(call)
        if "size" in kw:
            s = kw["size"]
            return [e.value for e in s.elements] if isinstance(s, (cst.Tuple, cst.List)) else [s]
        if not args:
            return []
        if leaf in {"full", "new_full"}:
            args = args[:1]
        if leaf == "empty_strided":
            args = args[:1]
        first = args[0]
        if isinstance(first, (cst.Tuple, cst.List)):
            return [e.value for e in first.elements if not isinstance(e, cst.StarredElement)]
        if any(a.star for a in call.args):
            return []
        return args

    # -- writes, exchanges, consumers ------------------------------------------------------
    def _on_subscript_write(
        self, tgt: cst.Subscript, value: cst.BaseExpression, tensors: dict[str, Tensor]
    ) -> None:
        k = dotted(tgt.value)
        t = tensors.get(k or "")
        if t is None or not t.width.padded:
            return
        if is_zero(value) and slice_has_lower(tgt):
            t.tail_zeroed = True
        else:
            self._mark_written(t, tgt)

    def _mark_written(self, t: Tensor, sub: cst.Subscript) -> None:
        t.written_partly = True
        for el in sub.slice:
            sl = el.slice
            if isinstance(sl, cst.Slice) and sl.lower is None and sl.upper is not None:
                t.written_upto = self.ctx.code_for(sl.upper)

    def _on_call(
        self,
        n: cst.Call,
        parent: dict[int, cst.CSTNode],
        tensors: dict[str, Tensor],
        shape_src: dict[str, tuple[str, int]],
        widths: dict[str, Width],
        pending: list[tuple[cst.CSTNode, Tensor, str, str | None]],
    ) -> None:
        func = n.func
        leaf = last_name(call_name(n)) if call_name(n) else (
            func.attr.value if isinstance(func, cst.Attribute) else None
        )
        # Method calls on a (possibly sliced) tensor.
        if isinstance(func, cst.Attribute):
            recv = func.value
            method = func.attr.value
            rk = dotted(recv)
            if method == "resize_" and rk in tensors:
                del tensors[rk]
                return
            if method in _ZEROING:
                base = recv.value if isinstance(recv, cst.Subscript) else recv
                t = tensors.get(dotted(base) or "")
                if t is not None and (
                    method != "fill_" or (n.args and is_zero(n.args[0].value))
                ):
                    t.tail_zeroed = True
                return
            if method in _INPLACE_STRICT:
                if isinstance(recv, cst.Subscript):
                    t = tensors.get(dotted(recv.value) or "")
                    if t is not None:
                        self._mark_written(t, recv)
                    return
                args = positional_args(n)
                if args:
                    what = f".{method}(...)"
                    self._exchange(n, recv, args[0], tensors, shape_src, widths, what=what)
                return
            if method in _REDUCE | {"matmul", "mm", "bmm"} and rk in tensors:
                self._consumer(n, tensors[rk], f"{rk}.{method}()", parent, pending)
        kw = keyword_args(n)
        full = call_name(n) or ""
        # Only torch's own functions promise that `out=` has the inputs' shape;
        # a custom op may fill a padded output on purpose.
        if "out" in kw and full.startswith("torch.") and not full.startswith("torch.ops."):
            out = kw["out"]
            ins = positional_args(n)
            for a in ins:
                if self._exchange(n, out, a, tensors, shape_src, widths, what="out=", call=n):
                    break
        if leaf in _GEMM or (leaf in _REDUCE and full.startswith(("torch.", "F."))):
            for a in positional_args(n):
                t = tensors.get(dotted(a) or "")
                if t is not None:
                    self._consumer(n, t, f"{call_name(n)}", parent, pending)

    def _consumer(
        self,
        n: cst.Call,
        t: Tensor,
        consumer: str,
        parent: dict[int, cst.CSTNode],
        pending: list[tuple[cst.CSTNode, Tensor, str, str | None]],
    ) -> None:
        if not (t.width.padded and t.uninit and t.written_partly):
            return
        p = parent.get(id(n))
        if isinstance(p, cst.Subscript):
            return  # the result is sliced back right here
        result = None
        if isinstance(p, cst.Assign) and len(p.targets) == 1:
            result = dotted(p.targets[0].target)
        pending.append((n, t, consumer, result))

    def _exchange(
        self,
        site: cst.CSTNode,
        dst: cst.BaseExpression,
        src: cst.BaseExpression,
        tensors: dict[str, Tensor],
        shape_src: dict[str, tuple[str, int]],
        widths: dict[str, Width],
        what: str | None,
        call: cst.Call | None = None,
    ) -> bool:
        dk, sk = dotted(dst), dotted(src)
        if dk is None or sk is None or dk == sk:
            return False
        a, b = self._side(dk, tensors, shape_src), self._side(sk, tensors, shape_src)
        pair = None
        for p, q in ((a, b), (b, a)):
            if p is None or q is None:
                continue
            pt = p
            if not pt.width.padded:
                continue
            match = self._unpadded_match(pt, q)
            if match is not None:
                pair = (pt, match)
                break
        if pair is None:
            return False
        padded, (uname, uwidth) = pair
        if call is not None and self._passes_width(call, padded.width, exclude=dst):
            return False
        op = what or flat(self.ctx.code_for(site))
        if what == "out=":
            op = f"{call_name(call) or 'call'}(..., out={dk})"
        elif what is not None:
            op = f"{dk}{what}"
        pw, uw = padded.width, uwidth
        unpadded = along_width(padded, f":{uw.code}", f"0, {uw.code}")
        self.report(
            site,
            f"`{op}` exchanges `{padded.name}`, padded to width {describe(pw)}, with "
            f"`{uname}` of the unpadded width {describe(uw)} as a whole",
            notes=[
                f"`{padded.name}` comes from {flat(padded.where)}",
                counterexample(pw, uw),
                f"slice the padded side to the unpadded width "
                f"(`{padded.name}{unpadded}`) or slice the result back",
            ],
        )
        return True

    def _side(
        self, k: str, tensors: dict[str, Tensor], shape_src: dict[str, tuple[str, int]]
    ) -> Tensor | None:
        t = tensors.get(k)
        if t is not None:
            return t
        dims = [(name, d) for name, (owner, d) in shape_src.items() if owner == k]
        if not dims:
            return None
        plain = [
            (d, Width(False, name, f"read from `{k}.shape`", leaf_set(name))) for name, d in dims
        ]
        return Tensor(k, plain[-1][1], plain[-1][0], False, f"`{k}`", 0, plain)

    def _unpadded_match(self, padded: Tensor, other: Tensor) -> tuple[str, Width] | None:
        for d, w in other.plain_dims:
            if d >= 0:
                # `x.shape[1]`: comparable when the padded buffer's rank is known
                if not padded.ndim:
                    continue
                d -= padded.ndim
            if w.padded or d != padded.dim:
                continue
            if w.stems & padded.width.stems:
                return other.name, w
        return None

    def _passes_width(self, call: cst.Call, w: Width, exclude: cst.BaseExpression) -> bool:
        """A callee that also receives the padded width knows the buffer is padded."""
        for a in call.args:
            if a.value is exclude:
                continue
            for x in walk_fast(a.value):
                k = dotted(x)
                if k is not None and (k == w.code or self._is_padded_name(k)):
                    return True
                if isinstance(x, cst.BaseExpression) and self.ctx.code_for(x) == w.code:
                    return True
        return False
