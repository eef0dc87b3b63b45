"""The ``pp_tap_drops`` facts: per module, the classes whose payload return
leaves collected taps behind, as the rule's analysis finds them under the
default names, with what a claim is read from (the class's own flag, its
bases): a runner path's finding names the models it breaks from these. Lazy:
computed (one libcst parse of the definitions the rule's
``definition_needles`` match, as the check parses them) only when a path's
file is checked and some path is open, for the modules ``pp_capture_setters``
lists (every module matching the payload needles)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from checks.facts.classes import ClassIndex, NonLiteral
from checks.pp_payload_drops_tensors.analysis import (
    ANALYSIS_DEFAULTS,
    DEFAULT_FLAGS,
    DropAnalysis,
    base_names,
    own_flags,
)
from checks.pp_payload_drops_tensors.capture import gated
from checks.pp_payload_drops_tensors.needles import DEFINITION_NEEDLES, PAYLOAD_NEEDLES
from linter.api import FactCollector, Note, call_name
from linter.astwalk import first_line
from linter.facts import RecordedMemo
from linter.positions import positions
from linter.syntax import child_nodes
from linter.types import Span

# the top-level statements a class can be defined in
_COMPOUND = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.Try, ast.With, ast.For, ast.While)


def _classes(node: cst.CSTNode, names: tuple[str, ...] = ()) -> Iterator[tuple[str, cst.ClassDef]]:
    """Every class under ``node``, in source order, with its qualified name
    as the rule gives it (the enclosing classes' names; functions are not
    part of it). (A function, not a visitor class: a scan that never checks
    must not load libcst, see ``linter._lazy``.)"""
    for child in child_nodes(node):
        if isinstance(child, cst.ClassDef):
            qual = (*names, child.name.value)
            yield ".".join(qual), child
            yield from _classes(child, qual)
        else:
            yield from _classes(child, names)


def _kept(stmt: ast.stmt, lines: list[str]) -> str:
    """``stmt``'s text as the check reads it (``follows_definitions =
    False``): of a class, the methods whose text holds the definition needles,
    its header and its other statements; each method left out becomes a
    ``pass`` on its first line, blank lines after (positions unchanged)."""
    first = first_line(stmt)
    out = lines[first - 1 : stmt.end_lineno]
    if isinstance(stmt, ast.ClassDef):
        for node in stmt.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a, b = first_line(node) - first, node.end_lineno - first
            if DEFINITION_NEEDLES.match("".join(out[a : b + 1])):
                continue
            out[a] = " " * node.col_offset + "pass\n"
            out[a + 1 : b + 1] = ["\n"] * (b - a)
    return "".join(out)


def tap_drop_facts(tree: ast.Module, text: str, path: str) -> dict[str, Any] | None:
    """``{"path", "drops": [row...]}``, a row per method that drops taps, with
    the fields of :class:`TapDrop` but its module and path."""
    lines = text.splitlines(keepends=True)
    analysis = DropAnalysis(ANALYSIS_DEFAULTS)
    rows = []
    for stmt in tree.body:
        if not isinstance(stmt, _COMPOUND):
            continue
        first = first_line(stmt)
        if not DEFINITION_NEEDLES.match("".join(lines[first - 1 : stmt.end_lineno])):
            continue
        segment = _kept(stmt, lines)
        try:
            module = cst.parse_module(segment if segment.endswith("\n") else segment + "\n")
        except cst.ParserSyntaxError:
            continue
        for qual, cls in _classes(module):
            for m, _payloads, dropped in analysis.drops(cls):
                if not dropped:
                    continue
                # where the rule reports (the first payload call, else the
                # return) and the other returns that drop (its notes)
                payload = analysis.payload_call(dropped[0][0].node.value)
                where = [payload or dropped[0][0].node, *(r.node for r, _ns in dropped[1:])]
                pos = positions(module, where)
                if any(n not in pos for n in where):
                    continue
                spans = [[pos[n][0] + first - 1, pos[n][1], pos[n][2] + first - 1, pos[n][3]] for n in where]
                flags = own_flags(cls, DEFAULT_FLAGS)
                rows.append(
                    {
                        "cls": qual,
                        "method": m.name.value,
                        "names": sorted({n for _r, ns in dropped for n in ns}),
                        "payload": call_name(payload) if payload is not None else None,
                        "span": spans[0],
                        "others": spans[1:],
                        "flags": {
                            k: {"nonliteral": v.source} if isinstance(v, NonLiteral) else v for k, v in flags.items()
                        },
                        "bases": base_names(cls),
                    }
                )
    return {"path": path, "drops": rows} if rows else None


@dataclass(frozen=True)
class TapDrop:
    """One method whose payload leaves taps behind."""

    module: str
    path: str
    cls: str  # qualified name
    method: str
    names: Sequence[str]  # the taps left behind
    payload: str | None  # the payload call's name
    span: Sequence[int]  # where the rule reports it
    others: Sequence[Sequence[int]]  # its other dropping returns
    flags: Mapping[str, Any]  # the default flags the class sets itself
    bases: Sequence[str]


Claim = tuple[Any, str, Note | None, str | None]


def claim_of(
    index: ClassIndex | None,
    module: str,
    own: Mapping[str, Any],
    bases: Sequence[str],
    flags: Sequence[str],
) -> Claim | None:
    """(value, flag, note, owner) of the first capability flag the class
    sets (``own``: flag -> value) or inherits along its ``bases`` (``owner``
    the base that sets it, None for the class itself, ``note`` pointing at
    it); ``None`` when no flag is set anywhere."""
    mro = None
    for flag in flags:
        if flag in own:
            return own[flag], flag, None, None
        if index is None:
            continue
        if mro is None:
            mro = index.mro_of_bases(module, bases)
        hit = index.attr_in(mro, flag)
        if hit is None:
            continue
        loc = index.attr_location(hit.owner, flag)
        note = None
        if loc is not None:
            path, *span = loc
            note = Note(f"`{flag} = {hit.value!r}` is inherited from `{hit.owner}`", path, Span(*span))
        return hit.value, flag, note, hit.owner
    return None


def claim_state(claim: Claim | None) -> str:
    """``"claimed"`` (a true flag: the class's own finding), ``"silent"``
    (a flag the rule cannot read: no finding) or ``"unclaimed"`` (no flag,
    or a false one: reached through an open path only)."""
    if claim is None:
        return "unclaimed"
    if isinstance(claim[0], NonLiteral):
        return "silent"
    return "claimed" if claim[0] else "unclaimed"


class TapDropIndex:
    """The project's tap drops, read module by module (the modules
    ``pp_capture_setters`` lists)."""

    def __init__(self, per_module: Mapping[str, Any], capture: Mapping[str, Any]) -> None:
        self._modules = per_module
        self._capture = capture
        self._cached = RecordedMemo()

    def drops(self) -> tuple[TapDrop, ...]:
        """The drops of the modules that collect taps on every rank."""
        return self._cached("drops", "", self._drops)

    def _drops(self) -> tuple[TapDrop, ...]:
        out = []
        for module in sorted(self._capture):
            data = self._modules.get(module) or {}
            if gated(self._capture[module], self._capture):
                continue  # (capture turned on for the last rank only)
            for row in data.get("drops", ()):
                flags = {k: NonLiteral(v["nonliteral"]) if isinstance(v, dict) else v for k, v in row["flags"].items()}
                out.append(TapDrop(module, data.get("path", ""), **{**row, "flags": flags}))
        return tuple(out)


class PpTapDrops(FactCollector):
    """Per module, the methods whose pipeline payload leaves taps behind
    (:func:`tap_drop_facts`)."""

    name = "pp_tap_drops"
    version = 2  # 2: a row's ``cls``, as TapDrop names it
    lazy = True
    index_with = ("pp_capture_setters",)
    needles = PAYLOAD_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return tap_drop_facts(tree, text, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any], capture: Mapping[str, Any]) -> TapDropIndex:
        return TapDropIndex(per_module, capture)
