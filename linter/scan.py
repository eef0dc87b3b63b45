"""Phase 1, the scan: hash a file, collect its facts, and decide which rules
need to see it, from what the rules declare (``Rule.needles``,
``Rule.definition_needles``) -- never from a rule's own code.

The gates are the engine's, derived generically from what each rule declares
under its effective options (``Rule.declared_needles``, :func:`gate_of`):

1. the file gate: a rule whose ``needles`` the text does not match cannot
   fire in the file;
2. the definition gate, for a rule that declares ``definition_needles``:
   the file is cut (with CPython's ``ast``) into its top-level ``def`` and
   ``class`` statements and the rest of the module, and the rule needs the
   file only when one of those regions matches. The check then parses with
   libcst only the regions some admitted rule's needles match, and the
   definitions those name (a helper they call, a base class), the other
   lines blanked (positions kept): see :func:`check_source`.

A property test (``tests/test_gates.py``) holds the gates sound: with them
closed (every rule on every whole file) the findings are the same.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linter.facts import FactCollector
from linter.needles import Needles
from linter.source import shd000
from linter.types import Diagnostic

if TYPE_CHECKING:
    from linter.rule import Rule


@dataclass
class ScanResult:
    relpath: str
    digest: str = ""
    error: Diagnostic | None = None
    # None: in the cache, not read (see ``fh``)
    facts: dict[str, Any] | None = field(default_factory=dict)
    # for checked files: the rules whose gates passed
    rules: list[str] | None = None
    noqa: bool = False
    # per collector, a hash of this file's facts (what check results depend on)
    fh: dict[str, str] = field(default_factory=dict)


def facts_hash(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def compile_tree(text: str, relpath: str) -> ast.Module:
    """CPython's ``ast`` of ``text`` (raises as ``compile`` does)."""
    return compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


@dataclass(frozen=True)
class Gate:
    """What one rule declares under its effective options
    (``Rule.declared_needles``): the needles of the file gate and, if any,
    of the definition gate."""

    code: str
    file: Needles
    definition: Needles | None = None


def gate_of(rule: type[Rule], options: Mapping[str, Any]) -> Gate:
    """``rule``'s gate under ``options`` (a declaration that fails opens it)."""
    try:
        file, definition = rule.declared_needles(options)
    except Exception:
        return Gate(rule.code, Needles())
    return Gate(rule.code, file, definition)


def admits_text(gate: Gate, text: str) -> bool:
    """The file gate: whether ``text`` holds what the rule declares any
    match needs (a broken declaration lets the file through)."""
    try:
        return bool(gate.file.match(text))
    except Exception:
        return True


@dataclass(frozen=True)
class Regions:
    """A module cut into its top-level definitions and the rest: ``defs`` are
    (start, end) offsets of the whole lines of each top-level ``def`` or
    ``class`` (decorators included), in order; the rest of the text is the
    module-level code."""

    text: str
    defs: tuple[tuple[int, int], ...]
    # the name each definition binds, in the order of ``defs``
    names: tuple[str, ...] = ()

    def rest(self) -> str:
        """The module-level code: the text less every definition's lines."""
        parts, pos = [], 0
        for a, b in self.defs:
            parts.append(self.text[pos:a])
            pos = b
        parts.append(self.text[pos:])
        return "".join(parts)

    def kept(self, gates: Sequence[Gate]) -> list[tuple[int, int]] | None:
        """The spans the libcst check of the rules must see: the module-level
        code, the definitions one of their definition needles matches, and
        every definition whose name what is kept mentions (transitively: a
        helper function a kept one calls, a base class it names); None
        (everything) when a rule declares none."""
        if any(g.definition is None for g in gates):
            return None
        texts = [self.text[a:b] for a, b in self.defs]
        chosen = {i for i, t in enumerate(texts) if any(_matches(g, t) for g in gates)}
        frontier = [self.rest(), *(texts[i] for i in chosen)]
        pending = {i for i in range(len(texts)) if i not in chosen and i < len(self.names)}
        while frontier and pending:
            seen = frontier.pop()
            for i in [i for i in pending if _mentions(seen, self.names[i])]:
                pending.discard(i)
                chosen.add(i)
                frontier.append(texts[i])
        keep, pos = [], 0
        for i, (a, b) in enumerate(self.defs):
            if i in chosen:
                continue
            if a > pos:
                keep.append((pos, a))
            pos = b
        keep.append((pos, len(self.text)))
        return keep

    def admits(self, gate: Gate) -> bool:
        """The definition gate: whether one definition, or the module-level
        code, matches the rule's definition needles."""
        if gate.definition is None:
            return True
        return _matches(gate, self.rest()) or any(_matches(gate, self.text[a:b]) for a, b in self.defs)


def _mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole word."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            return True
        start = text.find(name, start + 1)
    return False


def _matches(gate: Gate, text: str) -> bool:
    try:
        return bool(gate.definition.match(text))  # type: ignore[union-attr]
    except Exception:  # a broken declaration reads everything
        return True


def regions_of(tree: ast.Module, text: str) -> Regions | None:
    """``text`` cut at its top-level definitions (``tree`` is its ``ast``);
    None when lines cannot be told the way CPython counts them (a lone
    carriage return ends a line for CPython, not for the offsets here)."""
    if "\r" in text:
        return None
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)
    n = len(starts)
    defs, names = [], []
    for s in tree.body:
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first = min([s.lineno, *(d.lineno for d in s.decorator_list)])
        last = s.end_lineno or s.lineno
        defs.append((starts[first - 1], starts[last] if last < n else len(text)))
        names.append(s.name)
    return Regions(text, tuple(defs), tuple(names))


def mask_text(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with every line outside ``spans`` (sorted (start, end)
    offsets of whole lines) blanked: the line breaks are kept, so every
    position in it is the text's."""
    out: list[str] = []
    pos = 0
    for a, b in spans:
        if b <= pos:
            continue
        a = max(a, pos)
        if a > pos:
            out.append("\n" * text.count("\n", pos, a))
        out.append(text[a:b])
        pos = b
    if pos < len(text):
        out.append("\n" * text.count("\n", pos))
    return "".join(out)


def scan_text(
    text: str,
    relpath: str,
    module: str,
    collectors: Sequence[type[FactCollector]],
    gates: Sequence[Gate] | None = None,
    syntax: bool = False,
    hashes: bool = True,
    closed: bool = False,
) -> ScanResult:
    """Hash the text, run the fact collectors whose needles match and, for a
    file being checked (the ``gates`` of its rules given), decide which
    rules need to see it (the gates above; ``closed``: all of them). The ``ast`` is built
    at most once and only when something needs it (or, with ``syntax``, for
    every checked file); a syntax error it meets in a checked file is
    SHD000. A file never compiled that a rule admits is parsed by libcst in
    the check phase, which reports SHD000 in turn. Without ``hashes`` (a run
    with no cache) the content digest and the facts hashes are left empty;
    ``fh`` still names the collectors with facts."""
    res = ScanResult(relpath, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() if hashes else "")
    wanted = [c for c in collectors if c.needles.match(text)]
    rules = gates
    if rules is None:
        cands: list[Gate] = []
    elif closed:
        cands = list(rules)
    else:
        cands = [g for g in rules if admits_text(g, text)]
    by_definition = [] if closed else [g for g in cands if g.definition is not None]
    tree = None
    if (syntax and rules is not None) or by_definition or any(c.needs_ast for c in wanted):
        try:
            tree = compile_tree(text, relpath)
        except SyntaxError as exc:
            if rules is not None:
                line, col = exc.lineno or 1, max((exc.offset or 1) - 1, 0)
                res.error = shd000(relpath, line, col, f"syntax error: {exc.msg}")
        except (ValueError, RecursionError, MemoryError) as exc:
            if rules is not None:
                res.error = shd000(relpath, 1, 0, f"cannot parse the file: {type(exc).__name__}")
        if tree is None:
            wanted = [c for c in wanted if not c.needs_ast]
    if rules is not None:
        regions = regions_of(tree, text) if tree is not None and by_definition else None
        res.rules = [g.code for g in cands if regions is None or regions.admits(g)]
    for c in wanted:
        try:
            # a text collector always reads the text, even when an ast exists
            # for others: its facts must not depend on which gates ran
            data = c.collect(tree if c.needs_ast else None, text, module, relpath)  # type: ignore[arg-type]
        except Exception:  # a broken collector must not stop the run
            data = None
        if data is not None:
            res.facts[c.name] = data  # type: ignore[index]
            res.fh[c.name] = facts_hash(data) if hashes else ""
    return res


def check_source(text: str, relpath: str, gates: Sequence[Gate]) -> str:
    """What libcst parses to check the rules of ``gates``: ``text`` with the
    top-level definitions none of their definition needles match blanked
    (the module-level code always kept), provided the whole text compiles
    (a syntax error anywhere is still reported); else ``text``. Positions
    are the same."""
    if not gates or any(g.definition is None for g in gates):
        return text
    try:
        tree = compile_tree(text, relpath)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    regions = regions_of(tree, text)
    spans = regions.kept(gates) if regions is not None else None
    if spans is None or spans == [(0, len(text))]:
        return text
    return mask_text(text, spans)
