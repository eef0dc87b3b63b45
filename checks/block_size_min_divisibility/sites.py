"""SHD101's pieces of one function: the ``min(X, C)`` sites, what consumes
a block, the guards that silence a site, and the texts of its consumers."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks.block_size_min_divisibility.values import Env, Values, code, is_pow2
from checks.facts.kernels import KernelFacts, Need
from linter.syntax import call_name, int_literal, walk
from linter.types import Note, Span

# Ceiling-division helpers: a grid computed with them covers the tail, so an
# ``X // B`` count next to one is remainder-aware code, not an assumption.
CDIV_NAMES = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up", "round_up", "triton.cdiv"})


@dataclass
class Scope:
    """What one function (or the module) holds that the rule looks at."""

    params: frozenset[str] = frozenset()
    knobs: frozenset[str] = frozenset()
    bindings: dict[str, list[object]] = field(default_factory=dict)
    # comparisons that must hold (assert: True) or fail (``if ...: raise``)
    pins: list[tuple[cst.Comparison, bool]] = field(default_factory=list)
    has_min: bool = False
    # ``X % B``, ``X // B``, ``X % 2048`` (a name or a literal on the right),
    # each with where it sits (see the rule's ``_where``)
    ops: list[tuple[cst.BinaryOperation, str]] = field(default_factory=list)
    cdiv_calls: list[cst.Call] = field(default_factory=list)
    launches: list[cst.Call] = field(default_factory=list)
    # calls of plain functions, which may be launchers
    calls: list[cst.Call] = field(default_factory=list)
    loops: list[cst.For] = field(default_factory=list)
    pow2_checks: list[cst.CSTNode] = field(default_factory=list)


@dataclass
class MinSite:
    """One ``min(X, C)`` that may be used as a block size."""

    call: cst.Call
    x: cst.BaseExpression
    c: cst.BaseExpression
    c_value: int | None
    c_pow2: bool
    name: str  # the bound name, or the launch keyword for an inline min
    # the least value a cap that is not one constant can take (a name bound
    # to 32 or 128): the counterexample's cap
    c_least: int | None
    family: set[str] = field(default_factory=set)
    inline: bool = False


@dataclass
class Consumer:
    # "div": the block must divide the width; "pow2": be a power of two;
    # "multiple": be a multiple of ``factor``
    kind: str
    where: str  # what the user sees: the code or the kernel parameter
    outcome: str  # what a block that fails it does, in a few words
    note: Note | None = None
    floor: bool = False
    factor: int | None = None


def has_offset_arith(e: cst.CSTNode) -> bool:
    """``min(off + B, n)``, ``min(B, n - start)``: an end index or a remainder,
    not a block size."""
    return any(
        isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract))
        for n in walk(e)
    )


def names_block(e: object, family: set[str]) -> bool:
    return isinstance(e, cst.Name) and e.value in family


def _may_be(value: object, names: set[str]) -> bool:
    """``value`` is one of ``names``, or a conditional with a branch that is."""
    if isinstance(value, cst.IfExp):
        return _may_be(value.body, names) or _may_be(value.orelse, names)
    return names_block(value, names)


def aliases(names: set[str], local: Mapping[str, list[object]], maybe: bool) -> set[str]:
    """``names`` and every name bound only to one of them (``tile = BLOCK``:
    the block's family) or, with ``maybe``, one of whose bindings is (or may
    be, in a conditional) one of them (``tile = PREFILL_TILE`` in one branch,
    ``tile = DECODE_TILE`` in the other: the names it may reach a use under)."""
    quantifier, member = (any, _may_be) if maybe else (all, names_block)
    out = set(names)
    while new := {
        n
        for n, binds in local.items()
        if n not in out and binds and quantifier(member(b, out) for b in binds)
    }:
        out |= new
    return out


@functools.cache
def _dimension_matchers() -> tuple[Any, Any]:
    """``t.shape[k]`` and ``t.size(k)`` (imported and built on first use: a
    scan that never checks must not load libcst, see ``linter._lazy``)."""
    import libcst.matchers as m

    shape_k = m.Subscript(
        value=m.Attribute(value=m.Name(), attr=m.Name("shape")),
        slice=[m.SubscriptElement(slice=m.Index())],
    )
    size_k = m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size")), args=[m.DoNotCare()])
    return shape_k, size_k


def tensor_dim(e: object) -> tuple[str, str] | None:
    """(tensor name, dimension as written) of ``t.shape[k]`` or ``t.size(k)``."""
    import libcst.matchers as m

    shape_k, size_k = _dimension_matchers()
    if isinstance(e, cst.Subscript) and m.matches(e, shape_k):
        return e.value.value.value, code(e.slice[0].slice.value)
    if isinstance(e, cst.Call) and m.matches(e, size_k):
        return e.func.value.value, code(e.args[0].value)
    return None


class SameX:
    """Whether an expression denotes the same width as the ``min`` argument:
    equal code, or a name bound once to it (``h = x.shape[1]``)."""

    def __init__(self, x: cst.BaseExpression, env: Env) -> None:
        self.env = env
        self.target = self._canon(x)

    def _canon(self, e: cst.CSTNode, depth: int = 0) -> str:
        if isinstance(e, cst.Name) and depth < 4:
            binds = self.env.local.get(e.value)
            b = binds[0] if binds and len(binds) == 1 else None
            if isinstance(b, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and (
                call_name(b) != "min"
            ):
                return self._canon(b, depth + 1)
        if call_name(e) == "int" and len(e.args) == 1:
            return self._canon(e.args[0].value, depth)
        return code(e)

    def __call__(self, e: cst.CSTNode) -> bool:
        return self._canon(e) == self.target


def pinned(site: MinSite, scope: Scope, env: Env, values: Values) -> bool:
    """``assert D == 256`` or ``if n not in (64, 128): raise`` in the same
    function: the width is fixed, ``min`` of it is a constant."""
    same_x = SameX(site.x, env)
    for cmp, holds in scope.pins:
        if len(cmp.comparisons) != 1:
            continue
        op = cmp.comparisons[0].operator
        left, right = cmp.left, cmp.comparisons[0].comparator
        if not isinstance(op, (cst.Equal, cst.In) if holds else (cst.NotEqual, cst.NotIn)):
            continue
        if isinstance(op, (cst.Equal, cst.NotEqual)):
            if (same_x(left) and values.const(right) is not None) or (
                same_x(right) and values.const(left) is not None
            ):
                return True
        elif (
            same_x(left)
            and isinstance(right, (cst.Tuple, cst.List, cst.Set))
            and right.elements
            and all(values.const(el.value) is not None for el in right.elements)
        ):
            return True
    return False


def host_consumers(site: MinSite, scope: Scope, env: Env) -> list[Consumer]:
    """``assert X % B == 0`` (or ``if X % B: raise``), ``X // B`` outside a
    test, ``range(0, X, B)`` over a body with no tail handling."""
    out: list[Consumer] = []
    same_x = SameX(site.x, env)
    for node, where in scope.ops:
        if not names_block(node.right, site.family) or not same_x(node.left):
            continue
        if isinstance(node.operator, cst.Modulo) and where in ("check", "raise"):
            verb = "is asserted" if where == "check" else "is required (else it raises)"
            outcome = "the assert fails (AssertionError)" if where == "check" else "it raises"
            shown = f"`{short(code(node))} == 0` {verb}"
            out.append(Consumer("div", shown, outcome + " on such a model"))
        elif isinstance(node.operator, cst.FloorDivide) and where != "test":
            shown = f"`{short(code(node))}` drops the remainder"
            out.append(
                Consumer("div", shown, "the last partial block is silently skipped", floor=True)
            )
    for loop in scope.loops:
        it = loop.iter
        assert isinstance(it, cst.Call)
        if (
            same_x(it.args[1].value)
            and names_block(it.args[2].value, site.family)
            and not loop_handles_tail(loop)
        ):
            shown = f"`{short(code(it))}` has no tail handling"
            out.append(Consumer("div", shown, "the last block runs past the end or is mishandled"))
    return out


def loop_handles_tail(loop: cst.For) -> bool:
    """A loop body that clips (``min``/``max``, a slice), compares (a mask),
    branches or takes a remainder handles the last partial block."""
    return any(
        isinstance(n, (cst.Slice, cst.Comparison, cst.If, cst.IfExp))
        or call_name(n) in ("min", "max")
        or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo))
        for n in walk(loop.body)
    )


def live(site: MinSite, consumers: list[Consumer], scope: Scope | None, env: Env) -> list[Consumer]:
    """The consumers no guard of the function (``scope``; None for a ``min``
    written in a launch) answers."""
    div_guard = cdiv = pow2_guard = False
    if scope is not None:
        # ``if X % B``, ``EVEN_K = X % B == 0``, ``while X % B``: the code
        # knows the remainder can be non-zero (unless it asserts it is not)
        div_guard = any(
            isinstance(n.operator, cst.Modulo)
            and where not in ("check", "raise")
            and names_block(n.right, site.family)
            for n, where in scope.ops
        )
        cdiv = any(names_block(a.value, site.family) for c in scope.cdiv_calls for a in c.args)
        tested = {
            n.value for chk in scope.pow2_checks for n in walk(chk) if isinstance(n, cst.Name)
        }
        pow2_guard = bool(tested & site.family)
        # The width itself tested for a power of two (``if not is_pow2(n):
        # return``): with a cap that is one too, or not visible here,
        # ``min(n, C)`` is a power of two dividing ``n`` where the use is
        # reached (the test's polarity is not checked, as for the block's
        # own tests and ``known_multiple``).
        if (
            isinstance(site.x, cst.Name)
            and site.x.value in tested
            and (site.c_pow2 or site.c_value is None)
        ):
            div_guard = pow2_guard = True
        if known_multiple(site, scope, env):
            div_guard = True
            pow2_guard = pow2_guard or site.c_pow2
    cv = site.c_value
    out = []
    for c in consumers:
        if c.kind == "div":
            answered = div_guard or (cdiv and c.floor) or (cv is not None and cv <= 1)
        elif c.kind == "multiple":
            answered = bool(cv is not None and c.factor and cv <= c.factor)
        else:
            answered = pow2_guard or cv in (1, 2)
        if not answered:
            out.append(c)
    return out


def known_multiple(site: MinSite, scope: Scope, env: Env) -> bool:
    """``if X % 2048 == 0:`` (or ``assert``, ``if X % 2048: raise``) on the
    width, with a divisor the cap divides: where the use is reached, ``X`` is
    a multiple of ``C``, so ``min(X, C)`` is ``C`` and divides it."""
    c = site.c_value
    if c is None or c <= 0:
        return False
    same_x = SameX(site.x, env)
    for node, where in scope.ops:
        d = int_literal(node.right) if isinstance(node.operator, cst.Modulo) else None
        if where and d is not None and d > 0 and d % c == 0 and same_x(node.left):
            return True
    return False


def launch_args(call: cst.Call, params: Sequence[str]) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(kernel parameter, argument) pairs of a launch (positional arguments
    up to the first ``*args``)."""
    i = 0
    positional = True
    for a in call.args:
        if a.keyword is not None:
            yield a.keyword.value, a.value
        elif a.star:
            positional = False
        elif positional:
            if i < len(params):
                yield params[i], a.value
            i += 1


# -- what a finding says ---------------------------------------------------------


def short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_text(call: cst.Call) -> str:
    """The call as written, without comments or line breaks."""
    return f"min({', '.join(code(a.value) for a in call.args)})"


# what a block that fails a kernel's need does, by the need's effect
KERNEL_OUTCOMES = {
    "compile": "the kernel fails to compile at its first launch",
    "debug": (
        "Triton checks an `assert` in a kernel only in debug mode: otherwise the kernel "
        "runs on with the remainder unhandled"
    ),
    "silent": (
        "a tile straddles two groups and the second group's rows are computed with the "
        "first group's data: a silently wrong result"
    ),
}


def kernel_consumer(
    kname: str,
    param: str,
    need: Need,
    facts: KernelFacts,
    passed: str | None = None,
    via: str | None = None,
) -> Consumer:
    """The consumer a kernel parameter's ``need`` makes of the block
    (``passed``: the need's dividend as launched; ``via``: a launcher)."""
    text = need.text or need.op
    inside = f" (in `{need.via}`)" if need.via else ""
    if need.kind == "pow2":
        where = f"`{kname}` uses it as `{param}` in `{text}`{inside}, which needs a power of two"
        note = f"`{kname}` needs `{param}` to be a power of two: it is a block shape in `{text}`"
    elif need.kind == "multiple":
        where = f"`{kname}` requires `{text}`{inside} at compile time (`{need.op}`)"
        note = f"`{kname}` requires `{param}` to be a multiple of {need.factor} (`{need.op}`)"
    elif need.group:
        where = (
            f"`{kname}` takes each tile of `{param}` rows to lie in one group of "
            f"`{need.other}` rows (`{text}`){inside}"
        )
        note = f"`{kname}` tiles each group of `{need.other}` rows by `{param}`: `{text}`"
    elif need.effect == "debug":
        where = f"`{kname}` asserts `{text}`{inside} in the kernel"
        note = f"`{kname}` asserts that `{param}` divides its input: `{text}`"
    else:
        given = f", given `{need.other}={passed}`" if passed and need.other else ""
        where = f"`{kname}` requires `{text}`{inside} at compile time (`{need.op}`){given}"
        note = f"`{kname}` requires its input to be divisible by `{param}` (`{need.op}`)"
    if via:
        where += f" (launched by `{via}`)"
    located = Note(note, path=facts.path, span=Span(*need.span))
    outcome = KERNEL_OUTCOMES["compile" if need.kind != "div" else need.effect]
    return Consumer(need.kind, where, outcome, located, factor=need.factor)


def div_example(x: str, b: str, c: str, cv: int | None, assumed: bool = False) -> str:
    """A width the block does not divide; ``assumed``: ``cv`` is one value
    the cap ``c`` can take (the least), not its only one."""
    if cv is None:
        return f"any `{x}` above `{c}` that is not a multiple of it leaves a remainder"
    # A realistic width: for a power-of-two cap 1.5 * C, a multiple of C/2
    # (aligned to a large power of two, as real widths are) but not of C;
    # for any other cap the next power of two above it, which it does not
    # divide (and which a width tested for a power of two can be).
    xv = cv * 3 // 2 if is_pow2(cv) else 1 << cv.bit_length()
    given = f" with `{c}`={cv}" if assumed else ""
    return f"{x}={xv}{given} → {b}={cv}, {xv} % {cv} = {xv % cv}"


def pow2_example(x: str, b: str, c: str, cv: int | None, c_pow2: bool) -> str:
    if cv is None:
        return f"any `{x}` below `{c}` that is not a power of two passes through unchanged"
    if not is_pow2(cv):
        # every X at or above the cap yields the cap itself
        return f"{x}={1 << cv.bit_length()} → {b}={cv}, not a power of two"
    # 3/4 of a power-of-two cap, three times a power of two, is the kind of
    # width real models have (768, 384, 96); under a small cap (a head or
    # group count), 3 is the common one.
    xv = 3 if cv <= 16 else cv * 3 // 4
    return f"{x}={xv} → {b}={xv}, not a power of two"


def multiple_example(x: str, b: str, cv: int | None, factor: int) -> str:
    """A width below the cap that is not a multiple of ``factor``."""
    xv = factor * 3 // 2 if factor % 2 == 0 else factor + 1
    if cv is None or xv < cv:
        return f"{x}={xv} → {b}={xv}, not a multiple of {factor}"
    if cv % factor:
        return f"{x}={cv} and above → {b}={cv}, not a multiple of {factor}"
    return f"a `{x}` below {cv} that is not a multiple of {factor}"
