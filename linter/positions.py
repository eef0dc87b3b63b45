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

from linter.astwalk import line_starts

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


def _header_line(source: str, stmt: Any, indent: str = "", lo: int = 0, hi: int | None = None) -> int | None:
    """The line of a ``def``/``class`` statement's keyword in the ``source``
    libcst parsed, found as the only line of ``source[lo:hi]`` that starts
    with ``indent``, that keyword and its name (None when the statement is
    no definition or the line is not unique: a string may hold a look-alike
    line, a definition may come twice)."""
    import libcst as cst

    if isinstance(stmt, cst.ClassDef):
        keyword, lead = "class", False
    elif isinstance(stmt, cst.FunctionDef):
        keyword, lead = "def", True
    else:
        return None
    found = []
    pattern = re.compile(keyword + r"[ \t]+" + re.escape(stmt.name.value) + r"\b")
    for m in pattern.finditer(source, lo, len(source) if hi is None else hi):
        start = source.rfind("\n", 0, m.start()) + 1
        before = source[start : m.start()]
        if before == indent or (lead and before.startswith(indent) and _ASYNC.fullmatch(before[len(indent) :])):
            found.append(start)
    if len(found) != 1:
        return None
    return source.count("\n", 0, found[0]) + 1


_ASYNC = re.compile(r"async[ \t]+")


def _generated_alone(module: Any, stmt: Any, line: int, indent: str) -> dict[Any, Pos] | None:
    """``stmt``'s nodes generated alone at ``indent`` and moved so that its
    keyword is on ``line`` (None when its name is not on the keyword's line,
    or its keyword is not at ``indent``: the line was a look-alike)."""
    state = _state_class()(module.default_indent, module.default_newline)
    if indent:
        state.indent_tokens.append(indent)
    stmt._codegen(state)
    pos = state.pos
    first, column = pos[stmt][:2]
    if pos[stmt.name][0] != first or column != len(indent):
        return None
    shift = line - first
    if shift:
        pos = {n: (a + shift, b, c + shift, d) for n, (a, b, c, d) in pos.items()}
    return pos


def statement_positions(module: Any, source: str, stmt: Any) -> dict[Any, Pos] | None:
    """The positions of the nodes of one top-level ``def``/``class``
    statement of ``module`` (parsed from ``source``), as :func:`positions`
    gives them, without generating the statements before it: the statement
    is generated alone and moved to its line in ``source``. None when that
    line cannot be told (then the module is generated up to it)."""
    line = _header_line(source, stmt)
    return None if line is None else _generated_alone(module, stmt, line, "")


def member_positions(module: Any, source: str, cls: Any, member: Any) -> dict[Any, Pos] | None:
    """As :func:`statement_positions`, for a ``def``/``class`` directly in
    the body of ``cls``, a top-level class: only the member is generated
    (a method of a 5,000-line class, not the class). Its keyword's line is
    looked for between the class's keyword and the next top-level
    definition's. None when it cannot be told."""
    import libcst as cst

    body = getattr(cls, "body", None)
    if not isinstance(body, cst.IndentedBlock) or not any(m is member for m in body.body):
        return None
    at = next((i for i, s in enumerate(module.body) if s is cls), None)
    start = _header_line(source, cls) if at is not None else None
    if at is None or start is None:
        return None
    starts = line_starts(source)
    lo = starts[start] if start < len(starts) else len(source)
    hi = None
    following = next((s for s in module.body[at + 1 :] if isinstance(s, (cst.FunctionDef, cst.ClassDef))), None)
    if following is not None:
        end = _header_line(source, following)
        if end is None:
            return None
        hi = starts[end - 1]
    indent = body.indent if body.indent is not None else module.default_indent
    line = _header_line(source, member, indent, lo, hi)
    return None if line is None else _generated_alone(module, member, line, indent)


def report_positions(module: Any, source: str, found: Sequence[tuple[Any, Any, Any]]) -> dict[Any, Pos]:
    """Positions of the reported nodes (``(node, top, member)`` triples:
    ``top`` the top-level definition the rule was visiting when it reported
    ``node``, ``member`` the definition it was visiting in ``top``'s body,
    each None where there is none) and of every node of the definitions
    generated for them: the ``member`` alone (:func:`member_positions`),
    else the ``top`` alone (:func:`statement_positions`), else the module
    from its start up to the last statement holding such a node
    (:func:`positions`)."""
    out: dict[Any, Pos] = {}
    rest: list[Any] = []
    body_ids = {id(s) for s in module.body}
    done: dict[int, dict[Any, Pos] | None] = {}

    def alone(stmt: Any, place: Any) -> dict[Any, Pos] | None:
        if id(stmt) not in done:
            done[id(stmt)] = got = place()
            if got is not None:
                out.update(got)
        return done[id(stmt)]

    for node, top, member in found:
        if node in out:
            continue
        if top is None or id(top) not in body_ids:
            rest.append(node)
            continue
        if member is not None:
            got = alone(member, lambda: member_positions(module, source, top, member))
            if got is not None and node in got:
                continue
        got = alone(top, lambda: statement_positions(module, source, top))
        if got is None or node not in got:
            rest.append(node)
    if rest:
        out.update(positions(module, rest))
    return out
