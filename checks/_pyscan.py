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
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# comments and strings (string prefixes stay outside the match: harmless).
# Starting every branch with a literal character keeps the scan fast.
_TOKEN = re.compile(
    "|".join(
        (
            r"#[^\n]*",
            r"'''(?:[^'\\]|\\.|'(?!''))*'''",
            r'"""(?:[^"\\]|\\.|"(?!""))*"""',
            r"'(?:[^'\\\n]|\\.)*'",
            r'"(?:[^"\\\n]|\\.)*"',
        )
    ),
    re.S,
)
_NOT_NL = re.compile(r"[^\n]")


def _blank_token(m: re.Match[str]) -> str:
    s = m.group(0)
    if s[0] == "#":
        return " " * len(s)
    q = 3 if len(s) >= 6 and s[:3] in ("'''", '"""') else 1
    inner = s[q:-q]
    body = _NOT_NL.sub(" ", inner) if "\n" in inner else " " * len(inner)
    return s[:q] + body + s[-q:]


def blank(text: str) -> str:
    """``text`` with the insides of strings and comments replaced by spaces
    (newlines and every position kept), so that keywords in them are not
    mistaken for code. The quotes stay, so a string is still visibly a value."""
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
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def _lineno(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def _balanced(text: str, open_at: int) -> int:
    """Index just past the parenthesis closing the one at ``open_at``."""
    depth = 0
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _split_top(s: str) -> Iterator[str]:
    depth, start = 0, 0
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            yield s[start:i]
            start = i + 1
    yield s[start:]


def _base(expr: str) -> str | None:
    e = " ".join(expr.split())
    if not e or "=" in e.split("[")[0]:
        return None  # metaclass=..., keyword arguments
    if "[" in e:
        e = e.split("[", 1)[0].strip()  # Generic[T] -> Generic
    e = e.replace(" ", "")
    return e if _DOTTED.match(e) else None


def _literal(src: str, raw: str) -> tuple[bool, Any]:
    """A class attribute's value: (True, value) for a literal, else (False,
    the source's first line)."""
    v = raw.strip()
    if v and (v[0].isdigit() or v[0] in "-+'\"(" or v in ("True", "False", "None") or v[:2] in ("b'", 'b"')):
        try:
            val = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False, v
        if val is None or isinstance(val, (bool, int, float, str)):
            return True, val
    return False, v


def scan_imports(blanked: str, text: str) -> list[tuple[int, str | None, str, str | None]]:
    """Imports as (level, module, name, asname); ``import a.b as c`` gives
    (0, None, "a.b", "c"). Nested imports included, in source order."""
    out: list[tuple[int, int, str | None, str, str | None]] = []
    for m in _IMPORT.finditer(blanked):
        body = m.group(1)
        if body.rstrip().endswith("\\"):
            body = body.rstrip("\\ \t")
        for part in body.split(","):
            bits = part.split()
            if not bits:
                continue
            name = bits[0]
            asname = bits[2] if len(bits) >= 3 and bits[1] == "as" else None
            out.append((m.start(), 0, None, name, asname))
    for m in _FROM.finditer(blanked):
        level = len(m.group(1))
        mod = m.group(2) or None
        names = m.group(3)
        if names.startswith("("):
            names = names[1:-1] if names.endswith(")") else names[1:]
        names = names.replace("\\", " ")
        for part in names.split(","):
            bits = part.split()
            if not bits or bits[0] == "*":
                continue
            asname = bits[2] if len(bits) >= 3 and bits[1] == "as" else None
            out.append((m.start(), level, mod, bits[0], asname))
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


def _assignment_eq(blanked: str, start: int) -> int:
    """Offset of the ``=`` of ``name = v`` / ``name: Ann[...] = v`` starting at
    ``start`` (the ``:`` or ``=`` after the name), or -1 when the statement is
    not an assignment (``name: Ann`` alone, ``==``, augmented assignment)."""
    if blanked.startswith("==", start):
        return -1
    if blanked[start] == "=":
        return start
    depth = 0
    for i in range(start + 1, min(len(blanked), start + 5000)):
        ch = blanked[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n" and depth <= 0:
            return -1
        elif ch == "=" and depth == 0:
            nxt = blanked[i + 1 : i + 2]
            prev = blanked[i - 1]
            if nxt == "=" or prev in "=!<>":
                return -1
            return i
    return -1


def _expr_end(blanked: str, start: int) -> int:
    """End offset of an expression starting at ``start`` that spans lines
    inside brackets."""
    depth = 0
    for i in range(start, min(len(blanked), start + 20000)):
        ch = blanked[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n" and depth <= 0:
            return i
    return start


def _unbalanced(s: str) -> bool:
    return sum(s.count(c) for c in "([{") != sum(s.count(c) for c in ")]}")


def imports_from_text(blanked: str, text: str, module: str, path: str) -> dict[str, str]:
    """Local name → qualified name, like ``checks._imports.imports_from_ast``."""
    from checks._imports import is_package_path, resolve_relative

    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for level, mod, name, asname in scan_imports(blanked, text):
        if mod is None and level == 0:
            if asname:
                out[asname] = name
            else:
                head = name.split(".")[0]
                out[head] = head
        else:
            base = resolve_relative(module, pkg, level, mod)
            out[asname or name] = f"{base}.{name}" if base else name
    return out


def class_facts_from_text(text: str, module: str, path: str) -> dict[str, Any] | None:
    """The "classes" collector's per-module data (see ``checks._classes``),
    read from the text alone."""
    from checks._imports import is_package_path, qualify

    blanked = blank(text)
    imports = imports_from_text(blanked, text, module, path)
    classes: dict[str, Any] = {}
    for c in scan_classes(blanked, text):
        classes[c.name] = {
            "line": c.line,
            "col": c.col,
            "end_line": c.line,
            "end_col": c.col + len(c.name.rsplit(".", 1)[-1]),
            "bases": [qualify(b, module, imports) for b in c.bases],
            "attrs": c.attrs,
            "methods": sorted(set(c.methods)),
        }
    if not classes and not (imports and is_package_path(path)):
        return None
    return {"path": path, "imports": imports, "classes": classes}
