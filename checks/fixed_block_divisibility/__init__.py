"""SHD102 fixed-block-divisibility: a constant block (or a fallback chain of
constants) required to divide a runtime model dimension.

Modules: ``dims`` (the real model widths a message names), ``blocks`` (a
scope's bindings, constant folding, fallback chains, what a model dimension
is, the traversal shared with SHD103) and ``kernel_tiling`` (the
``kernel_tiling`` fact collector, also read by SHD103).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from checks.fixed_block_divisibility.blocks import (
    OTHER,
    Bindings,
    Env,
    Leaf,
    ScopeVisitor,
    binds_before,
    chain_leaves,
    code,
    const,
    dimension_name,
    mod_test,
    modulos,
    picks,
    pinned_by,
    short,
)
from checks.fixed_block_divisibility.dims import (
    DIMENSION_NAMES,
    FORMAT_BLOCK_NAMES,
    Dim,
    counterexample,
    kind_of,
)
from checks.fixed_block_divisibility.kernel_tiling import launch_args
from linter.needles import Needles
from linter.rule import Option, PendingFix, Rule
from linter.syntax import dotted, int_literal, name_matches, raises_only, walk
from linter.types import Applicability, Fixability, Note, Severity, Span

# A requirement on the host is ``X % B`` with ``B`` a bare name (the block
# the analysis follows is a ``Name``: not an attribute, a call or a
# subscript) in the test of an ``assert`` or of an ``if``/``elif`` with a
# ``raise`` in the next 300 characters; the ``%`` lies in the statement's
# first line (within 200 characters after ``assert``, 300 after ``if``) or,
# when that line opens a bracket, a string or a continuation, within as many
# characters after it. On a kernel the requirement is reached through a
# launch ``kernel[grid](...)`` passing a constant block by keyword (two
# digits or an UPPER_CASE name).
_MOD = r"(?:(?<=[\w)\]])|(?<=[\w)\]] ))%[\s(]*[A-Za-z_]\w*(?![\w.(\[])(?!\s*[.(\[])"
_CONTINUED = r"""[^\n]*?(?:[(\[{\\]|\"\"\"|''')"""
NEEDLE = (
    r"assert\b[^\n]{0,200}?" + _MOD
    + r"|assert\b" + _CONTINUED + r"[\s\S]{0,200}?" + _MOD
    + r"|if\b[^\n]{0,300}?" + _MOD + r"[\s\S]{0,300}?\braise\b"
    + r"|if\b" + _CONTINUED + r"[\s\S]{0,300}?" + _MOD + r"[\s\S]{0,300}?\braise\b"
    + r"|\]\s*\([\s\S]{0,3000}?[(,]\s*\w+\s*=\s*(?:\d\d|[A-Z][A-Z0-9_]*\b)"
)


@dataclass
class Requirement:
    x: cst.BaseExpression
    block: cst.BaseExpression
    node: cst.CSTNode  # the assert / if statement: the crash site
    raises: bool  # ``if X % B: raise`` (else an assert)


@dataclass
class Scope:
    params: frozenset[str]
    bindings: Bindings = field(default_factory=Bindings)
    requirements: list[Requirement] = field(default_factory=list)
    # ``X % B`` tested where a branch handles it (not a requirement), with
    # the branch's body (None for a loop's test)
    handled: list[tuple[cst.BinaryOperation, cst.BaseSuite | None]] = field(default_factory=list)
    pins: list[cst.Comparison] = field(default_factory=list)
    launches: list[cst.Call] = field(default_factory=list)


@dataclass
class BlockValue:
    """What a block expression stands for: its constant leaves and, for a
    name bound once in this function, the binding (where a fix applies)."""

    leaves: list[Leaf]
    name: str | None
    site: cst.BaseExpression  # where a finding about this block is reported
    local_order: int | None = None  # the binding's order, when local and single
    label: str | None = None  # how a message names a literal passed to a kernel


@dataclass
class Finding:
    block: BlockValue
    dim: Dim  # the real width no value of the block divides
    dim_name: str
    crashes: list[str]
    x: cst.BaseExpression
    kernel_note: Note | None = None  # the kernel's requirement, when that is the crash site


def _requirement_mods(test: cst.BaseExpression, raises: bool) -> list[cst.BinaryOperation]:
    """The ``X % B`` a test makes mandatory: ``X % B == 0`` in an assert
    (also inside ``and``); ``X % B``, ``X % B != 0`` or ``X % B > 0`` as
    the test of ``if ...: raise`` (also inside ``or``); last first."""
    joiner = cst.Or if raises else cst.And
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, joiner):
        return _requirement_mods(test.right, raises) + _requirement_mods(test.left, raises)
    mod, when_divisible = mod_test(test)
    return [mod] if mod is not None and when_divisible != raises else []


class FixedBlockDivisibility(ScopeVisitor, Rule):
    """## What it finds
    A block fixed by the code -- a constant (`BLOCK_D = 1024`, a module
    constant) or a fallback chain of constants (`128 if h % 128 == 0 else
    64`, or the same with `if`/`else` statements) -- that must divide a
    runtime model dimension:

    - on the host: `assert hidden % BLOCK_D == 0` or `if hidden % BLOCK_D:
      raise ...` (also `!= 0`, `> 0`, inside `and`/`or`);
    - in a kernel: a constant passed by keyword (`BLOCK=512`, `TILE=TILE_N`:
      a number or an UPPER_CASE name bound to numbers) to a `@triton.jit`
      kernel (same file, or imported, through re-exporting packages) that
      requires `tl.static_assert(D % BLOCK == 0)` (or `assert`) of the
      dimension passed as `D`.

    It fires only when a real model has a width no value of the block
    divides, and names it (gpt-oss's hidden size 2880, Qwen2.5-72B's
    intermediate size at TP=8, Phi-2's head dimension 80, ...). The widths
    are a documented table in `checks/fixed_block_divisibility/dims.py` --
    hidden sizes, per-rank intermediate sizes, head dimensions -- chosen by
    the dimension's name (`*head*`, `*intermediate*`/`*ffn*`, `*hidden*`;
    any other width, `K` or `x.shape[-1]`, is judged by hidden sizes only).

    Deliberately silent: a literal in the requirement (`assert K % 16 == 0`
    states the kernel's contract; a block bound to a name is a tiling
    choice); a block that is a parameter or bound to anything but constants
    (`min(X, C)` is SHD101's; `math.gcd` divides by construction); a
    dimension that is a constant, pinned (`assert D == 128`), or not a model
    dimension by its name (token counts, page sizes); a function that
    branches on the same remainder elsewhere (`if hidden % BLOCK: return
    fallback(...)`); blocks every listed width is a multiple of (`assert
    hidden % 64 == 0` passes them all).

    ## Why it breaks
    A tile chosen for the widths the author tested (4096, 7168) is a power
    of two; real widths are not all multiples of it. gpt-oss's hidden and
    intermediate size is 2880 = 64 * 45: a 128-, 256- or 1024-wide block
    fails the requirement, and the model crashes at start-up or on its
    first forward (`AssertionError`, or the raise), on that model only,
    after every test with the usual shapes passed. Per-rank widths make it
    worse: intermediate sizes divided by TP=8 (29568 / 8 = 3696) leave only
    small powers of two. A fallback chain ending in another power of two
    only moves the failure (`256 ... else 128` still fails for 2880).

    ## Example
    See the corpus files below: `BLOCK_D = 1024` then `assert hidden_size %
    BLOCK_D == 0` (vLLM's `ep_gather` before PR #50458 capped it with `min`:
    SHD101; the fixed constant is this rule).

    ## Fix
    Derive the block from the width: `math.gcd(X, C)` is the largest block
    not above `C` that divides `X`, equal to `C` whenever `C` divides `X`
    (nothing changes for the widths that worked), and a power of two when
    `C` is; the same spelling serves vLLM and SGLang. The fix rewrites the
    constant binding in the function (`BLOCK_D = math.gcd(hidden_size,
    1024)`) or the chain's last fallback (`... else math.gcd(h, 64)`): *safe*
    when the block is used only in host code of this function (every width
    that passed gets the same block; the others no longer crash), *unsafe*
    when it also reaches a kernel (which may need a minimum block, e.g. 16
    for `tl.dot`). A module constant shared by several functions gets a
    suggestion, not an edit.

    ## Options
    - `dimension-names` (list[str]): globs (last name component, any case)
      of the names that hold a model dimension. A tensor's non-leading
      dimension (`x.shape[1]`, `x.size(-1)`) always counts; a name like a
      block, page, tile, chunk or top-k never does. Default: hidden,
      intermediate, ffn, head-dimension, model and embedding widths, `dim`,
      `*_dim`, `k`, `n`, `size_k`, `size_n`, `in_features`, `out_features`,
      `n_cols`, `num_cols`.
    - `kernel-decorators` (list[str]): decorators that make a function a
      kernel whose requirements are followed. Default `["triton.jit",
      "jit"]`.
    - `format-block-names` (list[str]): globs of block names fixed by a
      number format rather than chosen as tiles (MX formats' 32, NVFP4's 16,
      quantisation groups): a width that is not a multiple is the format's
      refusal, and a gcd would change the format. Default `["*mxfp*",
      "*mx_block*", "*scale_block*", "*nvfp*", "*fp4*", "*fp8*", "*int4*", "*group_size*", "*quant*"]`.
    """

    code = "SHD102"
    name = "fixed-block-divisibility"
    summary = "A constant block (or fallback chain) required to divide a model dimension that real models break"
    severity = Severity.ERROR
    fixable = Fixability.SOMETIMES
    needles = Needles(regex=NEEDLE)
    # a requirement and the block's binding lie in one function (or the block
    # is a module constant, module-level code being always kept); a kernel
    # is named by the launch that reaches it and read from the facts (and,
    # for this file's own kernels and imports, from the whole text: see
    # ``KernelFinder``): nothing outside the matching definitions is read
    definition_needles = needles
    follows_definitions = False
    facts = ("kernel_tiling", "facade_imports")
    tags = ("correctness", "triton")
    options: ClassVar[Mapping[str, Option]] = {
        "dimension-names": Option(DIMENSION_NAMES, "list[str]", "Globs of names that hold a model dimension."),
        "kernel-decorators": Option(
            ("triton.jit", "jit"),
            "list[str]",
            "Decorators that make a function a kernel whose requirements are followed.",
        ),
        "format-block-names": Option(
            FORMAT_BLOCK_NAMES, "list[str]", "Globs of block names fixed by a number format (left alone)."
        ),
    }

    def _scope(self, node: cst.CSTNode, params: frozenset[str]) -> Scope:
        return Scope(params)

    def visit_Assert(self, node: cst.Assert) -> None:
        scope = self._top()
        for mod in _requirement_mods(node.test, raises=False):
            scope.requirements.append(Requirement(mod.left, mod.right, node, False))
        if isinstance(node.test, cst.Comparison):
            scope.pins.append(node.test)

    def visit_If(self, node: cst.If) -> None:
        scope = self._top()
        if raises_only(node.body):
            for mod in _requirement_mods(node.test, raises=True):
                scope.requirements.append(Requirement(mod.left, mod.right, node, True))
        else:
            scope.handled += [(m, node.body) for m in modulos(node.test)]

    def visit_While(self, node: cst.While) -> None:
        self._top().handled += [(m, None) for m in modulos(node.test)]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Subscript):
            self._top().launches.append(node)

    def _block(self, e: cst.BaseExpression, env: Env) -> BlockValue | None:
        """The constants a block expression can be; None when it is a
        literal in the requirement, a parameter, or not all constants."""
        if not isinstance(e, cst.Name) or name_matches(e.value, self.opts["format-block-names"]):
            return None
        binds, where = env.lookup(e.value)
        if not binds or any(b is OTHER for b in binds):
            return None
        leaves = []
        for b in binds:
            got = chain_leaves(b, where)
            if got is None:
                return None
            leaves += got
        if where is env and len(binds) == 1 and isinstance(binds[0], cst.BaseExpression):
            return BlockValue(leaves, e.value, binds[0], env.local.first.get(e.value))
        return BlockValue(leaves, e.value, e)

    def _failing_width(
        self, block: BlockValue, x: cst.BaseExpression, env: Env, scope: Scope, param: str = ""
    ) -> tuple[Dim, str] | None:
        """The first real width (with the dimension's name) that every value
        the block can take *for that width* fails to divide (a chain's test
        picks its branch); None when ``x`` is not a model dimension, the
        requirement is excused, or every listed width passes. ``param``: the
        kernel's own name for ``x`` (``HIDDEN``), which may tell its kind."""
        dims = self.opts["dimension-names"]
        dim_name = dimension_name(x, env, dims)
        if dim_name is None and const(x, env) is None and dotted(x) is not None:
            dim_name = param if name_matches(param, dims) else None
        if dim_name is None or self._excused(scope, env, x, block):
            return None
        values = [leaf.value for leaf in block.leaves]
        if any(v <= 1 for v in values):
            return None
        dim = counterexample(kind_of(dim_name), values, lambda d: picks(block.leaves, d) or values)
        return None if dim is None else (dim, dim_name)

    def _analyse(self, scope: Scope, env: Env) -> None:
        found: dict[object, Finding] = {}
        for req in scope.requirements:
            block = self._block(req.block, env)
            failing = block and self._failing_width(block, req.x, env, scope)
            if not failing:
                continue
            what = "the raise in" if req.raises else "the assert"
            crash = f"{what} `{short(code(req.node.test))}`"  # type: ignore[attr-defined]
            key = block.name or id(block.site)
            if key in found:
                found[key].crashes.append(crash)
            else:
                found[key] = Finding(block, *failing, [crash], req.x)
        for call in scope.launches:
            self._kernel_requirements(call, env, scope, found)
        for finding in found.values():
            self._report(finding, env, scope)

    def _excused(self, scope: Scope, env: Env, x: cst.BaseExpression, block: BlockValue) -> bool:
        """The width is pinned, or a branch tests its remainder by the block
        and does something else than pick the block (a fallback path): an
        ``if h % 256 == 0: B = 256 else: B = 128`` chain is not an excuse."""
        xc = code(x)
        if pinned_by(scope.pins, xc, env):
            return True
        values = {leaf.value for leaf in block.leaves}
        for mod, body in scope.handled:
            if code(mod.left) != xc:
                continue
            if isinstance(mod.right, cst.Name) and mod.right.value == block.name:
                return True
            if const(mod.right, env) in values and (body is None or block.name not in _bound_names(body)):
                return True
        return False

    def _kernel_requirements(self, call: cst.Call, env: Env, scope: Scope, found: dict) -> None:
        if not any(a.keyword is not None and _constant_text(a.value) for a in call.args):
            # a kernel's requirement is followed only for a constant block
            # passed by keyword: no such argument, no kernel to look up
            return
        kernel = self._kernel(call)
        if kernel is None or not kernel.div:
            return
        kname = dotted(call.func.value)  # type: ignore[attr-defined]
        args = launch_args(call, kernel.params)
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        for p, q, line in kernel.div:
            if p not in args or q not in keywords or not _constant_text(args[q]):
                continue
            v = int_literal(args[q])
            if v is None:
                block = self._block(args[q], env)
            else:
                block = BlockValue(chain_leaves(args[q], env) or [], None, args[q], label=f"{q}={v}")
            failing = block and self._failing_width(block, args[p], env, scope, p)
            key = block and (block.name or id(block.site))
            if not failing or key in found:
                continue
            note = Note(
                f"`{kname}` requires `{p} % {q} == 0`: it fails to compile (or asserts) for this width",
                path=kernel.path,
                span=Span(line, 0, line, 0),
            )
            crash = f"`{kname}` requires `{p} % {q} == 0` ({kernel.path}:{line})"
            found[key] = Finding(block, *failing, [crash], args[p], note)

    def _report(self, f: Finding, env: Env, scope: Scope) -> None:
        block, dim = f.block, f.dim
        values = sorted({leaf.value for leaf in block.leaves}, reverse=True)
        chain = len(values) > 1
        bname = block.name or block.label or code(block.site)
        xc = code(f.x)
        picked = picks(block.leaves, dim.value)
        shown = picked[-1] if picked else values[-1]
        kind = "fallback chain" if chain else "fixed block"
        value_text = "" if block.label else " (" + " / ".join(str(v) for v in values) + ")"
        message = (
            f"{kind} `{bname}`{value_text} must divide `{xc}`, and does not for "
            f"{dim.where} = {dim.value} ({dim.value} % {shown} = {dim.value % shown}): "
            f"{f.crashes[0]} fails for that model"
        )
        notes = [
            Note(
                f"`{xc}` is a model dimension ({f.dim_name}): it changes with the model and the "
                f"parallel layout; `{bname}` only divides the widths it was tested with"
                + (", and the chain's last fallback still does not divide every real width" if chain else "")
            )
        ]
        if f.kernel_note is not None:
            notes.append(f.kernel_note)
        notes += [Note(f"also: {c}") for c in f.crashes[1:]]
        # the leaf the counterexample takes (a chain's last fallback unless a
        # ``!= 0`` test picks an earlier branch): the one the fix rewrites
        failing = next(leaf for leaf in reversed(block.leaves) if leaf.value == shown)
        self.report(block.site, message, notes=notes, fix=self._fix(f, failing, env, scope))

    def _fix(self, f: Finding, last: Leaf, env: Env, scope: Scope) -> PendingFix:
        xc, c = code(f.x), last.value
        order = f.block.local_order
        if order is not None and binds_before(f.x, env, order) and isinstance(last.node, cst.Integer):
            reaches_kernel = f.kernel_note is not None or any(
                isinstance(a.value, cst.Name) and a.value.value == f.block.name
                for call in scope.launches
                for a in call.args
            )
            return PendingFix(
                title=(
                    f"Use `math.gcd({xc}, {c})`: the largest block not above {c} "
                    f"that divides {xc} (the same block for every width that passed)"
                ),
                applicability=Applicability.UNSAFE if reaches_kernel else Applicability.SAFE,
                replacements=[(last.node, f"math.gcd({xc}, {c})")],
                add_imports=["math"],
            )
        return PendingFix(
            title=(
                f"Derive the block from the width where `{xc}` is known: `math.gcd({xc}, {c})` "
                f"divides it by construction and equals {c} whenever {c} does"
            ),
            applicability=Applicability.DISPLAY_ONLY,
        )


def _constant_text(e: cst.BaseExpression) -> bool:
    """A block passed as a number of two digits or more, or an UPPER_CASE
    name: what the prefilter admits for a launch."""
    v = int_literal(e)
    if v is not None:
        return v >= 10
    return isinstance(e, cst.Name) and e.value.isupper()


def _bound_names(body: cst.CSTNode) -> set[str]:
    return {
        t.target.value
        for n in walk(body)
        if isinstance(n, cst.Assign)
        for t in n.targets
        if isinstance(t.target, cst.Name)
    }
