"""Text reader for the ``sentinels`` facts of :mod:`checks._sentinels`.

The facts are exactly those of the ast walk (``collect_ast``), but compiling
every file with a class (nearly all of them) cost more than the rest of the
facts phase together. This reader finds on the raw text the few places that
can hold facts and reads the common shapes itself:

* structure: the strings that span lines and the backslash continuations
  first, then ``def``/``class`` headers (a literal-led search), their blocks
  by indentation, and which of them the ast walk visits (directly in the
  module, in a class or in a function body);
* per class: its bases, the class-level statements (read one by one, with
  their brackets counted), the ``self.x = ...`` statements of the
  ``__init__``/``__post_init__`` bodies (blanked, statement by statement), and
  another method only when the class has a sentinel and the method names one
  as an assignment target;
* resolvers: only ``if``/``elif`` headers that compare an attribute of
  something other than the first argument with a sentinel-shaped literal, in
  a function that passes the ast walk's own text test, are parsed (the ``if``
  with its ``elif``/``else`` parts, on its own); the calls paired with them
  are read from the text (f-string fields included);
* factories: a def is parsed only for a ``type[...]`` return annotation (the
  annotation alone) or a body that may be a lone ``return Capitalised``;
* imports at module level (also under ``if``/``try``), for qualifying: only
  the text between top-level blocks can hold them.

Whatever it cannot read with certainty goes to CPython's ``ast`` at the
smallest scope that settles it: a statement (``_Stmt``), an ``if``, a method
or a class (``_Slow``), or the whole file (:class:`Fallback`: tabs or form
feeds in indentation, ``\\r``, a line break ``str.splitlines`` sees and the
compiler does not, an unterminated string, a one-line ``import`` after a colon
or a semicolon, a continuation line dedented to the level of the statements
being read...).

A line that ends a block by its indentation may still sit inside the
brackets of a statement of that block (a continuation dedented to or below
the block's own indentation, as yapf-era code writes long strings at column
0): it ends the block only once the statements read from it, one after the
other, reach a ``def``/``class`` header or the end of the file with their
brackets balanced (``_Reader.settled``); otherwise the file goes to the ast.
And identifiers: CPython normalises them to NFKC, this reader reads them as
written, so a file with a character outside ASCII anywhere but in a string or
a comment goes to the ast too.

Known limit (see ``tests/test_sentinel_scan.py``): a file that does not
compile has no facts from the ast walk, while this reader may still read some
(it checks brackets and strings, not the whole grammar).
"""

from __future__ import annotations

import ast
import keyword
import re
from bisect import bisect_left, bisect_right
from functools import cmp_to_key
from typing import Any

from checks._helpers import ast_dotted
from checks._imports import is_package_path, qualify
from checks._pyscan import blank, imports_map
from checks._sentinels import (
    INIT_FAMILY,
    Event,
    Facts,
    _calls,
    _class_facts,
    _ClassFacts,
    _method_events,
    _Pos,
    _returned_classes,
    _stmt_events,
    _stmts_no_nested,
    add_method,
    annotation_classes,
    class_level_events,
    collect_ast,
    finish_class,
    if_resolvers,
)


class Fallback(Exception):
    """The reader gives up on the file: the whole-file ast walk decides."""


class _Slow(Exception):
    """A class or a method the reader hands to the ast (that scope only)."""


# comments and strings, as in checks._pyscan (kept private there); string
# bodies unrolled: a run of plain characters, then an escape or a lone quote
_TOKEN = re.compile(
    r"#[^\n]*"
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"',
    re.DOTALL,
)
_TDQ = re.compile('"""')
_TSQ = re.compile("'''")

_ID = r"[^\W\d]\w*"
_DEF = re.compile(r"def[ \t]+(" + _ID + ")")
_CLASS = re.compile(r"class[ \t]+(" + _ID + ")")
_CLASS_HEAD = re.compile(r"\s*class[ \t]+" + _ID + r"[\s\\]*")
_DEF_PREFIX = re.compile(r"( *)(?:async[ \t]+)?")
# the first code line of a body (comment lines skipped)
_BODY = re.compile(r"\n( *)([^ \n#])")
_IF = re.compile(r"if\b")
_IF_PREFIX = re.compile(r"( *)(el)?")
_IMPORT = re.compile(r"import\b")
_GAP_IMPORT = re.compile(r"\n *(?:from|import)\b")
_LINE_IMPORT = re.compile(r" *(?:from|import)\b")
_TAB_LINE = re.compile(r"\n *\t")
_SIMPLE_NAME = r"[A-Za-z_]\w*"
_SIMPLE_FROM = re.compile(
    r" *from[ \t]+(\.*)[ \t]*("
    + _SIMPLE_NAME
    + r"(?:\."
    + _SIMPLE_NAME
    + r")*)?[ \t]+import[ \t]+([\w \t,]*\w)[ \t]*"
)
_SIMPLE_IMPORT = re.compile(r" *import[ \t]+([\w \t,.]*\w)[ \t]*")
_NAME = re.compile(_ID)
_WORD = re.compile(r"\s*(" + _ID + ")")
_DOT2 = re.compile(r"(" + _ID + r")\s*\.\s*(" + _ID + ")")
_CHAIN = re.compile(_ID + r"(?:\s*(?:\.\s*" + _ID + r"|\x00))+")
_INT = r"(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|0(?:_?0)*|[1-9](?:_?\d)*)"
_NEG = re.compile(r"-\s*(" + _INT + ")")
_PAREN_SENTINEL = re.compile(r"-?\s*\x00")
_MINUS_DIGIT = re.compile(r"-[\s(\\]*\d")
_NOT_BRACKET = bytes(c for c in range(256) if chr(c) not in "()[]{}\n\\")
# the bracket skeleton of a method body: one kind of bracket, the newlines kept
_NOT_SKELETON = bytes(c for c in range(256) if chr(c) not in "()[]{}\n")
_SKELETON = bytes.maketrans(b"[{]}", b"(())")
_RESIDUE = re.compile(rb"[()]+")
_BGROUP = re.compile(rb"\([^()\[\]{}]*\)|\[[^()\[\]{}]*\]|\{[^()\[\]{}]*\}")
_GROUP = re.compile(r"\([^()\[\]{}]*\)|\[[^()\[\]{}]*\]|\{[^()\[\]{}]*\}")
_OPS = re.compile(r"\*\*=|//=|>>=|<<=|[-+*/%&|^@:!<>=]?=")
_AUG = frozenset(("+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "^=", "|=", "@="))
_LAMBDA = re.compile(r"\blambda\b")
_COMPOUND = frozenset(
    (
        "if",
        "elif",
        "else",
        "for",
        "while",
        "with",
        "try",
        "except",
        "finally",
        "async",
        "def",
        "class",
    )
)
# characters that make a line's start unreadable by indentation (tabs, form feeds, a
# line that is only a backslash continuation...): the whole file goes to the ast
_ODD_WS = "\t\x0b\x0c\r\x1c\x1d\x1e\\"
# sentinel comparisons, written loosely: every test ``sentinel_test`` accepts
# matches one of them (or names ``getattr``)
_CONST_OP = r"(?:-[\s\\(]*\d\w*|\bNone\b|\b\d\w*)[\s\\)]*(?:==|>=?|\bis\b)"
_CMP = re.compile(r"(?:==|<=?|\bis\b)[\s\\(]*(?:-|None\b|\d)|" + _CONST_OP)
# ``_CMP`` as six searches that each start with a literal (or a digit), the
# word boundary before ``is``/``None``/a digit checked behind it: ``re`` then
# jumps between candidates instead of trying both alternatives everywhere
_CMP_TAIL = r"[\s\\(]*(?:-|None\b|\d)"
_CMP_HEAD = r"[\s\\)]*(?:==|>=?|\bis\b)"
_CMP_EQ = re.compile("==" + _CMP_TAIL)
_CMP_LT = re.compile("<=?" + _CMP_TAIL)
_CMP_IS = re.compile(r"is(?<!\wis)\b" + _CMP_TAIL)
_CMP_NEG = re.compile(r"-[\s\\(]*\d\w*" + _CMP_HEAD)
_CMP_NONE = re.compile(r"None(?<!\wNone)\b" + _CMP_HEAD)
_CMP_NUM = re.compile(r"\d(?<!\w\d)\w*" + _CMP_HEAD)


def _has_cmp(s: str) -> bool:
    """``_CMP.search(s) is not None``."""
    return bool(
        ("==" in s and _CMP_EQ.search(s))
        or ("<" in s and _CMP_LT.search(s))
        or ("is" in s and _CMP_IS.search(s))
        or ("-" in s and _CMP_NEG.search(s))
        or ("None" in s and _CMP_NONE.search(s))
        or _CMP_NUM.search(s)
    )


_CHAIN_OPERAND = r"(?<!\w)((?:" + _ID + r"[\s\\()]*\.[\s\\]*)+)(" + _ID + ")"
_FWD = re.compile(_CHAIN_OPERAND + r"[\s\\)]*(?:==|<=?|\bis\b)[\s\\(]*(?:-|None\b|\d)")
_REV = re.compile(_CONST_OP + r"[\s\\(]*" + _CHAIN_OPERAND)
_OPERAND_JUNK = re.compile(r"[\s\\()]")
_FIRST_ARG = re.compile(r"def[ \t]+" + _ID + r"[\s\\]*\([\s\\]*(\*|\)|" + _ID + ")")
# ``_MAYBE_TEST`` as three searches that each start with a literal
_MT_TAIL = r"\s*(?:-\d|None\b|[01]\b)"
_MT_EQ = re.compile("==" + _MT_TAIL)
_MT_LT = re.compile("<=?" + _MT_TAIL)
_MT_IS = re.compile("is" + _MT_TAIL)
_TYPE_ANN = re.compile(r"[tT]ype\s*\[")
# ``return`` of something that may start with a capital (comments allowed)
_ATTR_TARGET = re.compile(
    r"\.[\s\\]*(" + _ID + r")[\s\\]*(?:(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=)|[:,)\]])"
)
_RETURN_UPPER = re.compile(r"return[\s(\\]*(?:#[^\n]*\n[\s(\\]*)*[^\W\d_a-z]")
_RETURN_NAME = re.compile(
    r"return[ \t(]*(" + _ID + r"(?:[ \t]*\.[ \t]*" + _ID + r")*)[ \t)]*(?:#.*)?"
)
_SIMPLE_CONST = re.compile(r"\.\.\.|None|True|False|\d[\w.]*")
_MAYBE_FIRST = frozenset("rRbBuUfF\"'.0123456789NTF(")
_MAYBE_CONST = re.compile(r"""(?:[rRbBuU]{0,2}["']|\.|\d|None\b|True\b|False\b|\()""")
_IMPORT_STMT = re.compile(r"\s*import\s+(.*?)\s*", re.DOTALL)
_FROM_STMT = re.compile(
    r"\s*from\s*(\.*)\s*(" + _ID + r"(?:\s*\.\s*" + _ID + r")*)?\s*import\s*(.*?)\s*", re.DOTALL
)
_DOTTED = re.compile(_ID + r"(?:\s*\.\s*" + _ID + r")*")
_ALIAS = re.compile(r"\s*(" + _ID + r"(?:\s*\.\s*" + _ID + r")*)(?:\s+as\s+(" + _ID + r"))?\s*")
# a call ``name(`` or ``.name(`` read backwards: (space, reversed name, dot, def/class)
_RCALL = re.compile(r"\(([\s\\]*)(\w*[^\W\d])(?!\w)(?:([\s\\]*\.)|[\s\\]+(fed|ssalc)(?!\w))?")
_BRACKET = re.compile(r"[()\[\]{}]")
_CALL_OF_GROUP = re.compile(r"\)([\s\\]*)\(")
_FSTRING = re.compile(r"(?<!\w)(?:[rR][fF]|[fF][rR]?)(?=['\"])")
# the quotes ``_FSTRING`` matches end at, found from the quote itself (a
# literal-led search: ``_FSTRING`` is tried at every position of a scope)
_FSTRING_QUOTES = tuple(
    re.compile(
        q
        + r"(?:(?<=(?<!\w)[fF]"
        + q
        + r")|(?<=(?<!\w)[rR][fF]"
        + q
        + r")|(?<=(?<!\w)[fF][rR]"
        + q
        + "))"
    )
    for q in ("'", '"')
)
_SHALLOW: dict[int, re.Pattern[str]] = {}
_CASE_WORD = re.compile(r"case\b")
_TRAILING = re.compile(r"[\s\\]+$")  # what ``_rstrip_cont`` strips
_BSNL = re.compile(r"\\\n")
# one assignment whose value holds no other ``=``: ``self.x: T = value``
_FAST_ATTR = re.compile(
    r" *(" + _ID + r")[ \t]*\.[ \t]*(" + _ID + r")[ \t]*(?::([^=]*))?=(?!=)([^=]*)", re.DOTALL
)
_FAST_SELF: dict[str, re.Pattern[str]] = {}
# one assignment on top-level text (brackets collapsed): ``obj.attr[: T] = value``, ``name[: T] = value``
_VALUE = r"((?:[^=!<>]|[!<>]=?|==)*+)"
_TOP_ATTR = re.compile(
    r" *(" + _ID + r")[ \t]*\.[ \t]*(" + _ID + r")[ \t]*(?::[^=]*)?=(?!=)" + _VALUE, re.DOTALL
)
_TOP_NAME = re.compile(r" *" + _ID + r"[ \t]*(?::[^=]*)?=(?!=)" + _VALUE, re.DOTALL)
_FAST_NAME = re.compile(r" *(" + _ID + r")[ \t]*(?::([^=]*))?=(?!=)([^=]*)", re.DOTALL)
_WS = re.compile(r"\s")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_IS_NOT = re.compile(r"\bis\s+not\b")
_ELSE = re.compile(r"(?:elif|else)\b")


def _shallow(indent: int) -> re.Pattern[str]:
    """A line indented by at most ``indent`` spaces that is not blank."""
    rx = _SHALLOW.get(indent)
    if rx is None:
        rx = _SHALLOW[indent] = re.compile(rf"\n {{0,{indent}}}+(?=[^ \n])")
    return rx


def _depth(b: str) -> int:
    """Net bracket depth of blanked text."""
    return b.count("(") + b.count("[") + b.count("{") - b.count(")") - b.count("]") - b.count("}")


def _toplevel(s: str) -> str:
    """``s`` with every bracketed group replaced by ``\\x00``."""
    if "(" not in s and "[" not in s and "{" not in s:
        if ")" in s or "]" in s or "}" in s:
            raise _Slow
        return s
    while True:
        t = _GROUP.sub("\x00", s)
        if t == s:
            break
        s = t
    if "(" in s or "[" in s or "{" in s or ")" in s or "]" in s or "}" in s:
        raise _Slow
    return s


def _rep(value: str, stmt: str) -> str | None:
    """``sentinel_repr`` of an assigned value (its top-level text, in the
    statement ``stmt``); raises ``_Stmt`` for a bracketed value that might
    be a parenthesised sentinel."""
    v = value.replace("\\\n", " ").strip()
    if v == "None":
        return "None"
    m = _NEG.fullmatch(v)
    if m:
        n = int(m.group(1), 0)
        return f"-{n}" if n > 0 else None
    if _PAREN_SENTINEL.fullmatch(v) and ("None" in stmt or _MINUS_DIGIT.search(stmt)):
        raise _Stmt
    return None


class _Stmt(Exception):
    """One statement the reader hands to the ast."""


def _assign_parts(top: str) -> tuple[list[str], str, bool] | None:
    """(targets, value, augmented) of an assignment statement's top-level
    text, or None when it assigns nothing. Raises ``_Stmt`` when unsure."""
    eqs: list[tuple[int, str]] = []
    for m in _OPS.finditer(top):
        op = m.group()
        if op in ("==", "!=", "<=", ">="):
            continue
        if op == ":=":
            raise _Stmt
        eqs.append((m.start(), op))
    if not eqs:
        return None
    if _LAMBDA.search(top):
        raise _Stmt
    if eqs[0][1] != "=":
        if len(eqs) > 1:
            raise _Stmt
        i, op = eqs[0]
        return [top[:i]], top[i + len(op) :], True
    if any(op != "=" for _, op in eqs):
        raise _Stmt
    parts: list[str] = []
    prev = 0
    for i, _ in eqs:
        parts.append(top[prev:i])
        prev = i + 1
    return parts, top[prev:], False


def _fields(content: str) -> list[str]:
    """The replacement fields of an f-string's content (with their format
    specs, which can only hold more fields)."""
    out: list[str] = []
    i, n = 0, len(content)
    while True:
        j = content.find("{", i)
        if j < 0:
            return out
        if content.startswith("{{", j):
            i = j + 2
            continue
        depth, k = 0, j
        while k < n:
            ch = content[k]
            if ch in "{[(":
                depth += 1
            elif ch in "}])":
                depth -= 1
                if depth == 0:
                    break
            elif ch in "'\"":
                k = content.find(ch, k + 1)
                if k < 0:
                    raise _Slow
            k += 1
        if k >= n:
            raise _Slow
        out.append(content[j + 1 : k])
        i = k + 1


class _Brackets:
    """Bracket structure of blanked text: depth at an offset, and the
    opening bracket of each closing one."""

    def __init__(self, b: str) -> None:
        self.pos: list[int] = []
        self.after: list[int] = []
        self.opener: dict[int, int] = {}
        stack: list[int] = []
        for m in _BRACKET.finditer(b):
            i = m.start()
            if m.group() in "([{":
                stack.append(i)
            else:
                self.opener[i] = stack.pop() if stack else -1
            self.pos.append(i)
            self.after.append(len(stack))

    def depth(self, off: int) -> int:
        i = bisect_left(self.pos, off) - 1
        return self.after[i] if i >= 0 else 0


_Imported = list[tuple[int, str | None, str, str | None]]
# ``_simple_import`` by line: the same import lines recur from file to file
# (read-only lists: callers only copy them out)
_SIMPLE_SEEN: dict[str, _Imported | None] = {}


def _simple_import(raw: str) -> _Imported | None:
    """A one-line import without comments or brackets, read directly."""
    try:
        return _SIMPLE_SEEN[raw]
    except KeyError:
        pass
    got = _read_simple_import(raw)
    if len(_SIMPLE_SEEN) >= 1 << 16:
        _SIMPLE_SEEN.clear()
    _SIMPLE_SEEN[raw] = got
    return got


def _read_simple_import(raw: str) -> _Imported | None:
    if not raw.isascii():
        return None
    m = _SIMPLE_FROM.fullmatch(raw)
    if m is not None:
        mod = m.group(2)
        out: list[tuple[int, str | None, str, str | None]] = []
        for part in m.group(3).split(","):
            bits = part.split()
            if len(bits) == 1 and bits[0] != "*":
                out.append((len(m.group(1)), mod, bits[0], None))
            elif len(bits) == 3 and bits[1] == "as":
                out.append((len(m.group(1)), mod, bits[0], bits[2]))
            else:
                return None
        return out
    m = _SIMPLE_IMPORT.fullmatch(raw)
    if m is not None:
        out = []
        for part in m.group(1).split(","):
            bits = part.split()
            if len(bits) == 1:
                out.append((0, None, bits[0], None))
            elif len(bits) == 3 and bits[1] == "as" and "." not in bits[2]:
                out.append((0, None, bits[0], bits[2]))
            else:
                return None
        return out
    return None


def _elements(t: str) -> list[str]:
    return [e.strip() for e in t.split(",")]


class _Hdr:
    """A ``def`` or ``class`` statement found in the text."""

    __slots__ = (
        "body_indent",
        "body_ls",
        "children",
        "end",
        "hb",
        "hdr_end",
        "indent",
        "kind",
        "line",
        "ls",
        "name",
        "oneliner",
        "parent",
        "stmts",
        "visible",
    )

    def __init__(self, ls: int, kind: str, name: str, indent: int) -> None:
        self.ls = ls  # offset of the header's line
        self.kind = kind  # "def" or "class"
        self.name = name
        self.indent = indent
        self.line = 0
        self.hdr_end = 0  # offset of the newline ending the header's logical line
        self.hb = ""  # the header's logical line, blanked
        self.oneliner = False
        self.body_ls = 0  # offset of the first body line
        self.body_indent = -1
        self.end = 0  # offset of the first line after the block
        self.parent: _Hdr | None = None
        self.visible = False
        self.children: list[_Hdr] = []
        # a class's direct statements other than defs and classes: (offset, end, blanked text)
        self.stmts: list[tuple[int, int, str]] = []


def _by_ls(h: _Hdr) -> int:
    return h.ls


class _Reader:
    def __init__(self, text: str, module: str, path: str) -> None:
        self.text = text
        self.n = len(text)
        self.module = module
        self.path = path
        self._cp_off = [0]
        self._cp_line = [1]
        self.rstarts: list[int] = []
        self.rends: list[int] = []
        self.cont: set[int] = set()
        self._logical: dict[int, tuple[int, str] | None] = {}
        # line offsets known to start a statement outside any bracket
        self._settled: set[int] = set()
        self._parsed: dict[tuple[int, int], tuple[Any, _Pos]] = {}
        self.imports: dict[str, str] = {}
        self._scanning = False

    # -- positions -------------------------------------------------------

    def line(self, off: int) -> int:
        i = bisect_right(self._cp_off, off) - 1
        o = self._cp_off[i]
        n = self._cp_line[i] + self.text.count("\n", o, off)
        if off - o > 2048:
            self._cp_off.insert(i + 1, off)
            self._cp_line.insert(i + 1, n)
        return n

    def in_region(self, off: int) -> bool:
        """Whether ``off`` lies inside a multi-line string (past its first
        character): for a line start, the line continues that string."""
        i = bisect_right(self.rstarts, off) - 1
        return i >= 0 and self.rstarts[i] < off < self.rends[i]

    def skippable(self, ls: int, c: str) -> bool:
        """A line (starting at ``ls``, first non-blank ``c``) that cannot
        start a statement: a comment, a string's or a statement's
        continuation."""
        return c == "#" or c in ")]}" or ls in self.cont or self.in_region(ls)

    # -- strings and continuations ---------------------------------------

    def strings(self) -> None:
        """Find the strings that span lines (triple-quoted, or continued by
        a backslash) and the explicit line continuations, in one pass over
        the places that can start or continue them."""
        text = self.text
        pos = [m.start() for m in _TDQ.finditer(text)]
        pos += [m.start() for m in _TSQ.finditer(text)]
        if "\\" in text:  # (most files have no backslash at all)
            pos += [m.start() for m in _BSNL.finditer(text)]
        pos.sort()
        i = 0
        self._scanning = True
        for p in pos:
            if p < i:
                continue
            ls = text.rfind("\n", 0, p) + 1
            e = self._token_end(max(ls, i), p)
            if e >= 0:
                i = e
                continue
            if text[p] == "\\":
                self.cont.add(p + 2)
                i = p + 2
                continue
            q = text[p : p + 3]
            e = text.find(q, p + 3)
            while e >= 0:
                k = e
                while text[k - 1] == "\\":
                    k -= 1
                if not (e - k) & 1:
                    break
                e = text.find(q, e + 1)  # an escaped quote
            if e < 0:
                raise Fallback
            e += 3
            if text.find("\n", p, e) >= 0:
                self.rstarts.append(p)
                self.rends.append(e)
            i = e
        self._scanning = False

    def _token_end(self, start: int, p: int) -> int:
        """End of the comment or string covering ``p`` (tokens read from
        ``start``, outside any string, on ``p``'s line), or -1. A one-quote
        string that a backslash continues on the next line is recorded."""
        text = self.text
        pre = text[start:p]
        if "#" not in pre and "'" not in pre and '"' not in pre:
            return -1
        le = text.find("\n", p)
        if le < 0:
            le = self.n
        j = start
        while True:
            m = _TOKEN.search(text, j, le)
            stop = p if m is None or m.start() >= p else m.start()
            q1, q2 = text.find("'", j, stop), text.find('"', j, stop)
            q = min(q1, q2) if q1 >= 0 and q2 >= 0 else max(q1, q2)
            if q >= 0:
                m2 = _TOKEN.match(text, q)
                if m2 is None or m2.end() <= le or not self._scanning:
                    raise Fallback  # an unterminated string
                self.rstarts.append(q)
                self.rends.append(m2.end())
                return m2.end()
            if m is None or m.start() >= p:
                return -1
            if m.end() > p:
                return m.end()
            j = m.end()

    def logical(self, ls: int) -> tuple[int, str] | None:
        """(offset of the newline ending it, blanked text) of the logical
        line starting at line offset ``ls``; None if brackets close that
        were not opened there (not the start of a statement)."""
        if ls in self._logical:
            return self._logical[ls]
        text = self.text
        e = text.find("\n", ls)
        if e < 0:
            e = self.n
        i = bisect_left(self.rstarts, ls)
        if i == len(self.rstarts) or self.rstarts[i] >= e:
            # no string starts on the line: the common one-line statement
            b = text[ls:e]
            if "#" in b or "'" in b or '"' in b:
                b = blank(b)
            if not _depth(b) and not b.endswith("\\"):
                self._logical[ls] = (e, b)
                return e, b
            # black's layout: the statement closes on the first later line
            # that starts with a closing bracket at its own indentation
            k = len(b) - len(b.lstrip(" "))
            m = _shallow(k).search(text, e)
            if (
                m is not None
                and m.end() - m.start() == k + 1
                and text[m.end()] in ")]}"
                and not self.in_region(m.start() + 1)
            ):
                le = text.find("\n", m.end())
                if le < 0:
                    le = self.n
                if self.in_region(le):
                    le = -1
            else:
                le = -1
            if le >= 0:
                b = blank(text[ls:le])
                # every newline inside brackets, nothing left open
                sk = (
                    b.encode("utf-8", "surrogatepass")
                    .translate(None, _NOT_BRACKET)
                    .replace(b"\\\n", b"")
                )
                while sk:
                    t = _BGROUP.sub(b"", sk)
                    if t == sk:
                        break
                    sk = t
                if not sk:
                    self._logical[ls] = (le, b)
                    return le, b
        parts: list[str] = []
        depth = 0
        a = ls
        rstarts, rends = self.rstarts, self.rends
        out: tuple[int, str] | None = None
        while True:
            e = text.find("\n", a)
            if e < 0:
                e = self.n
            while e < self.n:
                # a line that continues a string: on past the string's end
                k = bisect_left(rstarts, e + 1) - 1  # (a string starting there: no)
                if k < 0 or e + 1 >= rends[k]:
                    break
                e2 = text.find("\n", rends[k])
                e = self.n if e2 < 0 else e2
            b = blank(text[a:e])
            parts.append(b)
            depth += _depth(b)
            if depth < 0:
                break
            if depth == 0 and not b.endswith("\\"):
                out = (e, "\n".join(parts))
                break
            if e >= self.n:
                raise Fallback
            a = e + 1
        self._logical[ls] = out
        return out

    # -- structure -------------------------------------------------------

    def headers(self) -> list[_Hdr]:
        text = self.text
        found: list[_Hdr] = []
        for rx, kind in ((_DEF, "def"), (_CLASS, "class")):
            for m in rx.finditer(text):
                p = m.start()
                ls = text.rfind("\n", 0, p) + 1
                prefix = text[ls:p]
                if kind == "def":
                    if not prefix.strip(" "):
                        ok, indent = True, len(prefix)  # (what the fullmatch below says)
                    else:
                        mp = _DEF_PREFIX.fullmatch(prefix)
                        ok = mp is not None
                        indent = len(mp.group(1)) if mp else 0
                else:
                    ok = prefix.strip(" ") == ""
                    indent = len(prefix)
                if not ok:
                    if prefix.strip() in ("", "async"):
                        raise Fallback  # tabs or form feeds before a header
                    continue
                if self.in_region(ls):
                    continue
                if ls in self.cont:
                    raise Fallback
                name = m.group(1)
                if not name.isascii():
                    raise Fallback
                found.append(_Hdr(ls, kind, name, indent))
        found.sort(key=_by_ls)
        n = self.n
        # the next header at the same or a lower indentation ends a block at the latest
        limit = [n] * len(found)
        stack: list[int] = []
        for idx in range(len(found) - 1, -1, -1):
            h = found[idx]
            while stack and found[stack[-1]].indent > h.indent:
                stack.pop()
            limit[idx] = found[stack[-1]].ls if stack else n
            stack.append(idx)
        self.hdr_at = {h.ls: h for h in found}
        rstarts = self.rstarts
        ri, nr = 0, len(rstarts)
        prev_off, prev_line = 0, 1
        for h in found:
            ls = h.ls
            prev_line = h.line = prev_line + text.count("\n", prev_off, ls)
            prev_off = ls
            e = text.find("\n", ls)
            if e < 0:
                e = n
            while ri < nr and rstarts[ri] < ls:
                ri += 1
            raw = text[ls:e]
            if (
                raw[-1:] == ":"
                and (ri == nr or rstarts[ri] >= e)
                and "#" not in raw
                and "'" not in raw
                and '"' not in raw
                and not _depth(raw)
            ):
                h.hdr_end, h.hb = e, raw  # the one-line header
            else:
                r = self.logical(ls)
                if r is None:
                    raise Fallback
                h.hdr_end, h.hb = r
            if not h.hb.rstrip().endswith(":"):
                h.oneliner = True
                h.end = min(h.hdr_end + 1, n)
                continue
            m = _BODY.search(text, h.hdr_end)
            if m is None:
                raise Fallback
            h.body_ls = m.start() + 1
            h.body_indent = len(m.group(1))
            if m.group(2) in _ODD_WS:
                raise Fallback
            if h.body_indent <= h.indent:
                raise Fallback
        if len(self._cp_off) == 1:
            # the headers' lines are known: ``line`` counts from the nearest one
            self._cp_off += [h.ls for h in found]
            self._cp_line += [h.line for h in found]
        # block ends (a class's scan also ends its direct defs), parents,
        # and the headers the ast walk visits
        stack2: list[_Hdr] = []
        for idx, h in enumerate(found):
            while stack2 and stack2[-1].end <= h.ls:
                stack2.pop()
            parent = stack2[-1] if stack2 else None
            h.parent = parent
            if parent is None:
                h.visible = h.indent == 0
            else:
                h.visible = (
                    parent.visible and not parent.oneliner and h.indent == parent.body_indent
                )
                if h.visible:
                    parent.children.append(h)
            if h.kind == "class" and not h.oneliner:
                # (a nested class's end is known from its parent's scan)
                self.class_scan(h, h.end or limit[idx])
            elif not h.end:
                h.end = self.block_end(h.hdr_end, h.indent, limit[idx])
            stack2.append(h)
        return found

    def class_scan(self, h: _Hdr, limit: int) -> None:
        """One pass over a class body at its indentation: where the class
        ends, its direct statements, and where its direct defs end."""
        text = self.text
        b = h.body_indent
        rx = _shallow(b)
        pos = h.hdr_end
        skip = 0
        end = limit
        pending: _Hdr | None = None
        stmts = h.stmts
        # whether lines deeper than the body were passed unread (a def's or a
        # compound statement's body) since the last statement read
        deeper = False
        search = rx.search
        rstarts, rends, cont = self.rstarts, self.rends, self.cont
        hdr_at = self.hdr_at
        while True:
            m = search(text, pos, limit)
            if m is None:
                break
            ls = m.start() + 1
            pos = m.end()
            if ls < skip:
                continue
            c = text[pos]
            if c == "#":
                continue
            i = bisect_right(rstarts, ls) - 1  # (``in_region``)
            if i >= 0 and rstarts[i] < ls < rends[i]:
                continue
            if c in ")]}" or c in _ODD_WS or ls in cont:
                raise Fallback  # a continuation line outside any statement we read
            k = pos - ls
            if k <= h.indent:
                if deeper:
                    self.settled(ls)  # (not a continuation of the lines passed)
                elif self.logical(ls) is None:
                    raise Fallback
                end = ls
                break
            if k != b:
                raise Fallback
            hh = hdr_at.get(ls)
            if deeper and hh is None:
                self.settled(ls)
            if pending is not None:
                pending.end = ls
                pending = None
            if hh is not None:
                skip = hh.hdr_end + 1
                if not hh.oneliner:
                    pending = hh
                deeper = not hh.oneliner
                continue
            r = self.logical(ls)
            if r is None:
                raise Fallback
            e, t = r
            skip = e + 1
            stmts.append((ls, e, t))
            deeper = t.rstrip().endswith(":")
            if not deeper:
                # nothing deeper follows a simple statement
                nm = _BODY.search(text, e)
                if nm is not None and nm.start() + 1 < limit and len(nm.group(1)) > b:
                    raise Fallback
        if pending is not None:
            pending.end = end
        h.end = end

    def block_end(self, start: int, indent: int, limit: int) -> int:
        """Offset of the first statement line at most ``indent`` deep after
        ``start`` (``limit`` if none comes first)."""
        text = self.text
        rx = _shallow(indent)
        pos = start
        while True:
            m = rx.search(text, pos, limit)
            if m is None:
                return limit
            ls = m.start() + 1
            pos = m.end()
            c = text[pos]
            if c == "#" or self.in_region(ls):
                continue
            if c in ")]}" or c in _ODD_WS or ls in self.cont:
                raise Fallback  # a continuation line dedented below its block
            self.settled(ls)
            return ls

    def settled(self, ls: int) -> None:
        """Make sure the line at ``ls`` (found by its indentation after
        lines not read) starts a statement, outside the brackets of the
        lines before it, or raise ``Fallback``.

        Its statements are read one after the other, each from its own start
        and with its brackets balanced, up to a ``def``/``class`` header (which
        no bracket can hold), the end of the file (where none is open), or a
        line settled before: whatever bracket was open at ``ls`` would still
        be open there, so none was (in a file that compiles)."""
        text, n = self.text, self.n
        hdr_at, done = self.hdr_at, self._settled
        seen: list[int] = []
        pos = ls
        while pos not in done and pos not in hdr_at:
            seen.append(pos)
            r = self.logical(pos)
            if r is None:
                raise Fallback  # brackets close that the statement did not open
            m = _BODY.search(text, r[0])
            if m is None or m.start() + 1 >= n:
                break
            pos = m.start() + 1
            if m.group(2) in _ODD_WS or pos in self.cont or self.in_region(pos):
                raise Fallback
        done.update(seen)

    def last_code(self, end: int) -> tuple[int, int]:
        """(line offset, end column) of the last code before offset ``end``."""
        text = self.text
        b = end
        if b > 0 and text[b - 1] == "\n":
            b -= 1
        while True:
            a = text.rfind("\n", 0, b) + 1
            seg = text[a:b]
            st = seg.lstrip()
            if st and not (st[0] == "#" and not self.in_region(a)):
                if self.in_region(a):
                    k = bisect_right(self.rstarts, a) - 1
                    r_end = self.rends[k]
                    return a, (r_end - a) + len(_rstrip_cont(blank(text[r_end:b])))
                col = len(_rstrip_cont(blank(seg)))
                if col:
                    return a, col
            if a == 0:
                raise Fallback
            b = a - 1

    def decorated_start(self, h: _Hdr) -> int:
        """Offset of the first decorator line of ``h`` (or of ``h``): the
        ``@`` lines at ``h``'s indentation whose statements lead to ``h``."""
        text = self.text
        cands: list[int] = []
        b = h.ls - 1
        stop = -1
        while b > 0:
            a = text.rfind("\n", 0, b) + 1
            seg = text[a:b]
            st = seg.lstrip(" ")
            b = a - 1
            if not st.strip() or (st[0] == "#" and not self.in_region(a)):
                continue
            k = len(seg) - len(st)
            if self.in_region(a) or a in self.cont or st[0] in ")]}" or k > h.indent:
                continue
            if k == h.indent and st[0] == "@":
                cands.append(a)
                continue
            stop = a
            break
        # the decorators chain, statement by statement, down to ``h``
        start = h.ls
        for d in cands:
            pos = d
            while pos != h.ls:
                r = self.logical(pos)
                if r is None or text[pos : pos + h.indent + 1].lstrip(" ")[:1] != "@":
                    raise Fallback
                m = _BODY.search(text, r[0])
                if m is None or m.start() + 1 > h.ls:
                    raise Fallback
                pos = m.start() + 1
            start = d
        # what precedes is a block's header, or a statement that ends right there
        if stop >= 0:
            r = self.logical(stop)
            if r is None:
                raise Fallback
            if not r[1].rstrip().endswith(":"):
                m = _BODY.search(text, r[0])
                if m is None or m.start() + 1 != start:
                    raise Fallback
        return start

    def parse(self, h: _Hdr, decorators: bool = False) -> tuple[Any, _Pos]:
        """The ast node of the block ``h`` (parsed on its own) and positions."""
        start = self.decorated_start(h) if decorators else h.ls
        key = (h.ls, start)
        if key in self._parsed:
            return self._parsed[key]
        src = self.text[start : h.end]
        first = self.line(start)
        node = self._compile(src, h.indent, first)
        if (
            not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            or node.name != h.name
        ):
            raise Fallback
        pos = _Pos(src.split("\n"), first - (2 if h.indent else 1), first)
        self._parsed[key] = (node, pos)
        return node, pos

    def _compile(self, src: str, indent: int, first: int) -> Any:
        if indent:
            if first < 2:
                raise Fallback
            src = "if 1:\n" + src
        try:
            tree = compile(src, "<segment>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise Fallback from exc
        body = tree.body[0].body if indent else tree.body
        if not body:
            raise Fallback
        return body[0] if len(body) == 1 else body

    def parse_lines(self, ls: int, e: int, indent: int) -> tuple[list[Any], _Pos]:
        """The statements of lines ``ls``..``e`` (a logical line)."""
        src = self.text[ls:e]
        first = self.line(ls)
        node = self._compile(src, indent, first)
        body = node if isinstance(node, list) else [node]
        return body, _Pos(src.split("\n"), first - (2 if indent else 1), first)

    def within(self, hdrs: list[_Hdr], starts: list[int], a: int, b: int) -> list[_Hdr]:
        return hdrs[bisect_left(starts, a) : bisect_left(starts, b)]

    def instr(self, a: int, b: int) -> set[int]:
        """Line offsets in [a, b) that continue a multi-line string."""
        out: set[int] = set()
        text = self.text
        i = bisect_right(self.rends, a)
        while i < len(self.rstarts) and self.rstarts[i] < b:
            s, e = self.rstarts[i], self.rends[i]
            j = text.find("\n", s, e)
            while j >= 0:
                out.add(j + 1)
                j = text.find("\n", j + 1, e)
            i += 1
        return out

    # -- imports -----------------------------------------------------------

    def scan_imports(self, hdrs: list[_Hdr]) -> dict[str, str]:
        """Imports at module level, also in ``if``/``try`` blocks: only the
        text between top-level ``def``/``class`` blocks can hold them."""
        text, n = self.text, self.n
        gaps: list[tuple[int, int]] = []
        prev = 0
        for h in hdrs:
            if h.indent == 0:
                if h.ls > prev:
                    gaps.append((prev, h.ls))
                prev = max(prev, h.end)
        if prev < n:
            gaps.append((prev, n))
        starts = [h.ls for h in hdrs]
        found: list[tuple[int, str | None, str, str | None]] = []
        for a, b in gaps:
            if _TAB_LINE.search(text, max(a - 1, 0), b) and any(
                not self.in_region(m.start() + 1)
                for m in _TAB_LINE.finditer(text, max(a - 1, 0), b)
            ):
                raise Fallback  # tabs in indentation
            hits = [m.start() + 1 for m in _GAP_IMPORT.finditer(text, max(a - 1, 0), b)]
            if a == 0 and _LINE_IMPORT.match(text):
                hits.insert(0, 0)
            for ls in hits:
                if self.in_region(ls):
                    continue
                if ls in self.cont:
                    prev = text[text.rfind("\n", 0, ls - 1) + 1 : ls].lstrip()
                    if prev.startswith("from") and "import" not in prev:
                        continue  # ``from x \`` then ``import y``
                    raise Fallback
                le = text.find("\n", ls)
                if le < 0:
                    le = n
                raw = text[ls:le]
                indent = len(raw) - len(raw.lstrip(" "))
                if indent:
                    # inside a def or a class, or not only in if/try blocks
                    i = bisect_right(starts, ls) - 1
                    hh: _Hdr | None = hdrs[i] if i >= 0 else None
                    while hh is not None and hh.end <= ls:
                        hh = hh.parent
                    if hh is not None or not self._shallow_chain(ls, indent):
                        continue
                got = _simple_import(raw)
                found.extend(got if got is not None else self._read_import(ls, indent))
            for m in _IMPORT.finditer(text, a, b):
                # ``import`` after a colon or a semicolon
                p = m.start()
                if p and (text[p - 1].isalnum() or text[p - 1] in "_."):
                    continue
                ls = text.rfind("\n", 0, p) + 1
                prefix = text[ls:p].lstrip(" ")
                if not prefix or prefix.startswith("from") or self.in_region(p) or ls in self.cont:
                    continue
                k = bisect_right(self.rstarts, p) - 1
                start = max(ls, self.rends[k]) if k >= 0 else ls
                if self._token_end(start, p) < 0:
                    raise Fallback
        return imports_map(found, self.module, is_package_path(self.path))

    def _prev_stmt(self, pos: int, below: int) -> tuple[int, int, str]:
        """The nearest statement line before ``pos`` indented less than
        ``below``: (offset, indent, stripped text)."""
        text = self.text
        b = pos - 1
        while b > 0:
            a = text.rfind("\n", 0, b) + 1
            seg = text[a:b]
            st = seg.lstrip(" ")
            b2 = a - 1
            if not st.strip():
                b = b2
                continue
            k = len(seg) - len(st)
            if self.skippable(a, st[0]) or k >= below:
                b = b2
                continue
            if st[0] in _ODD_WS:
                raise Fallback
            return a, k, st
        raise Fallback

    def _shallow_chain(self, ls: int, indent: int) -> bool:
        """Whether an indented import sits in ``if``/``try`` blocks only, up
        to module level (what ``_shallow_imports`` collects)."""
        need, pos = indent, ls
        while need > 0:
            a, k, st = self._prev_stmt(pos, need)
            w = _WORD.match(st)
            word = w.group(1) if w else ""
            if word in ("if", "elif", "try"):
                pass
            elif word == "except":
                if st[6:].lstrip().startswith("*"):
                    return False
            elif word == "else":
                b, k2, st2 = self._prev_stmt(a, k + 1)
                while k2 != k:
                    b, k2, st2 = self._prev_stmt(b, k + 1)
                w2 = _WORD.match(st2)
                owner = w2.group(1) if w2 else ""
                if owner in ("try", "except"):
                    raise Fallback  # try/else: the ast's order differs from the source's
                if owner not in ("if", "elif"):
                    return False
            elif word == "finally":
                raise Fallback
            else:
                return False
            need, pos = k, a
        return True

    def _read_import(self, ls: int, indent: int) -> list[tuple[int, str | None, str, str | None]]:
        r = self.logical(ls)
        if r is None:
            raise Fallback
        e, t = r
        t = t.replace("\\\n", " ")
        if ";" in t or not t.isascii():
            return self._import_ast(ls, e, indent)
        out: list[tuple[int, str | None, str, str | None]] = []
        m = _IMPORT_STMT.fullmatch(t)
        if m:
            for part in m.group(1).split(","):
                a = _ALIAS.fullmatch(part)
                if a is None:
                    return self._import_ast(ls, e, indent)
                out.append((0, None, _WS.sub("", a.group(1)), a.group(2)))
            return out
        m = _FROM_STMT.fullmatch(t)
        if m is None:
            return self._import_ast(ls, e, indent)
        level = len(m.group(1))
        mod = _WS.sub("", m.group(2)) if m.group(2) else None
        names = m.group(3)
        if names.startswith("("):
            if not names.endswith(")"):
                return self._import_ast(ls, e, indent)
            names = names[1:-1]
            parts = names.split(",")
            if parts and not parts[-1].strip():
                parts.pop()
        else:
            parts = names.split(",")
        for part in parts:
            if part.strip() == "*":
                continue
            a = _ALIAS.fullmatch(part)
            if a is None or "." in a.group(1):
                return self._import_ast(ls, e, indent)
            out.append((level, mod, a.group(1), a.group(2)))
        return out

    def _import_ast(
        self, ls: int, e: int, indent: int
    ) -> list[tuple[int, str | None, str, str | None]]:
        body, _ = self.parse_lines(ls, e, indent)
        out: list[tuple[int, str | None, str, str | None]] = []
        for node in body:
            if isinstance(node, ast.Import):
                out.extend((0, None, a.name, a.asname) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                out.extend(
                    (node.level, node.module, a.name, a.asname) for a in node.names if a.name != "*"
                )
            else:
                raise Fallback
        return out

    # -- classes -------------------------------------------------------------

    def class_facts(self, h: _Hdr) -> _ClassFacts:
        try:
            return self._class_facts(h)
        except (_Slow, _Stmt):
            node, pos = self.parse(h)
            return _class_facts(node, self.module, self.imports, pos)

    def _class_facts(self, h: _Hdr) -> _ClassFacts:
        if h.oneliner:
            raise _Slow
        bases = self.bases(h)
        a, col = self.last_code(h.end)
        facts = _ClassFacts([h.line, h.indent, self.line(a), col], bases)
        events: list[Event] = []
        self.class_body(h, events)
        later: list[_Hdr] = []
        for c in h.children:
            if c.kind != "def":
                continue
            if c.name in INIT_FAMILY:
                self.method(c, True, events, facts.methods)
            else:
                later.append(c)
        if any(e[2] is not None for e in events):
            attrs = {e[1] for e in events if e[2] is not None}
            # a method can only resolve an attribute it names as a target
            # (``.x =``, ``.x +=``, ``.x:``; ``.x,`` ``.x)`` ``.x]`` in a tuple)
            # (the names themselves first: most methods name none of them)
            text = self.text
            for c in later:
                if not c.oneliner and not (
                    any(text.find(a, c.body_ls, c.end) >= 0 for a in attrs)
                    and any(
                        m.group(1) in attrs for m in _ATTR_TARGET.finditer(text, c.body_ls, c.end)
                    )
                ):
                    continue
                self.method(c, False, events, facts.methods)
        finish_class(facts, events)
        return facts

    def bases(self, h: _Hdr) -> list[str]:
        hb = h.hb
        m = _CLASS_HEAD.match(hb)
        if m is None:
            raise _Slow
        i = m.end()
        if hb[i] == ":":
            return []
        if hb[i] != "(":
            raise _Slow
        parts: list[tuple[str, str]] = []
        j = hb.find(")", i + 1)
        inner = hb[i + 1 : j]
        if (
            j > 0
            and "(" not in inner
            and "[" not in inner
            and "{" not in inner
            and "]" not in inner
            and "}" not in inner
        ):
            # no bracket inside (the common case): the loops below, at once
            raw = self.text[h.ls + i + 1 : h.ls + j]
            start = 0
            k = inner.find(",")
            while k >= 0:
                parts.append((inner[start:k], raw[start:k]))
                start = k + 1
                k = inner.find(",", start)
        else:
            depth, j = 0, i
            while j < len(hb):
                ch = hb[j]
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            inner = hb[i + 1 : j]
            raw = self.text[h.ls + i + 1 : h.ls + j]
            depth, start = 0, 0
            for k, ch in enumerate(inner):
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    parts.append((inner[start:k], raw[start:k]))
                    start = k + 1
        parts.append((inner[start:], raw[start:]))
        out: list[str] = []
        for part, rawpart in parts:
            p = part.replace("\\\n", " ").strip()
            if not p or p.startswith("*"):
                continue  # a trailing comma, *args, **kwargs
            top = _toplevel(p)
            if "=" in top.replace("==", "").replace("!=", "").replace("<=", "").replace(">=", ""):
                continue  # metaclass=..., a keyword
            name: str | None
            if _DOTTED.fullmatch(p) and p.isascii():
                name = _WS.sub("", p)
            elif (
                p.isascii()
                and top.endswith("\x00")
                and top.count("\x00") == 1
                and _DOTTED.fullmatch(top[:-1].strip())
                and p.rstrip().endswith("]")
            ):
                name = _WS.sub("", top[:-1])
            else:
                try:
                    b = ast.parse("(" + rawpart.strip() + "\n)", mode="eval").body
                except SyntaxError as exc:
                    raise _Slow from exc
                expr = b.value if isinstance(b, ast.Subscript) else b
                name = ast_dotted(expr)
            if name and name not in ("object", "Generic", "Protocol", "ABC"):
                out.append(qualify(name, self.module, self.imports))
        return out

    def class_body(self, h: _Hdr, events: list[Event]) -> None:
        b = h.body_indent
        for ls, e, t in h.stmts:
            try:
                self.class_stmt(ls, b, t, events)
            except _Stmt:
                body, spos = self.parse_lines(ls, e, b)
                for stmt in body:
                    class_level_events(stmt, events, spos)

    def class_stmt(self, ls: int, k: int, t: str, events: list[Event]) -> None:
        m = _FAST_NAME.fullmatch(t)
        if m is not None and (m.group(2) is None or not _depth(m.group(2))):
            v = m.group(3)
            if (
                "None" not in v
                and not _MINUS_DIGIT.search(v)
                and ";" not in v
                and not keyword.iskeyword(m.group(1))
            ):
                events.append((0, m.group(1), None, self._span(self.line(ls), k, t), "class body"))
                return
        s = t.lstrip()
        if not s or s[0] == "@":
            return
        w = _WORD.match(s)
        if w and w.group(1) in _COMPOUND:
            return
        if ";" in t:
            raise _Stmt  # several statements
        if w and keyword.iskeyword(w.group(1)):
            return
        top = _toplevel(t)
        if "=" not in top:
            return
        if ";" in top:
            raise _Stmt
        parts = _assign_parts(top)
        if parts is None:
            return
        targets, value, aug = parts
        line = self.line(ls)
        span = self._span(line, k, t)
        if aug:
            tt = targets[0].strip()
            if _NAME.fullmatch(tt):
                events.append((0, tt, None, span, "class body"))
            elif tt.startswith("\x00"):
                raise _Stmt
            return
        if len(targets) == 1 and ":" in targets[0]:
            tt = targets[0].split(":", 1)[0].strip()
            if _NAME.fullmatch(tt):
                events.append((0, tt, _rep(value, t), span, "class body"))
            elif not _CHAIN.fullmatch(tt):
                raise _Stmt
            return
        for tt in targets:
            tt = tt.strip()
            if _NAME.fullmatch(tt):
                events.append((0, tt, _rep(value, t), span, "class body"))
            elif "," in tt:
                for el in _elements(tt):
                    if _NAME.fullmatch(el):
                        events.append((0, el, None, span, "class body"))
                    elif el and not el.startswith("*") and not _CHAIN.fullmatch(el):
                        raise _Stmt
            elif not _CHAIN.fullmatch(tt):
                raise _Stmt

    def _span(self, line: int, k: int, t: str) -> list[int]:
        t = _rstrip_cont(t)  # a statement ends before ``\`` and blank lines
        i = t.rfind("\n")
        return [line, k, line + t.count("\n"), len(t) - i - 1]

    # -- methods ---------------------------------------------------------------

    def method(
        self, c: _Hdr, family: bool, events: list[Event], methods: dict[str, list[str]]
    ) -> None:
        try:
            evs = self.method_events(c, family)
        except (_Slow, _Stmt):
            node, pos = self.parse(c)
            _method_events(node, family, events, methods, pos)
            return
        if family:
            for line, _col, _i, attr, rep, span in evs:
                events.append((line, attr, rep, span, c.name))
        else:
            # the ast walk meets a method's statements last first
            for _line, _col, _i, attr, rep, _span in sorted(
                evs, key=lambda e: (-e[0], -e[1], e[2])
            ):
                if rep is None:
                    add_method(methods, attr, c.name)

    def first_arg(self, c: _Hdr) -> str | None:
        m = _FIRST_ARG.search(c.hb)
        if m is None:
            raise _Slow
        a = m.group(1)
        if a in ("*", ")"):
            return None
        if not a.isascii():
            raise _Slow
        return a

    def method_events(
        self, c: _Hdr, family: bool
    ) -> list[tuple[int, int, int, str, str | None, list[int]]]:
        """(line, col, index, attr, sentinel or None, span) for each
        assignment (or, in the ``__init__`` family, positive assert) of an
        attribute of the method's first argument, in source order."""
        if c.oneliner or (family and c.name == "__new__"):
            raise _Slow
        self_name = self.first_arg(c) or "self"
        text = self.text
        start, end = c.body_ls, c.end
        body = text[start:end]
        if self_name not in body:
            return []
        bl = blank(body)
        nested = self.within(self.hdrs, self.hdr_starts, start, end)
        excl = [(d.ls, d.end) for d in nested]
        instr = self.instr(start, end) if self.rstarts else set()
        out: list[tuple[int, int, int, str, str | None, list[int]]] = []
        fast = _FAST_SELF.get(self_name)
        if fast is None:
            fast = _FAST_SELF[self_name] = re.compile(
                r"( *)"
                + re.escape(self_name)
                + r"[ \t]*\.[ \t]*("
                + _ID
                + r")[ \t]*(?::([^=]*))?=(?!=)([^=]*)",
                re.DOTALL,
            )
        line = self.line(start)
        if "\\" not in bl and self._statements_with(
            bl, start, line, instr, self_name, excl, fast, family, out
        ):
            return out
        off = start
        s_off = -1
        s_line = 0
        s_lines: list[str] = []
        depth = 0
        cont = False
        for ln in bl.split("\n"):
            if s_off >= 0 and (depth > 0 or cont or off in instr):
                s_lines.append(ln)
            else:
                if s_off >= 0:
                    t = "\n".join(s_lines) if len(s_lines) > 1 else s_lines[0]
                    if self_name in t and not (excl and any(a <= s_off < b for a, b in excl)):
                        self._self_stmt(fast.fullmatch(t), s_off, s_line, t, self_name, family, out)
                    s_off = -1
                if ln.strip():
                    s_off, s_line, s_lines = off, line, [ln]
                    depth = 0
            if s_off >= 0:
                if "(" in ln or ")" in ln or "[" in ln or "]" in ln or "{" in ln or "}" in ln:
                    depth += (
                        ln.count("(")
                        + ln.count("[")
                        + ln.count("{")
                        - ln.count(")")
                        - ln.count("]")
                        - ln.count("}")
                    )
                    if depth < 0:
                        raise _Slow
                cont = ln.endswith("\\")
            off += len(ln) + 1
            line += 1
        if s_off >= 0:
            if depth or cont:
                raise _Slow
            t = "\n".join(s_lines) if len(s_lines) > 1 else s_lines[0]
            if self_name in t and not (excl and any(a <= s_off < b for a, b in excl)):
                self._method_stmt(s_off, s_line, t, self_name, family, out)
        return out

    def _statements_with(
        self,
        bl: str,
        start: int,
        line: int,
        instr: set[int],
        self_name: str,
        excl: list[tuple[int, int]],
        fast: re.Pattern[str],
        family: bool,
        out: list[tuple[int, int, int, str, str | None, list[int]]],
    ) -> bool:
        """The line loop of ``method_events`` on the statements that name
        ``self_name`` only: a line continues a statement when the brackets
        opened before it are still open (read from the bracket skeleton, in
        which only the lines that leave brackets open remain) or it starts
        inside a multi-line string. False, with nothing done, when a
        statement's brackets close more than they open or stay open at the
        end: the line loop then decides (``bl`` has no backslash)."""
        sk = bl.encode("utf-8", "surrogatepass").translate(_SKELETON, _NOT_SKELETON)
        while b"()" in sk:
            sk = sk.replace(b"()", b"")
        cont: set[int] = set()
        if b"(" in sk or b")" in sk:
            depth = 0
            idx = 0
            pos = 0
            for m in _RESIDUE.finditer(sk):
                idx += sk.count(b"\n", pos, m.start())
                pos = m.start()
                r = m.group()
                after = depth + r.count(b"(") - r.count(b")")
                if after < 0:
                    return False
                if depth == 0 and after > 0:
                    first = idx + 1
                elif depth > 0 and after == 0:
                    cont.update(range(first, idx + 1))
                depth = after
            if depth:
                return False
        if instr:
            for o in instr:
                if start < o < start + len(bl) + 1:
                    cont.add(bl.count("\n", 0, o - start))
        last = bl.count("\n")
        n = len(bl)
        i = bl.find(self_name)
        li, lpos = 0, 0  # line index at offset lpos
        while i >= 0:
            so = bl.rfind("\n", 0, i) + 1
            li += bl.count("\n", lpos, so)
            lpos = so
            s_idx = li
            while s_idx in cont:
                s_idx -= 1
                so = bl.rfind("\n", 0, so - 1) + 1
            e_idx = li
            eo = bl.find("\n", lpos)
            if eo < 0:
                eo = n
            while e_idx + 1 in cont:
                e_idx += 1
                eo = bl.find("\n", eo + 1)
                if eo < 0:
                    eo = n
            t = bl[so:eo]
            s_off = start + so
            s_line = line + s_idx
            if not (excl and any(a <= s_off < b for a, b in excl)):
                m = fast.fullmatch(t) if e_idx != last else None
                self._self_stmt(m, s_off, s_line, t, self_name, family, out)
            if eo >= n:
                break
            li += bl.count("\n", lpos, eo + 1)
            lpos = eo + 1
            i = bl.find(self_name, lpos)
        return True

    def _self_stmt(
        self,
        m: re.Match[str] | None,
        off: int,
        line: int,
        t: str,
        self_name: str,
        family: bool,
        out: list[tuple[int, int, int, str, str | None, list[int]]],
    ) -> None:
        """One statement naming ``self``: a plain ``self.x = value`` (``m``,
        the fast pattern's match) read at once, anything else by
        :meth:`_method_stmt`."""
        if (
            m is not None
            and (m.group(3) is None or not _depth(m.group(3)))
            and "None" not in m.group(4)
            and ";" not in m.group(4)
            and not _MINUS_DIGIT.search(m.group(4))
        ):
            k = len(m.group(1))
            out.append((line, k, 0, m.group(2), None, [line, k, 0, 0]))
        else:
            self._method_stmt(off, line, t, self_name, family, out)

    def _method_stmt(
        self,
        off: int,
        line: int,
        t: str,
        self_name: str,
        family: bool,
        out: list[tuple[int, int, int, str, str | None, list[int]]],
    ) -> None:
        """The events of one statement (blanked text ``t``) of a method."""
        s = t.lstrip(" ")
        k = len(t) - len(s)
        if s[0] in _ODD_WS:
            raise Fallback
        w = _WORD.match(s)
        word = w.group(1) if w else ""
        try:
            if word == "assert" and ";" not in t:
                if family and (">" in t or "!=" in t or _IS_NOT.search(t)):
                    raise _Stmt
                return
            if word in _COMPOUND:
                if t.rstrip().endswith(":") or ("=" not in t and not (family and "assert" in t)):
                    return
                raise _Slow  # a one-line compound statement that may assign
            if ";" in t:
                raise _Stmt  # several statements
            if "=" not in t or (word and keyword.iskeyword(word)):
                return
            top = _toplevel(t)
            if "=" not in top:
                return
            if ";" in top:
                raise _Stmt
            m = _TOP_ATTR.fullmatch(top)
            if m is not None:
                if m.group(1) == self_name:
                    r = _rep(m.group(3), t)
                    out.append(
                        (
                            line,
                            k,
                            0,
                            m.group(2),
                            r,
                            self._span(line, k, t) if r else [line, k, 0, 0],
                        )
                    )
                return
            if _TOP_NAME.fullmatch(top):
                return
            parts = _assign_parts(top)
            if parts is None:
                return
            targets, value, aug = parts
            found: list[tuple[str, str | None]] = []
            rep_cache: list[str | None] = []

            def rep() -> str | None:
                if not rep_cache:
                    rep_cache.append(_rep(value, t))
                return rep_cache[0]

            if aug:
                attr = self._attr_target(targets[0], self_name)
                if attr:
                    found.append((attr, None))
            elif len(targets) == 1 and ":" in targets[0]:
                attr = self._attr_target(targets[0].split(":", 1)[0], self_name)
                if attr:
                    found.append((attr, rep()))
            else:
                for tt in targets:
                    if "," in tt:
                        for el in _elements(tt):
                            if el and not el.startswith("*"):
                                attr = self._attr_target(el, self_name)
                                if attr:
                                    found.append((attr, None))
                    else:
                        attr = self._attr_target(tt, self_name)
                        if attr:
                            found.append((attr, rep()))
        except _Stmt:
            self._method_stmt_ast(off, line, t, k, self_name, family, out)
            return
        if found:
            span = self._span(line, k, t)
            for i, (attr, r) in enumerate(found):
                out.append((line, k, i, attr, r, span))

    def _attr_target(self, t: str, self_name: str) -> str | None:
        """The attribute of ``self_name`` a target assigns, if any."""
        t = t.strip()
        m = _DOT2.fullmatch(t)
        if m:
            return m.group(2) if m.group(1) == self_name else None
        if not t or _NAME.fullmatch(t) or _CHAIN.fullmatch(t):
            return None
        raise _Stmt

    def _method_stmt_ast(
        self,
        off: int,
        line: int,
        t: str,
        k: int,
        self_name: str,
        family: bool,
        out: list[tuple[int, int, int, str, str | None, list[int]]],
    ) -> None:
        e = off + len(t)
        body, pos = self.parse_lines(off, e, k)
        for node in body:
            if not family and isinstance(node, ast.Assert):
                continue
            tmp: list[Event] = []
            _stmt_events(node, "", self_name, True, tmp, {}, pos)
            for i, (ln, attr, rep, span, _) in enumerate(tmp):
                out.append((ln, span[1], i, attr, rep, span))

    # -- functions -------------------------------------------------------------

    def if_candidates(self, hdrs: list[_Hdr]) -> dict[int, list[tuple[int, bool, int, int]]]:
        """Per visible def (by header offset): the ``if``/``elif`` statements
        that may hold a resolver (line offset, elif?, header end, indent)."""
        text = self.text
        out: dict[int, list[tuple[int, bool, int, int]]] = {}
        hi = 0
        stack: list[_Hdr] = []
        nh = len(hdrs)
        passes: dict[int, bool] = {}
        for m in _IF.finditer(text):
            p = m.start()
            ls = text.rfind("\n", 0, p) + 1
            if p > ls:
                pre = text[ls:p].lstrip(" ")
                if pre and pre != "el":
                    continue
            # the cheap test of the header's own line first (most ``if``s
            # fail it); the enclosing def is then found from the headers
            # passed so far (``ls`` only grows)
            le = text.find("\n", p)
            if le < 0:
                le = self.n
            raw = text[p:le]
            if not (
                ("." in raw or "getattr" in raw)
                and ("==" in raw or "is" in raw or "<" in raw or ">" in raw)
                and _has_cmp(raw)
            ) and not (raw[-1:] in ("\\", "(", "[", "{", ",") or _depth(raw)):
                continue  # no attribute compared, and the header ends on this line
            while hi < nh and hdrs[hi].ls < ls:
                h = hdrs[hi]
                while stack and stack[-1].end <= h.ls:
                    stack.pop()
                stack.append(h)
                hi += 1
            while stack and stack[-1].end <= ls:
                stack.pop()
            if not stack:
                continue
            owner = stack[-1]
            if owner.kind != "def" or not owner.visible or ls <= owner.hdr_end:
                continue
            ok = passes.get(owner.ls)
            if ok is None:
                ok = passes[owner.ls] = self._maybe_test(owner)
            if not ok:
                continue  # the ast walk does not look at this function's ifs
            mp = _IF_PREFIX.fullmatch(text, ls, p)
            if mp is None:
                continue
            if self.in_region(ls) or ls in self.cont:
                continue
            rs = raw.rstrip()
            if (
                "#" not in raw
                and "'" not in raw
                and '"' not in raw
                and rs.endswith(":")
                and not _depth(raw)
            ):
                t, hend = text[ls:le], le
            else:
                r = self.logical(ls)
                if r is None:
                    continue
                hend, t = r
                if not _has_cmp(t):
                    continue
            try:
                if ":" not in _toplevel(t):
                    continue  # an ``if`` of a comprehension or a conditional expression
            except _Slow:
                continue
            if not self._maybe_resolver(t, owner, hend):
                continue
            out.setdefault(owner.ls, []).append((ls, bool(mp.group(2)), hend, len(mp.group(1))))
        return out

    def _maybe_test(self, h: _Hdr) -> bool:
        """``"if " in seg and _MAYBE_TEST.search(seg)`` (the ast walk's test
        before it looks for resolvers; ``seg`` runs from the def line to the
        end of its last code line), with literal-led searches."""
        text = self.text
        a, _ = self.last_code(h.end)
        end = text.find("\n", a)
        if end < 0:
            end = self.n
        if text.find("if ", h.ls, end) < 0:
            return False
        if _MT_EQ.search(text, h.ls, end) or _MT_LT.search(text, h.ls, end):
            return True
        for m in _MT_IS.finditer(text, h.ls, end):
            i = m.start()
            if i == h.ls or not (text[i - 1].isalnum() or text[i - 1] == "_"):
                return True
        return False

    def _maybe_resolver(self, t: str, owner: _Hdr, hend: int) -> bool:
        """Whether an ``if`` (header text ``t``) compares an attribute of
        something other than the function's first argument with a sentinel,
        and that attribute is named again after the header (where the branch
        would assign it). A one-line ``if`` keeps its branch on the line."""
        if "getattr" in t or not t.rstrip().endswith(":"):
            return True
        try:
            self_name = self.first_arg(owner)
        except _Slow:
            return True
        for rx in (_FWD, _REV):
            for m in rx.finditer(t):
                obj = _OPERAND_JUNK.sub("", m.group(1))[:-1]
                if (obj == self_name or obj in ("self", "cls")) and obj.isascii():
                    continue
                if self.text.find(m.group(2), hend, owner.end) >= 0:
                    return True
        return False

    def resolvers(self, h: _Hdr, cands: list[tuple[int, bool, int, int]]) -> list[dict[str, Any]]:
        text = self.text
        self_name = self.first_arg(h)
        found: dict[tuple[int, int], tuple[list[int], list[dict[str, Any]]]] = {}
        for ls, is_elif, hend, j in cands:
            first = self.line(ls)
            if (first, j) in found:
                continue
            end = self.chain_end(hend, j, h.end)
            src = text[ls:end]
            if is_elif:
                src = src.replace("elif", "if  ", 1)
            node = self._compile(src, j, first)
            if not isinstance(node, ast.If):
                raise Fallback
            pos = _Pos(text[ls:end].split("\n"), first - 2, first)
            for sub in [node, *_stmts_no_nested(node)]:
                if isinstance(sub, ast.If):
                    key = (sub.lineno + pos.dl, sub.col_offset)
                    if key not in found:
                        found[key] = (pos.span(sub), if_resolvers(sub, self_name, pos))
        hits = [v for v in found.values() if v[1]]

        def cmp(x: tuple[list[int], Any], y: tuple[list[int], Any]) -> int:
            (a1, b1, c1, d1), (a2, b2, c2, d2) = x[0], y[0]
            if (a1, b1) <= (a2, b2) and (c2, d2) <= (c1, d1):
                return -1  # an enclosing ``if`` comes first
            if (a2, b2) <= (a1, b1) and (c1, d1) <= (c2, d2):
                return 1
            return -1 if (a1, b1) > (a2, b2) else 1  # then the later one

        out: list[dict[str, Any]] = []
        for _, res in sorted(hits, key=cmp_to_key(cmp)):
            out.extend(res)
        return out

    def chain_end(self, hend: int, j: int, limit: int) -> int:
        """Where an ``if`` (with its ``elif``/``else`` parts) ends."""
        text = self.text
        rx = _shallow(j)
        pos = hend
        while True:
            m = rx.search(text, pos, limit)
            if m is None:
                return limit
            ls = m.start() + 1
            pos = m.end()
            c = text[pos]
            if self.skippable(ls, c):
                continue
            if pos - ls == j and _ELSE.match(text[pos : pos + 5]):
                continue
            return ls

    def calls(self, h: _Hdr) -> list[str]:
        """``_calls`` of the block ``h`` with its decorators: qualified names
        of plain calls, ``.name`` of attribute calls."""
        try:
            return self._calls_text(h)
        except _Slow:
            node, _ = self.parse(h, decorators=True)
            return _calls(node, self.module, self.imports)

    def _calls_text(self, h: _Hdr) -> list[str]:
        raw = self.text[self.decorated_start(h) : h.end]
        b = blank(raw)
        if not b.isascii() or _case_line(b):
            raise _Slow  # (``case Cls(...):`` is a pattern, not a call)
        out: set[str] = set()
        self._calls_in(b, out)
        for q in sorted(m.start() for rx in _FSTRING_QUOTES for m in rx.finditer(b)):
            tok = _TOKEN.match(raw, q)
            if tok is None:
                raise _Slow
            t = tok.group()
            q = 3 if t[:3] in ('"""', "'''") else 1
            for expr in _fields(t[q:-q]):
                fb = blank(expr)
                if _FSTRING.search(fb):
                    raise _Slow
                self._calls_in(fb, out)
        return sorted(out)

    def _calls_in(self, b: str, out: set[str]) -> None:
        br: _Brackets | None = None
        # on the reversed text the pattern starts with a literal ``(``
        rev = b[::-1]
        last = len(b) - 1
        for ws, name, dot, dc in set(_RCALL.findall(rev)):
            if dc:
                continue  # ``def f(`` or ``class C(``
            name = name[::-1]
            if "\n" in ws.replace("\n\\", ""):
                # a name may end a statement and the next start with ``(``
                br = br or _Brackets(b)
                for m in _RCALL.finditer(rev):
                    if m.groups("") == (ws, name[::-1], dot, dc) and br.depth(last - m.start()) > 0:
                        break
                else:
                    continue
            if dot:
                out.add("." + name)
            elif not keyword.iskeyword(name):
                if name in ("match", "case"):
                    for m in _RCALL.finditer(rev):
                        if m.group(2) == name[::-1] and not m.group(3):
                            i = last - m.end(2) + 1
                            if not b[b.rfind("\n", 0, i) + 1 : i].strip():
                                raise _Slow  # a match statement or a call?
                out.add(qualify(name, self.module, self.imports))
        for m in _CALL_OF_GROUP.finditer(b):
            # ``(...)(`` calls what the group holds unless the group is
            # itself a call's or a subscript's
            br = br or _Brackets(b)
            if "\n" in m.group(1).replace("\\\n", "") and br.depth(m.start(1)) <= 0:
                continue
            k = br.opener.get(m.start(), -1)
            if k < 0:
                raise _Slow
            k -= 1
            while k >= 0 and b[k] in " \t\n\\":
                k -= 1
            if k >= 0 and b[k] in ")]":
                continue
            i = k
            while i >= 0 and (b[i].isalnum() or b[i] == "_"):
                i -= 1
            word = b[i + 1 : k + 1]
            if not word or word[0].isdigit() or keyword.iskeyword(word):
                raise _Slow

    def factory(self, h: _Hdr) -> list[str]:
        if h.oneliner or (
            _RETURN_UPPER.search(self.text, h.body_ls, h.end) and self._single_return(h)
        ):
            node, _ = self.parse(h)
            return _returned_classes(node, self.module, self.imports)
        hb = h.hb
        if "ype" not in hb or not _TYPE_ANN.search(hb):
            return []
        i = hb.rfind("->")
        if i < 0 or _depth(hb[:i]) != 0:
            return []
        colon = len(hb.rstrip()) - 1
        raw = self.text[h.ls + i + 2 : h.ls + colon]
        try:
            ann = ast.parse("(" + raw.strip() + "\n)", mode="eval").body
        except SyntaxError as exc:
            raise Fallback from exc
        return annotation_classes(ann, self.module, self.imports)

    def _single_return(self, h: _Hdr) -> bool:
        """Whether the body may be a lone ``return Name`` (after constants):
        then the def is parsed."""
        text = self.text
        pos, indent = h.body_ls, h.body_indent
        seen_return = False
        for _ in range(16):
            c = text[pos + indent]
            if c not in _MAYBE_FIRST:
                return False  # neither a constant nor a return
            le = text.find("\n", pos)
            if le < 0:
                le = self.n
            s = text[pos + indent : le]
            if ";" in s:
                return True  # statements on one line: let the ast decide
            if s.startswith("return") and (len(s) == 6 or not (s[6].isalnum() or s[6] == "_")):
                if seen_return:
                    return True
                m = _RETURN_NAME.fullmatch(s)
                e = le
                if m is None:
                    # ``return f(x)``, ``return self.x``... unless the value
                    # starts on the next line
                    rest = s[6:].strip(" \t(")
                    if rest and rest[0] != "#" and not s.rstrip().endswith("\\"):
                        return not s.isascii()
                    r = self.logical(pos)
                    if r is None:
                        return True
                    e = r[0]
                    v = r[1].strip()[6:].replace("\\\n", " ").strip(" \t\n()\\")
                    if not _DOTTED.fullmatch(v):
                        return False
                    name = v
                else:
                    name = m.group(1)
                if not name[:1].isupper() or name in ("None", "True", "False"):
                    return False
                seen_return = True
            elif not _MAYBE_CONST.match(s) or c == "(":
                return c == "("
            else:
                # a constant-looking statement (a docstring): where it ends
                k = bisect_left(self.rstarts, pos)
                if k < len(self.rstarts) and self.rstarts[k] < le:
                    e = text.find("\n", self.rends[k])
                    if e < 0:
                        e = self.n
                    tail = text[self.rends[k] : e].strip()
                    if tail and tail[0] != "#":
                        return True  # more than a string: let the ast decide
                else:
                    e = le
                    tail = (blank(s) if "#" in s else s).rstrip()
                    if not tail or not (tail[-1] in "'\"" or _SIMPLE_CONST.fullmatch(tail)):
                        return True
            m2 = _BODY.search(text, e)
            if m2 is None or m2.start() + 1 >= h.end or len(m2.group(1)) < indent:
                return seen_return
            if len(m2.group(1)) > indent or m2.group(2) in _ODD_WS or (e + 1) in self.cont:
                return True
            pos = m2.start() + 1
        return True

    # -- the module --------------------------------------------------------

    def run(self) -> Any:
        if _odd_lines(self.text) or "\x00" in self.text:
            raise Fallback
        self.strings()
        if not self.text.isascii() and self.non_ascii_code():
            raise Fallback  # an identifier the compiler normalises (NFKC)
        hdrs = self.hdrs = self.headers()
        self.hdr_starts = [h.ls for h in hdrs]
        self.imports = self.scan_imports(hdrs)
        self.cands = self.if_candidates(hdrs) if hdrs else {}
        facts = Facts(self.module, self.path, self.imports)
        for h in hdrs:
            if h.parent is None and h.visible:
                self.visit(h, "", None, facts)
        return facts.to_json()

    def non_ascii_code(self) -> bool:
        """Whether a character outside ASCII stands outside every string and
        comment: in an identifier (or in code that does not compile). The
        compiler reads identifiers in NFKC (``µ`` as ``μ``, ``ﬁ`` as ``fi``),
        and so does the ast walk, while this reader matches them as written."""
        text = self.text
        rstarts, rends = self.rstarts, self.rends
        pos = 0
        while True:
            m = _NON_ASCII.search(text, pos)
            if m is None:
                return False
            p = m.start()
            k = bisect_right(rstarts, p) - 1
            if k >= 0 and p < rends[k]:
                pos = rends[k]  # in a multi-line string
                continue
            ls = text.rfind("\n", 0, p) + 1
            e = self._token_end(max(ls, rends[k]) if k >= 0 else ls, p)
            if e < 0:
                return True
            pos = e

    def visit(self, h: _Hdr, prefix: str, owner: _Hdr | None, facts: Facts) -> None:
        qual = prefix + h.name
        if h.kind == "class":
            facts.classes[qual] = self.class_facts(h).to_json()
            for c in h.children:
                self.visit(c, qual + ".", h, facts)
            return
        cands = self.cands.get(h.ls)
        if cands:
            found = self.resolvers(h, cands)
            if found:
                scope = prefix[:-1] if owner is not None else qual
                key_hdr = owner if owner is not None else h
                facts.add_resolvers(found, qual, scope, lambda: self.calls(key_hdr))
        facts.add_factory(qual if owner is not None else h.name, self.factory(h))
        for c in h.children:
            self.visit(c, qual + ".", None, facts)


def _rstrip_cont(s: str) -> str:
    """``_TRAILING.sub("", s)``: trailing whitespace and backslashes removed
    (``str.rstrip`` and ``\\s`` agree on what is whitespace), without the
    pattern being tried at every position of ``s``."""
    s = s.rstrip()
    while s.endswith("\\"):
        s = s[:-1].rstrip()
    return s


def _case_line(b: str) -> bool:
    """Whether a line of ``b`` starts with the word ``case`` (after blanks):
    ``(?m)^[ \t]*case\b``, searched from the word."""
    for m in _CASE_WORD.finditer(b):
        p = m.start()
        ls = b.rfind("\n", 0, p) + 1
        if not b[ls:p].strip(" \t"):
            return True
    return False


def _odd_lines(text: str) -> bool:
    """Whether ``str.splitlines`` (which the ast walk's columns use) or the
    compiler would see line breaks other than ``\\n``."""
    if "\r" in text or "\x0c" in text:
        return True
    if text.isascii():
        return "\x0b" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text
    return any(ch in text for ch in "\x0b\x1c\x1d\x1e\x85\u2028\u2029")


def collect_text(text: str, module: str, path: str) -> Any:
    """The ``sentinels`` facts of one module, read from its text."""
    try:
        return _Reader(text, module, path).run()
    except Exception:  # noqa: BLE001 - Fallback, or a shape the reader did not expect
        return _whole_file(text, module, path)


def _whole_file(text: str, module: str, path: str) -> Any:
    """The ast walk over the whole file (None when it does not compile)."""
    try:
        tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return collect_ast(tree, text, module, path)
