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

The plain reading follows Python's logical lines (``_Lines``: not inside a
multi-line string, an open bracket or after a backslash), and notes the
shapes whose facts it cannot give as the ast would (a chained assignment,
statements after a ``;``, a tab in indentation ...: see ``scan_classes``);
``class_facts_from_text(..., strict=True)`` then raises :class:`Uncertain`
and ``checks._classes.ClassFacts.collect`` reads the ast instead. The fast
reading vouches for a line it takes for a statement's start or a body's end
(``_FastScan.certain``: no bracket open there) and leaves to the plain
reading every text it cannot vouch for, or that holds such a shape.
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


# names are ``[^\W\d]\w*``: Python identifiers, non-ASCII ones included (the
# ast normalizes those, NFKC: a reading that meets one is not certain)
_CLASS = re.compile(r"^([ \t]*)class[ \t]+([^\W\d]\w*)[ \t]*(\(|:)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(.+?)[ \t]*$", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import(?:[ \t]+|(?=\())(\([^)]*\)|[^\n]*)", re.M)
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
    # (spaces only around dots: ``a if b else c`` is no name)
    return e.replace(" ", "") if _DOTTED.match(e) else None


_NAMED_CONSTANTS: dict[str, Any] = {"None": None, "True": True, "False": False}
# short decimal integers (no leading zeros, no ``_``: those ``int`` reads but
# Python does not, or not the same), and strings without escapes or prefixes
_SIMPLE_INT = re.compile(r"-?(?:[1-9][0-9]{0,17}|0)")
_SIMPLE_STR = re.compile(r"\"[^\"\\\n\r\0]*\"|'[^'\\\n\r\0]*'")
# a string with a prefix (``r'..'``, ``u".."``, ``rb'..'``): ``literal_eval``
# reads it as the compiler does (bytes and f-strings are then not literals)
_PREFIXED_STR = re.compile(r"[rRuUbBfF]{1,2}['\"]")


def _literal(src: str, raw: str) -> tuple[bool, Any]:
    """A class attribute's value: (True, value) for a literal, else (False,
    the source's first line)."""
    v = raw.strip()
    # the common literals, read as ``ast.literal_eval`` would (it compiles)
    if v in _NAMED_CONSTANTS:
        return True, _NAMED_CONSTANTS[v]
    if v and v[0].isalpha() and v[0] not in "rRuUbBfF":
        return False, v  # a name, a call ... (what the last test below says)
    if _SIMPLE_INT.fullmatch(v):
        return True, int(v)
    if _SIMPLE_STR.fullmatch(v):
        return True, v[1:-1]
    if v and (v[0].isdigit() or v[0] in "-+'\"(." or v in ("True", "False", "None") or (v[0] in "rRuUbBfF" and _PREFIXED_STR.match(v))):
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


# a ``:`` that ends a block header with an import after it (``try: import
# x``): in blanked text nothing else puts ``import`` or ``from`` right after one
_SUITE_IMPORT = re.compile(r":(?=[ \t]*(?:import|from)[ \t])")


def scan_imports(
    blanked: str, text: str, flags: list[str] | None = None
) -> list[tuple[int, str | None, str, str | None]]:
    """Imports as (level, module, name, asname); ``import a.b as c`` gives
    (0, None, "a.b", "c"). Nested imports included, in source order.

    Statements are read by lines once backslash continuations are joined and
    the statements a line holds after a ``;`` or a block header's ``:`` are
    put on lines of their own (positions kept). ``flags`` gets a note when a
    name is not ASCII (the ast normalizes those)."""
    if "\\\n" in blanked:
        blanked = blanked.replace("\\\n", "  ")
    if ";" in blanked:
        blanked = blanked.replace(";", "\n")
    if ":" in blanked:
        blanked = _SUITE_IMPORT.sub("\n", blanked)
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
    if flags is not None and not all(
        name.isascii() and (mod or "").isascii() and (asn or "").isascii() for _, _, mod, name, asn in out
    ):
        flags.append("a name that is not ASCII")
    return [(lvl, mod, name, asn) for _, lvl, mod, name, asn in out]


_HEADER = re.compile(
    r"^([ \t]*)(class|def|async|if|elif|else|try|except|finally|with|for|while|match|case)\b",
    re.M,
)
# the blocks a class stays visible through: what ``ClassFacts.collect_ast``
# visits (``if``/``elif``/``else`` bodies, ``try`` bodies, handlers and
# ``else``; not ``finally``, nor the ``else`` of a ``for``/``while``)
_VISIBLE_VIA = frozenset(("class", "if", "elif", "else", "try", "except"))
# what an ``else`` continues that makes it a loop's (not visible through)
_LOOPS = frozenset(("for", "while"))
# ``except*`` (``ast.TryStar``, which the ast reading does not visit)
_STAR = re.compile(r"[ \t]*\*")
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
            r"^[ ]{%d}(?:(?:async[ \t]+)?def[ \t]+(?P<d>[^\W\d]\w*)"
            r"|(?P<a>[^\W\d]\w*)[ \t]*(?P<rest>[:=][^\n]*))" % indent,
            re.M,
        )
    return _BODY_CACHE[indent]


# names the body scans read as a statement's first word that are keywords
# (``else: x = 1`` assigns nothing to ``else``)
_NOT_TARGETS = frozenset(
    ("class", "def", "async", "if", "for", "while", "with", "return", "else", "try", "except", "finally")
)
# what may follow a class header's colon on its line, the class then having
# no other body (blanked: a string's insides are spaces)
_EMPTY_SUITE = re.compile(r"""pass|\.\.\.|[rRuUbBfF]{0,2}(?:"""  r'"""[ ]*"""' r"""|'''[ ]*'''|"[ ]*"|'[ ]*')""")
_WIDTH = re.compile(r"\n([ ]+)\S")
_DEF_OR_CLASS = re.compile(r"(?:(?:async[ \t]+)?def|class)\b")
_NAME_START = re.compile(r"[^\W\d]")


_EQ_OR_BRACKET = re.compile(r"[()\[\]{}=]")


def _top_eq(v: str) -> bool:
    """Whether the blanked ``v`` holds an ``=`` at bracket depth 0 (or less:
    not Python) that is not part of a comparison (``==``, ``<=``, ``>=``,
    ``!=``) or a ``:=``: in an assignment's value, another target (``a = b =
    1``) or a lambda's default; at the start of a statement, an assignment."""
    i = v.find("=")
    if i < 0:
        return False
    if v.find("(", 0, i) < 0 and v.find("[", 0, i) < 0 and v.find("{", 0, i) < 0:
        if v.startswith("=", i + 1):
            pass  # ``==``: go on below
        elif i == 0 or v[i - 1] not in "=!<>:":
            return True
    # the ``=`` after the first, with the bracket depth at each
    depth, after_eq = 0, -2
    for m in _EQ_OR_BRACKET.finditer(v):
        ch = m.group()
        if ch == "=":
            j = m.start()
            if depth <= 0 and j != after_eq and not v.startswith("=", j + 1) and (j == 0 or v[j - 1] not in "=!<>:"):
                return True
            after_eq = j + 1
        elif ch in "([{":
            depth += 1
        else:
            depth -= 1
    return False


class _Lines:
    """The physical lines of a blanked text that start a logical line (not
    inside a multi-line string, an open bracket or after a backslash; or
    begun by a keyword that only begins statements, ``_ANCHOR``): where the
    plain reading takes headers, statements and the ends of bodies from.
    ``flags`` notes the logical lines whose indentation it cannot measure
    (a tab or a form feed in it)."""

    def __init__(self, blanked: str, text: str) -> None:
        self.starts = starts = _line_starts(blanked)
        spans = _multiline_strings(text)
        self.logical: set[int] = set()
        self.flags: list[str] = []
        n, ns = len(blanked), len(spans)
        depth, cont, k = 0, False, 0
        for i, ls in enumerate(starts):
            le = starts[i + 1] - 1 if i + 1 < len(starts) else n
            while k < ns and spans[k][1] <= ls:
                k += 1
            line = blanked[ls:le]
            if k < ns and spans[k][0] < ls:
                pass  # a line of a multi-line string
            elif _ANCHOR.match(line):
                # a keyword no line inside brackets begins with (where the
                # text is not Python, the reading starts afresh there)
                depth = 0
            if not cont and depth == 0 and not (k < ns and spans[k][0] < ls):
                code = line.lstrip(" \t\f")
                if code:
                    self.logical.add(ls)
                    lead = line[: len(line) - len(code)]
                    if "\t" in lead or "\f" in lead:
                        self.flags.append("a tab or form feed in indentation")
            # an unmatched closing bracket (not Python) opens nothing
            depth = max(0, depth + _depth(line))
            cont = line.endswith("\\")

    def line_of(self, offset: int) -> int:
        """The 0-based line holding ``offset``."""
        return bisect_right(self.starts, offset) - 1


def scan_classes(
    blanked: str, text: str, flags: list[str] | None = None, lines: _Lines | None = None
) -> list[ScannedClass]:
    """Classes visible from the module (not inside functions, loops or with
    blocks): name, bases as written (dotted names only), class-level
    assignments of the class body, method names. Assumes space indentation.

    Headers, statements and the ends of bodies are read at the starts of
    logical lines only (``lines``). ``flags`` gets a note for each shape
    read whose facts may differ from the ast's: statements after a class
    header's colon or after a ``;``, a chained or backslash-continued
    assignment, a parenthesized target, code after a multi-line string
    value, a class header it cannot read, a name that is not ASCII,
    ``except*`` in a ``try`` holding a class."""
    if "class" not in blanked:
        return []
    if flags is None:
        flags = []
    if lines is None:
        lines = _Lines(blanked, text)
    logical, starts = lines.logical, lines.starts
    n = len(blanked)
    raw_lines = text.split("\n")
    out: list[ScannedClass] = []
    stack: list[tuple[int, str, str]] = []  # (indent, keyword, class qualname)
    star = under_try = False
    for m in _HEADER.finditer(blanked):
        if m.start() not in logical:
            continue  # in brackets, a multi-line string, after a backslash
        indent = len(m.group(1).expandtabs(8))
        kw = m.group(2)
        if kw == "async":
            kw = "def"
        if kw in ("else", "elif", "except", "finally", "case"):
            # a continuation of the block at the same indent: its parent chain
            while stack and stack[-1][0] > indent:
                stack.pop()
            if stack and stack[-1][0] == indent and stack.pop()[1] in _LOOPS and kw == "else":
                kw = "for"  # a loop's ``else``
            if kw == "except" and _STAR.match(blanked, m.end(2)):
                star = True
        else:
            while stack and stack[-1][0] >= indent:
                stack.pop()
        if kw != "class":
            stack.append((indent, kw, ""))
            continue
        cm = _CLASS.match(blanked, m.start())
        if cm is None:
            flags.append("a class header it cannot read")
            stack.append((indent, "other", ""))
            continue
        visible = all(k in _VISIBLE_VIA for _, k, _ in stack)
        parent = next((q for _, k, q in reversed(stack) if k == "class"), "")
        name = cm.group(2)
        qual = f"{parent}.{name}" if parent and visible else name
        stack.append((indent, "class" if visible else "other", qual if visible else ""))
        if not visible:
            continue
        if any(k in ("try", "except", "else") for _, k, _ in stack):
            under_try = True
        if not name.isascii():
            flags.append("a name that is not ASCII")
        line = _lineno(starts, m.start())
        raw = raw_lines[line - 1] if line - 1 < len(raw_lines) else ""
        col = raw.find(name, len(cm.group(1)) + 5)
        sc = ScannedClass(qual, line, max(col, 0))
        if cm.group(3) == "(":
            open_at = cm.end(3) - 1
            close = _balanced(blanked, open_at)
            inner = blanked[open_at + 1 : close - 1]
            if "\\\n" in inner or not inner.isascii():
                flags.append("a class header it cannot read")
            for part in _split_top(inner):
                b = _base(part)
                if b:
                    sc.bases.append(b)
            colon = blanked.find(":", close)
        else:
            colon = cm.end(3) - 1
        out.append(sc)
        if colon < 0:
            continue
        body_start = blanked.find("\n", colon)
        rest = blanked[colon + 1 : n if body_start < 0 else body_start].strip()
        if rest:
            # ``class C: pass``: the body is on the header's line
            if not _EMPTY_SUITE.fullmatch(rest):
                flags.append("statements after a class header")
            continue
        if body_start < 0:
            continue
        # the body ends at the first logical line indented ``indent`` or less
        end_re = _end_re(indent)
        em = end_re.search(blanked, body_start)
        while em is not None and em.start() + 1 not in logical:
            em = end_re.search(blanked, em.start() + 1)
        body_end = em.start() if em else n
        bm = _WIDTH.search(blanked, body_start, body_end)
        if bm is None or len(bm.group(1)) <= indent:
            continue
        width = len(bm.group(1))
        # the class-level statements of shapes the ast reads otherwise
        i = lines.line_of(bm.start() + 1)
        last = lines.line_of(body_end) + 1 if em else len(starts)
        while i < last:
            ls = starts[i]
            i += 1
            if ls not in logical or blanked.startswith(" ", ls + width):
                continue
            while i < len(starts) and starts[i] not in logical:
                i += 1
            stmt = blanked[ls : starts[i] if i < len(starts) else n]
            code = stmt.lstrip()
            if ";" in stmt:
                flags.append("statements after a ;")
            if "\\\n" in stmt and _NAME_START.match(code) and not _DEF_OR_CLASS.match(code):
                flags.append("a statement continued with a backslash")
            if code.startswith("(") and _top_eq(code):
                flags.append("a parenthesized target")
        for st in _body_re(width).finditer(blanked, body_start + 1, body_end):
            if st.start() not in logical:
                continue
            d = st.group("d")
            if d:
                if not d.isascii():
                    flags.append("a name that is not ASCII")
                if d not in sc.methods:
                    sc.methods.append(d)
                continue
            target = st.group("a")
            eq = _assignment_eq(blanked, st.start("rest"))
            if eq < 0:
                if eq == -2 and st.group("a") not in _NOT_TARGETS:
                    flags.append("a statement too long to read")
                continue
            i = _lineno(starts, st.start()) - 1
            vstart = eq + 1
            while vstart < len(blanked) and blanked[vstart] in " \t":
                vstart += 1
            j = _lineno(starts, vstart) - 1
            vline_end = blanked.find("\n", vstart)
            vline_end = len(blanked) if vline_end < 0 else vline_end
            vend = starts[j] + len(blanked[starts[j] : vline_end].rstrip())
            if target in _NOT_TARGETS:
                continue
            if not target.isascii():
                flags.append("a name that is not ASCII")
            first_end = vend
            multi = False
            q = blanked[vstart : vstart + 4].lstrip("rRbBuUfF")[:3]
            if q in ('"""', "'''"):
                close = blanked.find(q, blanked.find(q, vstart) + 3)
                if close > vend:
                    vend, multi = close + 3, True
                    tail = blanked.find("\n", vend)
                    if blanked[vend : n if tail < 0 else tail].strip():
                        flags.append("code after a multi-line string value")
            elif _unbalanced(blanked[vstart:vend]):
                vend, multi = _expr_end(blanked, vstart), True
                if vend < 0:
                    flags.append("a statement too long to read")
                    vend = vstart
            if _top_eq(blanked[vstart:vend]):
                flags.append("a chained assignment")
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
    if star and under_try:
        flags.append("except*")
    return out


class _Short(Exception):
    """A window of blanked text ended before a scan could decide: widen it."""


def _assignment_eq(blanked: str, start: int, full_len: int | None = None) -> int:
    """Offset of the ``=`` of ``name = v`` / ``name: Ann[...] = v`` starting at
    ``start`` (the ``:`` or ``=`` after the name), or -1 when the statement is
    not an assignment (``name: Ann`` alone, ``==``, augmented assignment); -2
    when 5000 characters on it has not told (an annotation that long).

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
    return -2 if stop < full else -1


def _expr_end(blanked: str, start: int, full_len: int | None = None) -> int:
    """End offset of an expression starting at ``start`` that spans lines
    inside brackets (``full_len``: as for ``_assignment_eq``); ``start`` when
    the text ends first, -1 when 20000 characters on it has not."""
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
    return -1 if stop < (n if full_len is None else full_len) else start


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
    """The fast path does not handle this text: the plain reading does (tabs
    or form feeds, backslash continuations, a line it cannot tell starts a
    statement, a shape the plain reading may report as uncertain)."""


_TOKEN_START = re.compile(r"[#'\"]")
_IMPORT_HEAD = re.compile(r"[ \t]*(import|from)[ \t]")
# the word ``import`` (from the character before it) followed by a blank
_IMPORT_WORD = re.compile(r"\Wimport[ \t]")
# a ``from`` import on one line with no string, comment, parenthesis,
# backslash or ``;`` (blanking leaves it as it is): ``_FROM`` reads it the same
_SIMPLE_FROM = re.compile(
    r"[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+([^\n#'\"(\\;]*)(?![^\n])"
)
# ``_FROM`` when its parenthesized branch matches, with no string or comment
# up to the closing parenthesis (blanking leaves it as it is)
_PAREN_FROM = re.compile(r"[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)#'\"]*\))")
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
# block headers whose keyword may also begin a line inside brackets (a
# conditional expression, a comprehension, a call of a name ``match``)
_SOFT_HEADS = frozenset(("if", "else", "for", "async", "match", "case"))
_EXCEPT_STAR = re.compile(r"\n[ ]*except[ \t]*\*")
# lines no bracket of which counts once strings and comments are blanked:
# code without brackets or quotes, a string alone (a docstring), a line of
# the half-blanked text that opens or closes a multi-line string; with a
# comment after them or not
_QUIET = re.compile(
    r"""(?:(?:[^\n()\[\]{}'"#]*"""
    r"""|[ ]*[rRuUbBfF]{0,2}(?:"{3}(?:[^"\\\n]|"(?!""))*"{3}|'{3}(?:[^'\\\n]|'(?!''))*'{3}"""
    r"""|"[^"\\\n]*"|'[^'\\\n]*'|"{3}|'{3})[ ]*)(?:#[^\n]*)?\n)*"""
)
# lines that begin a statement whatever comes before them: keywords that
# cannot begin a line inside brackets (a line of a multi-line string is
# blank in the half-blanked text)
_ANCHOR_WORDS = (
    r"(?:class|def|return|pass|raise|del|assert|break|continue|import|global|nonlocal"
    r"|try|except|finally|while|with|elif|async[ \t]+(?:def|with))"
)
_ANCHOR = re.compile(rf"[ ]*{_ANCHOR_WORDS}\b")
_ANCHOR_FIRST = frozenset("abcdefginprtw")  # the first letters of those words
_CLASS_OR_DEF = re.compile(r"[ ]*(?:async[ \t]+)?(?:class|def)[ \t]")
# what a class-level statement's line must not hold for the short reading
# in ``_FastScan._class``
_NOT_PLAIN = re.compile(r"[#'\"]")
_NOT_PLAIN_BASES = re.compile(r"[#'\"(\[\]{}]")


def _opens(s: str, a: int, b: int) -> bool:
    """Whether ``s[a:b]`` holds an opening bracket (where none does, no
    bracket is open at ``b`` that was not at ``a``: in Python, a closing one
    always follows its opening one)."""
    find = s.find
    return find("(", a, b) >= 0 or find("[", a, b) >= 0 or find("{", a, b) >= 0


def _depth(s: str) -> int:
    """The bracket depth at the end of ``s`` (from 0 at its start)."""
    count = s.count
    return count("(") + count("[") + count("{") - count(")") - count("]") - count("}")


_KEYWORDS = "class|def|async|if|elif|else|try|except|finally|with|for|while|match|case"
_SEMI_RES: dict[tuple[str, int], re.Pattern[str]] = {}


def _semi_re(kind: str, n: int) -> re.Pattern[str]:
    """Line patterns over the half-blanked text (comments still there: a line
    whose first character is ``#`` is blank). All start with a newline, so
    the regex engine jumps from line to line instead of trying every offset.
    (On ASCII text, ``stmt-ascii`` reads as ``stmt``, faster.)"""
    key = (kind, n)
    pat = _SEMI_RES.get(key)
    if pat is None:
        if kind == "end":  # a line that leaves a block opened at indent n
            src = rf"\n(?=[ ]{{0,{n}}}[^ \n#])"
        elif kind in ("stmt", "stmt-ascii"):  # statements at exactly indent n (see _body_re)
            # (``stmt-ascii`` where the line starts with an ASCII character:
            # a method name may still not, and reads whole then)
            name = r"[A-Za-z_]\w*" if kind == "stmt-ascii" else r"[^\W\d]\w*"
            src = (
                "\n" + " " * n + rf"(?:(?:async[ \t]+)?def[ \t]+(?P<d>{_NAME0}\w*)"
                rf"|(?P<a>{name})[ \t]*(?P<rest>[:=]))"
            )
        elif kind == "line":  # a line of code indented exactly n
            src = "\n" + " " * n + r"[^ \n#]"
        elif kind == "anchor":  # an ``_ANCHOR`` line indented n or less
            src = rf"\n[ ]{{0,{n}}}{_ANCHOR_WORDS}\b"
        elif kind == "next":  # n = indent * 1000 + width: see ``_FastScan._class``
            indent, width = divmod(n, 1000)
            src = "\n(?:(" + " " * width + r"[^ \n#])" + rf"|[ ]{{0,{indent}}}(?:(?:async[ \t]+)?def|class|import)\b)"
        elif kind == "decorated":  # decorators, then a class or a function indented n or less
            src = rf"[ ]*@[^\n]*\n(?:[ ]*(?:[@#][^\n]*)?\n)*[ ]{{0,{n}}}(?:async[ \t]+)?(?:class|def)[ \t]"
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
# a name's first character in the fast path's patterns: an ASCII letter or
# ``_``, or any character that is not ASCII (a name the ast normalizes, read
# to be left to the plain reading); ``(`` or such a character. Written as
# the ASCII characters they leave out (a set of all the others compiles
# slowly, and a third branch of ``_body_re2`` runs slowly)
_NAME0 = r"[^\x00-@\[-\^`{-\x7f]"
_NAME0_PAREN = r"[^\x00-'\)-@\[-\^`{-\x7f]"


def _body_re2(width: int, indent: int) -> re.Pattern[str]:
    """The lines of a body indented ``width`` > ``indent`` that may matter,
    by ``lastindex``: 1, a line indented ``width`` defining the method named
    by group 1 (what ``_semi_re("stmt", width)`` reads there as ``d``); 2, a
    line indented ``width`` that starts with a name's first character (where
    that pattern may match: every statement it reads starts so), with
    ``(`` (maybe a parenthesized target) or with a character that is not
    ASCII (a name the ast normalizes); None, the line ending the body
    (``_semi_re("end", indent)``). No other line matches
    (a line indented ``width`` is not an end: ``width`` > ``indent``). With
    few groups and short branches, the regex engine goes through the body's
    lines about twice as fast as with the statement pattern itself."""
    key = (width, indent)
    pat = _BODY_RES.get(key)
    if pat is None:
        pat = _BODY_RES[key] = re.compile(
            "\n(?:" + " " * width + rf"(?:def[ \t]+({_NAME0}\w*)|({_NAME0_PAREN}))"
            rf"|(?=[ ]{{0,{indent}}}[^ \n#]))"
        )
    return pat


def _multiline_strings(text: str, conts: list[int] | None = None) -> list[tuple[int, int]]:
    """Spans of the tokens of ``blank`` that hold a newline: triple-quoted
    strings and strings continued with a backslash. Each holds a triple quote
    or a backslash-newline, so only the lines with one of those are tokenized
    (from the line's start, which is outside any token when no such string
    started earlier on). ``conts`` gets the offsets of the backslashes that
    continue a line of code (outside strings and comments)."""
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
                if conts is not None:
                    conts.append(c)
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
        if "\t" in text or "\f" in text:
            raise _NeedsFullBlank  # indentation widths
        self.text = text
        self.n = len(text)
        # the backslashes that continue lines of code: where one continues a
        # line the fast path reads (an import, a class header, a class-level
        # statement, a line it takes for a statement's start or a body's
        # end), it leaves the text to the plain reading (``cont_in``)
        self.conts: list[int] = []
        spans = _multiline_strings(text, self.conts)
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
        self.ascii = text.isascii()
        self.semicolon_lines: set[int] = set()  # lines whose ``;`` are not code

    # -- helpers -----------------------------------------------------------------
    def cont_in(self, a: int, b: int) -> bool:
        """Whether a backslash continues a line of code at an offset in
        [a, b): ``cont_in(ls - 2, ls)``, the line starting at ``ls`` goes on
        the line before; ``cont_in(ls, le)``, the line ``[ls, le)`` goes on
        after."""
        conts = self.conts
        if not conts:
            return False
        i = bisect_left(conts, a)
        return i < len(conts) and conts[i] < b

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
        cont_in = self.cont_in if self.conts else None
        p = find("import")
        while p >= 0:
            ls = rfind("\n", 0, p) + 1
            le = find("\n", p)
            if le < 0:
                le = n
            if cont_in is not None and cont_in(ls - 2, le):
                raise _NeedsFullBlank  # (``from m import a, \``)
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
                # an import after a ``;`` or a block header's ``:`` (``try:
                # import x``) is a statement of its own there
                if (find(":", ls, p) >= 0 or find(";", ls, p) >= 0) and _IMPORT_WORD.match(semi, p - 1):
                    if self.window(ls, le).startswith("import", p - ls):
                        raise _NeedsFullBlank
            elif hm.group(1) == "import":
                line = semi[ls:le]
                if ";" in line:
                    raise _NeedsFullBlank  # (``import a; import b``)
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
                if ";" in semi[from_end : self.line_end(from_end)]:
                    raise _NeedsFullBlank
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
                    tail = w.find("\n", fm.end())
                    if ";" in (w if tail < 0 else w[:tail]):
                        raise _NeedsFullBlank  # (``from m import a; b = 1``)
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
            found = []
            for ls, _ in heads:
                cm = match(semi, ls)
                if cm is None:
                    raise _NeedsFullBlank  # (a header the plain reading reports)
                found.append(one(ls, 0, cm, cm.group(2)))
            return found
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
        # (indent, keyword, class qualname, line start of a header that may be
        # a continuation line: ``if``, ``else``, ``for`` ... also begin lines
        # inside brackets; -1 for the others)
        stack: list[tuple[int, str, str, int]] = []
        checked: set[int] = set()  # such headers known to start statements
        under_try = False
        soft = 0  # how many such headers the stack holds
        for ls, indent, kw in events:
            amb = -1
            if kw in _SOFT_HEADS:
                amb = ls
                if kw == "async":
                    kw = "def"
            # the stack's indents increase: popping the deeper and equal ones is
            # what ``scan_classes`` does for new blocks and continuations alike
            before: tuple[int, str, str, int] | None = None
            while stack and stack[-1][0] >= indent:
                before = stack.pop()
                if before[3] >= 0:
                    soft -= 1
            if kw == "else" and before is not None and before[0] == indent and before[1] in _LOOPS:
                self._starts_statement(before[3], checked)
                kw = "for"  # a loop's ``else``
            if kw != "class":
                stack.append((indent, kw, "", amb))
                if amb >= 0:
                    soft += 1
                continue
            cm = _CLASS.match(semi, ls)
            if cm is None:
                raise _NeedsFullBlank  # (a header the plain reading reports)
            if soft:
                for e in stack:
                    self._starts_statement(e[3], checked)
            visible = all(e[1] in _VISIBLE_VIA for e in stack)
            parent = next((e[2] for e in reversed(stack) if e[1] == "class"), "")
            name = cm.group(2)
            qual = f"{parent}.{name}" if parent and visible else name
            if visible:
                if not under_try:
                    under_try = any(e[1] in ("try", "except", "else") for e in stack)
                out.append(self._class(ls, indent, cm, qual))
            stack.append((indent, "class" if visible else "other", qual if visible else "", -1))
        if under_try and _EXCEPT_STAR.search(semi):
            raise _NeedsFullBlank  # (``except*``: the ast does not visit ``TryStar``)
        return out

    def _starts_statement(self, ls: int, checked: set[int]) -> None:
        """Raise ``_NeedsFullBlank`` unless the header at line start ``ls``
        (-1: none) begins a statement (not a line inside brackets)."""
        if ls > 0 and ls not in checked:
            if self.cont_in(ls - 2, ls):
                raise _NeedsFullBlank
            # from the last line before it at the top that a keyword begins
            semi = self.semi
            top = max(semi.rfind("\nclass ", 0, ls), semi.rfind("\ndef ", 0, ls), semi.rfind("\nimport ", 0, ls))
            self.certain(ls, top + 1 if top >= 0 else 0)
            checked.add(ls)

    def _class(self, ls: int, indent: int, cm: re.Match[str], qual: str) -> ScannedClass:
        semi, text, n = self.semi, self.text, self.n
        le = semi.find("\n", ls)
        if le < 0:
            le = n
        if not self.ascii and not semi[ls:le].isascii() and not self.window(ls, le).isascii():
            raise _NeedsFullBlank  # (maybe a name the ast normalizes)
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
        if colon < 0:
            return sc
        body_start = semi.find("\n", colon)
        if self.conts and self.cont_in(ls, n if body_start < 0 else body_start):
            raise _NeedsFullBlank  # (``class C \``)
        if body_start != colon + 1 and not (rest := semi[colon + 1 : n if body_start < 0 else body_start]).isspace():
            if "#" in rest or "'" in rest or '"' in rest:
                cl = semi.rfind("\n", 0, colon) + 1
                rest = self.window(cl, n if body_start < 0 else body_start)[colon + 1 - cl :]
            rest = rest.strip()
            if rest:
                # ``class C: pass``: the body is on the header's line (other
                # statements there: the plain reading reports them)
                if _EMPTY_SUITE.fullmatch(rest):
                    return sc
                raise _NeedsFullBlank
        if body_start < 0:
            return sc
        # the body ends at the first line indented ``indent`` or less that
        # begins a statement; its statements are indented as its first line.
        # The end is looked for up to that first line only (the first line of
        # code after a header begins a statement), then along with the
        # statements
        bm = _WIDTH_SEMI.search(semi, body_start)
        if bm is None or _semi_re("end", indent).search(semi, body_start, bm.end()):
            return sc
        width = len(bm.group(1))
        methods = sc.methods
        stmt = _semi_re("stmt-ascii", width).match
        find, plain = semi.find, _NOT_PLAIN.search
        ascii_text = self.ascii
        conts = self.conts
        # ``floor``: a line start before the next statement read at which no
        # bracket is open (see ``certain``), or the line of ``last_def`` (a
        # method's: ``def`` begins a statement), whichever is later; ``skip``:
        # the newline ending the last statement read (a line before is one
        # of its)
        floor, skip = body_start + 1, body_start
        last_def = None
        body_end, semi_end = n, -1  # (semi_end: ``;`` are looked for up to there too)
        for cand in _body_re2(width, indent).finditer(semi, body_start):
            k = cand.lastindex
            if k == 1:
                d = cand.group(1)
                if d not in methods:
                    methods.append(d)
                last_def = cand
                continue
            c0 = cand.start()
            if c0 < skip:
                continue  # a line of the statement read last
            if k is None:
                # the first line after the body (a class or a function
                # follows, mostly: a statement for sure) unless a line of a
                # multi-line string (then the body goes on after it) or a
                # line inside brackets
                e = c0 + 1
                if conts and self.cont_in(e - 2, e):
                    raise _NeedsFullBlank
                if not (semi.startswith(("class ", "def "), e) or _CLASS_OR_DEF.match(semi, e)):
                    # its first character (a line of a multi-line string
                    # shows its closing quote first)
                    p0 = e
                    if indent:
                        while semi[p0] == " ":
                            p0 += 1
                    q = semi[p0]
                    if (q == '"' or q == "'") and self.span_end(e) >= 0:
                        continue
                    if q not in _ANCHOR_FIRST or not _ANCHOR.match(semi, p0):
                        # unless a keyword shows it begins a statement, were
                        # it inside brackets the body would go on: that
                        # changes what is read when a line indented ``width``
                        # comes before one that ends the body for sure
                        # (decorators then a class: not so)
                        h = _semi_re("decorated", indent).match(semi, e) if q == "@" else None
                        if h is None:
                            # the first of: a line indented ``width``, one
                            # that a class, a function or an import begins
                            h = _semi_re("next", indent * 1000 + width).search(semi, c0)
                            if h is not None and h.lastindex == 1:
                                h = None
                        if h is not None:
                            semi_end = h.end()  # (``;`` up to there are looked at)
                        else:
                            if last_def is not None and last_def.start() >= floor:
                                floor = last_def.start() + 1
                            if floor < e:
                                self.certain(e, floor)
                body_end = c0
                break
            ch = semi[c0 + width + 1]
            if ch < "A" or ch > "z":
                # ``(x) = 1`` (the plain reading reports it), a name that
                # is not ASCII
                raise _NeedsFullBlank
            if conts and self.cont_in(c0 - 1, self.line_end(c0 + 1)):
                # a line that goes on the line before, or after (``x \``)
                raise _NeedsFullBlank
            st = stmt(semi, c0)
            if st is None:
                continue
            d = st.group("d")
            if d is not None:
                if d not in methods:
                    methods.append(d)
                last_def = cand
                continue
            target = st.group("a")
            if target in _NOT_TARGETS:
                continue
            start = c0 + 1
            if last_def is not None and last_def.start() >= floor:
                floor = last_def.start() + 1
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
                        dl = _depth(w[wr + 1 : wle])
                        if dl <= 0:
                            if dl == 0 and w[wle - 1] != "\\":
                                # ``name: T`` on its line: once it is known
                                # to begin a statement, what follows does
                                if floor < start and _opens(semi, floor, start):
                                    self.certain(start, floor)
                                floor = le + 1
                            continue
                    elif w[eq + 1] == "=" or w[eq - 1] in "=!<>":
                        continue
            # an assignment (or, past the line, maybe one): the line must
            # begin a statement
            if floor < start and (
                find("(", floor, start) >= 0 or find("[", floor, start) >= 0 or find("{", floor, start) >= 0
            ):
                self.certain(start, floor)
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
                if w.find("=", vstart, vend) >= 0 and _top_eq(w[vstart:vend]):
                    raise _NeedsFullBlank  # (``a = b = 1``)
                vstart, vend = vstart + o, vend + o
                first_end, multi = vend, False
                floor = le + 1
            else:
                rest_at = r - start
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
                    if close < 0:
                        close = n
                    end = min(n, max(end, close + 1))
                while True:
                    ww = self.window(start, end)
                    try:
                        value = _attr_value(ww, rest_at, n - start)
                        break
                    except _Short:
                        end = self.grow(start, end)
                if value is None:
                    continue
                vstart, vend, first_end, multi, after = value
                if after or (ww.find("=", vstart, vend) >= 0 and _top_eq(ww[vstart:vend])):
                    raise _NeedsFullBlank  # (the plain reading reports these)
                vstart, vend, first_end = vstart + start, vend + start, first_end + start
                skip = self.line_end(vend)
                floor = skip + 1
                if conts and self.cont_in(start, floor):
                    raise _NeedsFullBlank
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
        if not ascii_text and not ("".join(methods).isascii() and "".join(sc.attrs).isascii()):
            raise _NeedsFullBlank  # (a name the ast normalizes)
        # statements after a ``;`` (the plain reading reports those at the
        # class level): a ``;`` of code in the body leaves it to that reading
        if semi_end < body_end:
            semi_end = body_end
        j = find(";", body_start, semi_end)
        if j >= 0:
            self._semicolons(j, body_start, semi_end, width)
        return sc

    def _semicolons(self, j: int, start: int, end: int, width: int) -> None:
        """Raise ``_NeedsFullBlank`` at a ``;`` of code from ``j`` (the first
        ``;`` of the class body starting at ``start``, its statements
        indented ``width``) to ``end``: a statement may follow it at the
        class level (the plain reading decides). One in a comment (with no
        quote before it on its line) or a string is not, nor one in a method
        (after a line ``def`` indented ``width``, before the next line
        indented so)."""
        semi, n = self.semi, self.n
        find, plain = semi.find, _NOT_PLAIN.search
        seen = self.semicolon_lines
        while j >= 0:
            a = semi.rfind("\n", 0, j) + 1
            b = find("\n", j)
            if b < 0:
                b = n
            if a not in seen:
                seen.add(a)
                h = find("#", a, j)
                if h < 0 or plain(semi, a, h) is not None:
                    # not in a comment with nothing before it that may be a
                    # string: a ``;`` of code, unless blanking shows otherwise
                    if self.span_end(a) >= 0 or (";" in self.window(a, b) and not self._in_method(a, start, width)):
                        raise _NeedsFullBlank
            j = find(";", b, end)

    def _in_method(self, ls: int, start: int, width: int) -> bool:
        """Whether the line at ``ls`` of a class body (from ``start``) is in
        a method's: indented more than ``width``, after the method's line
        ``def`` (indented ``width``; no line inside brackets begins with
        ``def``) with no line indented ``width`` or less between them."""
        semi = self.semi
        pad = "\n" + " " * width
        d = semi.rfind(pad + "def ", start, ls)
        d = max(d, semi.rfind(pad + "async def ", max(d, start), ls))
        return (
            d >= 0
            and semi.startswith(" " * (width + 1), ls)
            and _semi_re("end", width).search(semi, d + 1, ls - 1) is None
        )

    def span_end(self, pos: int) -> int:
        """The end of the multi-line string ``pos`` is inside of (after its
        first character), or -1."""
        i = bisect_right(self.span_starts, pos) - 1
        if i >= 0 and self.span_starts[i] < pos < self.spans[i][1]:
            return self.spans[i][1]
        return -1

    def certain(self, ls: int, floor: int) -> None:
        """Raise ``_NeedsFullBlank`` unless the line starting at ``ls`` (not
        inside a multi-line string) begins a statement, given a line start
        ``floor`` before it at which no bracket is open: no bracket is open
        at ``ls`` either (the text has no backslash continuation). Brackets
        are counted from the nearest line before ``ls`` that a keyword shows
        begins a statement, when one is near (``_ANCHOR``), else from
        ``floor``; in the blanked text, where none in a string or comment
        counts."""
        semi = self.semi
        if ls <= floor or not _opens(semi, floor, ls):
            return
        if ls - floor < 800:
            if semi.find("#", floor, ls) < 0 and semi.find('"', floor, ls) < 0 and semi.find("'", floor, ls) < 0:
                # no string or comment: the half-blanked text is the blanked one
                if _depth(semi[floor:ls]):
                    raise _NeedsFullBlank
                return
            if _QUIET.fullmatch(semi, floor, ls):
                return  # comments, strings on lines of their own, no bracket elsewhere
            a = floor
        else:
            # from the nearest line a keyword begins, within 64 lines before
            a, p = floor, ls - 1  # p: the end of the line before the one looked at
            find = semi.rfind
            for _ in range(64):
                q = find("\n", floor, p)
                if q < 0:
                    break
                if _ANCHOR.match(semi, q + 1):
                    a = q + 1
                    break
                p = q
        if a < ls - 1 and _depth(self.window(a, ls - 1)):
            raise _NeedsFullBlank

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
        inner = w[open_at + 1 : close - 1]
        if not inner.isascii():
            raise _NeedsFullBlank  # (maybe a name the ast normalizes)
        for part in _split_top(inner):
            b = _base(part)
            if b:
                sc.bases.append(b)
        return ls + colon if colon >= 0 else -1


def _attr_value(w: str, rest: int, full_len: int) -> tuple[int, int, int, bool, bool] | None:
    """For a class-level statement ``name: ... = value`` whose blanked text
    (a window of a text ``full_len`` long) starts ``w``, the value's
    (start, end, end of its first line, spans lines, code follows it on its
    last line), as ``scan_classes`` reads them; None when not an assignment.
    Raises ``_Short`` when ``w`` does not reach far enough."""
    eq = _assignment_eq(w, rest, full_len)
    if eq < 0:
        if eq == -2:
            raise _NeedsFullBlank  # (the plain reading reports it)
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
    multi = after = False
    q = w[vstart : vstart + 4].lstrip("rRbBuUfF")[:3]
    if q in ('"""', "'''"):
        close = w.find(q, w.find(q, vstart) + 3)
        if close < 0 and n < full_len:
            raise _Short
        if close > vend:
            vend, multi = close + 3, True
            # ``"""...""" % x``: more than the string (the plain reading
            # reports it)
            tail = w.find("\n", vend)
            if tail < 0 and n < full_len:
                raise _Short
            after = bool(w[vend : n if tail < 0 else tail].strip())
    elif _unbalanced(w[vstart:vend]):
        vend, multi = _expr_end(w, vstart, full_len), True
        if vend < 0:
            raise _NeedsFullBlank  # (the plain reading reports it)
    return vstart, vend, first_end, multi, after


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


class Uncertain(Exception):
    """The text holds a shape the reader does not read as the ast would
    (``reason``); ``facts``: its reading all the same (for a text that does
    not compile, which has no other)."""

    def __init__(self, reason: str, facts: dict[str, Any] | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.facts = facts


def class_facts_from_text(
    text: str, module: str, path: str, *, fast: bool = True, strict: bool = False
) -> dict[str, Any] | None:
    """The "classes" collector's per-module data (see ``checks._classes``),
    read from the text alone. ``fast=False`` blanks the whole text first (the
    plain reading the fast one is tested against; same facts).

    ``strict``: raise :class:`Uncertain` instead of returning facts the ast
    may read otherwise (the shapes ``scan_classes`` and ``_Lines`` note:
    indentation with tabs, statements after a ``;`` or a class header's
    colon, chained assignments ...). The fast path leaves every text it
    cannot vouch for to the plain reading, which decides."""
    from checks._imports import is_package_path, qualify

    pkg = is_package_path(path)
    flags: list[str] = []
    try:
        if not fast:
            raise _NeedsFullBlank
        heads = _class_heads(text)
        if not heads and not pkg:
            if "\f" in text:
                raise _NeedsFullBlank  # (a form feed hides ``class`` from _class_heads)
            return None  # no class (and so no imports needed): see _class_heads
        scan = _FastScan(text)
        found = scan.classes(heads)
        if not found and not pkg:
            return None  # (imports only matter for classes and re-exports)
        imports = imports_map(scan.imports(), module, pkg)
        if not scan.ascii and not ("".join(imports).isascii() and "".join(imports.values()).isascii()):
            raise _NeedsFullBlank  # (a name the ast normalizes)
    except _NeedsFullBlank:
        blanked = blank(text)
        lines = _Lines(blanked, text)
        flags.extend(lines.flags)
        imports = imports_map(scan_imports(blanked, text, flags), module, pkg)
        found = scan_classes(blanked, text, flags, lines)
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
    facts = None if not classes and not (imports and pkg) else {"path": path, "imports": imports, "classes": classes}
    if strict and flags:
        raise Uncertain(flags[0], facts)
    return facts
