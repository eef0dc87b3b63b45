"""Fact collector ``triton_kernels``: per module, the decorated functions whose
parameters a Triton kernel body needs to be a power of two (block shapes:
``tl.arange``, ``tl.zeros``, ``tl.full``, ``tl.reshape``, ``block_shape=``) or
to divide something (``tl.static_assert(X % P == 0)``), plus the module's
``from``-imports so that a launch can be followed through a package that
re-exports the kernel.

Read from the text (see "the text reader" below), compiling only the
kernels' signatures and the top-level ``from``-imports; the facts are those of
``_collect_ast`` on the whole file's ``ast`` (see the reader tests in
tests/test_block_size_min_divisibility.py, and a whole-tree comparison over vLLM 0.33.0 and SGLang 0.5.23). Known limit,
as for the sentinels reader: a file that does not compile may still get facts
when its error lies outside what the reader compiles.

Which decorators make a kernel is a rule option (``kernel-decorators``), and
collectors do not see rule options, so every decorated function with such a
parameter use is recorded together with its decorator names; the rule
filters.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from keyword import iskeyword, kwlist
from typing import Any, NamedTuple

from checks._helpers import ast_dotted
from checks._imports import is_package_path, resolve_relative
from checks._pyscan import LineCounter, _multiline_strings, blank
from linter.facts import FactCollector
from linter.needles import Needles

# Calls whose shape arguments Triton requires to be powers of two. ``arange``
# takes (start, end); the others take a shape (first positional or ``shape=``).
_SHAPE_CALLS = frozenset({"zeros", "full", "reshape", "broadcast_to"})
_SHAPE_ARG_INDEX = {"zeros": 0, "full": 0, "reshape": 1, "broadcast_to": 1}

# Prefilters. Both regexes start with a literal so that ``re.search`` can
# skip ahead (an alternation or a leading ``\b``/lookahead makes it try every
# offset, 20x slower over a whole tree).
# A kernel fact needs a ``tl.<shape op>(`` call in a module mentioning triton
# (``triton.language`` imported under another alias is not seen).
_OPS = r"arange|zeros|full|reshape|broadcast_to|static_assert|make_block_ptr"
_KERNEL_NEEDLE = r"tl\.(?:" + _OPS + r")\s*\("
# A re-exporting facade (a package ``__init__``): a top-level relative import,
# no top-level ``def``/``class`` after it, less than 16 kB after it. Larger
# modules that re-export are not followed: a missed finding, never a false
# one; parsing every module for them would cost more than it is worth.
# "No ``def``/``class``/``async`` line after it": the lines are walked with
# possessive loops (a tight loop per line, a keyword test per line start),
# not a lazy ``[\s\S]*?^(?:def|class|async)\s`` (a test at every character,
# the slower half of the needle); the same answer.
_TOP_KEYWORD = r"(?:def|class|async)\s"
_FACADE_NEEDLE = (
    r"from(?<=^from)[ \t]+\."
    r"(?![^\n]*+(?:\n(?!" + _TOP_KEYWORD + r")[^\n]*+)*+\n" + _TOP_KEYWORD + r")"
    r"(?![\s\S]{16385})"
)


def _tl_aliases(tree: ast.Module) -> set[str]:
    """Local names standing for ``triton.language`` (``tl`` by convention),
    from module-level imports (a full ``ast.walk`` would cost more than the
    rest of the collector)."""
    out = {"tl", "triton.language"}
    for st in _module_statements(tree.body):
        if isinstance(st, ast.Import):
            out |= {a.asname for a in st.names if a.name == "triton.language" and a.asname}
        elif isinstance(st, ast.ImportFrom) and st.module == "triton" and st.level == 0:
            out |= {a.asname or a.name for a in st.names if a.name == "language"}
    return out


def _shape_elements(node: ast.AST | None) -> list[ast.AST]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    return [node] if node is not None else []


def _call_needs(call: ast.Call, op: str) -> list[tuple[str, str]]:
    """(name, kind) pairs a Triton call imposes on bare names among its
    arguments; the caller keeps those that are kernel parameters."""
    out: list[tuple[str, str]] = []
    if op == "arange":
        # tl.arange(0, P) needs P to be a power of two; with a non-zero start
        # only the difference does, which a single name cannot show.
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        start = call.args[0] if call.args else kw.get("start")
        end = call.args[1] if len(call.args) > 1 else kw.get("end")
        if isinstance(start, ast.Constant) and start.value == 0 and isinstance(end, ast.Name):
            out.append((end.id, "pow2"))
    elif op == "static_assert":
        for sub in ast.walk(call.args[0]) if call.args else ():
            if (
                isinstance(sub, ast.BinOp)
                and isinstance(sub.op, ast.Mod)
                and isinstance(sub.right, ast.Name)
            ):
                out.append((sub.right.id, "div"))
    else:
        if op == "make_block_ptr":
            shape = next((k.value for k in call.keywords if k.arg == "block_shape"), None)
        else:
            idx = _SHAPE_ARG_INDEX[op]
            shape = call.args[idx] if len(call.args) > idx else None
            shape = next((k.value for k in call.keywords if k.arg == "shape"), shape)
        out += [(el.id, "pow2") for el in _shape_elements(shape) if isinstance(el, ast.Name)]
    return out


# ``tl.arange(`` and friends, with the head captured: walking every kernel's
# AST in Python costs more than the parse; finding the few calls by regex and
# parsing each call's text alone is several times cheaper.
_OP_CALL = re.compile(r"([A-Za-z_][\w.]*)\.(" + _OPS + r")\s*\(")
# The same calls with the head ``tl`` or ``triton.language``, led by a literal
# (``_OP_CALL`` starts with a class: ``re`` tries it at every offset).
_DEFAULT_TL = frozenset({"tl", "triton.language"})
_TL_CALL = re.compile(r"tl\.(?:" + _OPS + r")\s*\(")
_LANGUAGE_CALL = re.compile(r"language\.(?:" + _OPS + r")\s*\(")
_HEAD_CHAR = re.compile(r"[\w.]")


def _op_calls(text: str, tl: set[str] | frozenset[str]) -> list[re.Match[str]]:
    """The ``_OP_CALL.finditer(text)`` matches whose head is in ``tl``, in
    text order. With the default aliases, only the text around a literal
    ``tl.<op>(`` or ``language.<op>(`` is searched: a match ends at its
    ``(``, and starts at the first ASCII letter or ``_`` of the run of
    ``[\\w.]`` characters before the op (the leftmost start ``finditer``
    would try), which ``_OP_CALL.search`` from the run's start finds."""
    if tl != _DEFAULT_TL:
        return [m for m in _OP_CALL.finditer(text) if m.group(1) in tl]
    hits = [(m.start(), m.end()) for m in _TL_CALL.finditer(text)]
    if "language." in text:
        hits += [(m.start(), m.end()) for m in _LANGUAGE_CALL.finditer(text)]
        hits.sort()
    out = []
    for start, end in hits:
        r = start
        while r > 0 and _HEAD_CHAR.match(text, r - 1):
            r -= 1
        m = _OP_CALL.search(text, r, end)
        if m is not None and m.end() == end and m.group(1) in tl:
            out.append(m)
    return out


# The common call forms, read without ``ast.parse`` (``_fast_needs``): after
# the ``(`` of ``HEAD.op(``, on one line, only names, decimal integers and
# one ``dtype=`` keyword. Every text they match parses, to the needs read.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = _NAME + r"(?:\." + _NAME + r")*"
_ELT = r"(?:" + _NAME + r"|[1-9][0-9]*|0)(?![\w.])"
_SHAPE = (
    r"(?P<open>[\[(])[ \t]*(?P<elts>"
    + _ELT
    + r"(?:[ \t]*,[ \t]*"
    + _ELT
    + r")*)[ \t]*(?P<close>[\])])"
)
_FAST_ARGS = {
    "arange": re.compile(r"[ \t]*0[ \t]*,[ \t]*(?P<end>" + _NAME + r")[ \t]*\)"),
    "zeros": re.compile(
        r"[ \t]*" + _SHAPE + r"[ \t]*,[ \t]*dtype[ \t]*=[ \t]*(?P<d>" + _DOTTED + r")[ \t]*\)"
    ),
    "reshape": re.compile(r"[ \t]*(?P<d>" + _DOTTED + r")[ \t]*,[ \t]*" + _SHAPE + r"[ \t]*\)"),
}
_FAST_ARGS["broadcast_to"] = _FAST_ARGS["reshape"]
_ELT_SPLIT = re.compile(r"[ \t]*,[ \t]*")


def _fast_needs(text: str, m: re.Match[str]) -> tuple[list[tuple[str, str]], int] | None:
    """``_call_needs`` of the call ``m`` starts and the offset just past its
    ``)``, when its text has one of the ``_FAST_ARGS`` forms (``None``
    otherwise: ``ast.parse`` reads it). The forms hold no keyword (``None``,
    ``if``...) in a name, which would not parse or not be a ``Name``."""
    pat = _FAST_ARGS.get(m.group(2))
    if pat is None or text[m.end() - 2] != m.group(2)[-1]:
        return None  # whitespace before the ``(``: a newline would not parse
    f = pat.match(text, m.end())
    if f is None:
        return None
    if m.group(2) == "arange":
        name = f.group("end")
        return None if iskeyword(name) else ([(name, "pow2")], f.end())
    if any(iskeyword(w) for w in f.group("d").split(".")):
        return None
    if (f.group("open") == "[") != (f.group("close") == "]"):
        return None
    elts = _ELT_SPLIT.split(f.group("elts"))
    if any(iskeyword(e) for e in elts):
        return None
    return [(e, "pow2") for e in elts if not e[0].isdigit()], f.end()


def _balanced_end(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, min(len(text), open_at + 4000)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


class _Fn(NamedTuple):
    """What the facts need of a decorated module-level ``def``."""

    name: str
    line: int  # of the ``def`` keyword (``FunctionDef.lineno``)
    end_line: int  # ``FunctionDef.end_lineno``
    decorators: list[str]
    params: list[str]


def _fn_record(fn: ast.FunctionDef, end_line: int | None = None) -> _Fn:
    decorators = []
    for d in fn.decorator_list:
        name = ast_dotted(d.func if isinstance(d, ast.Call) else d)
        if name:
            decorators.append(name)
    end = (fn.end_lineno or fn.lineno) if end_line is None else end_line
    return _Fn(fn.name, fn.lineno, end, decorators, _params(fn))


def _kernel_facts(
    fns: list[_Fn],
    tl: set[str] | frozenset[str],
    text: str,
    calls: list[re.Match[str]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Facts of the decorated functions ``fns`` (sorted by line); ``calls``:
    ``_op_calls(text, tl)`` when known."""
    nl = text.count
    rfind = text.rfind
    last_off, last_line = 0, 1

    def pos(offset: int) -> tuple[int, int]:
        nonlocal last_off, last_line
        if offset >= last_off:
            last_line += nl("\n", last_off, offset)
        else:
            last_line -= nl("\n", offset, last_off)
        last_off = offset
        return last_line, offset - (rfind("\n", 0, offset) + 1)

    starts = [f.line for f in fns]
    needs: dict[int, dict[str, list[dict[str, Any]]]] = {}
    if calls is None:
        calls = _op_calls(text, tl)
    for m in calls:
        line, col = pos(m.start())
        i = bisect.bisect_right(starts, line) - 1
        if i < 0 or line > fns[i].end_line:
            continue
        if "#" in text[m.start() - col : m.start()]:
            continue  # most likely a comment
        params = fns[i].params
        fast = _fast_needs(text, m)
        if fast is not None:
            call_needs, end = fast
        else:
            end = _balanced_end(text, m.end() - 1)
            if end < 0:
                continue
            try:
                call = ast.parse(text[m.start() : end], mode="eval").body
            except SyntaxError:
                continue
            if not isinstance(call, ast.Call):
                continue
            call_needs = _call_needs(call, m.group(2))
        for name, kind in call_needs:
            if name not in params:
                continue
            lst = needs.setdefault(i, {}).setdefault(name, [])
            if not any(n["kind"] == kind for n in lst):
                end_line, end_col = pos(end)
                lst.append(
                    {"kind": kind, "op": f"tl.{m.group(2)}", "span": [line, col, end_line, end_col]}
                )
    out: dict[str, dict[str, Any]] = {}
    for i, fn_needs in needs.items():
        fn = fns[i]
        out[fn.name] = {
            "line": fn.line,
            "decorators": list(fn.decorators),
            "params": list(fn.params),
            "needs": fn_needs,
        }
    return out


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]


def _module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, also under ``if``/``try`` (kernels and
    imports guarded by "is Triton available")."""
    out: list[ast.stmt] = []
    stack = list(body)
    while stack:
        st = stack.pop()
        out.append(st)
        if isinstance(st, ast.If):
            stack.extend(st.body + st.orelse)
        elif isinstance(st, ast.Try):
            stack.extend(st.body + st.orelse + st.finalbody)
            for h in st.handlers:
                stack.extend(h.body)
    return out


def _top_level_functions(body: list[ast.stmt]) -> list[ast.FunctionDef]:
    return [st for st in _module_statements(body) if isinstance(st, ast.FunctionDef)]


def _from_imports(tree: ast.Module, module: str, path: str) -> dict[str, str]:
    """Top-level ``from X import Y [as Z]`` only: re-exports look like that."""
    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for st in tree.body:
        if isinstance(st, ast.ImportFrom):
            base = resolve_relative(module, pkg, st.level, st.module)
            for a in st.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


# -- the text reader -------------------------------------------------------------
#
# Compiling a whole kernel module only to find its decorated ``def``s cost
# more than the rest of the collector (most of the 300-odd modules the needle
# admits in vLLM are compiled for nothing else). The reader finds the module's
# top-level statements on the text instead and compiles only what the facts
# come from: each decorated ``def`` holding a Triton call (its decorators and
# signature; the body's extent is read from the text), and each top-level
# statement holding a ``from``-import. Anything else it cannot read with
# certainty sends the whole file to ``ast`` (``_Fallback``).

_ALIAS = re.compile(r"language[\s\\]+as[\s\\]+(\w+)")
_FROM_TRITON = re.compile(r"from[\s\\]+triton[\s\\]+import")
# a line start at column 0 that can begin a statement (``blank`` made
# comments spaces; a closing bracket continues one)
_COL0 = re.compile(r"\n[^\s)\]}]")
_WORD0 = re.compile(r"@|[^\W\d]\w*")
_FROM_WORD = re.compile(r"from(?!\w)")
_COL0_FIRST = re.compile(r"[^\s)\]}]")
_BRACKETS = re.compile(r"[()\[\]{}:]")
_CONTINUATION = re.compile(r"\\[ \t]*\n")
# statements a ``from``-import inside cannot make top-level (``tree.body``)
_COMPOUND = frozenset(
    {
        "@",
        "def",
        "class",
        "async",
        "if",
        "elif",
        "else",
        "for",
        "while",
        "try",
        "except",
        "finally",
        "with",
    }
)
_CLAUSES = frozenset({"else", "elif", "except", "finally"})


class _Fallback(Exception):
    """The text reader gives up: the whole-file ``ast`` decides."""


def _parse(text: str, start: int, end: int, line: int, tail: str = "") -> ast.Module:
    """The statements ``text[start:end] + tail`` (from column 0 of line
    ``line``), with their true line numbers."""
    try:
        return compile(
            "\n" * (line - 1) + text[start:end] + tail,
            "<chunk>",
            "exec",
            ast.PyCF_ONLY_AST,
            dont_inherit=True,
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _Fallback from exc


# (the reader blanks with ``checks._pyscan.blank``)
_blank = blank


def _statement_starts(blanked: str, text: str) -> list[int]:
    """Offsets of the lines that start a module-level statement: column 0,
    not inside a string, a bracket or after a backslash continuation."""
    spans = None
    out = [0] if _COL0_FIRST.match(blanked) else []
    out += [m.start() + 1 for m in _COL0.finditer(blanked)]
    starts: list[int] = []
    depth, prev = 0, 0
    # the lines after one ending with a backslash (blanks after it)
    continued = {m.end() for m in _CONTINUATION.finditer(blanked)} if "\\" in blanked else ()
    # one opening and one closing character to count (``[{`` as ``(``...)
    count = blanked.replace("[", "(").replace("{", "(").replace("]", ")").replace("}", ")").count
    for p in out:
        depth += count("(", prev, p) - count(")", prev, p)
        prev = p
        if depth < 0:
            raise _Fallback
        if depth:
            continue
        if blanked[p] in "'\"":
            # ``blank`` keeps the quotes: the closing line of a string?
            if spans is None:
                spans = _multiline_strings(text)
                span_starts = [a for a, _ in spans]
            i = bisect.bisect_right(span_starts, p) - 1
            if i >= 0 and spans[i][0] < p < spans[i][1]:
                continue
        if p in continued:
            continue
        starts.append(p)
    return starts


def _header_end(blanked: str, def_at: int) -> int:
    """Offset just past the ``:`` that ends the ``def`` header at ``def_at``."""
    depth = 0
    for m in _BRACKETS.finditer(blanked, blanked.find("(", def_at)):
        ch = m.group()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            return m.end()
    raise _Fallback


# A decorated ``def`` whose decorators and signature a regex reads
# (``_fast_def``): one ``@a.b`` per line, then ``def name(`` and parameters
# ``x``, ``x: a.b``, ``x=-1``, ``x: a.b = c.d`` (ASCII names, no string,
# comment or backslash), an optional ``-> a.b``, the ``:``.
_WS = r"[ \t\n]*"
_INT = r"(?:[1-9][0-9]*|0)(?![\w.])"
_PARAM_RE = re.compile(
    f"(?P<name>{_NAME})(?:{_WS}:{_WS}(?P<ann>{_DOTTED}))?"
    f"(?:{_WS}={_WS}(?P<default>-?{_INT}|{_DOTTED}))?"
)
_PARAM_ANY = f"{_NAME}(?:{_WS}:{_WS}{_DOTTED})?(?:{_WS}={_WS}(?:-?{_INT}|{_DOTTED}))?"
_FAST_DEF = re.compile(
    f"(?P<decos>(?:@{_DOTTED}[ \\t]*\\n)+)def[ \\t]+(?P<fn>{_NAME})[ \\t]*\\("
    f"(?P<params>{_WS}(?:{_PARAM_ANY}(?:{_WS},{_WS}{_PARAM_ANY})*(?:{_WS},)?{_WS})?)"
    f"\\)[ \\t]*(?:->[ \\t]*(?P<ret>{_DOTTED})[ \\t]*)?:"
)
_DECO_RE = re.compile(r"@(" + _DOTTED + r")")
# (name, default) of each parameter, in order
_PARAM_PAIRS = re.compile(f"({_NAME})(?:{_WS}:{_WS}{_DOTTED})?(?:{_WS}={_WS}(-?{_INT}|{_DOTTED}))?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(kwlist)
_CONSTANTS = frozenset({"None", "True", "False"})


def _dotted_ok(s: str, constant: bool) -> bool:
    """``s`` (``a.b.c``) parses as a name chain, or as a constant if allowed."""
    if constant and s in _CONSTANTS:
        return True
    return not any(iskeyword(w) for w in s.split("."))


def _fast_def(text: str, p: int, d: int, colon: int) -> tuple[str, list[str], list[str]] | None:
    """(name, decorators, parameters) of the decorated ``def`` ``text[p:colon]``
    (``def`` at ``d``) when ``_FAST_DEF`` reads it whole: what compiling it
    gives (``_fn_record``); ``None`` otherwise."""
    if text.find("(", p, d) >= 0:
        return None  # a decorator call: compiled
    m = _FAST_DEF.fullmatch(text, p, colon)
    if m is None or m.end("decos") != d or iskeyword(m.group("fn")):
        return None
    decos = m.group("decos")
    if _KEYWORDS.intersection(_WORD.findall(decos)):
        return None  # ``@None``: not a name chain
    ret = m.group("ret")
    if ret is not None and not _dotted_ok(ret, True):
        return None
    params_text = m.group("params")
    pairs = _PARAM_PAIRS.findall(params_text)
    flags = [bool(default) for _, default in pairs]
    if flags != sorted(flags):
        return None  # non-default argument follows default argument
    if _KEYWORDS.intersection(_WORD.findall(params_text)):
        # ``None``/``True``/``False`` are fine as a whole annotation or
        # default value; any other keyword is not
        for pm in _PARAM_RE.finditer(params_text):
            name, ann, default = pm.group("name", "ann", "default")
            if iskeyword(name) or (ann is not None and not _dotted_ok(ann, True)):
                return None
            if default is not None and default[0] != "-" and not _dotted_ok(default, True):
                return None
    return m.group("fn"), _DECO_RE.findall(decos), [name for name, _ in pairs]


def _decorated_def(text: str, blanked: str, p: int, d: int, end: int, line_of: LineCounter) -> _Fn:
    """The ``def`` at ``d`` decorated from ``p``, a statement ending before
    ``end``: its decorators and signature read by ``_fast_def`` or compiled
    alone (the body made ``pass``), its last line read from the text."""
    colon = _header_end(blanked, d)
    fast = _fast_def(text, p, d, colon)
    if fast is None:
        tree = _parse(text, p, colon, line_of(p), " pass\n")
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
            raise _Fallback
    last = blanked[d:end].rstrip(" \t\n")
    if last.endswith("\\"):
        raise _Fallback
    if fast is None:
        return _fn_record(tree.body[0], line_of(d + len(last)))
    name, decorators, params = fast
    line = line_of(d)
    return _Fn(name, line, line_of(d + len(last)), decorators, params)


class _Statements(NamedTuple):
    """The module's top-level statements as the reader finds them."""

    blanked: str
    starts: list[int]  # offsets of the lines that start a statement
    heads: list[str]  # the first word of each (``@`` for a decorator)
    stmt_at: list[int]  # index into ``starts`` of each statement's first line
    stmt_pos: list[int]  # the offset of each statement
    line_of: LineCounter


def _statements(text: str) -> _Statements:
    if "\r" in text or "\f" in text or "\0" in text or "\ufeff" in text:
        raise _Fallback  # line breaks or indentation the reader does not model
    blanked = _blank(text)
    starts = _statement_starts(blanked, text)
    # statements: a decorator's or an ``if``'s start with those that continue it
    words = [_WORD0.match(blanked, p) for p in starts]
    heads = [w.group() if w else "" for w in words]
    stmt_at: list[int] = []
    for k, head in enumerate(heads):
        if k and (head in _CLAUSES or heads[k - 1] == "@"):
            continue
        stmt_at.append(k)
    return _Statements(blanked, starts, heads, stmt_at, [starts[k] for k in stmt_at], LineCounter(text))


def _imports_text(text: str, st: _Statements, module: str, path: str) -> dict[str, str]:
    """``_from_imports`` of the module from its text: the top-level
    statements holding a ``from`` (not in a compound one) compiled alone."""
    stmt_pos, blanked = st.stmt_pos, st.blanked
    imports_at: list[int] = []
    for m in _FROM_WORD.finditer(blanked):
        a = m.start()
        if a and _HEAD_CHAR.match(blanked, a - 1):
            continue  # ``data_from``
        j = bisect.bisect_right(stmt_pos, a) - 1
        if (
            j >= 0
            and st.heads[st.stmt_at[j]] not in _COMPOUND
            and (not imports_at or imports_at[-1] != j)
        ):
            imports_at.append(j)
    body: list[ast.stmt] = []
    for j in imports_at:
        p = stmt_pos[j]
        end = stmt_pos[j + 1] if j + 1 < len(stmt_pos) else len(text)
        fast = _fast_from(blanked, p, end)
        if fast is not None:
            body.append(fast)
            continue
        body += [
            s for s in _parse(text, p, end, st.line_of(p)).body if isinstance(s, ast.ImportFrom)
        ]
    return _from_imports(ast.Module(body=body, type_ignores=[]), module, path)


# A statement that is one ``from``-import a regex reads (``_fast_from``):
# ``from .a.b import c, d as e`` or with the names in brackets (over lines,
# a trailing comma), then only blank lines or comments (``blank`` made them
# spaces); ASCII names, no ``*``, no backslash.
_IMPORTED = f"{_NAME}(?:[ \\t]+as[ \\t]+{_NAME})?"
_IMPORTED_NL = f"{_NAME}(?:{_WS}[ \\t\\n]as[ \\t\\n]{_WS}{_NAME})?"
_FAST_FROM = re.compile(
    f"from[ \\t]+(?P<dots>\\.*)(?P<mod>{_DOTTED})?[ \\t]+import[ \\t]*(?:"
    f"(?<=[ \\t])(?P<names>{_IMPORTED}(?:[ \\t]*,[ \\t]*{_IMPORTED})*)"
    f"|\\({_WS}(?P<bnames>{_IMPORTED_NL}(?:{_WS},{_WS}{_IMPORTED_NL})*)(?:{_WS},)?{_WS}\\)"
    f")[ \\t]*(?:\\n[ \\t\\n]*)?"
)
_ALIAS_RE = re.compile(f"({_NAME})(?:[ \\t\\n]+as[ \\t\\n]+({_NAME}))?")


def _fast_from(blanked: str, p: int, end: int) -> ast.ImportFrom | None:
    """The ``ImportFrom`` that compiling the statement ``[p, end)`` gives,
    when ``_FAST_FROM`` reads it whole; ``None`` otherwise."""
    m = _FAST_FROM.fullmatch(blanked, p, end)
    if m is None:
        return None
    dots, mod, names = m.group("dots", "mod", "names")
    if mod is None and not dots:
        return None
    if names is None:
        names = m.group("bnames")
    pairs = _ALIAS_RE.findall(names)
    words = [w for pair in pairs for w in pair if w]
    if mod is not None:
        if mod == "__future__":
            return None
        words += mod.split(".")
    if _KEYWORDS.intersection(words):
        return None
    return ast.ImportFrom(
        module=mod,
        names=[ast.alias(name=n, asname=a or None) for n, a in pairs],
        level=len(dots),
    )


def facade_facts(text: str, module: str, path: str) -> dict[str, str] | None:
    """The ``facade_imports`` facts of a text: its top-level ``from``-imports
    read by the text reader, or from the whole file's ``ast`` when the reader
    is unsure (``None`` then for a file that does not compile)."""
    return _text_else_ast(
        text,
        path,
        lambda: _imports_text(text, _statements(text), module, path) or None,
        lambda tree: _from_imports(tree, module, path) or None,
    )


def _text_else_ast(
    text: str, path: str, read: Callable[[], Any], from_ast: Callable[[ast.Module], Any]
) -> Any:
    """``read()`` (a text reader), or ``from_ast`` on the whole file's
    ``ast`` when the reader raises ``_Fallback``; None for a file that does
    not compile then."""
    try:
        return read()
    except _Fallback:
        pass
    try:
        tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return from_ast(tree)


def _collect_text(text: str, module: str, path: str) -> Any:
    """``TritonKernels.collect`` from the text (``_Fallback`` when unsure)."""
    if any(m.group(1) != "tl" for m in _ALIAS.finditer(text)) or _FROM_TRITON.search(text):
        raise _Fallback  # ``triton.language`` under another name
    st = _statements(text)
    blanked, starts, heads, stmt_at, stmt_pos, line_of = st
    n = len(text)

    def stmt_of(offset: int) -> int:
        return bisect.bisect_right(stmt_pos, offset) - 1

    def stmt_end(j: int) -> int:
        return stmt_pos[j + 1] if j + 1 < len(stmt_pos) else n

    imports = _imports_text(text, st, module, path)
    # kernels: the decorated ``def``s around a Triton call
    fns: list[_Fn] = []
    seen: set[int] = set()
    calls = _op_calls(text, _DEFAULT_TL)
    for m in calls:
        j = stmt_of(m.start())
        if j < 0 or j in seen:
            continue
        seen.add(j)
        k = stmt_at[j]
        head = heads[k]
        if head in ("def", "class", "async"):
            continue  # undecorated, or not a ``FunctionDef``
        p, end = stmt_pos[j], stmt_end(j)
        if head == "@":
            k += 1
            while k < len(starts) and heads[k] == "@":
                k += 1
            if k == len(starts) or starts[k] >= end:
                raise _Fallback
            if heads[k] != "def":
                continue  # a class or an ``async def``
            fns.append(_decorated_def(text, blanked, p, starts[k], end, line_of))
        else:
            tree = _parse(text, p, end, line_of(p))
            fns += [_fn_record(f) for f in _top_level_functions(tree.body) if f.decorator_list]
    fns.sort(key=lambda f: f.line)
    kernels = _kernel_facts(fns, _DEFAULT_TL, text, calls) if fns else {}
    if not kernels and not imports:
        return None
    return {"path": path, "kernels": kernels, "imports": imports}


def _collect_ast(tree: ast.Module, text: str, module: str, path: str) -> Any:
    """The facts from the whole file's ``ast`` (the reference)."""
    imports = _from_imports(tree, module, path)
    tl = _tl_aliases(tree)
    fns = sorted(
        (_fn_record(f) for f in _top_level_functions(tree.body) if f.decorator_list),
        key=lambda f: f.line,
    )
    kernels = _kernel_facts(fns, tl, text) if fns else {}
    if not kernels and not imports:
        return None
    return {"path": path, "kernels": kernels, "imports": imports}


def collect_facts(text: str, module: str, path: str) -> Any:
    """The ``triton_kernels`` facts of a text: read from the text, or from
    the whole file's ``ast`` when the reader is unsure; ``None`` for a file
    that does not compile then."""
    return _text_else_ast(
        text,
        path,
        lambda: _collect_text(text, module, path),
        lambda tree: _collect_ast(tree, text, module, path),
    )


class TritonKernels(FactCollector):
    """Kernels and their parameter needs, plus the module's ``from``-imports
    (a kernel module may re-export another's kernel). Read from the text
    (``collect_facts``); same facts as ``_collect_ast`` on the file's ``ast``
    for a file that compiles."""

    name = "triton_kernels"
    version = 2  # 2: lazy (facts no longer in the cache)
    needles = Needles(all_of=("triton",), regex=_KERNEL_NEEDLE)
    needs_ast = False
    # SHD101 looks kernels up by qualified name (a launch's callee, followed
    # through re-exports): read per module on demand, not by the scan
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module | None, text: str, module: str, path: str) -> Any:
        return collect_facts(text, module, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> KernelIndex:
        return KernelIndex(_Kernels(per_module), _Imports(per_module))


class FacadeImports(FactCollector):
    """``from``-imports of small import-only modules (package ``__init__``
    files), through which a kernel can be re-exported. Read from the text by
    the kernels' reader (``facade_facts``): the same facts as
    ``_from_imports`` on the file's ``ast`` for a file that compiles."""

    name = "facade_imports"
    version = 2  # 2: lazy (facts no longer in the cache)
    needles = Needles(regex=_FACADE_NEEDLE)
    needs_ast = False
    lazy = True  # (looked up per module, while following a re-export)

    @classmethod
    def collect(cls, tree: ast.Module | None, text: str, module: str, path: str) -> Any:
        return facade_facts(text, module, path)


@dataclass(frozen=True)
class Need:
    kind: str  # "pow2" or "div"
    op: str  # the Triton call that imposes it
    span: tuple[int, int, int, int]


@dataclass(frozen=True)
class KernelFacts:
    path: str
    line: int
    decorators: tuple[str, ...]
    params: tuple[str, ...]
    needs: Mapping[str, tuple[Need, ...]]

    @staticmethod
    def from_json(d: Mapping[str, Any], path: str) -> KernelFacts:
        return KernelFacts(
            path=path,
            line=int(d.get("line", 1)),
            decorators=tuple(d.get("decorators", ())),
            params=tuple(d.get("params", ())),
            needs={
                p: tuple(Need(n["kind"], n["op"], tuple(n["span"])) for n in lst)  # type: ignore[arg-type]
                for p, lst in d.get("needs", {}).items()
            },
        )


class _Kernels(Mapping[str, KernelFacts]):
    """Kernels by qualified name, looked up in the module that may define
    them (the facts are lazy: nothing iterates every module, and every
    lookup goes through the per-module mapping, which records it)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._m = per_module

    def _find(self, qualname: object) -> KernelFacts | None:
        if not isinstance(qualname, str):
            return None
        parts = qualname.split(".")
        for i in range(len(parts) - 1, -1, -1):
            data = self._m.get(".".join(parts[:i]))
            k = data.get("kernels", {}).get(".".join(parts[i:])) if data else None
            if k is not None:
                return KernelFacts.from_json(k, data.get("path", ""))
        return None

    def get(self, qualname: str, default: Any = None) -> Any:  # type: ignore[override]
        k = self._find(qualname)
        return default if k is None else k

    def __getitem__(self, qualname: str) -> KernelFacts:
        k = self._find(qualname)
        if k is None:
            raise KeyError(qualname)
        return k

    def __contains__(self, qualname: object) -> bool:
        return self._find(qualname) is not None

    def __iter__(self) -> Iterator[str]:
        # (reads every module: for tests and tools, not for rules)
        for mod, data in self._m.items():
            for name in (data or {}).get("kernels", {}):
                yield f"{mod}.{name}" if mod else name

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Imports(Mapping[str, Mapping[str, str]]):
    """A kernel module's ``from``-imports, per module (lazy as ``_Kernels``)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._m = per_module

    def get(self, module: str, default: Any = None) -> Any:  # type: ignore[override]
        data = self._m.get(module)
        return data.get("imports", {}) if data else default

    def __getitem__(self, module: str) -> Mapping[str, str]:
        got = self.get(module)
        if got is None:
            raise KeyError(module)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._m)

    def __len__(self) -> int:
        return len(self._m)


@dataclass
class KernelIndex:
    kernels: Mapping[str, KernelFacts] = field(default_factory=dict)
    imports: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def collect_text(text: str, module: str, path: str) -> dict[str, KernelFacts]:
    """The kernels of one text, outside the project facts (the file under
    check when facts were not collected for it)."""
    # the needles first: most launching files define no kernel themselves,
    # and the text was already parsed once for this check
    if not TritonKernels.needles.match(text):
        return {}
    data = collect_facts(text, module, path) or {}
    prefix = f"{module}." if module else ""
    return {
        f"{prefix}{n}": KernelFacts.from_json(f, path) for n, f in data.get("kernels", {}).items()
    }
