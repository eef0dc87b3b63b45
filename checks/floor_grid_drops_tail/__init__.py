"""SHD103 floor-grid-drops-tail: a launch grid or a loop count computed as
``n // BLOCK`` with nothing that makes ``n`` a multiple of ``BLOCK`` or
handles what is left.

The traversal shared with SHD102 gathers each function's floor divisions
(in launch grids, in loop counts), remainder tests and requirements, and
judges them when the function is left. What a launched kernel does with the
extent (a grid-stride loop, a loop to the extent, a ``static_assert``) comes
from the ``kernel_tiling`` facts of SHD102's package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from checks.fixed_block_divisibility.blocks import (
    OTHER,
    Bindings,
    Env,
    ScopeVisitor,
    chain_leaves,
    code,
    const,
    dimension_name,
    resolve,
    short,
)
from checks.fixed_block_divisibility.dims import (
    DIMENSION_NAMES,
    FORMAT_BLOCK_NAMES,
    counterexample,
    kind_of,
)
from checks.fixed_block_divisibility.kernel_tiling import KernelTiling, decorated, launch_args
from checks.floor_grid_drops_tail.guards import (
    Width,
    is_power_of_two,
    power_of_two_example,
    width_facts,
)
from linter.needles import Needles
from linter.rule import Option, PendingFix, Rule
from linter.syntax import (
    call_name,
    decorator_names,
    dotted,
    int_literal,
    name_matches,
    positional_args,
    raises_only,
    walk,
)
from linter.types import Applicability, Note, Severity, Span

DEFAULT_BLOCK_NAMES = ("*block*", "*tile*", "*chunk*", "*_blk", "blk_*", "bs")
MIN_LITERAL_BLOCK = 32
LOOP_CALLS = ("range", "tl.range", "tl.static_range", "triton.language.range")
CEIL_HELPERS = ("cdiv", "ceil_div", "ceildiv", "div_up", "round_up", "align", "next_multiple_of")
# a loop's ceiling count by engine: (module prefix, helper, its import)
CEIL_SPELLINGS = (
    ("sglang", "ceil_div", "from sglang.srt.utils import ceil_div"),
    ("vllm", "cdiv", "from vllm.utils.math_utils import cdiv"),
)


def floor_gates(block_names: Sequence[str]) -> tuple[Needles, Needles]:
    """The (file, definition) gates. File: a floor division whose divisor
    text holds what ``_is_block`` accepts -- two digits, an upper-case letter
    (UPPER_CASE names), or a block name's literal part -- in a file that
    loops or launches. Definition: a floor in a loop count comes after the
    ``range(`` (``tl.range``, ``tl.static_range``) whose end it is; one in a
    launch grid lies, before or after it, in the definition holding the
    launch ``](`` (the grid inline or bound to a name there). A glob with no
    literal part means no gate."""
    words = []
    for glob in block_names:
        part = max(re.split(r"[*?\[\]]", glob.lower()), key=len)
        if not part:
            return Needles(), Needles()
        words.append(re.escape(part))
    floor = r"//\s*\(?[\w.]*?(?:\[\s*[\"'][\w.]*?)?(?:\d\d|[A-Z]|(?i:" + "|".join(words) + "))"
    loop = r"(?:range(?<!\wrange)|static_range)[\s\\]*\([\s\S]*?" + floor
    launch = r"\]\([\s\S]*?" + floor + "|" + floor + r"[\s\S]*?\]\("
    return (
        Needles(any_of=(("range", "]("),), regex=floor),
        Needles(any_of=(("range", "]("),), regex=loop + "|" + launch),
    )


@dataclass
class Floor:
    node: cst.BinaryOperation  # ``X // B``
    launch: cst.Call | None  # the launch whose grid it sizes (None: a loop count)


@dataclass
class Scope:
    params: frozenset[str]
    kernel: bool = False
    # parameters' integer defaults (``BLOCK: int = 64``): the usual block
    defaults: dict[str, int] = field(default_factory=dict)
    bindings: Bindings = field(default_factory=Bindings)
    floors: list[Floor] = field(default_factory=list)
    # every ``X % Y``
    mods: list[cst.BinaryOperation] = field(default_factory=list)
    launches: list[cst.Call] = field(default_factory=list)
    # ``(X // B) * B``, ``X - ...``: the covered part is computed (a tail pass)
    covered: list[cst.BinaryOperation] = field(default_factory=list)
    # tests of asserts (True) and of ``if ...: raise`` (False: false past it)
    stated: list[tuple[cst.BaseExpression, bool]] = field(default_factory=list)
    # in a kernel: names used as ``tl.arange(0, P)``'s extent (powers of two)
    aranged: set[str] = field(default_factory=set)


def _floors_in(e: cst.BaseExpression) -> list[cst.BinaryOperation]:
    """The ``X // B`` an extent is made of: the expression itself, or a
    factor of a product (``b * h * (n // B)``)."""
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.FloorDivide):
            return [e]
        if isinstance(e.operator, cst.Multiply):
            return _floors_in(e.left) + _floors_in(e.right)
    return []


def _is_ceil_numerator(x: cst.BaseExpression) -> bool:
    """``(n + B - 1)``, ``n + B``, ``-n``: a ceiling division's numerator."""
    if isinstance(x, cst.UnaryOperation) and isinstance(x.operator, cst.Minus):
        return True
    return isinstance(x, cst.BinaryOperation) and isinstance(x.operator, (cst.Add, cst.Subtract))


class FloorGridDropsTail(ScopeVisitor, Rule):
    """## What it finds
    A Triton launch grid whose extent is `n // BLOCK` (`kernel[(n //
    BLOCK,)](...)`, `grid = (B, H, D // BLOCK_SIZE)`, also a factor of a
    product) or a loop count `range(n // BLOCK)` (`tl.range`,
    `tl.static_range`, in host code or inside a kernel) where nothing makes
    `n` a multiple of `BLOCK` or handles what is left: no `assert n % BLOCK
    == 0` or `if n % BLOCK: raise`, no remainder computed (`n % BLOCK`,
    `n - (n // BLOCK) * BLOCK`), no `tl.static_assert(N % BLOCK == 0)` in the
    kernel, no grid-stride loop (`tl.num_programs`) or loop to the extent in
    the launched kernel, and no statement in the function (an assert or `if
    ...: raise`) that lets only widths the block divides through: `n in
    (2048, 4096)` / `n == 4096` with every admitted value a multiple of every
    value the block can take, or `n` a power of two (`n ==
    triton.next_power_of_2(n)`, `n & (n - 1) == 0`, an `is_power_of_2(n)`
    predicate) with a lower bound (`n >= 64`, also in the same chain) at
    least every block value, each a power of two (a literal, a chain of
    them, or `n` itself: `32 if ... else 64 if ... else n`).

    Only a power of two reaches a floor over a width the kernel takes as
    `tl.arange(0, n)` (Triton refuses any other at compile time) or that the
    function requires to be one: there no partial block exists, and the
    message names what is lost instead, a power of two below the block (no
    program runs, nothing is written).

    `BLOCK` is a block: a number above 1, a name bound to numbers, or a
    name matching `block-names`; `n` is a runtime value that is not a padded
    extent (`*pad*`, `*aligned*`, `*round*`, a `round_up`/`cdiv(...) * B`
    value).

    Deliberately silent: ceiling divisions (`triton.cdiv`, `(n + B - 1) //
    B`, `-(-n // B)`); a launch whose kernel is not found (an attribute such
    as `self.kernel[grid]`, or a name bound to something else than a
    decorated function): a kernel may cover the extent in ways a launch does
    not show; `n // min(n, C)`, SHD101's finding, reported there; requirements
    with a fixed block, SHD102's; a number format's block (names matching
    SHD102's `format-block-names` defaults: `MXFP8_BLOCK_SIZE`, ...). Not
    read: a width checked in another function (a kernel's loop whose
    launcher validates the width, a validation helper).

    ## Why it breaks
    `n // BLOCK` counts the *whole* blocks of `n`. A grid sized with it
    launches no program for the last partial block, and a loop counted with
    it never runs its last partial iteration: those elements are silently
    not computed (not written, not reduced, not quantised), and the result
    is wrong only for widths that are not multiples of the block -- a head
    dimension of 80 or 96, a per-rank width of 2880 or 3696 -- or, for a
    token count, only for batches that are not. With `n < BLOCK` nothing
    runs at all. A mask in the kernel does not help: no program exists to
    apply it.

    ## Example
    See the corpus files below: `grid = (rows, width // BLOCK)` for a kernel
    that even masks `offs < width`.

    ## Fix
    Cover the tail: `triton.cdiv(n, BLOCK)` for a grid (the kernel must then
    mask `offs < n`), and a ceiling count for a loop (`cdiv` from
    `vllm.utils.math_utils` on vLLM code, `ceil_div` from `sglang.srt.utils`
    on SGLang code) with a masked or clipped last step; or state the
    contract with `assert n % BLOCK == 0` where the caller guarantees it. A
    suggestion, not an edit: which one is right depends on the kernel.

    ## Options
    - `block-names` (list[str]): globs (last name component, any case) of
      the names that hold a block size. Default `["*block*", "*tile*",
      "*chunk*", "*_blk", "blk_*", "bs"]`; UPPER_CASE names and names bound to
      numbers are blocks whatever their name.
    - `dimension-names` (list[str]): globs of names that hold a model
      dimension (for the counterexample the message names; the default is
      SHD102's).
    - `kernel-decorators` (list[str]): decorators that make a function a
      kernel. Default `["triton.jit", "jit"]`.
    """

    code = "SHD103"
    name = "floor-grid-drops-tail"
    summary = "A launch grid or loop count `n // BLOCK` with no divisibility check or tail pass"
    severity = Severity.WARNING
    # every finding is a floor division inside one top-level definition (or
    # module code), with its loop or launch; the kernel a launch names is
    # read from the facts, or from the whole text for one in this file
    # (``KernelFinder``): the engine need not keep the definitions a kept
    # one names
    needles, definition_needles = floor_gates(DEFAULT_BLOCK_NAMES)
    follows_definitions = False
    facts = ("kernel_tiling", "facade_imports")
    tags = ("correctness", "triton")
    options: ClassVar[Mapping[str, Option]] = {
        "block-names": Option(DEFAULT_BLOCK_NAMES, "list[str]", "Globs of names that hold a block size."),
        "dimension-names": Option(DIMENSION_NAMES, "list[str]", "Globs of names that hold a model dimension."),
        "kernel-decorators": Option(
            ("triton.jit", "jit"), "list[str]", "Decorators that make a function a kernel."
        ),
    }

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        return floor_gates(tuple(options.get("block-names", DEFAULT_BLOCK_NAMES)))

    def _scope(self, node: cst.CSTNode, params: frozenset[str]) -> Scope:
        if not isinstance(node, cst.FunctionDef):
            return Scope(params)
        p = node.params
        defaults = {
            a.name.value: v
            for a in (*p.posonly_params, *p.params, *p.kwonly_params)
            if a.default is not None and (v := int_literal(a.default)) is not None
        }
        kernel = decorated(decorator_names(node), self.opts["kernel-decorators"])
        return Scope(params, kernel, defaults)

    def visit_For(self, node: cst.For) -> None:
        super().visit_For(node)
        it = node.iter
        if isinstance(it, cst.Call) and call_name(it) in LOOP_CALLS:
            args = positional_args(it)
            empty = Env(Bindings(), frozenset(), Bindings())
            if len(args) == 1 or (len(args) > 1 and const(args[0], empty) == 0):
                end = args[0] if len(args) == 1 else args[1]
                self._top().floors += [Floor(f, None) for f in _floors_in(end)]

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        op = node.operator
        scope = self._top()
        if isinstance(op, cst.Modulo):
            scope.mods.append(node)
        elif isinstance(op, (cst.Multiply, cst.Subtract)):
            scope.covered.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self._top()
        name = call_name(node) or ""
        if isinstance(node.func, cst.Subscript):
            scope.launches.append(node)
        elif name in ("tl.static_assert", "static_assert"):
            if node.args:
                scope.stated.append((node.args[0].value, True))
        elif scope.kernel and name.rsplit(".", 1)[-1] == "arange" and len(node.args) == 2:
            start, end = node.args[0].value, node.args[1].value
            if int_literal(start) == 0 and isinstance(end, cst.Name):
                scope.aranged.add(end.value)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._top().stated.append((node.test, True))

    def visit_If(self, node: cst.If) -> None:
        if raises_only(node.body):
            self._top().stated.append((node.test, False))

    def _grid_elements(self, call: cst.Call, env: Env) -> list[cst.BaseExpression]:
        """A launch's grid extents: inline or bound once to a name, a lambda's body."""
        sub = call.func
        if not (isinstance(sub, cst.Subscript) and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index)):
            return []
        g: object = sub.slice[0].slice.value
        if isinstance(g, cst.Name):
            binds, _ = env.lookup(g.value)
            g = binds[0] if binds and len(binds) == 1 else None
        if isinstance(g, cst.Lambda):
            g = g.body
        if isinstance(g, (cst.Tuple, cst.List)):
            return [el.value for el in g.elements]
        return [g] if isinstance(g, cst.BaseExpression) else []

    def _analyse(self, scope: Scope, env: Env) -> None:
        for call in scope.launches:
            for el in self._grid_elements(call, env):
                scope.floors += [Floor(f, call) for f in _floors_in(el)]
        seen: set[str] = set()
        for floor in scope.floors:
            key = code(floor.node)
            if key not in seen:
                seen.add(key)
                self._judge(floor, scope, env)

    def _is_block(self, b: cst.BaseExpression, env: Env) -> bool:
        """A number of at least ``MIN_LITERAL_BLOCK`` (smaller ones are
        unrolling and packing factors over fixed extents: ``bf16_dim // 16``,
        ``heads // 4``), or an UPPER_CASE or block-named name (a grid
        lambda's ``meta["BLOCK_N"]`` too) not bound to a number below 2."""
        if isinstance(b, (cst.Integer, cst.BinaryOperation)):
            v = const(b, env)
            return v is not None and v >= MIN_LITERAL_BLOCK
        match b:
            case cst.Subscript(slice=[cst.SubscriptElement(cst.Index(cst.SimpleString() as key))]):
                name = key.evaluated_value if isinstance(key.evaluated_value, str) else None
            case _:
                name = dotted(b)
        if not name:
            return False
        leaf = name.rsplit(".", 1)[-1]
        upper = leaf.isupper() and any(ch.isalpha() for ch in leaf)
        if not (upper or name_matches(name, self.opts["block-names"])):
            return False
        if name_matches(name, FORMAT_BLOCK_NAMES):
            # a number format's block (MX: 32): the quantiser's contract,
            # checked where the format is chosen, not a tiling choice
            return False
        if isinstance(b, cst.Name):
            binds, where = env.lookup(b.value)
            if binds and all(x is not OTHER for x in binds):
                leaves = [chain_leaves(x, where) for x in binds]
                if all(leaves) and min(leaf.value for lv in leaves for leaf in lv) <= 1:  # type: ignore[union-attr]
                    return False
        return True

    def _padded(self, x: cst.BaseExpression, env: Env) -> bool:
        """A padded extent: named so, a ceiling helper's result, or (itself,
        what it was bound to) a product: ``cdiv(n, B) * B``, ``num_blocks *
        B``, a multiple by construction."""
        cands = [x, resolve(x, env)]
        for cand in cands:
            low = (dotted(cand) or "").lower()
            if any(w in low for w in ("pad", "align", "round", "multiple")):
                return True
            if isinstance(cand, cst.Call) and (call_name(cand) or "").endswith(CEIL_HELPERS):
                return True
        if isinstance(x, cst.Name):
            cands += env.lookup(x.value)[0] or []
        return any(isinstance(c, cst.BinaryOperation) and isinstance(c.operator, cst.Multiply) for c in cands)

    def _min_capped(self, x: cst.BaseExpression, b: cst.BaseExpression, env: Env) -> bool:
        """``B = min(X, C)`` with the same ``X``: SHD101 reports it."""
        binds = env.lookup(b.value)[0] if isinstance(b, cst.Name) else None
        xc = code(x)
        return any(
            isinstance(v, cst.Call) and call_name(v) == "min" and any(code(a.value) == xc for a in v.args)
            for v in binds or ()
        )

    def _handled(self, x: cst.BaseExpression, b: cst.BaseExpression, scope: Scope, env: Env) -> bool:
        """A remainder of ``X`` is taken, or the covered part computed (a
        tail pass): ``(X // B) * B``, or ``X - done`` (not ``X - 1``, a
        power-of-two test's ``X & (X - 1)``)."""
        keys, bc = (code(x), code(resolve(x, env))), code(b)
        if any(code(m.left) in keys for m in scope.mods):
            return True
        for n in scope.covered:
            if isinstance(n.operator, cst.Subtract) and code(n.left) in keys and int_literal(n.right) != 1:
                return True
            for p in (n.left, n.right):
                floor = isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.FloorDivide)
                if floor and code(p.left) in keys and code(p.right) == bc:  # type: ignore[union-attr]
                    return True
        return False

    def _judge(self, floor: Floor, scope: Scope, env: Env) -> None:
        x, b = floor.node.left, floor.node.right
        if _is_ceil_numerator(x) or const(x, env) is not None:
            return
        if "grid" in code(x).lower():
            return  # a grid read back (``grid[0] // SPLIT_K``): sized as a multiple where it was built
        if not self._is_block(b, env) or self._padded(x, env) or self._min_capped(x, b, env):
            return
        if self._handled(x, b, scope, env):
            return
        kernel: KernelTiling | None = None
        masked = False
        if floor.launch is not None:
            kernel = self._kernel(floor.launch)
            if kernel is None:
                return
            params = _receiving(floor.launch, kernel.params, x)
            if kernel.grid_stride or params & kernel.looped or any(p in params for p, _, _ in kernel.div):
                return  # the kernel covers the extent itself, or requires a multiple
            masked = bool(params & kernel.masked)
        # the width's code, and what it was bound to
        keys = frozenset({code(x), code(resolve(x, env))})
        width = width_facts(scope.stated, env, keys)
        why = self._only_powers_of_two(floor, x, scope, kernel, width)
        choices = block_choices(b, keys, env)
        if width.admitted and choices is not None and all(v % c == 0 for v in width.admitted for c in choices):
            return  # every width the function lets through is a multiple
        low = width.lower
        if why is not None and choices is not None and all(is_power_of_two(c) and c <= low for c in choices):
            return  # powers of two no larger than a power of two divide it
        if choices == []:
            return  # the block is the width itself: one exact block
        if choices is None:
            # unknown values: a parameter's default is the usual block
            default = scope.defaults.get(b.value) if isinstance(b, cst.Name) else None
            choices = [default] if default is not None else []
        self._report(floor, x, b, choices, kernel, masked, env, width, why)

    def _only_powers_of_two(
        self, floor: Floor, x: cst.BaseExpression, scope: Scope, kernel: KernelTiling | None, width: Width
    ) -> str | None:
        """Why only a power of two reaches the floor as ``x`` (None: no reason)."""
        xc = code(x)
        if width.power_of_two:
            return f"the function refuses any other `{xc}`"
        if floor.launch is None and scope.kernel and xc in scope.aranged:
            return f"the kernel takes `tl.arange(0, {xc})`: other widths fail to compile"
        if kernel is not None:
            given = _receiving(floor.launch, kernel.params, x, exact=True)  # type: ignore[arg-type]
            hit = sorted(given & kernel.aranged)
            if hit:
                return f"`{kernel.name}` takes `tl.arange(0, {hit[0]})` of it: other widths fail to compile"
        return None

    def _report(
        self,
        floor: Floor,
        x: cst.BaseExpression,
        b: cst.BaseExpression,
        values: list[int],
        kernel: KernelTiling | None,
        masked: bool,
        env: Env,
        width: Width,
        why: str | None,
    ) -> None:
        """``values``: the block's possible values this file shows (empty:
        unknown); ``why``: why only a power of two reaches the floor."""
        xc, bc = code(x), code(b)
        floored = short(code(floor.node))
        if floor.launch is not None:
            kname = dotted(floor.launch.func.value)  # type: ignore[attr-defined]
            what, nothing = "grid", f"no program of `{kname}` runs"
            consequence = f"no program of `{kname}` covers the last partial block"
        else:
            what, nothing = "loop count", "the loop never runs"
            consequence = "the last partial block is never processed"
        example = power_of_two_example(values, width.lower) if why else None
        if example is not None and example[0] < example[1]:
            # only a power of two gets here: the floor loses everything below
            # the block, never a partial block
            p, c = example
            message = (
                f"{what} `{floored}` rounds down: for `{xc}` < `{bc}` {nothing}, silently "
                f"({xc} = {p} with {_block_text(bc, c)}: nothing is computed or written); `{xc}` can only be "
                f"a power of two ({why}), so a partial block never occurs"
            )
        else:
            if example is not None:
                p, c = example
                lost = (
                    f"{xc} = {p} with {_block_text(bc, c)}: the last {p % c} are skipped, "
                    f"as {bc} is not a power of two"
                )
            else:
                lost = self._example(x, bc, min(values) if values else None, env, width.admitted)
            message = (
                f"{what} `{floored}` rounds down: {consequence}, silently ({lost}); "
                f"`{xc}` < `{bc}` runs nothing"
            )
            if why:
                message += f"; `{xc}` can only be a power of two ({why})"
        notes: list[Note] = []
        if kernel is not None:
            said = (
                f"masks against `{xc}`: it was written for a partial block, but a floor grid "
                f"launches no program for it"
                if masked
                else f"neither masks nor loops over `{xc}`: with a ceiling grid it would also need a mask"
            )
            span = Span(kernel.line, 0, kernel.line, 0)
            notes.append(Note(f"`{kernel.name}` {said}", path=kernel.path, span=span))
        self.report(floor.node, message, notes=notes, fix=self._suggest(floor, xc, bc, masked))

    def _example(
        self, x: cst.BaseExpression, bc: str, bval: int | None, env: Env, admitted: list[int] | None
    ) -> str:
        if bval is None:
            return f"any `{code(x)}` that is not a multiple of `{bc}` loses its remainder"
        block = _block_text(bc, bval)
        v = next((v for v in admitted or () if v % bval), None)
        if v is not None:
            return f"{code(x)} = {v}, a width the function admits, with {block}: the last {v % bval} are skipped"
        dim_name = dimension_name(x, env, self.opts["dimension-names"])
        if dim_name is not None:
            dim = counterexample(kind_of(dim_name), [bval])
            if dim is not None:
                lost = dim.value % bval
                return f"{dim.where} = {dim.value} with {block}: the last {lost} are skipped"
        n = bval + bval // 2 if bval > 2 else bval + 1
        return f"{code(x)} = {n} with {block}: the last {n % bval} are skipped"

    def _suggest(self, floor: Floor, xc: str, bc: str, masked: bool) -> PendingFix:
        assertion = f"assert `{xc} % {bc} == 0`"
        if floor.launch is not None:
            tail = "" if masked else f" and mask `offs < {xc}` in the kernel"
            title = f"Launch `triton.cdiv({xc}, {bc})` programs{tail}, or {assertion} if the caller guarantees it"
        else:
            count = next(
                (
                    f"`{helper}({xc}, {bc})` iterations (`{spelling}`)"
                    for prefix, helper, spelling in CEIL_SPELLINGS
                    if self.ctx.module_name.startswith(prefix)
                ),
                f"`triton.cdiv({xc}, {bc})` iterations (or `-(-{xc} // {bc})`)",
            )
            title = f"Count {count} and clip or mask the last one, or {assertion}"
        return PendingFix(title=title, applicability=Applicability.DISPLAY_ONLY)


def block_choices(b: cst.BaseExpression, width: frozenset[str], env: Env, depth: int = 0) -> list[int] | None:
    """The constants a block can be, from this file: a literal, a name bound
    to constants or to conditional chains of them (``32 if ... else 64 if
    ... else V``); a branch that is the width itself divides it and is left
    out. None when any value is unknown (a parameter, a call)."""
    if depth > 8:
        return None
    if code(b) in width or code(resolve(b, env)) in width:
        return []
    if isinstance(b, cst.IfExp):
        body = block_choices(b.body, width, env, depth + 1)
        orelse = block_choices(b.orelse, width, env, depth + 1)
        return None if body is None or orelse is None else body + orelse
    v = const(b, env)
    if v is not None:
        return [v] if v > 0 else None
    if isinstance(b, cst.Name):
        binds, where = env.lookup(b.value)
        if not binds or not all(isinstance(x, cst.BaseExpression) for x in binds):
            return None  # unbound, a parameter, or bound to a loop target (``OTHER``)
        got = [block_choices(x, width, where, depth + 1) for x in binds]  # type: ignore[arg-type]
        return None if None in got else [v for values in got for v in values]  # type: ignore[union-attr]
    return None


def _block_text(bc: str, value: int) -> str:
    """``BLOCK = 64``, or ``a block of 64`` for a literal block."""
    return f"a block of {value}" if bc == str(value) else f"{bc} = {value}"


def _receiving(call: cst.Call, params: tuple[str, ...], x: cst.BaseExpression, exact: bool = False) -> set[str]:
    """The kernel parameters a launch passes ``x`` to: itself, or (unless
    ``exact``) an expression holding it."""
    xc = code(x)
    return {
        p
        for p, a in launch_args(call, params).items()
        if code(a) == xc or not exact and any(code(n) == xc for n in walk(a))
    }
