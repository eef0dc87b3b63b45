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
from collections.abc import Collection
from typing import Any

from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")

Pos = tuple[int, int, int, int]  # start line (1-based), start column, end line, end column


class _Syntactic:
    """``record_syntactic_position`` as a cheap context manager."""

    __slots__ = ("col", "end_node", "line", "node", "start_node", "state")

    def __init__(self, state: _State, node: Any, start_node: Any, end_node: Any) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.line, self.col = self.state.line, self.state.col

    def __exit__(self, *exc: object) -> None:
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


def positions(module: Any, needed: Collection[Any] | None = None) -> dict[Any, Pos]:
    """Every node of ``module`` with its syntactic position (what
    ``PositionProvider`` gives: leading and trailing whitespace excluded
    where the syntax allows). With ``needed``, the code is generated only up
    to the end of the first top-level statement after which every needed
    node has its position: the nodes of the statements generated get the
    same positions, later ones none (the statements after the last finding
    are not generated at all)."""
    state = _State(module.default_indent, module.default_newline)
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
