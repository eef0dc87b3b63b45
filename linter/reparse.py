"""Parsing an edited buffer again with libcst, one statement instead of the
whole file.

The editor checks the same document after every edit, and most edits change
the lines of one statement: a method of a class, a function, one
module-level statement. :class:`ParseMemo` keeps the last check source of a
document and its libcst tree; given the next source, it finds the lines that
changed (the common prefix and suffix of the two) and, when they lie inside
one statement that is kept in both (a statement of the module, or one
directly in a top-level class's body), parses that statement's new lines
alone and puts the new node in the old tree's place. Everything else in the
tree is the old nodes, so positions, which libcst derives from the code each
node generates, are those of the new text.

It is held to what a whole parse gives by construction and by two checks,
each done on the one statement (``tests/test_reparse.py`` compares the
findings with a whole parse on edited corpus files):

- the old node generates exactly the old lines it is taken to span (a
  comment after it that the parser gave to its last block fails this);
- the new lines parse to exactly one statement of the same kind and name,
  with nothing left over, under the same indentation.

Comment and blank lines changed after the module's last statement replace
its footer. Anything else (a change across statements, a statement kept in
one version only) is parsed whole, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linter.astwalk import first_line

# (first line, last line, whether kept in the check source, name), 1-based
Span = tuple[int, int, bool, str]


@dataclass
class Layout:
    """Where the statements of one check source are: the module's, and those
    directly in the body of each top-level class (by the class's index)."""

    top: list[Span] = field(default_factory=list)
    members: dict[int, list[Span]] = field(default_factory=dict)


def layout_of(tree: ast.Module, source_lines: list[str]) -> Layout:
    """The statements of ``tree`` (the text's ``ast``) and whether the check
    source (``source_lines``, the text with some lines blanked) keeps them."""

    def span(st: ast.stmt) -> Span:
        first = first_line(st)
        kept = first <= len(source_lines) and bool(source_lines[first - 1].strip())
        return (first, st.end_lineno or st.lineno, kept, getattr(st, "name", ""))

    out = Layout()
    for i, st in enumerate(tree.body):
        out.top.append(span(st))
        if isinstance(st, ast.ClassDef):
            out.members[i] = [span(m) for m in st.body]
    return out


@dataclass
class ParseMemo:
    """The last parse of one document's check source (one per open
    document, in the editor)."""

    source: str | None = None
    module: Any = None
    layout: Layout | None = None
    # how the last parse was made: "same", "statement" or "whole" (tests,
    # benchmarks)
    last: str = ""

    def parse(self, source: str, tree: ast.Module | None, parse: Callable[[str], Any]) -> Any:
        """The libcst module of ``source`` (``tree``: its text's ``ast``;
        ``parse``: the whole-file parser), from the last one where it can."""
        lines = source.split("\n")
        # (a lone carriage return ends a line for ``ast``, not here)
        layout = layout_of(tree, lines) if tree is not None and "\r" not in source else None
        module = None
        if self.source == source and self.module is not None:
            module, self.last = self.module, "same"
        elif self.source is not None and self.layout is not None and layout is not None:
            try:
                module = _reparse(self.source.split("\n"), self.module, self.layout, lines, layout, parse)
            except Exception:  # (any surprise: parse whole)
                module = None
            self.last = "statement"
        if module is None:
            self.source = self.module = self.layout = None  # (a failed parse leaves nothing stale)
            module, self.last = parse(source), "whole"
        self.source, self.module, self.layout = source, module, layout
        return module


def _changed(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """The changed lines, 0-based: (first, end in ``old``, end in ``new``)."""
    n = min(len(old), len(new))
    p = 0
    while p < n and old[p] == new[p]:
        p += 1
    s = 0
    while s < n - p and old[-1 - s] == new[-1 - s]:
        s += 1
    return p, len(old) - s, len(new) - s


def _holding(spans: list[Span], first: int, end: int) -> int | None:
    """The index of the kept statement whose lines hold the changed lines
    (0-based ``first`` to ``end``, exclusive), not its first line: lines
    before it would be its leading lines or decorators."""
    for i, (a, b, kept, _name) in enumerate(spans):
        if kept and a - 1 < first and end <= b:
            return i
    return None


def _reparse(
    old: list[str], module: Any, old_layout: Layout, new: list[str], layout: Layout, parse: Callable[[str], Any]
) -> Any:
    import libcst as cst

    first, old_end, new_end = _changed(old, new)
    if not any(old[first:old_end]) and not any(new[first:new_end]):
        # blank lines added or removed (an edit in a definition the check
        # source blanks): the next statement's leading lines
        got = _blank_lines(module, old_layout, layout, first, old_end, new_end)
        if got is not None:
            return got
    if first >= len(old) - 1 - len(module.footer):
        return _tail(old, module, new, first)
    i = _holding(old_layout.top, first, old_end)
    j = _holding(layout.top, first, new_end)
    if i is None or i != j or old_layout.top[i][3] != layout.top[j][3]:
        return None
    body = list(module.body)
    kept = [k for k, s in enumerate(old_layout.top) if s[2]]
    if len(kept) != len(body) or [k for k, s in enumerate(layout.top) if s[2]] != kept:
        return None
    at = kept.index(i)
    node = body[at]
    members = old_layout.members.get(i)
    if isinstance(node, cst.ClassDef) and members is not None and i in layout.members:
        m = _holding(members, first, old_end)
        if m is not None and m == _holding(layout.members[i], first, new_end):
            block = node.body
            indent = block.indent if block.indent is not None else module.default_indent
            inner = _replace_in(
                list(block.body), members, layout.members[i], m, old, new, indent, module, parse
            )
            if inner is None:
                return None
            new_class = node.with_changes(body=block.with_changes(body=inner))
            return module.with_changes(body=[*body[:at], new_class, *body[at + 1 :]])
    top = _replace_in(body, old_layout.top, layout.top, i, old, new, None, module, parse)
    return None if top is None else module.with_changes(body=top)


def _tail(old: list[str], module: Any, new: list[str], first: int) -> Any:
    """``module`` with new last lines (the comments and blank lines after
    its last statement, libcst's ``Module.footer``) when the change lies
    among them, they generate exactly the old ones, and the new ones are
    all blank or comments at the first column (an indented comment after a
    block would be that block's)."""
    if old[-1] or new[-1]:
        return None  # (no final line break)
    start = len(old) - 1 - len(module.footer)
    if first < start:
        return None
    if _lines_code(module.footer) != "".join(line + "\n" for line in old[start:-1]):
        return None
    lines = new[start:-1]
    if any(line and not line.startswith("#") for line in lines):
        return None
    text = "".join(line + "\n" for line in lines)
    got = parse_tail(text)
    if got is None:
        return None
    return module.with_changes(footer=got)


def parse_tail(text: str) -> Any:
    """The lines of ``text`` (blank or comments only) as libcst's empty
    lines, or None when they do not read back the same."""
    import libcst as cst

    if not text:
        return ()
    got = cst.parse_module(text)
    if got.body or got.footer or _lines_code(got.header) != text:
        return None
    return got.header


def _lines_code(lines: Any) -> str:
    """The code of libcst empty lines (an empty module generates a line
    break of its own)."""
    import libcst as cst

    return cst.Module(body=[], header=lines, default_newline="\n").code if lines else ""


def _blank_lines(module: Any, old_layout: Layout, layout: Layout, first: int, old_end: int, new_end: int) -> Any:
    """``module`` with ``new_end - old_end`` more blank lines at line
    ``first`` (0-based): in the leading lines of the first kept statement
    after them, at the top level or in a top-level class's body."""
    import libcst as cst

    kept = [k for k, s in enumerate(old_layout.top) if s[2]]
    if len(kept) != len(module.body) or [k for k, s in enumerate(layout.top) if s[2]] != kept:
        return None
    for at, i in enumerate(kept):
        a, b = old_layout.top[i][:2]
        node = module.body[at]
        if a - 1 >= old_end:  # the next top-level statement
            fresh = _more_blank(node, a, first, old_end, new_end)
            return None if fresh is None else module.with_changes(body=[*module.body[:at], fresh, *module.body[at + 1 :]])
        if a - 1 < first and old_end <= b:  # inside this statement: a class's member next
            members = old_layout.members.get(i)
            if members is None or not isinstance(node, cst.ClassDef) or layout.members.get(i) is None:
                return None
            inner = [k for k, s in enumerate(members) if s[2]]
            body = list(node.body.body)
            if len(inner) != len(body) or [k for k, s in enumerate(layout.members[i]) if s[2]] != inner:
                return None
            for m_at, m in enumerate(inner):
                if members[m][0] - 1 >= old_end:
                    fresh = _more_blank(body[m_at], members[m][0], first, old_end, new_end)
                    if fresh is None:
                        return None
                    block = node.body.with_changes(body=[*body[:m_at], fresh, *body[m_at + 1 :]])
                    new_class = node.with_changes(body=block)
                    return module.with_changes(body=[*module.body[:at], new_class, *module.body[at + 1 :]])
            return None
    return None


def _more_blank(node: Any, a: int, first: int, old_end: int, new_end: int) -> Any:
    """``node`` (first line ``a``) with the blank lines ``first`` to
    ``old_end`` of its leading lines made ``new_end - first`` blank lines;
    None when they are not all its own blank leading lines."""
    import libcst as cst

    lead = list(node.leading_lines)
    k = first - (a - 1 - len(lead))
    gone = lead[k : k + old_end - first] if k >= 0 else None
    if gone is None or k + old_end - first > len(lead):
        return None
    if any(e.comment is not None or e.indent or e.whitespace.value for e in gone):
        return None
    blank = cst.EmptyLine(indent=False)
    return node.with_changes(leading_lines=[*lead[:k], *([blank] * (new_end - first)), *lead[k + old_end - first :]])


def _replace_in(
    body: list[Any],
    old_spans: list[Span],
    new_spans: list[Span],
    i: int,
    old: list[str],
    new: list[str],
    indent: str | None,
    module: Any,
    parse: Callable[[str], Any],
) -> list[Any] | None:
    """``body`` (the kept statements of ``old_spans``) with statement ``i``
    parsed again from ``new``; ``indent``: the body's indentation (None: the
    module's own statements)."""
    import libcst as cst

    kept = [k for k, s in enumerate(old_spans) if s[2]]
    if len(kept) != len(body) or [k for k, s in enumerate(new_spans) if s[2]] != kept:
        return None
    at = kept.index(i)
    node = body[at]
    (a, b, _, name), (a2, b2, _, name2) = old_spans[i], new_spans[i]
    if name != name2 or a != a2:
        return None
    # its leading lines (blank, comments) lie before the change: kept as they are
    bare = node.with_changes(leading_lines=())
    old_text = "\n".join(old[a - 1 : b]) + "\n"
    new_text = "\n".join(new[a - 1 : b2]) + "\n"
    if indent is None:
        if cst.Module(body=[bare], default_indent=module.default_indent, default_newline="\n").code != old_text:
            return None
        got = parse(new_text)
        if got.header or got.footer or len(got.body) != 1:
            return None
        fresh = got.body[0]
    else:
        wrap = cst.ClassDef(cst.Name("_"), cst.IndentedBlock([bare], indent=indent))
        code = cst.Module(body=[wrap], default_indent=module.default_indent, default_newline="\n").code
        if code != "class _:\n" + old_text:
            return None
        got = parse("class _:\n" + new_text)
        if got.header or got.footer or len(got.body) != 1:
            return None
        block = got.body[0].body
        got_indent = block.indent if block.indent is not None else got.default_indent
        if got_indent != indent or block.footer or len(block.body) != 1:
            return None
        fresh = block.body[0]
    if type(fresh) is not type(node) or _name(fresh) != _name(node) or fresh.leading_lines:
        return None
    fresh = fresh.with_changes(leading_lines=node.leading_lines)
    return [*body[:at], fresh, *body[at + 1 :]]


def _name(node: Any) -> str | None:
    name = getattr(node, "name", None)
    return getattr(name, "value", None)
