"""SHD501 padded-unpadded-width-mismatch (seed 001): one libcst analysis per
function (``PaddedUnpaddedWidthMismatch``), gated by the text its findings
need."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks.facts.classes import ClassIndex
from checks.padded_unpadded_width_mismatch.across_classes import (
    Handoff,
    InputWidthOutput,
    component_calls,
    handoffs,
    helpers_of,
    input_width_outputs,
    input_width_source,
)
from checks.padded_unpadded_width_mismatch.declared_widths import (
    UNPADDED_WIDTH_NAMES,
    UnpaddedDeclaration,
    UnpaddedOutputs,
)
from checks.padded_unpadded_width_mismatch.needles import CDIV_NAMES, declared
from checks.padded_unpadded_width_mismatch.widths import (
    LIKE,
    NEW,
    Tensor,
    Tracked,
    Width,
    callee_leaf,
    leaf_set,
    rounded_base,
    shape_read,
)
from linter.needles import Needles
from linter.rule import Option, Rule, RuleContext
from linter.syntax import (
    call_name,
    child_nodes,
    dotted,
    function_params,
    int_literal,
    keyword_args,
    last_name,
    name_matches,
    positional_args,
    walk_fast,
    walk_no_nested,
)
from linter.types import Note, Severity, Span

DEFAULT_PADDED_NAMES = ("*_padded", "padded_*", "*_padded_*")
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

# Allocators and where their shape is (`*_like` copies the width of its argument).
_ALLOC = frozenset({"empty", "zeros", "ones", "full", "empty_strided", "randn", "rand"})
_UNINIT = frozenset({"empty", "new_empty", "empty_strided", "empty_like"})

# In-place elementwise methods: both operands must have the same width (or
# broadcast), so a padded buffer meeting an unpadded tensor as a whole fails.
_INPLACE_STRICT = frozenset(
    {"copy_", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_"}
)
# Augmented assignments that combine two tensors elementwise.
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
    function's own calls (not of nested definitions'): whether the analyses
    can find anything in it, before they walk it."""

    node: cst.ClassDef | cst.FunctionDef
    params: set[str] = field(default_factory=set)  # a function's, less self and cls
    allocates: bool = False  # an allocation the rule may track
    # a rounding or ceiling division call, or a floor (``(X + n - 1) // n * n``)
    rounds: bool = False
    padded_name: bool = False  # an allocation with a padded name in its shape
    input_width: bool = False  # an allocation at an input parameter's width


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
    # it reads from the file's ``ast`` (``across_classes.helpers_of``): no other
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
        return name_matches(name, self._padded_names) and not name_matches(
            name, UNPADDED_WIDTH_NAMES
        )

    def _width_of(self, e: cst.CSTNode, widths: dict[str, Width]) -> Width | None:
        key = dotted(e)
        if key is not None and key in widths:
            return widths[key]
        rounded = rounded_base(e, self._rounding)
        if rounded is not None:
            base, multiple = rounded
            origin = f"rounded up from `{self.ctx.code_for(base)}`"
            return Width(True, self.ctx.code_for(e), origin, leaf_set(dotted(base)), multiple)
        if key is not None and self._is_padded_name(key):
            stems = pattern_stems(key, self._padded_names)
            return Width(True, key, f"the padded name `{key}`", stems)
        return None

    # -- the walk ----------------------------------------------------------------------
    # The traversal only notes which functions may hold a finding; the
    # analyses run on those alone, when the function is left.
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.append(_Scope(node))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append(_Scope(node, set(function_params(node)) - {"self", "cls"}))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        scope = self._stack.pop()
        # a padded width: a padded name in an allocation's shape, or a
        # rounding (inline or bound to a name) and an allocation
        if scope.allocates and (scope.rounds or scope.padded_name):
            self._analyse(scope.node)
        # a method of a class inside a function: nothing outside can name it
        in_classes = all(isinstance(s.node, cst.ClassDef) for s in self._stack)
        if scope.input_width and self._stack and in_classes:
            self._across_classes(scope.node, scope.params)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._stack or isinstance(self._stack[-1].node, cst.ClassDef):
            return
        scope = self._stack[-1]
        leaf = callee_leaf(node)
        if leaf in self._rounding or leaf in CDIV_NAMES:
            scope.rounds = True
        if leaf in _ALLOC or leaf in NEW or leaf in LIKE:
            scope.allocates = True
            if not scope.padded_name:
                shape = _shape_args(node, leaf)
                scope.padded_name = any(self._is_padded_name(dotted(d)) for d in shape)
            if not scope.input_width:
                scope.input_width = input_width_source(node, scope.params) is not None

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._stack and isinstance(node.operator, cst.FloorDivide):
            self._stack[-1].rounds = True

    def _analyse(self, node: cst.FunctionDef) -> None:
        nodes = list(walk_no_nested(node.body))  # nested definitions are analysed on their own
        fn = Tracked({id(c): n for n in nodes for c in child_nodes(n)})
        for n in nodes:
            if isinstance(n, cst.Assign):
                self._on_assign(n, fn)
            elif isinstance(n, cst.AugAssign) and type(n.operator).__name__ in _AUG_OPS:
                self._exchange(n, n.target, n.value, fn)
            elif isinstance(n, cst.Call):
                self._on_call(n, fn)
        subscripted = {dotted(n.value) for n in nodes if isinstance(n, cst.Subscript)}
        for site, t, consumer, result in fn.pending:
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
    def _across_classes(self, node: cst.FunctionDef, params: set[str]) -> None:
        """An output allocated at its input's width, handed with a component's
        result to one step, where an implementation of that component's
        declared type declares an unpadded output width."""
        outputs = input_width_outputs(node, params)
        if not outputs:
            return
        classes = self.ctx.facts.index("classes")
        declared = self.ctx.facts.index("unpadded_output_widths")
        if not isinstance(classes, ClassIndex) or not isinstance(declared, UnpaddedOutputs):
            return
        local = ".".join(s.node.name.value for s in self._stack)
        types = self._component_types(local, classes)
        if not types:
            return
        methods: Mapping[str, list[str]] | None = None
        for out in outputs:
            for handoff in handoffs(node, out.name):
                if methods is None:
                    methods = helpers_of(
                        self.ctx.ast_tree(),
                        self.ctx.text,
                        local,
                        node.name.value,
                        lambda: self.ctx.code_for(node),
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

    def _report_across(
        self,
        out: InputWidthOutput,
        handoff: Handoff,
        part: str,
        type_name: str,
        found: list[UnpaddedDeclaration],
    ) -> None:
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

    # -- bindings and allocations -------------------------------------------------------
    def _on_assign(self, n: cst.Assign, fn: Tracked) -> None:
        for target in n.targets:
            tgt = target.target
            key = dotted(tgt)
            if isinstance(tgt, cst.Subscript):
                self._on_subscript_write(tgt, n.value, fn)
            elif isinstance(tgt, (cst.Tuple, cst.List)):
                fn.unpack(tgt, n.value)
            elif key is not None:
                fn.forget(key)
                rounded = rounded_base(n.value, self._rounding)
                read = shape_read(n.value)
                if rounded is not None:
                    base, multiple = rounded
                    where = f"`{key} = {self.ctx.code_for(n.value)}`"
                    fn.widths[key] = Width(True, key, where, leaf_set(dotted(base)), multiple)
                elif read is not None:
                    fn.shape_src[key] = read
                else:
                    t = self._alloc(n.value, key, fn)
                    if t is not None:
                        fn.tensors[key] = t

    def _alloc(self, v: cst.BaseExpression, key: str, fn: Tracked) -> Tensor | None:
        if not isinstance(v, cst.Call):
            return None
        name = call_name(v) or ""
        leaf = last_name(name) or ""
        if leaf == "to" and isinstance(v.func, cst.Attribute):
            return self._alloc(v.func.value, key, fn)
        if leaf in LIKE:
            args = positional_args(v)
            src = fn.tensors.get(dotted(args[0]) or "") if args else None
            if src is None:
                return None
            return Tensor(
                key, src.width, src.dim, leaf in _UNINIT, f"`{key} = {self.ctx.code_for(v)}`",
                src.ndim, list(src.plain_dims),
            )
        torch_alloc = leaf in _ALLOC and (
            not isinstance(v.func, cst.Attribute) or name == f"torch.{leaf}"
        )
        shape = _shape_args(v, leaf) if torch_alloc or leaf in NEW else []
        if not shape:
            return None
        n = len(shape)
        padded: list[tuple[int, Width]] = []
        plain: list[tuple[int, Width]] = []
        for i, dim in enumerate(shape):
            w = self._width_of(dim, fn.widths)  # (always a padded one)
            k = dotted(dim)
            if w is not None:
                padded.append((i - n, w))
            elif k is not None:
                src = fn.shape_src.get(k)
                origin = f"read from `{src[0]}.shape`" if src else f"`{k}`"
                plain.append((i - n, Width(False, k, origin, leaf_set(k))))
        where = f"`{key} = {self.ctx.code_for(v)}`"
        if len(padded) == 1:
            d, w = padded[0]
            return Tensor(key, w, d, leaf in _UNINIT, where, n)
        if padded or not plain:
            return None
        # An unpadded tensor: remember every named dim; the exchange check
        # decides which one pairs with a padded width.
        return Tensor(key, plain[-1][1], plain[-1][0], leaf in _UNINIT, where, n, plain)

    # -- writes, exchanges, consumers ------------------------------------------------------
    def _on_subscript_write(
        self, tgt: cst.Subscript, value: cst.BaseExpression, fn: Tracked
    ) -> None:
        t = fn.tensors.get(dotted(tgt.value) or "")
        if t is None or not t.width.padded:
            return
        # ``buf[..., n:] = 0``: a write that starts past the beginning (the tail)
        slices = [el.slice for el in tgt.slice if isinstance(el.slice, cst.Slice)]
        if is_zero(value) and any(s.lower is not None and s.upper is None for s in slices):
            t.tail_zeroed = True
        else:
            self._mark_written(t, tgt)

    def _mark_written(self, t: Tensor, sub: cst.Subscript) -> None:
        t.written_partly = True
        for el in sub.slice:
            sl = el.slice
            if isinstance(sl, cst.Slice) and sl.lower is None and sl.upper is not None:
                t.written_upto = self.ctx.code_for(sl.upper)

    def _on_call(self, n: cst.Call, fn: Tracked) -> None:
        func = n.func
        # Method calls on a (possibly sliced) tensor.
        if isinstance(func, cst.Attribute):
            recv = func.value
            method = func.attr.value
            rk = dotted(recv)
            if method == "resize_" and rk in fn.tensors:
                del fn.tensors[rk]
                return
            if method in _ZEROING:
                base = recv.value if isinstance(recv, cst.Subscript) else recv
                t = fn.tensors.get(dotted(base) or "")
                if t is not None and (method != "fill_" or (n.args and is_zero(n.args[0].value))):
                    t.tail_zeroed = True
                return
            if method in _INPLACE_STRICT:
                args = positional_args(n)
                if isinstance(recv, cst.Subscript):
                    t = fn.tensors.get(dotted(recv.value) or "")
                    if t is not None:
                        self._mark_written(t, recv)
                elif args:
                    self._exchange(n, recv, args[0], fn, what=f".{method}(...)")
                return
            if method in _REDUCE | {"matmul", "mm", "bmm"} and rk in fn.tensors:
                fn.consume(n, fn.tensors[rk], f"{rk}.{method}()")
        kw = keyword_args(n)
        full = call_name(n) or ""
        # Only torch's own functions promise that `out=` has the inputs' shape;
        # a custom op may fill a padded output on purpose.
        if "out" in kw and full.startswith("torch.") and not full.startswith("torch.ops."):
            for a in positional_args(n):
                if self._exchange(n, kw["out"], a, fn, call=n):
                    break
        leaf = callee_leaf(n)
        if leaf in _GEMM or (leaf in _REDUCE and full.startswith(("torch.", "F."))):
            for a in positional_args(n):
                t = fn.tensors.get(dotted(a) or "")
                if t is not None:
                    fn.consume(n, t, f"{call_name(n)}")

    def _exchange(
        self,
        site: cst.CSTNode,
        dst: cst.BaseExpression,
        src: cst.BaseExpression,
        fn: Tracked,
        what: str | None = None,
        call: cst.Call | None = None,
    ) -> bool:
        """Report ``site`` when it exchanges a padded tensor with one of the
        unpadded width as a whole: ``dst{what}`` (``.copy_(...)``),
        ``call(..., out=dst)`` or, with neither, the statement itself."""
        dk, sk = dotted(dst), dotted(src)
        if dk is None or sk is None or dk == sk:
            return False
        a, b = fn.side(dk), fn.side(sk)
        if a is None or b is None:
            return False
        for padded, other in ((a, b), (b, a)):
            uw = _unpadded_width(padded, other)
            if uw is not None:
                break
        else:
            return False
        pw = padded.width
        if call is not None and self._passes_width(call, pw, exclude=dst):
            return False
        if call is not None:
            op = f"{call_name(call) or 'call'}(..., out={dk})"
        elif what is not None:
            op = f"{dk}{what}"
        else:
            op = flat(self.ctx.code_for(site))
        unpadded = along_width(padded, f":{uw.code}", f"0, {uw.code}")
        self.report(
            site,
            f"`{op}` exchanges `{padded.name}`, padded to width {describe(pw)}, with "
            f"`{other.name}` of the unpadded width {describe(uw)} as a whole",
            notes=[
                f"`{padded.name}` comes from {flat(padded.where)}",
                counterexample(pw, uw),
                f"slice the padded side to the unpadded width "
                f"(`{padded.name}{unpadded}`) or slice the result back",
            ],
        )
        return True

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


def _shape_args(call: cst.Call, leaf: str | None) -> list[cst.BaseExpression]:
    """The dimensions an allocation's shape lists (none when starred)."""
    kw = keyword_args(call)
    if "size" in kw:
        s = kw["size"]
        return [e.value for e in s.elements] if isinstance(s, (cst.Tuple, cst.List)) else [s]
    args = positional_args(call)
    if leaf in {"full", "new_full", "empty_strided"}:
        args = args[:1]
    if not args:
        return []
    if isinstance(args[0], (cst.Tuple, cst.List)):
        return [e.value for e in args[0].elements if not isinstance(e, cst.StarredElement)]
    if any(a.star for a in call.args):
        return []
    return args


def _unpadded_width(padded: Tensor, other: Tensor) -> Width | None:
    """The width of ``other`` that ``padded`` pads: a named dim at the same
    position of the shape, paired by name."""
    if not padded.width.padded:
        return None
    for d, w in other.plain_dims:
        if d >= 0:
            # `x.shape[1]`: comparable when the padded buffer's rank is known
            if not padded.ndim:
                continue
            d -= padded.ndim
        if not w.padded and d == padded.dim and w.stems & padded.width.stems:
            return w
    return None


def pattern_stems(name: str, patterns: Sequence[str]) -> frozenset[str]:
    """Unpadded names a padded name pairs with, read off the pattern it
    matched: `hidden_size_padded` (`*_padded`) → `hidden_size`,
    `hidden_size_unpadded`, `unpadded_hidden_size`."""
    leaf = name.rsplit(".", 1)[-1].lower()
    out: set[str] = set()
    for pat in patterns:
        parts = pat.lower().split("*")
        if not fnmatch.fnmatchcase(leaf, pat.lower()):
            continue
        if len(parts) == 2:
            pre, suf = parts
            stem = leaf[len(pre) : len(leaf) - len(suf)]
        elif len(parts) == 3 and parts[0] == "" and parts[2] == "":
            stem = leaf.replace(parts[1], "_", 1)
        else:
            continue
        stem = stem.strip("_")
        if stem:
            out |= {stem, f"{stem}_unpadded", f"unpadded_{stem}", f"{stem}_non_padded"}
    return frozenset(out)


def flat(code: str) -> str:
    out = " ".join(code.split())
    return out.replace("( ", "(").replace(" )", ")")


def describe(w: Width) -> str:
    if w.origin in (f"`{w.code}`", f"the padded name `{w.code}`"):
        return f"`{w.code}`"
    return f"`{w.code}` ({flat(w.origin)})"


def counterexample(pw: Width, uw: Width) -> str:
    m = pw.multiple
    if m is not None and m >= 4:
        x = 11 * m + m // 4
        return (
            f"with `{uw.code}` = {x}, `{pw.code}` = {12 * m}: `The size of tensor a "
            f"({12 * m}) must match the size of tensor b ({x})`"
        )
    return (
        "the widths differ whenever the unpadded width is not already a multiple "
        "(2880 padded to 3072: `The size of tensor a (3072) must match the size of "
        "tensor b (2880)`)"
    )


def along_width(t: Tensor, piece: str, narrow: str) -> str:
    """``t`` indexed by ``piece`` (`:k`, `k:`) along its padded dimension,
    or ``.narrow(dim, <narrow>)`` where its rank is unknown."""
    if t.dim == -1:
        return f"[..., {piece}]"
    if t.ndim:
        return "[" + ":, " * (t.ndim + t.dim) + f"{piece}]"
    return f".narrow({t.dim}, {narrow})"


def is_zero(e: cst.CSTNode) -> bool:
    if int_literal(e) == 0:
        return True
    return isinstance(e, cst.Float) and float(e.value) == 0.0
