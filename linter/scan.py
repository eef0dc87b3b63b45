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
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linter.astwalk import first_line, line_starts
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
    # the file's definitions as the scan's ``ast`` found them, handed to the
    # check so that it need not compile the file again (not cached)
    cut: Cut | None = None
    # the scan's ``ast`` itself, kept only on request (``keep_tree``: one
    # buffer linted in process, whose lazy facts and check read it again;
    # never sent to a worker)
    tree: ast.Module | None = None


def text_digest(text: str) -> str:
    """The content digest of a file's text (what the cache and the editor
    tell an unchanged text by)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
    # ``Rule.follows_definitions``: the definitions kept code names are kept
    # too (True), or only the top-level ones ("top-level"), or none (False)
    follows: bool | str = True


def gate_of(rule: type[Rule], options: Mapping[str, Any]) -> Gate:
    """``rule``'s gate under ``options`` (a declaration that fails opens it)."""
    try:
        file, definition = rule.declared_needles(options)
    except Exception:
        return Gate(rule.code, Needles())
    follows = getattr(rule, "follows_definitions", True)
    return Gate(rule.code, file, definition, follows if follows == TOP_LEVEL else bool(follows))


#: ``Rule.follows_definitions = TOP_LEVEL``: the analysis reads other
#: definitions of its module by name only at the top level (a module
#: function, a kernel, a base class), never a class's member (a method
#: called through ``self``)
TOP_LEVEL = "top-level"


def admits_text(gate: Gate, text: str) -> bool:
    """The file gate: whether ``text`` holds what the rule declares any
    match needs (a broken declaration lets the file through)."""
    try:
        return bool(gate.file.match(text))
    except Exception:
        return True


@dataclass(frozen=True)
class Unit:
    """A top-level ``def``/``class``, or a ``def``/``class`` directly in a
    top-level class's body: (start, end) offsets of its whole lines
    (decorators included), the name it binds, its first line's indentation,
    and the index of the class holding it (-1 at top level)."""

    start: int
    end: int
    name: str
    indent: int = 0
    parent: int = -1
    # a class whose body holds nothing but members (no docstring, no
    # class-level statement): blanking them all would leave it empty
    only_members: bool = False
    # the names its ``import`` statements bind (a rule may read a module's
    # imports wherever they stand)
    imports: tuple[str, ...] = ()

    def words(self) -> tuple[str, ...]:
        """The names kept code may use it by: its own and its imports'."""
        return (self.name, *self.imports)


@dataclass(frozen=True)
class Regions:
    """A module cut into definitions (:class:`Unit`, in source order) and the
    rest, the module-level code."""

    text: str
    units: tuple[Unit, ...]

    def _top(self) -> list[Unit]:
        return [u for u in self.units if u.parent < 0]

    def rest(self) -> str:
        """The module-level code: the text less every top-level definition."""
        parts, pos = [], 0
        for u in self._top():
            parts.append(self.text[pos : u.start])
            pos = u.end
        parts.append(self.text[pos:])
        return "".join(parts)

    def _own(self, i: int) -> str:
        """Unit ``i``'s text less its members' (a class's header, docstring
        and class-level statements; a function's whole text)."""
        u = self.units[i]
        parts, pos = [], u.start
        for m in self.units:
            if m.parent == i:
                parts.append(self.text[pos : m.start])
                pos = m.end
        parts.append(self.text[pos : u.end])
        return "".join(parts)

    def kept(self, gates: Sequence[Gate]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
        """What the libcst check of the rules must see, as (spans kept,
        placeholders): the module-level code; each definition one of their
        definition needles matches -- a method with the skeleton (header,
        class-level statements) of its class; for the rules that follow
        definitions (``Gate.follows``), every definition whose name what is
        kept for them mentions, transitively (a helper a kept function calls,
        a method called through ``self``, a base class; for the rules that
        follow only top-level definitions, no member by its name). A class
        kept with none of its members gets a ``pass`` at a placeholder (line index,
        indent): its first blanked line. None (everything) when a rule
        declares no definition needles."""
        if any(g.definition is None for g in gates):
            return None
        n = len(self.units)
        has_members = {u.parent for u in self.units if u.parent >= 0}
        own = [self._own(i) if i in has_members else self.text[u.start : u.end] for i, u in enumerate(self.units)]
        chosen: set[int] = set()
        following = [g for g in gates if g.follows is True]
        if following:
            chosen |= self._chosen(following, own, closure=True)
        top_level = [g for g in gates if g.follows == TOP_LEVEL]
        if top_level:
            chosen |= self._chosen(top_level, own, closure=True, members=False)
        local = [g for g in gates if g.follows is False]
        if local:
            chosen |= self._chosen(local, own, closure=False)
        blanked = [u for i, u in enumerate(self.units) if i not in chosen and (u.parent < 0 or u.parent in chosen)]
        keep, pos = [], 0
        for u in blanked:
            if u.start > pos:
                keep.append((pos, u.start))
            pos = u.end
        keep.append((pos, len(self.text)))
        placeholders = []
        for c in chosen & has_members:
            members = [i for i in range(n) if self.units[i].parent == c]
            if self.units[c].only_members and not any(i in chosen for i in members):
                first = self.units[members[0]]
                placeholders.append((self.text.count("\n", 0, first.start), first.indent))
        return keep, sorted(placeholders)

    def _chosen(self, gates: Sequence[Gate], own: list[str], closure: bool, members: bool = True) -> set[int]:
        """The units kept for ``gates``: those their definition needles match
        (with the classes holding them) and, with ``closure``, those the
        module-level code or a kept unit names, transitively (without
        ``members``, a class's member only by the names its imports bind,
        never by its own)."""
        chosen: set[int] = set()
        frontier = [self.rest()] if closure else []

        def choose(i: int) -> None:
            if i in chosen:
                return
            chosen.add(i)
            if closure:
                frontier.append(own[i])
            parent = self.units[i].parent
            if parent >= 0:
                choose(parent)

        for i in range(len(self.units)):
            if any(_matches(g, own[i]) for g in gates):
                choose(i)
        words = [u.words() if members or u.parent < 0 else u.imports for u in self.units]
        pending = set(range(len(self.units))) - chosen
        while frontier and pending:
            seen = frontier.pop()
            for i in [i for i in pending if any(_mentions(seen, w) for w in words[i])]:
                pending.discard(i)
                choose(i)
                pending -= chosen
        return chosen

    def admits(self, gate: Gate) -> bool:
        """The definition gate: whether one top-level definition, or the
        module-level code, matches the rule's definition needles."""
        if gate.definition is None:
            return True
        return _matches(gate, self.rest()) or any(_matches(gate, self.text[u.start : u.end]) for u in self._top())


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


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _imported_names(body: list[ast.stmt]) -> Iterator[str]:
    """The local names the ``import`` statements among ``body`` bind, in
    nested blocks and definitions too (statements only: no expression is
    walked)."""
    for node in body:
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.asname or a.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                yield a.asname or a.name
        else:
            for name in ("body", "orelse", "finalbody"):
                sub = getattr(node, name, None)
                if isinstance(sub, list):
                    yield from _imported_names(sub)
            for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                yield from _imported_names(clause.body)


def regions_of(tree: ast.Module, text: str) -> Regions | None:
    """``text`` cut at its definitions (``tree`` is its ``ast``); None when
    lines cannot be told the way CPython counts them (a lone carriage return
    ends a line for CPython, not for the offsets here)."""
    if "\r" in text:
        return None
    starts = line_starts(text)
    n = len(starts)

    def unit(s: ast.stmt, parent: int) -> Unit:
        first = first_line(s)
        last = s.end_lineno or s.lineno
        a, b = starts[first - 1], (starts[last] if last < n else len(text))
        line = text[a:b]
        bare = isinstance(s, ast.ClassDef) and all(isinstance(m, _DEFS) for m in s.body)
        indent = len(line) - len(line.lstrip(" \t"))
        return Unit(a, b, s.name, indent, parent, bare, tuple(_imported_names(s.body)))  # type: ignore[attr-defined]

    units: list[Unit] = []
    for s in tree.body:
        if not isinstance(s, _DEFS):
            continue
        units.append(unit(s, -1))
        if isinstance(s, ast.ClassDef):
            at = len(units) - 1
            units.extend(unit(m, at) for m in s.body if isinstance(m, _DEFS))
    return Regions(text, tuple(units))


@dataclass(frozen=True)
class Cut:
    """A file's :class:`Unit` list with what identifies the text it was cut
    from (the check re-reads the file: one edited in between is compiled
    again)."""

    length: int
    crc: int
    units: tuple[Unit, ...]

    @staticmethod
    def of(regions: Regions) -> Cut:
        text = regions.text
        return Cut(len(text), zlib.crc32(text.encode("utf-8", "surrogatepass")), regions.units)

    def regions(self, text: str) -> Regions | None:
        """The regions of ``text`` if it is the text this was cut from."""
        if len(text) != self.length or zlib.crc32(text.encode("utf-8", "surrogatepass")) != self.crc:
            return None
        return Regions(text, self.units)


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
    keep_tree: bool = False,
    collect: bool = True,
) -> ScanResult:
    """Hash the text, run the fact collectors whose needles match and, for a
    file being checked (the ``gates`` of its rules given), decide which
    rules need to see it (the gates above; ``closed``: all of them). The ``ast`` is built
    at most once and only when something needs it (or, with ``syntax``, for
    every checked file); a syntax error it meets in a checked file is
    SHD000. A file never compiled that a rule admits is parsed by libcst in
    the check phase, which reports SHD000 in turn. Without ``hashes`` (a run
    with no cache) the facts hashes are left empty; ``fh`` still names the
    collectors with facts. ``keep_tree``: the ``ast`` compiled, if any, is
    kept in the result (``ScanResult.tree``). Without ``collect``, no
    collector runs (the caller has the text's facts already)."""
    res = ScanResult(relpath, text_digest(text))
    wanted = [c for c in collectors if c.needles.match(text)] if collect else []
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
        if regions is not None and res.rules:
            res.cut = Cut.of(regions)
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
    if keep_tree:
        res.tree = tree
    return res


def check_source(text: str, relpath: str, gates: Sequence[Gate], cut: Cut | None = None) -> str:
    """What libcst parses to check the rules of ``gates``: ``text`` with the
    top-level definitions none of their definition needles match blanked
    (the module-level code always kept), provided the whole text compiles
    (a syntax error anywhere is still reported); else ``text``. Positions
    are the same. ``cut``: the scan's definitions of the text, if it has
    them (then nothing is compiled again)."""
    if not gates or any(g.definition is None for g in gates):
        return text
    regions = cut.regions(text) if cut is not None else None
    if regions is None:
        try:
            tree = compile_tree(text, relpath)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return text
        regions = regions_of(tree, text)
    got = regions.kept(gates) if regions is not None else None
    if got is None or got[0] == [(0, len(text))]:
        return text
    spans, placeholders = got
    masked = mask_text(text, spans)
    if placeholders:
        lines = masked.split("\n")
        for index, indent in placeholders:  # a blanked line: empty in ``masked``
            lines[index] = " " * indent + "pass"
        masked = "\n".join(lines)
    return masked
