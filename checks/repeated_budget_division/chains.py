"""The values SHD401 follows: a budget and the splits made of it along one
path (``Chain``), each split (``Step``) with the group its divisor names, and
the words a finding says about them. Plain data and text helpers; the
analysis is in ``__init__``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import libcst as cst


@dataclass(frozen=True)
class Step:
    size: str  # the divisor as written
    code: str  # the expression or statement that divided, for the message
    group: str  # the parallel group the divisor names (`dp` for `attn_dp_size`)
    where: str = ""  # the method that made this split, when another one reads it


def bare_code(ctx: Any, node: cst.CSTNode) -> str:
    """A divisor as written, without the parentheses around it (``(\n
    ep_size\n)`` names ``ep_size``)."""
    if isinstance(node, cst.BaseExpression) and (node.lpar or node.rpar):
        node = node.with_changes(lpar=[], rpar=[])
        return cst.Module(body=[]).code_for_node(node)
    return ctx.code_for(node)


@dataclass(frozen=True)
class Chain:
    """A value derived from one budget by zero or more splits over parallel sizes."""

    budget: str
    steps: tuple[Step, ...]
    nodes: frozenset[int]  # ids of the division nodes inside the expression

    def plus(self, step: Step, node: cst.CSTNode) -> Chain:
        return Chain(self.budget, (*self.steps, step), self.nodes | {id(node)})


_GROUP_NAMES = {
    "dp": "data-parallel",
    "ep": "expert-parallel",
    "tp": "tensor-parallel",
    "pp": "pipeline-parallel",
    "cp": "context-parallel",
    "world": "world",
}


def why_note(chain: Chain, why: tuple[str, str]) -> str:
    kind, group = why
    named = [st.size for st in chain.steps if st.group == group]
    label = _GROUP_NAMES.get(group, f"`{group}`")
    if kind == "repeat":
        return (
            f"{', '.join(f'`{n}`' for n in dict.fromkeys(named))} name the same {label} group "
            f"(or one that contains the other): each rank's share of `{chain.budget}` is "
            "divided by it twice, while code that splits it once sizes from the whole share; "
            "ranks disagree on buffer shapes (`shape mismatch` at KV-cache init) or run with "
            "a fraction of their budget"
        )
    return (
        f"`{named[0]}` ranks own no share of `{chain.budget}` ({label} peers hold the same "
        "blocks, slots and tokens): the extra split leaves each rank a fraction of its "
        "budget, and code that splits once disagrees with it (`shape mismatch` at KV-cache "
        "init with expert + data parallelism)"
    )


def in_method(chain: Chain, where: str) -> Chain:
    """``chain`` read in another method: its steps name the one that made them."""
    return replace(chain, steps=tuple(replace(st, where=st.where or where) for st in chain.steps))


def leaf_of_call(call: cst.Call) -> str | None:
    f = call.func
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return f.value if isinstance(f, cst.Name) else None


def named_steps(chain: Chain, stmt_code: str) -> Chain:
    """Show a split stored into a name as its statement (`per_dp = num_blocks // dp_size`)."""
    first = stmt_code.splitlines()[0]
    steps = tuple(
        replace(st, code=first) if "=" not in st.code and st.code in stmt_code else st
        for st in chain.steps
    )
    return replace(chain, steps=steps)


def dedupe(steps: Sequence[Step]) -> list[Step]:
    """The first step of each code."""
    out: dict[str, Step] = {}
    for st in steps:
        out.setdefault(st.code, st)
    return list(out.values())


def target_names(t: cst.CSTNode) -> list[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for e in t.elements for n in target_names(e.value)]
    if isinstance(t, cst.StarredElement):
        return target_names(t.value)
    return []
