"""Node positions for the few files that have findings, at a fraction of the
cost of ``MetadataWrapper.resolve(PositionProvider)``.

libcst computes positions by generating the module's code with a codegen
state that records where each node starts and ends. Its state builds two
objects per node, splits every token with a regex and keeps the generated
tokens; on a 3,000-line model file that costs more than the parse itself
(0.3 s). This state records the same ``(line, column)`` pairs as plain
tuples, looks for newlines with ``in`` and keeps no tokens. The result equals
``PositionProvider``'s for every node (tests/test_positions.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

_NEWLINE = re.compile(r"\r\n?|\n")

Pos = tuple[int, int, int, int]  # start line (1-based), start column, end line, end column


class _Syntactic:
    """``record_syntactic_position`` as a cheap context manager."""

    __slots__ = ("col", "end_node", "line", "node", "start_node", "state")

    def __init__(self, state: Any, node: Any, start_node: Any, end_node: Any) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.line, self.col = self.state.line, self.state.col

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            # unwinding (the recursion limit met deeper down): record
            # nothing, so that the error itself reaches the caller
            return
        st = self.state
        pos = st.pos
        if self.start_node is not None:
            sl, sc = pos[self.start_node][:2]
        else:
            sl, sc = self.line, self.col
        if self.end_node is not None:
            el, ec = pos[self.end_node][2:]
        else:
            el, ec = st.line, st.col
        pos[self.node] = (sl, sc, el, ec)


def _state_class() -> type:
    """The codegen state class, built on first use: it derives from libcst's
    ``CodegenState``, and importing this module (a rule does, and the scan
    imports rules) must not load libcst (see ``linter._lazy``)."""
    global _STATE
    if _STATE is None:
        from libcst._nodes.internal import CodegenState

        class _State(CodegenState):
            # the slots of CodegenState plus ours (CodegenState is a slotted dataclass)
            __slots__ = ("col", "line", "pos", "stack")

            def __init__(self, default_indent: str, default_newline: str) -> None:
                super().__init__(default_indent=default_indent, default_newline=default_newline)
                self.line = 1
                self.col = 0
                self.stack: list[tuple[int, int]] = []
                self.pos: dict[Any, Pos] = {}

            def _advance(self, value: str) -> None:
                if "\n" in value or "\r" in value:
                    parts = _NEWLINE.split(value)
                    self.line += len(parts) - 1
                    self.col = len(parts[-1])
                else:
                    self.col += len(value)

            def add_indent_tokens(self) -> None:
                for token in self.indent_tokens:
                    self._advance(token)
                if self.indent_tokens and not self.tokens:
                    self.tokens.append("")

            def add_token(self, value: str) -> None:
                if not self.tokens:
                    # Module asks whether anything was generated; nothing else reads them
                    self.tokens.append(value)
                self._advance(value)

            def before_codegen(self, node: Any) -> None:
                self.stack.append((self.line, self.col))

            def after_codegen(self, node: Any) -> None:
                sl, sc = self.stack.pop()
                if node not in self.pos:  # a syntactic position already recorded wins
                    self.pos[node] = (sl, sc, self.line, self.col)

            def pop_trailing_newline(self) -> None:
                pass  # no tokens are kept; positions are already recorded

            def record_syntactic_position(  # type: ignore[override]
                self, node: Any, *, start_node: Any = None, end_node: Any = None
            ) -> _Syntactic:
                return _Syntactic(self, node, start_node, end_node)

        _STATE = _State
    return _STATE


_STATE: type | None = None


def positions(module: Any, needed: Collection[Any] | None = None) -> dict[Any, Pos]:
    """Every node of ``module`` with its syntactic position (what
    ``PositionProvider`` gives: leading and trailing whitespace excluded
    where the syntax allows). With ``needed``, the code is generated only up
    to the end of the first top-level statement after which every needed
    node has its position: the nodes of the statements generated get the
    same positions, later ones none (the statements after the last finding
    are not generated at all)."""
    state = _state_class()(module.default_indent, module.default_newline)
    if needed is None:
        module._codegen(state)
        return state.pos
    want = [n for n in needed if n is not module]
    if len(want) < len(needed):
        module._codegen(state)  # the module itself: all of it
        return state.pos
    pos = state.pos
    state.before_codegen(module)
    for h in module.header:
        h._codegen(state)
    for stmt in module.body:
        stmt._codegen(state)
        if all(n in pos for n in want):
            return pos
    for f in module.footer:
        f._codegen(state)
    state.after_codegen(module)
    return pos


def _header_line(source: str, stmt: Any) -> int | None:
    """The line of a top-level ``def``/``class`` statement's keyword in the
    ``source`` libcst parsed, found as the only line that starts with that
    keyword and its name (None when the statement is no definition or the
    line is not unique: a string may hold a look-alike line, a definition
    may come twice)."""
    import libcst as cst

    if isinstance(stmt, cst.ClassDef):
        keyword, lead = "class", ""
    elif isinstance(stmt, cst.FunctionDef):
        keyword, lead = "def", _ASYNC
    else:
        return None
    found = []
    for m in re.finditer(keyword + r"[ \t]+" + re.escape(stmt.name.value) + r"\b", source):
        start = source.rfind("\n", 0, m.start()) + 1
        before = source[start : m.start()]
        if not before or (lead and lead.fullmatch(before)):
            found.append(start)
    if len(found) != 1:
        return None
    return source.count("\n", 0, found[0]) + 1


_ASYNC = re.compile(r"async[ \t]+")


def statement_positions(module: Any, source: str, stmt: Any) -> dict[Any, Pos] | None:
    """The positions of the nodes of one top-level ``def``/``class``
    statement of ``module`` (parsed from ``source``), as :func:`positions`
    gives them, without generating the statements before it: the statement
    is generated alone and moved to its line in ``source``. None when that
    line cannot be told (then the module is generated up to it)."""
    line = _header_line(source, stmt)
    if line is None:
        return None
    state = _state_class()(module.default_indent, module.default_newline)
    stmt._codegen(state)
    pos = state.pos
    first = pos[stmt][0]
    if pos[stmt.name][0] != first:
        return None  # the name on another line than the keyword: found by a look-alike
    shift = line - first
    if shift:
        pos = {n: (a + shift, b, c + shift, d) for n, (a, b, c, d) in pos.items()}
    return pos


def report_positions(module: Any, source: str, found: Sequence[tuple[Any, Any]]) -> dict[Any, Pos]:
    """Positions of the reported nodes (``(node, top)`` pairs: ``top`` the
    top-level definition the rule was visiting when it reported ``node``,
    or None) and of every node of the statements generated for them: each
    ``top`` of the module's body generated alone
    (:func:`statement_positions`), the other nodes from the start of the
    module up to the last statement holding one (:func:`positions`)."""
    out: dict[Any, Pos] = {}
    rest: list[Any] = []
    body_ids = {id(s) for s in module.body}
    done: dict[int, dict[Any, Pos] | None] = {}
    for node, top in found:
        if node in out:
            continue
        got = None
        if top is not None and id(top) in body_ids:
            if id(top) not in done:
                done[id(top)] = statement_positions(module, source, top)
                if done[id(top)] is not None:
                    out.update(done[id(top)])  # type: ignore[arg-type]
            got = done[id(top)]
        if got is None or node not in got:
            rest.append(node)
    if rest:
        out.update(positions(module, rest))
    return out
