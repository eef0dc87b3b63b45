"""A text scanner for the few structural facts the class-hierarchy collector
needs (imports, class headers and bases, class-level assignments, method
names), without building CPython's ``ast``.

Whole-project facts must come from every module of trees like vLLM (3,231
files): ``ast`` costs about 2 ms a file there, so the facts phase alone would
cost several seconds cold. This scanner costs a fraction of that. It is
deliberately conservative: strings and comments are blanked first (positions
kept), statements are read by indentation, and anything it cannot read with
certainty (a base that is a call, a value that is not a literal) is reported
as not understood rather than guessed.

``class_facts_from_text`` does not blank the whole text: it blanks the
strings that span lines, then only the lines it reads (imports, class
headers, class-level statements), which gives the same facts as reading the
fully blanked text (``fast=False``, and what ``scan_classes`` /
``scan_imports`` take) at about a third of the cost.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# comments and strings (string prefixes stay outside the match: harmless).
# Starting every branch with a literal character keeps the scan fast, and the
# string bodies are "unrolled" (a run of plain characters, then an escape or a
# lone quote, ...): the same matches as ``(?:[^'\\]|\\.|'(?!''))*``, at half
# the cost.
_TOKEN = re.compile(
    "|".join(
        (
            r"#[^\n]*",
            r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''",
            r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""',
            r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'",
            r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"',
        )
    ),
    re.S,
)
_NOT_NL = re.compile(r"[^\n]")
_NL = re.compile("\n")
_BLANK_BYTES = bytes(10 if i == 10 else 32 for i in range(256))  # every byte but b"\n" to b" "


def _blank_str(s: str) -> str:
    """One comment or string token, blanked (see ``blank``)."""
    if s[0] == "#":
        return " " * len(s)
    q = 3 if len(s) >= 6 and s[:3] in ("'''", '"""') else 1
    inner = s[q:-q]
    if "\n" not in inner:
        body = " " * len(inner)
    elif inner.isascii():
        # what ``_NOT_NL.sub(" ", inner)`` gives, byte by byte through a table
        body = inner.encode("ascii").translate(_BLANK_BYTES).decode("ascii")
    else:
        # the same, a few times faster than the regex
        body = "\n".join([" " * len(line) for line in inner.split("\n")])
    return s[:q] + body + s[-q:]


def _blank_token(m: re.Match[str]) -> str:
    return _blank_str(m.group(0))


def blank(text: str) -> str:
    """``text`` with the insides of strings and comments replaced by spaces
    (newlines and every position kept), so that keywords in them are not
    mistaken for code. The quotes stay, so a string is still visibly a value.

    The same string as :func:`_blank_sub` (``_TOKEN.sub``), about twice as
    fast: ``_TOKEN`` (an alternation) is tried only where a token can start,
    the next ``#``, ``'`` or ``"`` found by ``str.find``, where ``re.sub``
    would try every offset. Every token starts with one of those three
    characters, and a token found at one is the one ``re.sub`` finds there:
    it tries each offset in turn and resumes after each token, as this loop
    does."""
    find = text.find
    nh, ns, nd = find("#"), find("'"), find('"')
    if nh < 0 and ns < 0 and nd < 0:
        return text
    match = _TOKEN.match
    out: list[str] = []
    pos = last = 0
    while True:
        if 0 <= nh < pos:
            nh = find("#", pos)
        if 0 <= ns < pos:
            ns = find("'", pos)
        if 0 <= nd < pos:
            nd = find('"', pos)
        c = nh
        if ns >= 0 and (c < 0 or ns < c):
            c = ns
        if nd >= 0 and (c < 0 or nd < c):
            c = nd
        if c < 0:
            break
        if c == nh:  # a comment: ``#[^\n]*``
            e = find("\n", c)
            if e < 0:
                e = len(text)
            out.append(text[last:c])
            out.append(" " * (e - c))
            last = pos = e
            continue
        m = match(text, c)
        if m is None:
            pos = c + 1  # no token there (an unclosed quote)
            continue
        out.append(text[last:c])
        out.append(_blank_str(m.group()))
        last = pos = m.end()
    out.append(text[last:])
    return "".join(out)


def _blank_sub(text: str) -> str:
    """:func:`blank` as one ``re.sub``: the plain reading the fast one is
    tested against."""
    if "#" not in text and "'" not in text and '"' not in text:
        return text
    return _TOKEN.sub(_blank_token, text)


_CLASS = re.compile(r"^([ \t]*)class[ \t]+([A-Za-z_]\w*)[ \t]*(\(|:)", re.M)
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(.+?)[ \t]*$", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*(.*)$")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*$")


@dataclass
class ScannedClass:
    name: str  # dotted within the module for nested classes
    line: int
    col: int  # of the class name, code points
    bases: list[str] = field(default_factory=list)
    attrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    methods: list[str] = field(default_factory=list)


def _line_starts(text: str) -> list[int]:
    """Offsets at which the lines of ``text`` start."""
    return [0, *[m.end() for m in _NL.finditer(text)]]


def _lineno(starts: list[int], offset: int) -> int:
    """The 1-based line of ``offset``, given ``_line_starts``."""
    return bisect_right(starts, offset) or 1


# the characters the bracket-counting loops below act on: they visit only
# those (a regex jumps over the rest), with what a loop over every character
# would do (tests/test_pyscan.py holds those loops and checks both agree)
_BRACKET = re.compile(r"[()\[\]{}]")
_BRACKET_COMMA = re.compile(r"[()\[\]{},]")
_BRACKET_NL = re.compile(r"[()\[\]{}\n]")
_BRACKET_NL_EQ = re.compile(r"[()\[\]{}\n=]")


def _balanced(text: str, open_at: int) -> int:
    """Index just past the parenthesis closing the one at ``open_at``."""
    depth = 0
    for m in _BRACKET.finditer(text, open_at):
        if m.group() in "([{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return len(text)


def _split_top(s: str) -> Iterator[str]:
    depth, start = 0, 0
    for m in _BRACKET_COMMA.finditer(s):
        ch = m.group()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            i = m.start()
            yield s[start:i]
            start = i + 1
    yield s[start:]


_BASES: dict[str, str | None] = {}


def _base(expr: str) -> str | None:
    """A base as written (``Generic[T]`` -> ``Generic``), None when not a
    dotted name (memoized: a project's bases are mostly a few names)."""
    try:
        return _BASES[expr]
    except KeyError:
        pass
    if len(_BASES) >= 4096:
        _BASES.clear()
    b = _BASES[expr] = _read_base(expr)
    return b


def _read_base(expr: str) -> str | None:
    e = " ".join(expr.split())
    if not e or "=" in e.split("[")[0]:
        return None  # metaclass=..., keyword arguments
    if "[" in e:
        e = e.split("[", 1)[0].strip()  # Generic[T] -> Generic
    e = e.replace(" ", "")
    return e if _DOTTED.match(e) else None


_NAMED_CONSTANTS: dict[str, Any] = {"None": None, "True": True, "False": False}
# short decimal integers (no leading zeros, no ``_``: those ``int`` reads but
# Python does not, or not the same), and strings without escapes or prefixes
_SIMPLE_INT = re.compile(r"-?(?:[1-9][0-9]{0,17}|0)")
_SIMPLE_STR = re.compile(r"\"[^\"\\\n\r\0]*\"|'[^'\\\n\r\0]*'")


def _literal(src: str, raw: str) -> tuple[bool, Any]:
    """A class attribute's value: (True, value) for a literal, else (False,
    the source's first line)."""
    v = raw.strip()
    # the common literals, read as ``ast.literal_eval`` would (it compiles)
    if v in _NAMED_CONSTANTS:
        return True, _NAMED_CONSTANTS[v]
    if _SIMPLE_INT.fullmatch(v):
        return True, int(v)
    if _SIMPLE_STR.fullmatch(v):
        return True, v[1:-1]
    if v and (v[0].isdigit() or v[0] in "-+'\"(" or v in ("True", "False", "None") or v[:2] in ("b'", 'b"')):
        try:
            val = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False, v
        if val is None or isinstance(val, (bool, int, float, str)):
            return True, val
    return False, v


def _import_names(body: str) -> Iterator[tuple[str, str | None]]:
    """(name, asname) of the body of ``import a.b as c, d``."""
    if body.rstrip().endswith("\\"):
        body = body.rstrip("\\ \t")
    for part in body.split(","):
        bits = part.split()
        if not bits:
            continue
        yield bits[0], bits[2] if len(bits) >= 3 and bits[1] == "as" else None


def _from_names(names: str) -> list[tuple[str, str | None]]:
    """(name, asname) of what follows ``from m import``."""
    if names.startswith("("):
        names = names[1:-1] if names.endswith(")") else names[1:]
    out: list[tuple[str, str | None]] = []
    for part in names.replace("\\", " ").split(","):
        bits = part.split()
        if bits and bits[0] != "*":
            out.append((bits[0], bits[2] if len(bits) >= 3 and bits[1] == "as" else None))
    return out


def scan_imports(blanked: str, text: str) -> list[tuple[int, str | None, str, str | None]]:
    """Imports as (level, module, name, asname); ``import a.b as c`` gives
    (0, None, "a.b", "c"). Nested imports included, in source order."""
    out: list[tuple[int, int, str | None, str, str | None]] = []
    for m in _IMPORT.finditer(blanked):
        for name, asname in _import_names(m.group(1)):
            out.append((m.start(), 0, None, name, asname))
    for m in _FROM.finditer(blanked):
        level = len(m.group(1))
        mod = m.group(2) or None
        for name, asname in _from_names(m.group(3)):
            out.append((m.start(), level, mod, name, asname))
    out.sort(key=lambda t: t[0])
    return [(lvl, mod, name, asn) for _, lvl, mod, name, asn in out]


_HEADER = re.compile(
    r"^([ \t]*)(class|def|async|if|elif|else|try|except|finally|with|for|while|match|case)\b",
    re.M,
)
_VISIBLE_VIA = frozenset(("class", "if", "elif", "else", "try", "except", "finally"))
_END_CACHE: dict[int, re.Pattern[str]] = {}
_BODY_CACHE: dict[int, re.Pattern[str]] = {}


def _end_re(indent: int) -> re.Pattern[str]:
    """A line that leaves a block opened at ``indent``."""
    if indent not in _END_CACHE:
        _END_CACHE[indent] = re.compile(r"\n(?=[ ]{0,%d}[^ \n])" % indent)
    return _END_CACHE[indent]


def _body_re(indent: int) -> re.Pattern[str]:
    """Statements at exactly ``indent``: defs, classes, simple assignments."""
    if indent not in _BODY_CACHE:
        _BODY_CACHE[indent] = re.compile(
            r"^[ ]{%d}(?:(?:async[ \t]+)?def[ \t]+(?P<d>[A-Za-z_]\w*)"
            r"|(?P<a>[A-Za-z_]\w*)[ \t]*(?P<rest>[:=][^\n]*))" % indent,
            re.M,
        )
    return _BODY_CACHE[indent]


def scan_classes(blanked: str, text: str) -> list[ScannedClass]:
    """Classes visible from the module (not inside functions, loops or with
    blocks): name, bases as written (dotted names only), class-level
    assignments of the class body, method names. Assumes space indentation."""
    if "class" not in blanked:
        return []
    starts = _line_starts(blanked)
    raw_lines = text.split("\n")
    out: list[ScannedClass] = []
    stack: list[tuple[int, str, str]] = []  # (indent, keyword, class qualname)
    for m in _HEADER.finditer(blanked):
        indent = len(m.group(1).expandtabs(8))
        kw = m.group(2)
        if kw == "async":
            kw = "def"
        if kw in ("else", "elif", "except", "finally", "case"):
            # a continuation of the block at the same indent: its parent chain
            while stack and stack[-1][0] > indent:
                stack.pop()
            if stack and stack[-1][0] == indent:
                stack.pop()
        else:
            while stack and stack[-1][0] >= indent:
                stack.pop()
        if kw != "class":
            stack.append((indent, kw, ""))
            continue
        cm = _CLASS.match(blanked, m.start())
        if cm is None:
            stack.append((indent, "other", ""))
            continue
        visible = all(k in _VISIBLE_VIA for _, k, _ in stack)
        parent = next((q for _, k, q in reversed(stack) if k == "class"), "")
        name = cm.group(2)
        qual = f"{parent}.{name}" if parent and visible else name
        stack.append((indent, "class" if visible else "other", qual if visible else ""))
        if not visible:
            continue
        line = _lineno(starts, m.start())
        raw = raw_lines[line - 1] if line - 1 < len(raw_lines) else ""
        col = raw.find(name, len(cm.group(1)) + 5)
        sc = ScannedClass(qual, line, max(col, 0))
        if cm.group(3) == "(":
            open_at = cm.end(3) - 1
            close = _balanced(blanked, open_at)
            for part in _split_top(blanked[open_at + 1 : close - 1]):
                b = _base(part)
                if b:
                    sc.bases.append(b)
            colon = blanked.find(":", close)
        else:
            colon = cm.end(3) - 1
        out.append(sc)
        body_start = blanked.find("\n", colon)
        if body_start < 0:
            continue
        em = _end_re(indent).search(blanked, body_start + 1)
        body_end = em.start() if em else len(blanked)
        body = blanked[body_start:body_end]
        bm = re.search(r"\n([ ]+)\S", body)
        if bm is None:
            continue
        width = len(bm.group(1))
        for st in _body_re(width).finditer(blanked, body_start + 1, body_end):
            if st.group("d"):
                if st.group("d") not in sc.methods:
                    sc.methods.append(st.group("d"))
                continue
            target = st.group("a")
            eq = _assignment_eq(blanked, st.start("rest"))
            if eq < 0:
                continue
            i = _lineno(starts, st.start()) - 1
            vstart = eq + 1
            while vstart < len(blanked) and blanked[vstart] in " \t":
                vstart += 1
            j = _lineno(starts, vstart) - 1
            vline_end = blanked.find("\n", vstart)
            vline_end = len(blanked) if vline_end < 0 else vline_end
            vend = starts[j] + len(blanked[starts[j] : vline_end].rstrip())
            if target in ("class", "def", "async", "if", "for", "while", "with", "return", "else", "try"):
                continue
            first_end = vend
            multi = False
            q = blanked[vstart : vstart + 4].lstrip("rRbBuUfF")[:3]
            if q in ('"""', "'''"):
                close = blanked.find(q, blanked.find(q, vstart) + 3)
                if close > vend:
                    vend, multi = close + 3, True
            elif _unbalanced(blanked[vstart:vend]):
                vend, multi = _expr_end(blanked, vstart), True
            lit, val = _literal("", text[vstart:vend])
            if not lit:
                first = text[vstart:first_end]
                val = f"{first} ..." if multi else first
            rs = raw_lines[i]
            c0 = len(rs) - len(rs.lstrip())
            sc.attrs[target] = {
                "value": val,
                "literal": lit,
                "line": i + 1,
                "col": c0,
                "end_line": i + 1,
                "end_col": c0 + len(target),
            }
    return out


class _Short(Exception):
    """A window of blanked text ended before a scan could decide: widen it."""


def _assignment_eq(blanked: str, start: int, full_len: int | None = None) -> int:
    """Offset of the ``=`` of ``name = v`` / ``name: Ann[...] = v`` starting at
    ``start`` (the ``:`` or ``=`` after the name), or -1 when the statement is
    not an assignment (``name: Ann`` alone, ``==``, augmented assignment).

    ``blanked`` may be a window (a prefix) of a text ``full_len`` long: the
    scan raises ``_Short`` when it needs what lies beyond."""
    n = len(blanked)
    full = n if full_len is None else full_len
    if blanked.startswith("==", start):
        return -1
    if blanked[start] == "=":
        return start
    depth = 0
    stop = min(full, start + 5000)
    for m in _BRACKET_NL_EQ.finditer(blanked, start + 1, min(n, stop)):
        ch = m.group()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n":
            if depth <= 0:
                return -1
        elif depth == 0:
            i = m.start()
            if i + 1 >= n and n < full:
                raise _Short
            nxt = blanked[i + 1 : i + 2]
            prev = blanked[i - 1]
            if nxt == "=" or prev in "=!<>":
                return -1
            return i
    if stop > n:
        raise _Short
    return -1


def _expr_end(blanked: str, start: int, full_len: int | None = None) -> int:
    """End offset of an expression starting at ``start`` that spans lines
    inside brackets (``full_len``: as for ``_assignment_eq``)."""
    n = len(blanked)
    stop = min(n if full_len is None else full_len, start + 20000)
    depth = 0
    for m in _BRACKET_NL.finditer(blanked, start, min(n, stop)):
        ch = m.group()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth <= 0:
            return m.start()
    if stop > n:
        raise _Short
    return start


def _unbalanced(s: str) -> bool:
    count = s.count
    return count("(") + count("[") + count("{") != count(")") + count("]") + count("}")


# -- the fast path ---------------------------------------------------------------
# ``blank`` costs a regex match and a replacement per string and comment of the
# file, and most of them are nowhere near an import or a class. Only strings
# that span lines must be blanked everywhere (a docstring's line may start
# with ``class``); every other line starts outside any string or comment, so
# the lines that matter (imports, class headers, class-level statements) can
# be blanked one window at a time, with what ``blank`` would give there.


class _NeedsFullBlank(Exception):
    """The fast path does not handle this text (tabs: indentation widths)."""


_TOKEN_START = re.compile(r"[#'\"]")
_IMPORT_HEAD = re.compile(r"[ \t]*(import|from)[ \t]")
# a ``from`` import on one line with no string, comment, parenthesis or
# backslash (blanking leaves it as it is): ``_FROM`` reads it the same
_SIMPLE_FROM = re.compile(
    r"[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+([^\n#'\"(\\]*)(?![^\n])"
)
# ``_FROM`` when its parenthesized branch matches, with no string or comment
# up to the closing parenthesis (blanking leaves it as it is)
_PAREN_FROM = re.compile(r"[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)#'\"]*\))")
_Imported = list[tuple[int, str | None, str, str | None]]
# what an import line reads, by the line's text (a project repeats most of its
# import lines): one-line ``from`` imports (None: not one), plain ``import``
_FROM_LINES: dict[str, _Imported | None] = {}
_IMPORT_LINES: dict[str, _Imported] = {}
_LINES_KEPT = 16384  # lines of each kind (of up to 200 characters) kept


def _simple_from(line: str) -> _Imported | None:
    """The imports of a line ``_SIMPLE_FROM`` matches (as the ``from``
    branch of ``_FastScan.imports`` reads them), None for another line."""
    try:
        return _FROM_LINES[line]
    except KeyError:
        pass
    sm = _SIMPLE_FROM.match(line)
    if sm is None:
        got = None
    else:
        level, mod = len(sm.group(1)), sm.group(2) or None
        got = [
            (level, mod, bits[0], bits[2] if len(bits) >= 3 and bits[1] == "as" else None)
            for bits in map(str.split, sm.group(3).split(","))
            if bits and bits[0] != "*"
        ]
    if len(line) <= 200:
        if len(_FROM_LINES) >= _LINES_KEPT:
            _FROM_LINES.clear()
        _FROM_LINES[line] = got
    return got


def _plain_import(line: str) -> _Imported:
    """The imports of an ``import`` line with no string or comment (its
    window is itself)."""
    got = _IMPORT_LINES.get(line)
    if got is None:
        m = _IMPORT.match(line)
        got = [] if m is None else [(0, None, name, asn) for name, asn in _import_names(m.group(1))]
        if len(line) <= 200:
            if len(_IMPORT_LINES) >= _LINES_KEPT:
                _IMPORT_LINES.clear()
            _IMPORT_LINES[line] = got
    return got


_WIDTH_SEMI = re.compile(r"\n([ ]+)[^\s#]")
_NOT_TARGETS = frozenset(
    ("class", "def", "async", "if", "for", "while", "with", "return", "else", "try")
)
# what a class-level statement's line must not hold for the short reading
# in ``_FastScan._class``
_NOT_PLAIN = re.compile(r"[#'\"]")
_NOT_PLAIN_BASES = re.compile(r"[#'\"(\[\]{}]")


def _depth(s: str) -> int:
    """The bracket depth at the end of ``s`` (from 0 at its start)."""
    count = s.count
    return count("(") + count("[") + count("{") - count(")") - count("]") - count("}")


_KEYWORDS = "class|def|async|if|elif|else|try|except|finally|with|for|while|match|case"
_SEMI_RES: dict[tuple[str, int], re.Pattern[str]] = {}


def _semi_re(kind: str, n: int) -> re.Pattern[str]:
    """Line patterns over the half-blanked text (comments still there: a line
    whose first character is ``#`` is blank). All start with a newline, so
    the regex engine jumps from line to line instead of trying every offset."""
    key = (kind, n)
    pat = _SEMI_RES.get(key)
    if pat is None:
        if kind == "end":  # a line that leaves a block opened at indent n
            src = rf"\n(?=[ ]{{0,{n}}}[^ \n#])"
        elif kind == "stmt":  # statements at exactly indent n (see _body_re)
            src = (
                "\n" + " " * n + r"(?:(?:async[ \t]+)?def[ \t]+(?P<d>[A-Za-z_]\w*)"
                r"|(?P<a>[A-Za-z_]\w*)[ \t]*(?P<rest>[:=]))"
            )
        else:  # block headers indented less than n
            src = rf"\n([ ]{{0,{n - 1}}})({_KEYWORDS})\b"
        pat = _SEMI_RES[key] = re.compile(src)
    return pat


_TRIPLE_DQ = re.compile('"""')


def _find_continuation(text: str, pos: int) -> int:
    """``text.find("\\\n", pos)``, faster: backslashes are rare, newlines
    are not (``str.find`` is slow on a needle ending with a common character)."""
    find = text.find
    p = find("\\", pos)
    while p >= 0:
        if text.startswith("\n", p + 1):
            return p
        p = find("\\", p + 1)
    return -1


def _find_single_triple(text: str, pos: int) -> int:
    """``text.find("'''", pos)``, faster where single quotes are rare (most
    code): ``str.find`` of a short needle visits every character."""
    find = text.find
    p = find("'", pos)
    for _ in range(16):
        if p < 0 or text.startswith("'''", p):
            return p
        p = find("'", p + 1)
    return -1 if p < 0 else find("'''", p)


_BODY_RES: dict[tuple[int, int], re.Pattern[str]] = {}


def _body_re2(width: int, indent: int) -> re.Pattern[str]:
    """The lines of a body indented ``width`` > ``indent`` that may matter,
    by ``lastindex``: 1, a line indented ``width`` defining the method named
    by group 1 (what ``_semi_re("stmt", width)`` reads there as ``d``); 2, a
    line indented ``width`` that starts with a name's first character (where
    that pattern may match: every statement it reads starts so); None, the
    line ending the body (``_semi_re("end", indent)``). No other line matches
    (a line indented ``width`` is not an end: ``width`` > ``indent``). With
    few groups and short branches, the regex engine goes through the body's
    lines about twice as fast as with the statement pattern itself."""
    pat = _BODY_RES.get((width, indent))
    if pat is None:
        pat = _BODY_RES[(width, indent)] = re.compile(
            "\n(?:" + " " * width + r"(?:def[ \t]+([A-Za-z_]\w*)|([A-Za-z_]))"
            rf"|(?=[ ]{{0,{indent}}}[^ \n#]))"
        )
    return pat


def _multiline_strings(text: str) -> list[tuple[int, int]]:
    """Spans of the tokens of ``blank`` that hold a newline: triple-quoted
    strings and strings continued with a backslash. Each holds a triple quote
    or a backslash-newline, so only the lines with one of those are tokenized
    (from the line's start, which is outside any token when no such string
    started earlier on)."""
    out: list[tuple[int, int]] = []
    find = text.find
    dq = _TRIPLE_DQ.search  # faster than ``str.find`` on this needle
    m = dq(text)
    # the next ``"""``, ``'''`` and backslash-newline (-1: none left)
    x0, x1, x2 = m.start() if m else -1, _find_single_triple(text, 0), _find_continuation(text, 0)
    pos = 0  # outside any token; everything before is tokenized
    while True:
        if 0 <= x0 < pos:
            m = dq(text, pos)
            x0 = m.start() if m else -1
        if 0 <= x1 < pos:
            x1 = _find_single_triple(text, pos)
        if 0 <= x2 < pos:
            x2 = _find_continuation(text, pos)
        c = x0
        if x1 >= 0 and (c < 0 or x1 < c):
            c = x1
        if x2 >= 0 and (c < 0 or x2 < c):
            c = x2
        if c < 0:
            return out
        p = max(pos, text.rfind("\n", 0, c) + 1)
        while True:
            sm = _TOKEN_START.search(text, p, c + 1)
            if sm is None:  # c is code (a line continuation)
                pos = c + 1
                break
            a = sm.start()
            e = find('"""', a + 3) if text.startswith('"""', a) else -1
            if e >= 0 and find("\\", a + 3, e) < 0:
                # with no backslash in it, a ``"""`` string ends at the next
                # ``"""`` (where ``_TOKEN`` ends it, without a regex over it)
                e += 3
            else:
                t = _TOKEN.match(text, a)
                if t is None:  # a stray quote: ``blank`` moves on too
                    p = a + 1
                    continue
                e = t.end()
            if find("\n", a, e) >= 0:
                out.append((a, e))
            if e > c:
                pos = e
                break
            p = e


def _class_heads(s: str) -> list[tuple[int, int]]:
    """(line start, indent) of the lines of ``s`` that start with the word
    ``class``. Blanking strings only removes some (a string's closing quote
    stays between it and any ``class`` after it on its line)."""
    heads: list[tuple[int, int]] = []
    find, rfind, match = s.find, s.rfind, _HEADER.match
    p = find("class")
    while p >= 0:
        # most ``class`` are in ``@classmethod``, ``dataclass``, ``cls.__class__``
        if p == 0 or s[p - 1] in " \t\n":
            ls = rfind("\n", 0, p) + 1
            hm = match(s, ls)
            if hm is not None and hm.start(2) == p and hm.group(2) == "class":
                heads.append((ls, p - ls))
        p = find("class", p + 5)
    return heads


class _FastScan:
    """One text: its multi-line strings blanked (``semi``), the rest blanked
    on demand by ``window``."""

    def __init__(self, text: str) -> None:
        if "\t" in text:
            raise _NeedsFullBlank
        self.text = text
        self.n = len(text)
        spans = _multiline_strings(text)
        self.spans = spans
        self.span_starts = [a for a, _ in spans]
        if spans:
            parts: list[str] = []
            prev = 0
            for a, e in spans:
                parts.append(text[prev:a])
                parts.append(_blank_str(text[a:e]))
                prev = e
            parts.append(text[prev:])
            self.semi = "".join(parts)
        else:
            self.semi = text
        # 1-based line of a position (counted from the last position asked)
        self.lineno = LineCounter(text)

    # -- helpers -----------------------------------------------------------------
    def line_end(self, pos: int) -> int:
        e = self.semi.find("\n", pos)
        return self.n if e < 0 else e

    def grow(self, start: int, end: int) -> int:
        """A line end well past ``end`` (windows double)."""
        return self.line_end(min(self.n, end + (end - start) + 256))

    def window(self, a: int, b: int) -> str:
        """``blank(text)[a:b]``, for a line start ``a`` outside multi-line
        strings and a line end ``b``: multi-line strings are copied (already
        blank), what lies between them is blanked afresh."""
        semi, spans = self.semi, self.spans
        w = semi[a:b]
        if "#" not in w and "'" not in w and '"' not in w:
            # nothing to blank: a string or comment holds a quote or ``#``
            # (multi-line strings keep their quotes in ``semi``)
            return w
        i = bisect_left(self.span_starts, a)
        if i and spans[i - 1][1] > a:
            raise _NeedsFullBlank  # not a line start outside strings: cannot happen
        if i == len(spans) or spans[i][0] >= b:
            return blank(semi[a:b])
        parts: list[str] = []
        p = a
        while i < len(spans) and spans[i][0] < b:
            s, e = spans[i]
            e = min(e, b)
            parts.append(blank(semi[p:s]))
            parts.append(semi[s:e])
            p = e
            i += 1
        parts.append(blank(semi[p:b]))
        return "".join(parts)

    # -- imports -----------------------------------------------------------------
    def imports(self) -> list[tuple[int, str | None, str, str | None]]:
        """As ``scan_imports``."""
        semi, n = self.semi, self.n
        find, rfind, head = semi.find, semi.rfind, _IMPORT_HEAD.match
        simple_from = _simple_from
        out: list[tuple[int, str | None, str, str | None]] = []
        from_end = 0  # ``from`` matches do not overlap (a parenthesized one spans lines)
        p = find("import")
        while p >= 0:
            ls = rfind("\n", 0, p) + 1
            le = find("\n", p)
            if le < 0:
                le = n
            got = simple_from(semi[ls:le])
            if got is not None:
                # what the ``from`` branch below reads, in one match; and so
                # for the lines after it that are such imports too (the next
                # ``import`` is on the next line: no need to look for it)
                while True:
                    if ls >= from_end:
                        from_end = le
                        out.extend(got)
                    if le >= n:
                        break
                    nle = find("\n", le + 1)
                    if nle < 0:
                        nle = n
                    got = simple_from(semi[le + 1 : nle])
                    if got is None:
                        break
                    ls, le = le + 1, nle
                p = find("import", le)
                continue
            hm = head(semi, ls)
            if hm is None:
                pass
            elif hm.group(1) == "import":
                line = semi[ls:le]
                if "#" in line or "'" in line or '"' in line:
                    m = _IMPORT.match(self.window(ls, le))
                    if m is not None:
                        out.extend([(0, None, name, asn) for name, asn in _import_names(m.group(1))])
                else:
                    out.extend(_plain_import(line))  # the window is the line
            elif ls >= from_end and (pm := _PAREN_FROM.match(semi, ls)) is not None:
                # ``from m import (...)``, no string or comment up to the
                # first ``)``: what the windows below read
                from_end = pm.end()
                level, mod = len(pm.group(1)), pm.group(2) or None
                out.extend([(level, mod, name, asn) for name, asn in _from_names(pm.group(3))])
            elif ls >= from_end:
                w = self.window(ls, le)
                fm = _FROM.match(w)
                if fm is not None and le < n:
                    g = fm.start(3)
                    if w.startswith("(", g) and w.find(")", g) < 0:
                        # ``from m import (`` closes further on: from the first
                        # ``)`` of the half-blanked text (a comment's, at worst)
                        c = find(")", le)
                        end = n if c < 0 else self.line_end(c)
                        while True:
                            w = self.window(ls, end)
                            fm = _FROM.match(w)
                            if fm is None or end >= n:
                                break
                            g = fm.start(3)
                            if not (w.startswith("(", g) and w.find(")", g) < 0):
                                break
                            end = self.grow(ls, end)
                if fm is not None:
                    from_end = ls + fm.end()
                    level, mod = len(fm.group(1)), fm.group(2) or None
                    out.extend([(level, mod, name, asn) for name, asn in _from_names(fm.group(3))])
            p = find("import", le)
        return out

    # -- classes -----------------------------------------------------------------
    def classes(self, candidates: list[tuple[int, int]] | None = None) -> list[ScannedClass]:
        """As ``scan_classes``. ``candidates``: ``_class_heads(text)``, when
        known (the text's heads include the half-blanked text's)."""
        semi = self.semi
        heads: list[tuple[int, int]]  # (line start, indent) of class headers
        if candidates is None:
            heads = _class_heads(semi)
        elif semi is self.text:
            heads = candidates
        else:
            heads = []
            for ls, ind in candidates:
                hm = _HEADER.match(semi, ls)
                if hm is not None and hm.start(2) == ls + ind and hm.group(2) == "class":
                    heads.append((ls, ind))
        if not heads:
            return []
        deepest = max(ind for _, ind in heads)
        if deepest == 0:
            # every class at the top: no enclosing block to look for, each is
            # visible and named as written
            match, one = _CLASS.match, self._class
            return [one(ls, 0, cm, cm.group(2)) for ls, _ in heads if (cm := match(semi, ls))]
        # a class's enclosing blocks are the headers before it indented less:
        # the headers between two classes that matter are those indented less
        # than the deepest class from there on (one indented as much or more
        # is left, and what it left too, before any of those classes is read)
        events: list[tuple[int, int, str]] = []
        below = [0] * len(heads)  # the deepest indent of heads[k:]
        deep = 0
        for k in range(len(heads) - 1, -1, -1):
            deep = max(deep, heads[k][1])
            below[k] = deep
        prev = 0
        for k, (ls, ind) in enumerate(heads):
            limit = below[k]
            if limit and prev < ls:
                if prev == 0:
                    m0 = _HEADER.match(semi, 0)
                    if m0 is not None and len(m0.group(1)) < limit:
                        events.append((0, len(m0.group(1)), m0.group(2)))
                for m in _semi_re("head", limit).finditer(semi, prev, ls - 1):
                    events.append((m.start() + 1, len(m.group(1)), m.group(2)))
            events.append((ls, ind, "class"))
            prev = ls
        out: list[ScannedClass] = []
        stack: list[tuple[int, str, str]] = []  # (indent, keyword, class qualname)
        for ls, indent, kw in events:
            if kw == "async":
                kw = "def"
            # the stack's indents increase: popping the deeper and equal ones is
            # what ``scan_classes`` does for new blocks and continuations alike
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if kw != "class":
                stack.append((indent, kw, ""))
                continue
            cm = _CLASS.match(semi, ls)
            if cm is None:
                stack.append((indent, "other", ""))
                continue
            visible = all(k in _VISIBLE_VIA for _, k, _ in stack)
            parent = next((q for _, k, q in reversed(stack) if k == "class"), "")
            name = cm.group(2)
            qual = f"{parent}.{name}" if parent and visible else name
            stack.append((indent, "class" if visible else "other", qual if visible else ""))
            if visible:
                out.append(self._class(ls, indent, cm, qual))
        return out

    def _class(self, ls: int, indent: int, cm: re.Match[str], qual: str) -> ScannedClass:
        semi, text, n = self.semi, self.text, self.n
        le = semi.find("\n", ls)
        if le < 0:
            le = n
        col = text.find(cm.group(2), ls + len(cm.group(1)) + 5, le)
        sc = ScannedClass(qual, self.lineno(ls), col - ls if col >= 0 else 0)
        if cm.group(3) == "(":
            a = cm.end(3)
            c = semi.find(")", a, le)
            colon = semi.find(":", c + 1, le) if c >= 0 else -1
            if (
                colon >= 0
                and _NOT_PLAIN_BASES.search(semi, a, c) is None
                and _NOT_PLAIN.search(semi, c, colon) is None
            ):
                # ``class C(A, b.B):`` with no string, comment or other
                # bracket up to the colon: what the window below reads
                bases = sc.bases
                for part in semi[a:c].split(","):
                    b = _base(part)
                    if b:
                        bases.append(b)
            else:
                colon = self._bases(sc, ls, le, cm)
        else:
            colon = cm.end(3) - 1
        body_start = semi.find("\n", colon)
        if body_start < 0:
            return sc
        # the body ends at the first line indented ``indent`` or less; its
        # statements are indented as its first line. The end is looked for
        # up to that first line only, then along with the statements
        bm = _WIDTH_SEMI.search(semi, body_start)
        if bm is None or _semi_re("end", indent).search(semi, body_start + 1, bm.end()):
            return sc
        width = len(bm.group(1))
        methods = sc.methods
        stmt = _semi_re("stmt", width).match
        find, plain = semi.find, _NOT_PLAIN.search
        for cand in _body_re2(width, indent).finditer(semi, body_start):
            k = cand.lastindex
            if k == 1:
                d = cand.group(1)
                if d not in methods:
                    methods.append(d)
                continue
            if k is None:
                break  # the first line after the body
            st = stmt(semi, cand.start())
            if st is None:
                continue
            d = st.group("d")
            if d is not None:
                if d not in methods:
                    methods.append(d)
                continue
            target = st.group("a")
            if target in _NOT_TARGETS:
                continue
            start = st.start() + 1
            r = st.end() - 1  # the ``:`` or ``=`` after the name
            le = find("\n", r)
            eq = -1
            if 0 <= le < r + 4000:
                # the statement's line, blanked (as it is when it holds no
                # string or comment): the window ``_attr_value`` reads first,
                # which gives its value when it ends on the line. Its ``=``
                # is the first at bracket depth 0 on the line; none there is
                # no assignment, unless a bracket stays open
                if plain(semi, r, le) is None:
                    w, o = semi, 0
                else:
                    w, o = self.window(start, le + 1), start
                wr, wle = r - o, le - o
                if w[wr] == "=":
                    if w[wr + 1] == "=":
                        continue
                    eq = wr
                else:
                    eq = w.find("=", wr + 1, wle)
                    while eq >= 0 and _depth(w[wr + 1 : eq]):
                        eq = w.find("=", eq + 1, wle)
                    if eq < 0:
                        if _depth(w[wr + 1 : wle]) <= 0:
                            continue
                    elif w[eq + 1] == "=" or w[eq - 1] in "=!<>":
                        continue
            if eq >= 0:
                vstart = eq + 1
                while w[vstart] in " \t":
                    vstart += 1
                vend = start - o + len(w[start - o : wle].rstrip())
            if (
                eq >= 0
                and w[vstart : vstart + 4].lstrip("rRbBuUfF")[:3] not in ('"""', "'''")
                and not _depth(w[vstart:vend])
            ):
                # the value ends on the line (as ``_attr_value`` reads it)
                vstart, vend = vstart + o, vend + o
                first_end, multi = vend, False
            else:
                rest = r - start
                # the line with its newline: ``name: T`` alone ends there
                end = min(n, le + 1) if le >= 0 else n
                if eq >= 0 and end < n:
                    # a value that goes on past the line: the window starts
                    # as far as its brackets seem to close in the half-blanked
                    # text (any window long enough reads the same; a short
                    # one grows below)
                    try:
                        close = _expr_end(semi, vstart + o)
                    except _Short:
                        close = n
                    end = min(n, max(end, close + 1))
                while True:
                    try:
                        value = _attr_value(self.window(start, end), rest, n - start)
                        break
                    except _Short:
                        end = self.grow(start, end)
                if value is None:
                    continue
                vstart, vend, first_end, multi = value
                vstart, vend, first_end = vstart + start, vend + start, first_end + start
            lit, val = _literal("", text[vstart:vend])
            if not lit:
                first = text[vstart:first_end]
                val = f"{first} ..." if multi else first
            line = self.lineno(start)
            sc.attrs[target] = {
                "value": val,
                "literal": lit,
                "line": line,
                "col": width,
                "end_line": line,
                "end_col": width + len(target),
            }
        return sc

    def _bases(self, sc: ScannedClass, ls: int, le: int, cm: re.Match[str]) -> int:
        """The bases of a class header ``cm`` (at line ``ls``, ending ``le``)
        into ``sc``; the offset of the colon ending the header (-1: none)."""
        n = self.n
        open_at = cm.end(3) - 1 - ls
        end = le
        while True:
            w = self.window(ls, end)
            close = _balanced(w, open_at)
            colon = w.find(":", close)
            if end >= n or (close < len(w) and colon >= 0):
                break
            end = self.grow(ls, end)
        for part in _split_top(w[open_at + 1 : close - 1]):
            b = _base(part)
            if b:
                sc.bases.append(b)
        return ls + colon if colon >= 0 else -1


def _attr_value(w: str, rest: int, full_len: int) -> tuple[int, int, int, bool] | None:
    """For a class-level statement ``name: ... = value`` whose blanked text
    (a window of a text ``full_len`` long) starts ``w``, the value's
    (start, end, end of its first line, spans lines), as ``scan_classes``
    reads them; None when not an assignment. Raises ``_Short`` when ``w``
    does not reach far enough."""
    eq = _assignment_eq(w, rest, full_len)
    if eq < 0:
        return None
    n = len(w)
    vstart = eq + 1
    while vstart < n and w[vstart] in " \t":
        vstart += 1
    if vstart >= n and n < full_len:
        raise _Short
    line_start = w.rfind("\n", 0, vstart) + 1
    vline_end = w.find("\n", vstart)
    vline_end = n if vline_end < 0 else vline_end
    vend = line_start + len(w[line_start:vline_end].rstrip())
    first_end = vend
    multi = False
    q = w[vstart : vstart + 4].lstrip("rRbBuUfF")[:3]
    if q in ('"""', "'''"):
        close = w.find(q, w.find(q, vstart) + 3)
        if close < 0 and n < full_len:
            raise _Short
        if close > vend:
            vend, multi = close + 3, True
    elif _unbalanced(w[vstart:vend]):
        vend, multi = _expr_end(w, vstart, full_len), True
    return vstart, vend, first_end, multi


class LineCounter:
    """1-based line of an offset of ``text``, counted from the last offset
    asked (readers ask in nearly increasing order)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.off, self.line = 0, 1

    def __call__(self, offset: int) -> int:
        if offset >= self.off:
            self.line += self.text.count("\n", self.off, offset)
        else:
            self.line -= self.text.count("\n", offset, self.off)
        self.off = offset
        return self.line


def imports_map(
    scanned: list[tuple[int, str | None, str, str | None]], module: str, pkg: bool
) -> dict[str, str]:
    """Local name → qualified name for scanned ``(level, module, name,
    asname)`` imports, as ``imports_from_ast`` qualifies them."""
    from checks._imports import resolve_relative

    out: dict[str, str] = {}
    relative: dict[tuple[int, str | None], str] = {}
    for level, mod, name, asname in scanned:
        if level == 0:
            if mod is None:
                if asname:
                    out[asname] = name
                else:
                    head = name.split(".")[0]
                    out[head] = head
                continue
            base = mod  # what ``resolve_relative`` gives at level 0
        else:
            key = (level, mod)
            known = relative.get(key)
            if known is None:
                known = relative[key] = resolve_relative(module, pkg, level, mod)
            base = known
        out[asname or name] = f"{base}.{name}" if base else name
    return out


def imports_from_text(blanked: str, text: str, module: str, path: str) -> dict[str, str]:
    """Local name → qualified name, like ``checks._imports.imports_from_ast``."""
    from checks._imports import is_package_path

    return imports_map(scan_imports(blanked, text), module, is_package_path(path))


def class_facts_from_text(
    text: str, module: str, path: str, *, fast: bool = True
) -> dict[str, Any] | None:
    """The "classes" collector's per-module data (see ``checks._classes``),
    read from the text alone. ``fast=False`` blanks the whole text first (the
    plain reading the fast one is tested against; same facts)."""
    from checks._imports import is_package_path, qualify

    pkg = is_package_path(path)
    try:
        if not fast:
            raise _NeedsFullBlank
        heads = _class_heads(text)
        if not heads and not pkg:
            return None  # no class (and so no imports needed): see _class_heads
        scan = _FastScan(text)
        found = scan.classes(heads)
        if not found and not pkg:
            return None  # (imports only matter for classes and re-exports)
        imports = imports_map(scan.imports(), module, pkg)
    except _NeedsFullBlank:
        blanked = blank(text)
        imports = imports_from_text(blanked, text, module, path)
        found = scan_classes(blanked, text)
    classes: dict[str, Any] = {}
    for c in found:
        classes[c.name] = {
            "line": c.line,
            "col": c.col,
            "end_line": c.line,
            "end_col": c.col + len(c.name.rsplit(".", 1)[-1]),
            "bases": [qualify(b, module, imports) for b in c.bases],
            "attrs": c.attrs,
            "methods": sorted(set(c.methods)),
        }
    if not classes and not (imports and pkg):
        return None
    return {"path": path, "imports": imports, "classes": classes}
