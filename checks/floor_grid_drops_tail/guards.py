"""What a function states about a width before it floors it: read from its
``assert`` statements, its ``if ...: raise`` tests (which must be false past
them) and a kernel's ``tl.static_assert``.

Three kinds of statement count, each about an expression's code:

- a power of two: ``x == triton.next_power_of_2(x)`` (any callee named like
  ``next_pow*``), ``x & (x - 1) == 0``, ``x.bit_count() == 1``, a predicate
  named like ``is_power_of_2`` / ``is_pow2``;
- a lower bound: ``x >= c``, ``x > c``, ``c <= x``, also through an equality
  in the same chain (``x == next_power_of_2(x) >= 64``);
- the only values admitted: ``x in (c1, c2)``, ``x == c`` (or ``if x not in
  (...): raise``), each value a constant the file shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from checks.fixed_block_divisibility.blocks import Env, code, const
from linter.syntax import call_name, int_literal, positional_args

# comparison operators by libcst class name (the scan imports this module
# without loading libcst: see ``linter._lazy``)
_OPS: dict[str, str] = {
    "Equal": "==",
    "NotEqual": "!=",
    "LessThan": "<",
    "LessThanEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanEqual": ">=",
    "In": "in",
    "NotIn": "not in",
}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not in", "not in": "in"}


@dataclass
class WidthFacts:
    """What the statements say, by the code of the expression they are about."""

    power_of_two: set[str] = field(default_factory=set)
    lower: dict[str, int] = field(default_factory=dict)
    admitted: dict[str, list[int]] = field(default_factory=dict)

    def add_lower(self, key: str, value: int) -> None:
        self.lower[key] = max(self.lower.get(key, value), value)

    def admit(self, key: str, values: list[int]) -> None:
        old = self.admitted.get(key)
        self.admitted[key] = values if old is None else [v for v in old if v in values]


@dataclass(frozen=True)
class Width:
    """What they say about one width, known by any of several codes."""

    power_of_two: bool
    lower: int  # a lower bound (1: none stated)
    admitted: list[int] | None  # the only values it may take


def is_power_of_two(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def power_of_two_example(blocks: Iterable[int], low: int) -> tuple[int, int] | None:
    """``(width, block)``: a power of two of at least ``low`` that one of
    ``blocks`` does not divide -- the largest power of two below a
    power-of-two block (nothing runs), or the first power of two above a
    block that is not one (a partial block); None when every block divides
    every such width."""
    for c in sorted(blocks, reverse=True):
        if is_power_of_two(c):
            if c // 2 >= max(low, 1):
                return c // 2, c
        elif c > 1:
            return 1 << (max(low, c) - 1).bit_length(), c  # the first power of two >= low and c
    return None


def _power_of_two_call(e: cst.BaseExpression, predicate: bool) -> cst.BaseExpression | None:
    """``x`` for ``next_power_of_2(x)`` (``triton.next_power_of_2``,
    ``next_pow2``, ...), or with ``predicate`` for ``is_power_of_2(x)``
    (``is_pow2``, ``_is_power_of_two``)."""
    if not isinstance(e, cst.Call) or len(e.args) != 1 or len(positional_args(e)) != 1:
        return None
    leaf = (call_name(e) or "").rsplit(".", 1)[-1].lower().lstrip("_")
    if predicate:
        named = leaf.startswith("is") and "pow" in leaf and ("2" in leaf or "two" in leaf)
    else:
        named = "next" in leaf and "pow" in leaf
    return e.args[0].value if named else None


def _clears_low_bit_of(e: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``x & (x - 1)``."""
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.BitAnd):
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if (
                isinstance(b, cst.BinaryOperation)
                and isinstance(b.operator, cst.Subtract)
                and int_literal(b.right) == 1
                and code(b.left) == code(a)
            ):
                return a
    return None


def _bit_count_of(e: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``x.bit_count()``."""
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "bit_count":
        return e.func.value if not e.args else None
    return None


def width_facts(
    stated: Iterable[tuple[cst.BaseExpression, bool]], env: Env, keys: Iterable[str]
) -> Width:
    """What the tests in ``stated`` say about the width whose code is one of
    ``keys``; each test comes with whether it holds past its statement (True
    for an assert, False for the test of ``if ...: raise``)."""
    facts = WidthFacts()
    for test, holds in stated:
        _record(facts, test, holds, env)
    return Width(
        any(k in facts.power_of_two for k in keys),
        max((facts.lower[k] for k in keys if k in facts.lower), default=1),
        next((facts.admitted[k] for k in keys if k in facts.admitted), None),
    )


def _record(facts: WidthFacts, test: cst.BaseExpression, holds: bool, env: Env) -> None:
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.BooleanOperation):
        # ``a and b`` holding, or ``a or b`` false: each part alone
        if isinstance(test.operator, cst.And) == holds:
            _record(facts, test.left, holds, env)
            _record(facts, test.right, holds, env)
        return
    if isinstance(test, cst.Comparison):
        ops = [_OPS.get(type(c.operator).__name__) for c in test.comparisons]
        if None in ops or (not holds and len(ops) != 1):
            return
        if not holds:
            ops = [_NEGATED[ops[0]]]  # type: ignore[index]
        items = [test.left, *(c.comparator for c in test.comparisons)]
        _chain(facts, items, ops, env)  # type: ignore[arg-type]
        return
    x = _clears_low_bit_of(test)
    if x is not None and not holds:
        facts.power_of_two.add(code(x))
        return
    x = _power_of_two_call(test, predicate=True)
    if x is not None and holds:
        facts.power_of_two.add(code(x))


def _chain(facts: WidthFacts, items: list[cst.BaseExpression], ops: list[str], env: Env) -> None:
    """A comparison chain that holds: ``a == b >= c`` is ``a == b and b >=
    c``; items joined by ``==`` share a lower bound."""
    groups: list[list[cst.BaseExpression]] = [[items[0]]]
    for op, item in zip(ops, items[1:]):
        if op == "==":
            groups[-1].append(item)
        else:
            groups.append([item])
    group_of = [g for g in groups for _ in g]  # each item's group
    for i, op in enumerate(ops):
        a, b = items[i], items[i + 1]
        if op == "==":
            _equal(facts, a, b, env)
        elif op in (">=", ">") and (c := const(b, env)) is not None:
            for m in group_of[i]:
                facts.add_lower(code(m), c + (op == ">"))
        elif op in ("<=", "<") and (c := const(a, env)) is not None:
            for m in group_of[i + 1]:
                facts.add_lower(code(m), c + (op == "<"))
        elif op == "in" and isinstance(b, (cst.Tuple, cst.List, cst.Set)) and b.elements:
            values = [const(el.value, env) for el in b.elements]
            if const(a, env) is None and all(v is not None for v in values):
                facts.admit(code(a), values)  # type: ignore[arg-type]


def _equal(facts: WidthFacts, a: cst.BaseExpression, b: cst.BaseExpression, env: Env) -> None:
    for x, y in ((a, b), (b, a)):
        inner = _power_of_two_call(y, predicate=False)
        if inner is not None and code(inner) == code(x):
            facts.power_of_two.add(code(x))
            return
        if int_literal(y) == 0 and (inner := _clears_low_bit_of(x)) is not None:
            facts.power_of_two.add(code(inner))
            return
        if int_literal(y) == 1 and (inner := _bit_count_of(x)) is not None:
            facts.power_of_two.add(code(inner))
            return
    ca, cb = const(a, env), const(b, env)
    if ca is None and cb is not None:
        facts.admit(code(a), [cb])
    elif cb is None and ca is not None:
        facts.admit(code(b), [ca])
