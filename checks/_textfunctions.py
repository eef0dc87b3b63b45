"""Functions delimited on raw text, for the text gates of the rules that
judge one function at a time (SHD401, SHD501): the words a finding needs must
then meet inside one function's text, not anywhere in the file."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from checks._helpers import ascii_lower, memo_last_text

# Functions are delimited on a skeleton of the file, the text with every
# string and comment blanked to spaces of the same length (newlines inside
# strings too), so that positions are the same as in the text and every line
# break left is a real one. In it a `def` keyword is a definition, and a body
# ends at the first line indented no deeper than its `def` that starts a
# logical line (outside brackets, not after a line-continuation backslash):
# exactly Python's rule. A rule's words are then looked for in the text of
# the span from the `def` to that line (nested definitions, strings and
# comments included: only ever more). Whenever the skeleton may differ from
# Python's own tokens (tabs, form feeds, lone carriage returns, an f-string
# that may nest quotes as Python 3.12 allows, a `def` not at the start of its
# line) the file-wide test decides. Known limit: a Python 3.12-only f-string
# nesting its own quote two levels deep with a `}` inside the innermost
# string can pass that check and be read wrongly (the span may then end
# early). The loops are possessive: their alternatives start with different
# characters and none of them can stand before the closing quote (or the
# end), so only the longest loop can be followed by it, as with backtracking;
# backtracking instead took exponential time where a string runs to a
# backslash at the end of the text (an unfinished file).
_STRINGS = re.compile(
    r'#[^\n]*|"""(?:[^"\\]++|\\.|"(?!""))*+(?:"""|\Z)|\'\'\'(?:[^\'\\]++|\\.|\'(?!\'\'))*+(?:\'\'\'|\Z)'
    r'|"(?:[^"\\\n]++|\\.)*+(?:"|$)|\'(?:[^\'\\\n]++|\\.)*+(?:\'|$)',
    re.S | re.M,
)
_DEF = re.compile(r"def\b").finditer
TOP_LEVEL = re.compile(r"\n(?:def|class|async|@)").search
_DEDENT: dict[int, Any] = {}  # indent -> search for a non-blank line indented no deeper


class Unsure(Exception):
    """The skeleton may not match Python's tokens."""


def _blank(m: re.Match[str]) -> str:
    s = m.group()
    a = m.start()
    if s[0] != "#" and a and "{" in s:
        text = m.string
        before = text[a - 1]
        if before in "fF" or (before in "rR" and a > 1 and text[a - 2] in "fF"):
            # an f-string: Python 3.12 lets its fields hold the same quotes,
            # which this pattern would end the string at
            n = 3 if s[:3] in ('"""', "'''") else 1
            body = s[n:-n] if s.endswith(s[:n]) and len(s) >= 2 * n else s[n:]
            if "{" in body and not _fields_closed(body):
                raise Unsure
    return " " * len(s)


# an f-string body whose fields hold no bracket, brace or quote (the common
# case), read in one match: the loop below reads such a body alike (True)
_SIMPLE_FIELDS = re.compile(r"(?:[^{}]++|\{\{|\}\}|\{[^{}()\[\]'\"]*+\})*+\Z").match


def _fields_closed(body: str) -> bool:
    """Whether every replacement field of an f-string's ``body`` (as this
    pattern ended it) is closed: a field still open where the string ended
    means a quote of the string's own kind inside a field (Python 3.12), where
    Python's string goes on. Unsure (a stray brace): False."""
    return _SIMPLE_FIELDS(body) is not None or _fields_read(body)


def _fields_read(body: str) -> bool:
    """``_fields_closed`` read character by character."""
    depth = 0  # 0: literal text; 1: a field's expression; more: brackets in it
    spec = 0  # the depth of the format spec being read (literal text), or 0
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if depth == 0 or (spec and depth == spec):
            if ch == "{":
                if depth == 0 and body.startswith("{{", i):
                    i += 2
                    continue
                depth += 1
            elif ch == "}":
                if depth == 0:
                    if not body.startswith("}}", i):
                        return False
                    i += 2
                    continue
                depth -= 1
                spec = 0
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
        elif ch in "'\"":
            j = body.find(ch, i + 1)  # a string inside a field
            if j < 0:
                return False
            i = j
        elif ch == ":" and depth == 1 and not spec:
            spec = depth  # literal text up to the field's `}` (or a nested field)
        i += 1
    return depth == 0


def skeleton(text: str) -> str:
    return _STRINGS.sub(_blank, text)


# the last skeleton made: (text, length, the skeleton of ``text[:length]``),
# read and replaced whole (a thread asking about another text meanwhile
# cannot hand this one its skeleton)
_LAST_SKELETON: list[tuple[Any, int, str]] = [(None, 0, "")]


def skeleton_to(text: str, cut: int) -> str:
    """``skeleton(text[:cut])``, from the skeleton last made of this text
    when it reaches ``cut`` (the gates and the scopes of one file each ask
    for one; a string running past ``cut`` is blanked alike in both). A
    skeleton that may differ from Python's tokens raises ``Unsure``."""
    seen, length, sk = _LAST_SKELETON[0]
    if seen is text and length >= cut:
        return sk if len(sk) == cut else sk[:cut]
    sk = skeleton(text if cut >= len(text) else text[:cut])
    _LAST_SKELETON[0] = (text, cut, sk)
    return sk


def function_spans(sk: str, sites: Sequence[int]) -> Iterator[tuple[int, int]]:
    """(start, end) of the definitions in the skeleton ``sk`` that may hold
    one of ``sites`` (sorted): from the `def` line to the line that ends the
    body (or the end of the text). A definition followed, before the next
    site, by another `def` indented no deeper is skipped: that `def` starts a
    logical line (checked below), so the body ended before it."""
    defs = []
    for m in _DEF(sk, 0, sites[-1]):
        d = m.start()
        if d and (sk[d - 1].isalnum() or sk[d - 1] == "_"):
            continue  # `undef`, `is_def`
        start = sk.rfind("\n", 0, d) + 1
        head = sk[start:d]
        k = len(head) - len(head.lstrip(" "))
        if head.strip() not in ("", "async") or (start >= 2 and sk[start - 2] == "\\"):
            raise Unsure  # a `def` not at the start of its logical line
        defs.append((d, start, k))
    following: list[int | None] = [None] * len(defs)  # the next def indented no deeper
    stack: list[int] = []
    for j in range(len(defs) - 1, -1, -1):
        while stack and defs[stack[-1]][2] > defs[j][2]:
            stack.pop()
        following[j] = stack[-1] if stack else None
        stack.append(j)
    for j, (d, start, k) in enumerate(defs):
        nxt = following[j]
        if nxt is not None:
            i = bisect_left(sites, start)
            if i == len(sites) or sites[i] >= defs[nxt][1]:
                continue
        find = _DEDENT.get(k)
        if find is None:
            find = _DEDENT[k] = re.compile(r"\n {0,%d}(?=[^ \n])" % k).search
        pos = d
        end = len(sk)
        while (c := find(sk, pos)) is not None:
            line = c.start()
            opened = sk.count("(", start, line) + sk.count("[", start, line) + sk.count("{", start, line)
            closed = sk.count(")", start, line) + sk.count("]", start, line) + sk.count("}", start, line)
            if opened == closed and sk[line - 1 : line] != "\\":
                end = line
                break
            pos = c.end()
        yield start, end



@dataclass
class Delimited:
    """Functions delimited for ``sites``: the sites kept (all, or those in
    code), the spans on the skeleton (``function_spans``), the skeleton of
    the text up to ``cut`` (the next column-0 statement after the last site:
    a span that reaches the cut is a body still open there, which runs to
    the end of the text)."""

    sites: list[int]
    spans: list[tuple[int, int]]
    skeleton: str
    cut: int

    def regions(self, text: str) -> list[tuple[int, int]]:
        """The spans as offsets in ``text``, an open body to its end."""
        return [(start, len(text) if end >= self.cut else end) for start, end in self.spans]


def delimit(text: str, sites: Sequence[int], code_only: bool = False) -> Delimited | None:
    """The definitions that may hold one of the sorted positions ``sites``
    (with ``code_only``, only of those not in a string or a comment: blanked
    in the skeleton), or None where the skeleton may differ from Python's
    tokens (then only a file-wide test can decide)."""
    if not sites:
        return Delimited([], [], "", 0)
    if "\t" in text or "\f" in text or "\r" in text:
        return None
    # functions are looked for up to the cut (the first top-level statement
    # after the last site): what follows cannot hold a site's function
    m = TOP_LEVEL(text, sites[-1])
    cut = m.start() + 2 if m is not None else len(text)
    try:
        try:
            # the whole text's skeleton, cut: the scopes of the same file
            # read it whole (a string running past the cut is blanked alike)
            sk = skeleton_to(text, len(text))[:cut]
        except Unsure:
            sk = skeleton_to(text, cut)  # (an unsure f-string past the cut)
        kept = [p for p in sites if p < len(sk) and not sk[p].isspace()] if code_only else list(sites)
        spans = list(function_spans(sk, kept)) if kept else []
    except Unsure:
        return None
    return Delimited(kept, spans, sk, cut)


def code_function_regions(text: str, sites: Sequence[int]) -> tuple[list[int], list[tuple[int, int]]] | None:
    """``function_regions`` of the sites that lie in code (a word in a
    string or a comment is no call), with those sites."""
    got = delimit(text, sites, code_only=True)
    return None if got is None else (got.sites, got.regions(text))


def function_regions(text: str, sites: Sequence[int]) -> list[tuple[int, int]] | None:
    """(start, end) in ``text`` of every definition that may hold one of the
    sorted positions ``sites`` (from its `def` line to the end of its body,
    nested definitions included), or None where the skeleton may differ
    from Python's tokens."""
    got = delimit(text, sites)
    return None if got is None else got.regions(text)


# -- top-level statements ------------------------------------------------------
# A rule whose `ast` reading is confined to some top-level statements (the
# classes holding a payload word, say) can have only those compiled: the
# engine compiles the text with every other statement's lines blanked
# (``Rule.ast_scope``/``FactCollector.ast_scope``), so line and column
# numbers are those of the whole text. The statements are told on the
# skeleton: a top-level statement starts at a line with code in column 0
# that is outside brackets and not continued by a backslash, except
# `else`/`elif`/`except`/`finally` clauses (which continue the statement
# above) and a decorated definition (which starts at its first decorator).
# A region runs from such a start to the next (the comments and blank
# lines after a statement, and a string statement in column 0, which the
# skeleton blanks, go with the statement above). Each reader is handed the
# statements that start in its kept regions (``linter.facts.scoped_tree``):
# the same statements whether the whole text or only the kept regions were
# compiled.
# (a line led by a closing bracket starts no statement)
_CODE_AT_COLUMN_0 = re.compile(r"\n(?=[^\s)\]}])")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")


@memo_last_text
def top_level_regions(text: str) -> list[tuple[int, int]] | None:
    """(start, end) offsets of the top-level statements' regions, in order
    and covering the text; None where the skeleton may differ from Python's
    tokens (tabs, form feeds, carriage returns, an unsure f-string): then
    no statement can be told from another."""
    got: list[tuple[int, int]] | None = None
    if "\t" not in text and "\f" not in text and "\r" not in text:
        try:
            sk = skeleton_to(text, len(text))
        except Unsure:
            sk = None
        if sk is not None:
            starts = [0]
            depth = 0
            prev = 0
            decorated = sk[:1] == "@"
            count = sk.count
            for m in _CODE_AT_COLUMN_0.finditer(sk):
                i = m.end()
                depth += count("(", prev, i) + count("[", prev, i) + count("{", prev, i)
                depth -= count(")", prev, i) + count("]", prev, i) + count("}", prev, i)
                prev = i
                if depth != 0 or (i >= 2 and sk[i - 2] == "\\") or _CONTINUES.match(sk, i):
                    continue
                if decorated:
                    decorated = sk[i] == "@"  # the definition (or one more decorator)
                    continue
                starts.append(i)
                decorated = sk[i] == "@"
            got = list(zip(starts, [*starts[1:], len(text)]))
    return got


_CLASS_LINE = re.compile(r"class(?![\w\u0080-\U0010ffff])")
_LINE_START = re.compile(r"\n([ ]*)(?=[^\s)\]}])")
_AT_INDENT: dict[int, Any] = {}  # indent -> finditer of the lines that start there


def class_members(sk: str, a: int, b: int) -> tuple[int, list[tuple[int, int, bool]]] | None:
    """The statements directly in the body of the class statement that is
    the top-level region ``[a, b)`` of the skeleton ``sk``
    (``top_level_regions``): where the first of them starts, and each one's
    ``(start, end, is_def)`` (from its first line, a decorator's for a
    decorated definition, to the next one's; lines blank in the skeleton,
    such as a string statement's, belong to the statement before them).
    None when the region is no class whose body starts on a line of its own
    at a deeper indentation (then it is read whole)."""
    depth = 0
    i = a
    header_end = -1
    while i < b:  # decorators, then the ``class`` line(s) up to the ``:``
        j = sk.find("\n", i, b)
        j = b if j < 0 else j
        line = sk[i:j]
        at_start = depth == 0 and not (i >= 2 and sk[i - 2] == "\\")
        depth += line.count("(") + line.count("[") + line.count("{")
        depth -= line.count(")") + line.count("]") + line.count("}")
        if at_start and _CLASS_LINE.match(line):
            header_end = 0
        if header_end == 0 and depth == 0 and not line.endswith("\\"):
            if not line.rstrip().endswith(":"):
                return None  # a body on the header's line
            header_end = j + 1
            break
        if header_end != 0 and at_start and not line.startswith("@"):
            return None  # no class statement
        i = j + 1
    if header_end <= 0 or header_end >= b:
        return None
    first = _LINE_START.search(sk, header_end - 1, b)
    if first is None or not first.group(1):
        return None
    find = _AT_INDENT.get(len(first.group(1)))
    if find is None:
        find = _AT_INDENT[len(first.group(1))] = re.compile(r"\n {%d}(?=[^\s)\]}])" % len(first.group(1))).finditer
    members: list[list[Any]] = []  # [start, is_def, decorators only]
    depth = 0
    prev = header_end
    count = sk.count
    # the lines at the body's indentation that start a statement (outside
    # brackets, not after a backslash); a line indented less inside the
    # region is in brackets or after a backslash, or the file does not compile
    for m in find(sk, header_end - 1, b):
        k = m.end()
        depth += count("(", prev, k) + count("[", prev, k) + count("{", prev, k)
        depth -= count(")", prev, k) + count("]", prev, k) + count("}", prev, k)
        prev = k
        if depth != 0 or sk[m.start() - 1] == "\\":
            continue
        if _CONTINUES.match(sk, k):
            continue  # ``else:`` and the like: the same statement
        if members and members[-1][2]:  # the definition a decorator line began
            members[-1][1] = sk.startswith(("def", "async"), k)
            members[-1][2] = sk[k] == "@"
            continue
        members.append([m.start() + 1, sk.startswith(("def", "async"), k), sk[k] == "@"])
    if not members or members[-1][2]:
        return None
    ends = [s for s, _, _ in members[1:]] + [b]
    return members[0][0], [(s, e, bool(d)) for (s, d, _), e in zip(members, ends)]


def narrow_classes(
    sk: str, spans: Sequence[tuple[int, int]], needed: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """``spans`` (top-level regions of the skeleton ``sk``) with each class
    among them narrowed to its header and the statements of its body a
    reader needs: every statement but a method, and the methods whose
    ``(start, end)`` ``needed`` accepts (a class that would keep no
    statement, or all of them, stays whole). For a ``scan_scope``."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        got = class_members(sk, a, b) if sk.startswith(("class", "@"), a) else None
        if got is None:
            out.append((a, b))
            continue
        first, members = got
        keep = [(s, e) for s, e, is_def in members if not is_def or needed(s, e)]
        if not keep or len(keep) == len(members):
            out.append((a, b))
            continue
        out.append((a, first))
        out.extend(keep)
    return out


def regions_at(regions: Sequence[tuple[int, int]], offsets: Iterable[int]) -> set[int]:
    """The indices of the ``regions`` (``top_level_regions``) that hold
    the ``offsets``."""
    starts = [a for a, _ in regions]
    return {bisect_right(starts, p) - 1 for p in offsets}


def regions_holding(text: str, words: Sequence[str], lowered: str | None = None) -> list[tuple[int, int]] | None:
    """The top-level regions whose text holds one of ``words`` (searched in
    ``lowered``, the text with offsets kept, when given); None when the
    regions cannot be told."""
    regions = top_level_regions(text)
    if regions is None:
        return None
    hay = text if lowered is None else lowered
    starts = [a for a, _ in regions]
    kept: set[int] = set()
    for w in words:
        i = hay.find(w)
        while i >= 0:
            k = bisect_right(starts, i) - 1
            kept.add(k)
            i = hay.find(w, regions[k][1])  # on from the next region
    return [regions[k] for k in sorted(kept)]


@memo_last_text
def ascii_lookalikes(text: str) -> bool:
    """Whether ``text`` holds a character outside ASCII that NFKC turns into
    ASCII letters, digits or ``_`` (``ａ`` is the name ``a`` for the
    compiler): a search for a name's ASCII spelling would miss it there."""
    return any(
        ord(c) > 127 and (n := unicodedata.normalize("NFKC", c)).isascii() and (n.isalnum() or "_" in n)
        for c in set(text)
    )


_GLOB_META = re.compile(r"[*?]+|\[[^\]]*\]")


def glob_words(globs: Sequence[str]) -> list[str] | None:
    """A word each name a glob matches holds (in any case): the glob's
    longest literal part, lower-cased; None when a glob has none or is not
    ASCII (a name could then be any, or spelt otherwise in the text)."""
    out = []
    for glob in globs:
        parts = [p for p in _GLOB_META.split(glob.lower()) if p]
        if not parts or not glob.isascii():
            return None
        out.append(max(parts, key=len))
    return out


_WORD_SCOPE: list[Any] = [None, None, None]


def regions_naming(text: str, words: Sequence[str], globs: Sequence[str] = ()) -> list[tuple[int, int]] | None:
    """The top-level regions whose text holds one of the lower-case ASCII
    ``words``, or a word of one of the names or globs ``globs`` (see
    ``glob_words``), with its ASCII letters in any case (U+0130 and U+212A,
    which lower-case to ASCII letters, count as one); None (every region)
    when a glob has no word, the regions cannot be told, or the text holds
    a character NFKC turns into ASCII (a name could be spelt so). The last
    text's answer is kept."""
    more = glob_words(globs)
    key = None if more is None else (*words, *more)
    if _WORD_SCOPE[0] is text and _WORD_SCOPE[1] == key:
        return _WORD_SCOPE[2]  # type: ignore[no-any-return]
    got = None
    if key is not None and (text.isascii() or not ascii_lookalikes(text)):
        # (a word holding another is found where that one is)
        found = [w for w in dict.fromkeys(key) if not any(v != w and v in w for v in key)]
        got = regions_holding(text, [*found, "\u0130", "\u212a"], ascii_lower(text))
    _WORD_SCOPE[:] = [text, key, got]
    return got
