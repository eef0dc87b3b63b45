"""SHD101 block-size-min-divisibility: ``B = min(X, C)`` used as a block that
must divide ``X`` or be a power of two."""

from __future__ import annotations

import ast
import bisect
import fnmatch
import itertools
import keyword
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from checks._helpers import (
    ast_dotted,
    ast_fields,
    ast_nodes_no_nested,
    call_name,
    dotted,
    function_params,
    int_literal,
    memo_last_text,
    walk,
    walk_no_nested,
)
from checks._imports import (
    _import_nodes,
    follow_reexports,
    imports_from_cst,
    is_package_path,
    qualify,
    resolve_relative,
)
from checks._kernels import KernelFacts, KernelIndex, Need, TritonKernels, collect_text
from checks._pyscan import blank
from checks._textfunctions import code_function_regions, regions_at, skeleton_to, top_level_regions
from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.rule import Option, PendingFix, Rule
from linter.types import Applicability, Fixability, Note, Severity, Span

# Ceiling-division helpers: a grid computed with them covers the tail, so an
# ``X // B`` count next to one is remainder-aware code, not an assumption.
_CDIV_NAMES = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up", "round_up", "triton.cdiv"})
_MAX_DEPTH = 12
# Always power-of-two calls, whatever the option says (see its doc).
_BUILTIN_POW2 = ("triton.next_power_of_2", "next_power_of_2", "next_power_of_two")

# Integer folding shared by the rule (libcst) and its ast replay.
_AST_OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.LShift: "<<",
    ast.Pow: "**",
}
# by libcst class name: the scan imports this module without loading libcst
_CST_OPS = {
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "FloorDivide": "//",
    "LeftShift": "<<",
    "Power": "**",
}


def _fold(op: str | None, a: int, b: int) -> int | None:
    """``a op b`` for the operators block-size arithmetic uses, None for any
    other (or a result too big to be a size)."""
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "//" and b:
            return a // b
        if op == "<<" and 0 <= b < 64:
            return a << b
        if op == "**" and 0 <= b < 64:
            return a**b
    except (ValueError, OverflowError):
        return None
    return None



# -- prefilter ------------------------------------------------------------------
#
# Three gates, each a superset of what the rule reports: ``candidate`` (regex
# only), ``candidate_tree`` (the rule's analysis replayed on the CPython
# ``ast`` the engine builds once per file and shares) and ``candidate_facts``
# (the replay's open questions, answered under the options and the project's
# kernel facts). The regex gate reads the file, then each function where a
# ``min(`` stands in code (``_function_gate``: the rule analyses a ``min(``
# in its innermost function, so its binding and its consumer meet there).

# Whatever may sit between two tokens of one expression: whitespace, a
# backslash continuation, a comment (inside brackets). ``_PGAP`` also lets
# opening parentheses through (``B = (min(``, ``n % (B)``). The alternatives
# start with different characters and a comment runs to its newline, so the
# repetition cannot backtrack badly.
_GAP = r"(?:\s|\\\n|#[^\n]*\n)*"
_PGAP = r"(?:[\s(]|\\\n|#[^\n]*\n)*"
# ``_CGAP``, between a callee and its call's ``(``, also lets closing
# parentheses through: ``(min)(``, ``(range)(``, ``(kernel[grid])(`` are calls
# of ``min``, ``range`` and a subscript for the rule as for ``ast``.
_CGAP = r"(?:[\s)]|\\\n|#[^\n]*\n)*"
# ``B = min(``, ``B: int = (min(``, ``(B := min(``, ``BLOCK=min(`` (a launch
# keyword): every shape this rule reports starts with one of these.
_MIN_BINDING = re.compile(r"=" + _PGAP + r"min" + _CGAP + r"\(")
# Every consumer needs one of: ``%`` (an assert; a ``static_assert`` is in the
# kernel file but the launch is here), ``//``, ``range(``, or a launch
# ``kernel[grid](``.
_CONSUMER_HINT = re.compile(r"%|//|range" + _CGAP + r"\(|\]" + _CGAP + r"\(")
# ``kernel[grid](`` and ``range(``: consumers whose arguments hold the block
# (each starts with a literal, so that ``re`` can skip ahead)
_LAUNCH_OPEN = re.compile(r"\]" + _CGAP + r"\(")
_RANGE_OPEN = re.compile(r"range" + _CGAP + r"\(")
_MIN_CALL = r"(?<![\w.])min" + _CGAP + r"\("
# ``_MIN_CALL`` less its lookbehind, checked by hand (``_min_calls``): led by
# a literal, ``re`` skips ahead to each ``min``
_MIN_OPEN = re.compile(r"min" + _CGAP + r"\(")
_WORD_CHAR = re.compile(r"[\w.]")
# a name that may be a binding target: followed (past closing parentheses)
# by ``=``, ``:=`` or an annotation's ``:``, not an attribute
_TARGET = re.compile(r"(?<![\w.])([^\W\d]\w*)(?=(?:[\s)]|\\\n|#[^\n]*\n)*[:=])")
# a name used as a bare value: not called, subscripted or an attribute's base
_BARE = r"(?!\w)(?!" + _GAP + r"[(.\[])"
# a name that is a whole right-hand side (``tile = BLOCK``, ``(t := BLOCK)``):
# the statement, or the parenthesised expression, ends after it
_ALONE = r"(?=[ \t]*(?:\\\n[ \t]*)*(?:[\n;)#]|$))"
# what the bracket scan stops at: brackets, comments, string quotes
_SCAN_STOP = re.compile(r"[()\[\]{}#'\"]")


def _args_text(text: str, start: int) -> str:
    """The text from the bracket at ``start`` to the one closing it, skipping
    strings and comments; the whole rest when it never closes."""
    depth = 0
    i = start
    n = len(text)
    while True:
        m = _SCAN_STOP.search(text, i)
        if m is None:
            return text[start:]
        i = m.start()
        ch = text[i]
        if ch in "([{":
            depth += 1
            i += 1
        elif ch in ")]}":
            depth -= 1
            i += 1
            if depth == 0:
                return text[start:i]
        elif ch == "#":
            j = text.find("\n", i)
            if j < 0:
                return text[start:]
            i = j
        else:
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            k = i + len(quote)
            while True:
                k = text.find(quote, k)
                if k < 0:
                    return text[start:]
                b = k
                while b > i and text[b - 1] == "\\":
                    b -= 1
                if (k - b) % 2 == 0:
                    break
                k += 1
            i = k + len(quote)
            if i >= n:
                return text[start:]


def _assigned_before(text: str, pos: int) -> set[str]:
    """The names of the statement text before the ``=`` at ``pos`` that may be
    targets: a superset of the targets of ``a = b = min(``, ``x: int =
    min(``, ``(x) = min(``, ``(x := min(``. The statement starts on an earlier line
    when the previous line ends with a backslash or when the text holds more
    closing than opening brackets."""
    start = text.rfind("\n", 0, pos) + 1
    for _ in range(50):
        if start == 0:
            break
        seg = text[start:pos]
        prev_start = text.rfind("\n", 0, start - 1) + 1
        continued = text[prev_start : start - 1].rstrip().endswith("\\")
        opened = seg.count("(") + seg.count("[") + seg.count("{")
        closed = seg.count(")") + seg.count("]") + seg.count("}")
        if not continued and closed <= opened:
            break
        start = prev_start
    return set(_TARGET.findall(text[start : pos + 1]))


# The name-dependent searches of ``_text_may_fire``. The names are few (those
# bound to ``min(``, and their aliases), so each is searched for literally and
# what must precede it (``=`` or ``%``/``/``, then a ``_PGAP``) is checked
# backwards from there (``_gap_leads``), rather than trying a lookahead at
# every ``=``, ``%`` and ``/`` of the text: the same (name, lead) pairs as
# the lookaheads ``=(?=_PGAP NAME _ALONE)`` and
# ``[%/](?=_PGAP (?<![\w.]) NAME _BARE)`` tried at every position.
_NAME = r"([^\W\d]\w*)"
_LAUNCH_ARG = re.compile(r"[(,=](?=" + _PGAP + _NAME + _GAP + r"[,)])")
_RANGE_ARG = re.compile(r"[,=*](?=" + _PGAP + _NAME + _GAP + r"[,)])")
_MIN_CALL_RE = re.compile(_MIN_CALL)
_ALONE_RE = re.compile(_ALONE)
# after ``:=`` the walrus may also end at a comma or a closing bracket
# (``f(t := BLOCK, x)``, ``[t := BLOCK]``): the name is still its whole value
_WALRUS_ALONE_RE = re.compile(r"[ \t]*(?:\\\n[ \t]*)*(?:[\n;,)\]}#]|$)")
_BARE_RE = re.compile(_BARE)
_PGAP_CHAR = re.compile(r"[\s(]")
_NAME_END = r"(?!\w)"


def _word_re(name: str) -> re.Pattern[str]:
    """``name`` as a whole word right after a character that may end a
    ``_PGAP`` or be a lead (whitespace, ``(``, ``=``, ``%``, ``/``): every
    place the lookaheads of ``_name_uses`` can capture it. Led by the
    literal (the lookbehind after it), so that ``re`` skips ahead."""
    pat = _WORD_RES.get(name)
    if pat is None:
        if len(_WORD_RES) > 4096:
            _WORD_RES.clear()
        esc = re.escape(name)
        pat = _WORD_RES[name] = re.compile(esc + _NAME_END + r"(?<=[=%/(\s]" + esc + ")")
    return pat


_WORD_RES: dict[str, re.Pattern[str]] = {}


def _gap_leads(text: str, end: int) -> list[int]:
    """The offsets ``p`` such that ``text[p + 1 : end]`` is a whole ``_PGAP``
    (whitespace and ``(``, backslash continuations, comments each running to
    its newline) that ``text[p]`` cannot extend (not whitespace or ``(``):
    where a lead (``=``, ``%``, ``/``) before the gap may stand. Walking back
    from ``end``, a newline may close a comment opened at any ``#`` of its
    line."""
    k = end
    while k and text[k - 1] in " \t(":
        k -= 1
    if not k:
        return []
    if text[k - 1] != "\n" and not _PGAP_CHAR.match(text, k - 1):
        return [k - 1]  # the common case: no line break in the gap
    out: list[int] = []
    todo = [k]
    seen: set[int] = set()
    while todo:
        j = todo.pop()
        if j in seen or not j:
            continue
        seen.add(j)
        if _PGAP_CHAR.match(text, j - 1):
            todo.append(j - 1)
        else:
            out.append(j - 1)
        if text[j - 1] == "\n":
            if j >= 2 and text[j - 2] == "\\":
                todo.append(j - 2)
            line = text.rfind("\n", 0, j - 1) + 1
            h = text.find("#", line, j - 1)
            while h >= 0:
                todo.append(h)
                h = text.find("#", h + 1, j - 1)
    return out


def _leads_before(text: str, i: int, leads: str) -> list[int]:
    """The offsets of the ``leads`` characters that ``_gap_leads(text, i)``
    gives, short-cutting the common case: a gap without comments, made of
    spaces, tabs, ``(``, line breaks and backslash continuations, has one
    character before it."""
    k = i
    while k:
        c = text[k - 1]
        if c in " \t(":
            k -= 1
        elif c == "\n":
            if text.find("#", text.rfind("\n", 0, k - 1) + 1, k - 1) >= 0:
                break  # the line before may end with a comment
            k -= 1
        elif c == "\\" and k < i and text[k] == "\n":
            k -= 1
        else:
            if c in leads:
                return [k - 1]
            if not _PGAP_CHAR.match(text, k - 1):
                return []
            break  # other whitespace
    else:
        return []
    return [p for p in _gap_leads(text, i) if text[p] in leads]


def _name_uses(text: str, name: str) -> tuple[bool, list[int]]:
    """Whether ``name`` follows ``%`` or ``/`` as a bare value (where
    the lookahead ``[%/](?=_PGAP (?<![\\w.]) NAME _BARE)``, matches with
    ``name``) and, if not, the ``=`` signs whose whole right-hand side it is
    (``tile = BLOCK``, ``t: int = (BLOCK)``, ``(t := BLOCK)``: where
    the lookahead ``=(?=_PGAP NAME _ALONE)``, matches with ``name``; after
    ``:=`` also before a comma or a closing bracket)."""
    aliases: list[int] = []
    for m in _word_re(name).finditer(text):
        i = m.start()
        leads = _leads_before(text, i, "=%/")
        if not leads:
            continue
        e = m.end()
        eqs = []
        for p in leads:
            if text[p] == "=":
                eqs.append(p)
            elif _BARE_RE.match(text, e) is not None:
                return True, []
        if eqs:
            alone = _ALONE_RE.match(text, e) is not None
            if alone or _WALRUS_ALONE_RE.match(text, e) is not None:
                aliases += [p for p in eqs if alone or (p and text[p - 1] == ":")]
    return False, aliases


_KEYWORDS = frozenset(keyword.kwlist)


def _offset_in_args(text: str, open_at: int) -> bool:
    """The call whose ``(`` is at ``open_at`` surely holds a binary ``+`` or
    ``-`` among its arguments (``min(off + B, n)``), which makes it no site
    (``_has_offset_arith``): an operator after a closing bracket or quote,
    an identifier that is not a keyword, or a plain decimal integer. Strings
    and comments are blanked first; anything else (a unary sign, ``1e-5``,
    ``x.e - 1``) proves nothing."""
    args = blank(_args_text(text, open_at))
    for m in _SIGN.finditer(args):
        i = m.start() - 1
        while i >= 0 and args[i] in " \t\n\\":
            i -= 1
        if i < 0:
            continue
        ch = args[i]
        if ch in ")]}'\"":
            return True
        j = i + 1
        while j and _W.match(args, j - 1):
            j -= 1
        if j > i:
            continue  # after an operator, ``(``, ``,``, ``=``, ``:``: a sign
        word = args[j : i + 1]
        if j and args[j - 1] == ".":
            continue  # an attribute, or the fraction of a float
        if word[0].isdigit():
            if word.replace("_", "").isdigit() and word.isascii():
                return True
            continue
        if word not in _KEYWORDS:
            return True
    return False


_SIGN = re.compile(r"[+-]")
_W = re.compile(r"\w")


def _text_may_fire(text: str, bindings: list[tuple[int, int]] | None = None) -> bool:
    """A regex superset of the rule's structure: a name bound to ``min(``
    (or to such a name: ``tile = BLOCK``) follows ``%`` or ``/``, or appears
    in the arguments of a ``range(...)`` or of a launch ``k[grid](...)``, as
    a bare name (not called, subscripted or an attribute's base); or a launch
    has a ``min(`` argument. A ``min(`` whose arguments surely add or
    subtract binds no block."""
    if bindings is None:
        bindings = _min_bindings(text)
    names: set[str] = set()
    args_ok: dict[int, bool] = {}
    for eq, open_at in bindings:
        ok = args_ok.get(open_at)
        if ok is None:
            ok = args_ok[open_at] = not _offset_in_args(text, open_at)
        if ok:
            names |= _assigned_before(text, eq)
    names.discard("min")
    # ``tile = BLOCK``: the names bound to a member, to a fixpoint (each
    # name asked about once: whether it is divided by, whose alias it is)
    fresh = set(names)
    while fresh:
        found: set[str] = set()
        for name in fresh:
            divided, aliases = _name_uses(text, name)
            if divided:
                return True
            for at in aliases:
                found |= _assigned_before(text, at)
        fresh = found - names
        names |= found
    # ``range(.., .., B)``: the block is a later argument; in a launch it is
    # any argument (by position or keyword): after ``(``, ``,`` or ``=`` and
    # before ``,`` or ``)``
    for m in _LAUNCH_OPEN.finditer(text):
        args = _args_text(text, m.end() - 1)
        if "min" in args and _MIN_CALL_RE.search(args) is not None:
            return True
        if names and any(a.group(1) in names for a in _LAUNCH_ARG.finditer(args)):
            return True
    if not names:
        return False
    # the rule reads the third argument as written, so also ``step=B`` and
    # ``*B`` (which ``range`` itself would refuse)
    for m in _RANGE_OPEN.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "._"):
            continue  # ``tl.range(``, ``arange(``: not the builtin
        args = _args_text(text, m.end() - 1)
        if any(a.group(1) in names for a in _RANGE_ARG.finditer(args)):
            return True
    return False


def _consumer_hint(text: str) -> bool:
    """``_CONSUMER_HINT.search(text)``, its literal branches asked first."""
    return (
        "%" in text
        or "//" in text
        or _RANGE_OPEN.search(text) is not None
        or _LAUNCH_OPEN.search(text) is not None
    )


def _min_bindings(text: str) -> list[tuple[int, int]]:
    """(``=``, ``(``) offsets of every ``_MIN_BINDING`` match, found from the
    few ``min(`` backwards (``=`` is everywhere): for each ``min`` followed
    by ``_CGAP`` and ``(`` (overlapping ones too), every ``=`` before it
    across a ``_PGAP``. A superset of ``_MIN_BINDING.finditer``, which skips
    the matches starting inside another's comment."""
    out: list[tuple[int, int]] = []
    search = _MIN_OPEN.search
    m = search(text)
    while m is not None:
        at = m.start()
        if at:
            out += [(p, m.end() - 1) for p in _gap_leads(text, at) if text[p] == "="]
        m = search(text, at + 1)
    return out


# the last text asked about and the answer: the rule's text gate and the
# ``block_min_sites`` collector ask in turn about the same text
_TEXT_GATE_MEMO: list[object] = [None, False]


# (``re`` finds a three-letter word about twice as fast as ``in`` here)
_HAS_MIN = re.compile("min").search


def _text_gate(text: str) -> bool:
    if _TEXT_GATE_MEMO[0] is text:
        return bool(_TEXT_GATE_MEMO[1])
    hit = False
    if _HAS_MIN(text):
        bindings = _min_bindings(text)
        hit = (
            bool(bindings)
            and _consumer_hint(text)
            and _text_may_fire(text, bindings)
            and _function_gate(text)
        )
    _TEXT_GATE_MEMO[:] = [text, hit]
    return hit


def _function_gate(text: str) -> bool:
    """The test of ``_may_leave_anything`` asked of each function's text, on
    the functions delimited by ``checks._textfunctions`` (from the `def`
    line to the end of the body: a superset of the function's own lines).
    The rule analyses a ``min(`` in the innermost function around it (a
    class body never; the module's scope whole): a ``min(`` in code outside
    every function, or text the skeleton cannot read, leaves the file-wide
    test to decide; a file whose every ``min(`` is in a string or a comment
    has no site."""
    got = _functions_passing(text)
    if got is None:
        return True
    passing, outside = got
    return outside or bool(passing)


@memo_last_text
def _functions_passing(text: str) -> tuple[list[tuple[int, int]], bool] | None:
    """The spans of the functions holding a ``min(`` in code whose text
    passes the test, and whether a ``min(`` in code stands outside every
    function; None where the functions cannot be delimited. (The text gate
    and the scope of one text share the answer.)"""
    got = code_function_regions(text, [m.start() for m in _MIN_OPEN.finditer(text)])
    if got is None:
        return None
    code, regions = got
    covered = set()
    passing: list[tuple[int, int]] = []
    for a, b in regions:
        i, j = bisect.bisect_left(code, a), bisect.bisect_left(code, b)
        if i == j:
            continue
        covered.update(range(i, j))
        span = text[a:b]
        bindings = _min_bindings(span)
        if bindings and _consumer_hint(span) and _text_may_fire(span, bindings):
            passing.append((a, b))
    return passing, len(covered) < len(code)


# -- what the ast gate reads ---------------------------------------------------
# The replay (below) analyses the innermost function around each ``min(``
# whose text may leave anything (``_may_leave_anything``, the test the text
# gate asks of each function's text) and the module's own statements when a
# ``min(`` stands there; it reads the module's top-level bindings, the
# module's functions a call it evaluates names (``_fn_pow2``: a function
# whose every ``return`` is a power of two), and every import
# (``_qualified``). A class body is never analysed. So the gate reads the
# top-level statements that hold such a function or an ``import``, every
# statement that is not a definition, and the functions called by name in
# what it reads (and so on): the other lines are blanked before the file is
# compiled (the engine's scopes, ``Rule.ast_scope``). The check parses the
# whole file (its fix may add an import).
_DEF_HEAD = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)").match


def _holds_word(sk: str, word: str, a: int, b: int) -> bool:
    """Whether ``sk[a:b]`` holds ``word`` as a whole word."""
    n = len(word)
    i = sk.find(word, a, b)
    while i >= 0:
        before = sk[i - 1] if i else " "
        after = sk[i + n : i + n + 1]
        if not (before.isalnum() or before == "_" or before == ".") and not (after.isalnum() or after == "_"):
            return True
        i = sk.find(word, i + 1, b)
    return False


def _holds_call(sk: str, name: str, a: int, b: int) -> bool:
    """Whether ``sk[a:b]`` calls ``name`` as a bare name: the whole word
    (not an attribute) followed by ``(`` past blanks and backslashes."""
    n = len(name)
    i = sk.find(name, a, b)
    while i >= 0:
        before = sk[i - 1] if i else " "
        j = i + n
        if not (before.isalnum() or before == "_" or before == ".") and not (
            j < len(sk) and (sk[j].isalnum() or sk[j] == "_")
        ):
            while j < b and sk[j] in " \t\n\\":
                j += 1
            if j < b and sk[j] == "(":
                return True
        i = sk.find(name, i + 1, b)
    return False


def _head_line(sk: str, a: int, b: int) -> str:
    """The first line of ``sk[a:b]`` with code in column 0 that is not a
    decorator's (nor a closing bracket's): the statement's own ("" if none)."""
    i = a
    while i < b:
        e = sk.find("\n", i, b)
        e = b if e < 0 else e
        c = sk[i : i + 1]
        if c and not c.isspace() and c not in ")]}@":
            return sk[i:e]
        i = e + 1
    return ""


def _scope(text: str) -> list[tuple[int, int]] | None:
    """The top-level regions the ast gate reads (None: all, where
    functions or statements cannot be delimited)."""
    got = _functions_passing(text)
    if got is None:
        return None
    regions = top_level_regions(text)
    if regions is None:
        return None
    # (the regions were told on this skeleton: its strings and comments blank)
    sk = skeleton_to(text, len(text))
    keep = regions_at(regions, (a for a, _ in got[0]))
    defs: dict[int, str] = {}  # the functions not read yet, by region
    for k, (a, b) in enumerate(regions):
        if k in keep:
            continue
        if _holds_word(sk, "import", a, b):
            keep.add(k)
            continue
        head = _head_line(sk, a, b)
        m = _DEF_HEAD(head)
        if m is not None:
            defs[k] = m.group(1)
        elif not (head.startswith("class") and not (head[5:6].isalnum() or head[5:6] == "_")):
            keep.add(k)  # a statement of the module's own (a binding, a block)
    # the module's functions called by name in what is read (``_fn_pow2``
    # evaluates only those), until none is added
    read = "\n".join(sk[a:b] for k, (a, b) in enumerate(regions) if k in keep)
    while defs:
        named = [k for k, name in defs.items() if _holds_call(read, name, 0, len(read))]
        if not named:
            break
        for k in named:
            keep.add(k)
            read += "\n" + sk[regions[k][0] : regions[k][1]]
            del defs[k]
    return [regions[k] for k in sorted(keep)]


# -- the ast gate: the rule's analysis replayed on ``ast`` ---------------------------
#
# ``_replay`` runs what ``_analyse`` does (sites, repairs, pins, host
# consumers, guards) on CPython's ``ast``, with the built-in power-of-two
# functions only. What it cannot settle without options and project facts it
# keeps as open questions (``_Replay``): the calls whose power-of-two-ness the
# ``power-of-two-functions`` option could change, and the kernel launches a
# block reaches. ``candidate_tree`` passes a file with any finding or open
# question; the ``block_min_sites`` collector stores them and
# ``candidate_facts`` answers them under the effective options. Each helper
# below names the libcst code it mirrors; they must decide alike.


class _Unsure(Exception):
    """The replay cannot tell what the rule decides (code equality that
    depends on parentheses ``ast`` does not keep): the scope is kept."""


_A_OTHER = object()  # ``_OTHER``: a binding that is not ``name = expr``
_A_KNOB = object()  # ``_KNOB``: a knob parameter's incoming value
_SCOPE_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


class _Source:
    """The text around ``ast`` nodes: what ``_code`` would print for a node,
    and which blocks libcst holds as a one-line suite (``if c: x = 1``)."""

    def __init__(self, text: str) -> None:
        # the tokenizer's lines (``str.splitlines`` also breaks at \f, \v, ...)
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._enc: dict[int, bytes] = {}

    def line(self, lineno: int) -> bytes:
        b = self._enc.get(lineno)
        if b is None:
            b = (
                self.lines[lineno - 1].encode("utf-8", "surrogatepass")
                if lineno <= len(self.lines)
                else b""
            )
            self._enc[lineno] = b
        return b

    def inline_suite(self, body: list[ast.stmt]) -> bool:
        """The block follows its header on the same line (libcst's
        ``SimpleStatementSuite``)."""
        st = body[0]
        return bool(self.line(st.lineno)[: st.col_offset].strip())

    def _parens_before(self, lineno: int, col: int) -> int | None:
        """How many ``(`` immediately precede the position (``None``: a
        comment may sit in between)."""
        n = 0
        b = self.line(lineno)[:col]
        while True:
            s = b.rstrip(b" \t\f")
            while s.endswith((b"(", b"\\")):
                n += s.endswith(b"(")
                s = s[:-1].rstrip(b" \t\f")
            if s:
                return n
            lineno -= 1
            if lineno < 1:
                return n
            b = self.line(lineno)
            if b"#" in b:
                return None

    def _parens_after(self, lineno: int, col: int) -> int | None:
        """How many ``)`` immediately follow the position."""
        n = 0
        b = self.line(lineno)[col:]
        while True:
            s = b.lstrip(b" \t\f")
            while s.startswith(b")"):
                n += 1
                s = s[1:].lstrip(b" \t\f")
            if s.startswith(b"#"):
                return None
            if s and s != b"\\":
                return n
            lineno += 1
            if lineno > len(self.lines):
                return n
            b = self.line(lineno)

    def code(self, node: ast.expr, sole_arg: bool = False) -> str | None:
        """``_code`` of the libcst node for ``node`` (its text, whitespace
        runs made one space), or ``None`` when the node may carry its own
        parentheses, which libcst prints and ``ast`` drops. ``sole_arg``: the
        node is a call's only, positional argument (one pair of parentheses
        around it is the call's)."""
        if (
            isinstance(node, ast.GeneratorExp)
            or node.end_lineno is None
            or node.end_col_offset is None
        ):
            return None
        before = self._parens_before(node.lineno, node.col_offset)
        after = self._parens_after(node.end_lineno, node.end_col_offset)
        if before is None or after is None or min(before, after) > (1 if sole_arg else 0):
            return None
        if node.lineno == node.end_lineno:
            seg = self.line(node.lineno)[node.col_offset : node.end_col_offset]
        else:
            parts = [self.line(node.lineno)[node.col_offset :]]
            parts += [self.line(i) for i in range(node.lineno + 1, node.end_lineno)]
            parts.append(self.line(node.end_lineno)[: node.end_col_offset])
            seg = b"\n".join(parts)
        return " ".join(seg.decode("utf-8", "surrogatepass").split())


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False)


def _same_code(src: _Source, a: ast.expr, b: ast.expr) -> bool:
    """``_code(a) == _code(b)``: different trees never print alike; equal
    trees print alike unless spacing, comments or parentheses differ."""
    if _dump(a) != _dump(b):
        return False
    ca, cb = src.code(a), src.code(b)
    if ca is None or cb is None:
        raise _Unsure
    return ca == cb


def _a_bind(out: dict[str, list[object]], target: ast.AST, value: object) -> None:
    """``_bind``."""
    if isinstance(target, ast.Name):
        out.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for el in target.elts:
            _a_bind(out, el, _A_OTHER)
    elif isinstance(target, ast.Starred):
        _a_bind(out, target.value, _A_OTHER)


def _a_bind_assignment(out: dict[str, list[object]], st: ast.AST) -> bool:
    """Record what an assignment statement binds; False for anything else."""
    if isinstance(st, ast.Assign):
        for t in st.targets:
            _a_bind(out, t, st.value)
    elif isinstance(st, ast.AnnAssign) and st.value is not None:
        _a_bind(out, st.target, st.value)
    elif isinstance(st, ast.AugAssign):
        _a_bind(out, st.target, _A_OTHER)
    else:
        return False
    return True


def _a_top_level_bindings(tree: ast.Module, src: _Source) -> dict[str, list[object]]:
    """``_top_level_bindings``: the module body and the blocks of top-level
    ``if``/``try`` (not ``try*``), except one-line suites, which it skips."""
    out: dict[str, list[object]] = {}
    stack: list[list[ast.stmt]] = [tree.body]
    while stack:
        body = stack.pop()
        if not body or (body is not tree.body and src.inline_suite(body)):
            continue
        for st in body:
            if _a_bind_assignment(out, st):
                continue
            if isinstance(st, ast.If):
                # an ``elif`` is a one-statement block whose ``If`` starts its
                # line (at the keyword): never taken for a one-line suite
                stack += [st.body, st.orelse]
            elif isinstance(st, ast.Try):
                stack += [st.body, *(h.body for h in st.handlers), st.orelse, st.finalbody]
    return out


def _a_raise_only(body: list[ast.stmt]) -> bool:
    """``_raise_only``: one logical line (statements joined by ``;``) that
    raises."""
    for prev, st in itertools.pairwise(body):
        if st.lineno != prev.end_lineno:
            return False
    return not any(isinstance(st, _COMPOUND) for st in body) and any(
        isinstance(st, ast.Raise) for st in body
    )


def _a_int_literal(node: ast.AST | None) -> int | None:
    """``int_literal``."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _a_int_literal(node.operand)
        return -v if v is not None else None
    return None


def _a_upper_name(e: ast.AST) -> bool:
    """``_upper_name``."""
    name = ast_dotted(e)
    if not name:
        return False
    leaf = name.rsplit(".", 1)[-1]
    return leaf.isupper() and any(ch.isalpha() for ch in leaf)


def _a_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """``function_params``."""
    a = fn.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return frozenset(names)


def _a_knobs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """``_knobs``."""
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    out = set()
    for p, d in pairs:
        v = _a_int_literal(d)
        if (v is not None and _is_pow2(v)) or (v is None and _a_upper_name(d)):
            out.add(p.arg)
    return frozenset(out)


def _is_call_to(e: object, name: str) -> bool:
    """``call_name(e) == name`` for a one-word name."""
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == name


def _scope_start(st: ast.stmt) -> int:
    """The first line of a statement; a definition starts at its first
    decorator, which belongs to its scope for the rule's traversal."""
    decorators = getattr(st, "decorator_list", None)
    return min([st.lineno, *(d.lineno for d in decorators)]) if decorators else st.lineno


def _innermost_scope(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function or class whose lines hold ``line`` (the module
    if none): there a call on that line belongs for the rule. Descends only
    into statements spanning the line; statements of two scopes never share
    a line."""
    found: ast.AST = tree
    body: list[ast.stmt] = tree.body
    while True:
        nxt: list[ast.stmt] = []
        for st in body:
            if _scope_start(st) <= line <= (st.end_lineno or st.lineno):
                if isinstance(st, (*_SCOPE_DEFS, ast.ClassDef)):
                    found = st
                for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    sub = getattr(st, field_name, None)
                    if isinstance(sub, list):
                        for x in sub:
                            if isinstance(x, (ast.ExceptHandler, ast.match_case)):
                                nxt.extend(x.body)
                            elif isinstance(x, ast.stmt):
                                nxt.append(x)
                break
        if not nxt:
            return found
        body = nxt


@dataclass
class _AScope:
    """``_Scope``, gathered the way the rule's traversal gathers it:
    decorators, defaults and annotations belong to the function; lambdas and
    comprehensions to the enclosing function; ``where`` as ``self._where``."""

    node: ast.AST
    params: frozenset[str] = frozenset()
    knobs: frozenset[str] = frozenset()
    bindings: dict[str, list[object]] = field(default_factory=dict)
    pins: list[tuple[ast.Compare, bool]] = field(default_factory=list)
    has_min: bool = False
    ops: list[tuple[ast.BinOp, str]] = field(default_factory=list)
    cdiv_calls: list[ast.Call] = field(default_factory=list)
    launches: list[ast.Call] = field(default_factory=list)
    loops: list[ast.For | ast.AsyncFor] = field(default_factory=list)
    pow2_checks: list[ast.AST] = field(default_factory=list)


# per node type, the fields that may hold nodes, less the operator and
# context leaves (``Load``, ``Add``, ``Eq``): half of all nodes, none of
# them of interest
_CHILD_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without operator and context leaves (the
    node-holding fields of :func:`ast_fields`, less ``op``/``ops``)."""
    cls = type(node)
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(
            (f, nones) for f, nones in ast_fields(cls) if f not in ("op", "ops")
        )
    out: list[ast.AST] = []
    for f, nones in fields:
        v = getattr(node, f, None)
        if type(v) is list:
            out += [x for x in v if x is not None] if nones else v
        elif v is not None:
            out.append(v)
    return out


# ``_a_scope``'s dispatch on the exact node type (``ast`` node classes have no
# subclasses): 0, absent, is "nothing to record, walk the children"
_K_SKIP, _K_LEAF, _K_ASSIGN, _K_ANN, _K_AUG, _K_WALRUS, _K_FOR = 1, 2, 3, 4, 5, 6, 7
_K_COMP, _K_WITH, _K_COMPARE, _K_BINOP, _K_CALL, _K_ASSERT, _K_IF, _K_TEST = (
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
)
_KIND: dict[type, int] = {
    ast.FunctionDef: _K_SKIP,
    ast.AsyncFunctionDef: _K_SKIP,
    ast.ClassDef: _K_SKIP,
    # no child nodes (``ctx`` aside) and nothing to record
    ast.Name: _K_LEAF,
    ast.Constant: _K_LEAF,
    ast.Assign: _K_ASSIGN,
    ast.AnnAssign: _K_ANN,
    ast.AugAssign: _K_AUG,
    ast.NamedExpr: _K_WALRUS,
    ast.For: _K_FOR,
    ast.AsyncFor: _K_FOR,
    ast.comprehension: _K_COMP,
    ast.withitem: _K_WITH,
    ast.Compare: _K_COMPARE,
    ast.BinOp: _K_BINOP,
    ast.Call: _K_CALL,
    ast.Assert: _K_ASSERT,
    ast.If: _K_IF,
    ast.While: _K_TEST,
    ast.IfExp: _K_TEST,
}


def _a_scope(node: ast.AST) -> _AScope:
    """One scope's own nodes (not those of nested functions and classes),
    with an explicit stack: deep expression trees must not hit the
    recursion limit."""
    scope = _AScope(node)
    if isinstance(node, _SCOPE_DEFS):
        scope.params, scope.knobs = _a_params(node), _a_knobs(node)
    binds = scope.bindings
    children = _children
    kind_of = _KIND.get
    stack: list[tuple[ast.AST, str]] = [(c, "") for c in children(node)]
    pop = stack.pop
    while stack:
        n, where = pop()
        k = kind_of(type(n), 0)
        if k == 0:
            stack += [(c, where) for c in children(n)]
            continue
        if k <= _K_LEAF:
            continue
        if k == _K_ASSIGN:
            for t in n.targets:  # type: ignore[attr-defined]
                _a_bind(binds, t, n.value)  # type: ignore[attr-defined]
        elif k == _K_ANN:
            if n.value is not None:  # type: ignore[attr-defined]
                _a_bind(binds, n.target, n.value)  # type: ignore[attr-defined]
        elif k == _K_AUG:
            _a_bind(binds, n.target, _A_OTHER)  # type: ignore[attr-defined]
        elif k == _K_WALRUS:
            _a_bind(binds, n.target, n.value)  # type: ignore[attr-defined]
        elif k == _K_FOR:
            _a_bind(binds, n.target, _A_OTHER)  # type: ignore[attr-defined]
            it = n.iter  # type: ignore[attr-defined]
            if (
                isinstance(it, ast.Call)
                and _is_call_to(it, "range")
                and len(it.args) + len(it.keywords) == 3
            ):
                scope.loops.append(n)  # type: ignore[arg-type]
        elif k == _K_COMP:
            _a_bind(binds, n.target, _A_OTHER)  # type: ignore[attr-defined]
        elif k == _K_WITH:
            if n.optional_vars is not None:  # type: ignore[attr-defined]
                _a_bind(binds, n.optional_vars, _A_OTHER)  # type: ignore[attr-defined]
        elif k == _K_COMPARE:
            if where in ("check", "raise"):
                scope.pins.append((n, where == "check"))  # type: ignore[arg-type]
        elif k == _K_BINOP:
            op = n.op  # type: ignore[attr-defined]
            if isinstance(op, (ast.Mod, ast.FloorDiv)) and isinstance(n.right, ast.Name):  # type: ignore[attr-defined]
                scope.ops.append((n, where))  # type: ignore[arg-type]
            elif isinstance(op, ast.BitAnd) and where:
                scope.pow2_checks.append(n)
        elif k == _K_CALL:
            func = n.func  # type: ignore[attr-defined]
            name = ast_dotted(func)
            if name == "min":
                scope.has_min = True
            elif isinstance(func, ast.Subscript):
                scope.launches.append(n)  # type: ignore[arg-type]
            elif _matches(name, _CDIV_NAMES):
                scope.cdiv_calls.append(n)  # type: ignore[arg-type]
            elif name and where and "pow" in name.lower():
                scope.pow2_checks.append(n)
        elif k == _K_ASSERT:
            stack.append((n.test, "check"))  # type: ignore[attr-defined]
            if n.msg is not None:  # type: ignore[attr-defined]
                stack.append((n.msg, where))  # type: ignore[attr-defined]
            continue
        elif k == _K_IF:
            stack.append((n.test, "raise" if _a_raise_only(n.body) else "test"))  # type: ignore[attr-defined]
            stack += [(c, where) for c in (*n.body, *n.orelse)]  # type: ignore[attr-defined]
            continue
        elif k == _K_TEST:
            test = n.test  # type: ignore[attr-defined]
            stack.append((test, "test"))
            stack += [(c, where) for c in children(n) if c is not test]
            continue
        stack += [(c, where) for c in children(n)]
    return scope


@dataclass
class _AEnv:
    """``_Env``."""

    local: dict[str, list[object]]
    params: frozenset[str]
    module: dict[str, list[object]]
    is_module: bool = False
    knobs: frozenset[str] = frozenset()

    def bindings(self, name: str) -> tuple[list[object] | None, bool]:
        if name in self.local:
            binds = self.local[name]
            if name in self.params:
                binds = [_A_KNOB if name in self.knobs else _A_OTHER, *binds]
            return binds, self.is_module
        if name in self.params:
            return [_A_KNOB if name in self.knobs else _A_OTHER], False
        if name in self.module:
            return self.module[name], True
        return None, False

    def at_module(self) -> _AEnv:
        return _AEnv(self.module, frozenset(), self.module, True)


def _a_module_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """``_module_functions``."""
    out: dict[str, ast.FunctionDef] = {}
    twice: set[str] = set()
    for st in tree.body:
        if isinstance(st, ast.FunctionDef):
            (twice.add(st.name) if st.name in out else out.__setitem__(st.name, st))
    for name in twice:
        del out[name]
    return out


def _a_function_env(fn: ast.FunctionDef, module: dict[str, list[object]]) -> tuple[_AEnv, list[object]]:
    """``_function_env``."""
    local: dict[str, list[object]] = {}
    returns: list[object] = []
    for n in ast_nodes_no_nested(fn.body):
        if _a_bind_assignment(local, n):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            _a_bind(local, n.target, _A_OTHER)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            _a_bind(local, n.optional_vars, _A_OTHER)
        elif isinstance(n, ast.NamedExpr):
            _a_bind(local, n.target, _A_OTHER)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.setdefault(n.name, []).append(_A_OTHER)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                local.setdefault(name, []).append(_A_OTHER)
        elif isinstance(n, ast.alias):
            name = n.asname or n.name.split(".", 1)[0]
            local.setdefault(name, []).append(_A_OTHER)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            local.setdefault(n.name, []).append(_A_OTHER)
        elif isinstance(n, ast.Return):
            returns.append(n.value if n.value is not None else _A_OTHER)
        elif isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            returns.append(_A_OTHER)
    if not (fn.body and isinstance(fn.body[-1], (ast.Return, ast.Raise))):
        returns.append(_A_OTHER)
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    params += [a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
    return _AEnv(local, frozenset(params), module), returns


class _AValues:
    """``_Values`` with the built-in power-of-two functions only; ``sens``
    collects every other call name it asked about: the option could make
    one of those a power of two and change the answer."""

    def __init__(
        self, env: _AEnv, src: _Source, sens: set[str], functions: Mapping[str, ast.FunctionDef] | None = None
    ) -> None:
        self.env = env
        self.src = src
        self.sens = sens
        self.functions = functions or {}
        self._fn_pow2: dict[str, bool] = {}
        self._assumed: set[tuple[str, bool]] = set()

    def const(self, e: object, env: _AEnv | None = None, depth: int = 0) -> int | None:
        env = env or self.env
        if depth > _MAX_DEPTH or not isinstance(e, ast.expr):
            return None
        if isinstance(e, ast.Constant):
            # libcst's ``Integer``; ``True`` is a ``Name`` there, bound nowhere
            v = e.value
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            v = self.const(e.operand, env, depth + 1)
            return -v if v is not None else None
        if isinstance(e, ast.BinOp):
            a = self.const(e.left, env, depth + 1)
            b = self.const(e.right, env, depth + 1)
            if a is None or b is None:
                return None
            return _fold(_AST_OPS.get(type(e.op)), a, b)
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id in ("int", "min", "max")
            and (e.args or e.keywords)
        ):
            values = [a.value if isinstance(a, ast.Starred) else a for a in e.args]
            vals = [
                self.const(v, env, depth + 1) for v in (*values, *(k.value for k in e.keywords))
            ]
            if (
                any(v is None for v in vals)
                or e.keywords
                or any(isinstance(a, ast.Starred) for a in e.args)
            ):
                return None
            ints = [v for v in vals if v is not None]
            if e.func.id == "int":
                return ints[0] if len(ints) == 1 else None
            return min(ints) if e.func.id == "min" else max(ints)
        if isinstance(e, ast.Name):
            binds, at_module = env.bindings(e.id)
            if not binds:
                return None
            sub = env.at_module() if at_module else env
            vals = {self.const(b, sub, depth + 1) for b in binds}
            if len(vals) == 1:
                return vals.pop()
        return None

    def pow2(self, e: object, env: _AEnv | None = None, depth: int = 0) -> bool:
        env = env or self.env
        if depth > _MAX_DEPTH or not isinstance(e, ast.expr):
            return False
        v = self.const(e, env, depth + 1)
        if v is not None:
            return _is_pow2(v)
        if isinstance(e, ast.Call):
            name = ast_dotted(e.func)
            if _matches(name, _BUILTIN_POW2):
                return True
            hit = self._call_pow2(e, name, env, depth)
            if not hit and name is not None:
                # listed in the option, the call would be a power of two
                # (where it already is, the option changes nothing)
                self.sens.add(name)
            return hit
        if isinstance(e, ast.BinOp):
            op = e.op
            if isinstance(op, ast.LShift):
                return self.pow2(e.left, env, depth + 1)
            if isinstance(op, ast.BitAnd):
                for a, b in ((e.left, e.right), (e.right, e.left)):
                    if (
                        isinstance(b, ast.UnaryOp)
                        and isinstance(b.op, ast.USub)
                        and _same_code(self.src, b.operand, a)
                    ):
                        return True
                return False
            if isinstance(op, (ast.Mult, ast.FloorDiv)):
                return self.pow2(e.left, env, depth + 1) and self.pow2(e.right, env, depth + 1)
            if isinstance(op, ast.Pow):
                return self.pow2(e.left, env, depth + 1)
            return False
        if isinstance(e, ast.Attribute) and e.attr == "itemsize":
            return True
        if isinstance(e, ast.IfExp):
            return self.pow2(e.body, env, depth + 1) and self.pow2(e.orelse, env, depth + 1)
        if isinstance(e, ast.Name):
            key = (e.id, env.is_module)
            if key in self._assumed:
                return True
            binds, at_module = env.bindings(e.id)
            if not binds or any(b is _A_OTHER for b in binds):
                return False
            sub = env.at_module() if at_module else env
            self._assumed.add(key)
            try:
                return all(b is _A_KNOB or self.pow2(b, sub, depth + 1) for b in binds)
            finally:
                self._assumed.discard(key)
        return False

    def _call_pow2(self, e: ast.Call, name: str | None, env: _AEnv, depth: int) -> bool:
        if isinstance(e.func, ast.Attribute) and e.func.attr == "element_size":
            return True
        args = [a for a in e.args if not isinstance(a, ast.Starred)]
        if name == "int" and len(args) == 1:
            return self.pow2(args[0], env, depth + 1)
        if name in ("min", "max") and len(args) == len(e.args) and not e.keywords and args:
            return all(self.pow2(a, env, depth + 1) for a in args)
        if isinstance(e.func, ast.Name):
            return _values_function_pow2(self, e.func.id, env, depth, _a_function_env)
        return False


def _a_constant_like(e: ast.expr, env: _AEnv) -> bool:
    """``_constant_like``."""
    name = ast_dotted(e)
    if not name:
        return False
    leaf = name.rsplit(".", 1)[-1]
    if not (leaf.isupper() and any(ch.isalpha() for ch in leaf)):
        return False
    head = name.split(".", 1)[0]
    return head not in env.params and (head not in env.local or env.is_module)


@dataclass
class _ASite:
    """``_MinSite``."""

    call: ast.Call
    x: ast.expr
    c_value: int | None
    name: str
    family: set[str] = field(default_factory=set)
    c_pow2: bool = False


def _cap_side(
    va: int | None, vb: int | None, pa: bool, pb: bool, ca: bool, cb: bool
) -> int | None:
    """Which argument of ``min(a, b)`` is the cap ``C`` (0 or 1; None: no
    block size to judge), from their constant values, whether each is
    provably a power of two and whether each is constant-like (an
    UPPER_CASE name). A literal is the cap; then a constant-like name facing
    a runtime value (``min(MAX_FUSED_SIZE, triton.next_power_of_2(n))``:
    the imported cap, whose value is not visible here, is not the width);
    then a power of two facing something that is not one."""
    if va is not None:
        return 0
    if vb is not None:
        return 1
    if ca and not cb:
        return 0
    if cb and not ca:
        return 1
    if pa and not pb:
        return 0
    if pb and not pa:
        return 1
    return None


def _a_min_site(value: object, name: str, values: _AValues) -> _ASite | None:
    """``_min_site``."""
    if not _is_call_to(value, "min"):
        return None
    assert isinstance(value, ast.Call)
    if (
        len(value.args) != 2
        or value.keywords
        or any(isinstance(a, ast.Starred) for a in value.args)
    ):
        return None
    a, b = value.args
    for arg in (a, b):
        for n in ast.walk(arg):
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)):
                return None  # ``_has_offset_arith``
    va, vb = values.const(a), values.const(b)
    if va is not None and vb is not None:
        return None
    pa, pb = values.pow2(a), values.pow2(b)
    env = values.env
    cap = _cap_side(va, vb, pa, pb, _a_constant_like(a, env), _a_constant_like(b, env))
    if cap == 0:
        x, cv, cp = b, va, pa
    elif cap == 1:
        x, cv, cp = a, vb, pb
    else:
        return None
    if values.pow2(x) or values.const(x) is not None:
        return None
    return _ASite(value, x, cv, name, {name}, cp)


def _a_family(name: str, local: Mapping[str, list[object]]) -> set[str]:
    """``_family``."""
    fam = {name}
    changed = True
    while changed:
        changed = False
        for n, binds in local.items():
            if n in fam or not binds:
                continue
            if all(isinstance(b, ast.Name) and b.id in fam for b in binds):
                fam.add(n)
                changed = True
    return fam


def _a_repaired(family: set[str], local: Mapping[str, list[object]]) -> bool:
    """``BlockSizeMinDivisibility._repaired``."""
    for n in family:
        for b in local.get(n, ()):
            if b is _A_OTHER:
                return True
            if _is_call_to(b, "min"):
                continue
            if isinstance(b, ast.Name) and b.id in family:
                continue
            if (
                isinstance(b, ast.Constant)
                and isinstance(b.value, int)
                and not isinstance(b.value, bool)
            ):
                continue
            return True
    return False


class _ASameX:
    """``_SameX``. The rule compares code; ``ast`` keeps the tree, which is
    equal whenever the code is: ``maybe`` (a superset) serves where a match
    makes a finding, ``surely`` (a subset) where it silences one."""

    def __init__(self, x: ast.expr, env: _AEnv, src: _Source) -> None:
        self.env = env
        self.src = src
        self.target = self._canon(x)
        self._target_dump = _dump(self.target[0])

    def _canon(self, e: ast.expr, depth: int = 0, sole: bool = False) -> tuple[ast.expr, bool]:
        if isinstance(e, ast.Name) and depth < 4:
            binds = self.env.local.get(e.id)
            if binds and len(binds) == 1 and isinstance(binds[0], ast.expr):
                b = binds[0]
                if isinstance(
                    b, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)
                ) and not _is_call_to(b, "min"):
                    return self._canon(b, depth + 1)
        if isinstance(e, ast.Call) and _is_call_to(e, "int") and len(e.args) + len(e.keywords) == 1:
            if e.args:
                arg = e.args[0]
                if isinstance(arg, ast.Starred):
                    return self._canon(arg.value, depth)
                return self._canon(arg, depth, sole=True)
            return self._canon(e.keywords[0].value, depth)
        return e, sole

    def _codes(self, e: ast.expr) -> tuple[str | None, str | None] | None:
        """Both codes (``None`` where the text cannot tell), or ``None``
        when the trees differ."""
        node, sole = self._canon(e)
        if _dump(node) != self._target_dump:
            return None
        return self.src.code(node, sole), self.src.code(*self.target)

    def maybe(self, e: ast.expr) -> bool:
        codes = self._codes(e)
        return codes is not None and (None in codes or codes[0] == codes[1])

    def surely(self, e: ast.expr) -> bool:
        codes = self._codes(e)
        return codes is not None and None not in codes and codes[0] == codes[1]


def _a_pinned(site: _ASite, scope: _AScope, same_x: _ASameX, values: _AValues) -> bool:
    """``_pinned``, only where it surely holds."""
    for cmp, holds in scope.pins:
        if len(cmp.ops) != 1:
            continue
        op = cmp.ops[0]
        left, right = cmp.left, cmp.comparators[0]
        if not isinstance(op, (ast.Eq, ast.In) if holds else (ast.NotEq, ast.NotIn)):
            continue
        for a, b in ((left, right), (right, left)):
            if not same_x.surely(a):
                continue
            if isinstance(op, (ast.Eq, ast.NotEq)) and values.const(b) is not None:
                return True
            if (
                isinstance(op, (ast.In, ast.NotIn))
                and b is right
                and isinstance(b, (ast.Tuple, ast.List, ast.Set))
                and b.elts
                and all(values.const(el) is not None for el in b.elts)
            ):
                return True
    return False


def _a_names_block(e: ast.AST, family: set[str]) -> bool:
    return isinstance(e, ast.Name) and e.id in family


def _a_call_values(call: ast.Call) -> list[ast.expr]:
    """The argument values of a call in source order, as libcst lists them
    (``*x`` gives ``x``; keywords interleave with ``*args``)."""
    items: list[tuple[tuple[int, int], ast.expr]] = []
    for a in call.args:
        items.append(((a.lineno, a.col_offset), a.value if isinstance(a, ast.Starred) else a))
    for k in call.keywords:
        items.append(((k.lineno, k.col_offset), k.value))
    return [v for _, v in sorted(items, key=lambda kv: kv[0])]


def _a_guards(site: _ASite, scope: _AScope) -> tuple[bool, bool, bool]:
    """``_guards``; the power-of-two guard only where it surely holds (libcst
    also counts attribute and keyword names as ``Name``)."""
    div_guard = any(
        isinstance(n.op, ast.Mod)
        and where not in ("check", "raise")
        and _a_names_block(n.right, site.family)
        for n, where in scope.ops
    )
    cdiv = any(
        any(_a_names_block(v, site.family) for v in _a_call_values(c)) for c in scope.cdiv_calls
    )
    pow2_guard = any(
        any(isinstance(n, ast.Name) and n.id in site.family for n in ast.walk(chk))
        for chk in scope.pow2_checks
    )
    # ``_guards``: the width itself tested for a power of two
    x = site.x.id if isinstance(site.x, ast.Name) else None
    if (
        x is not None
        and (site.c_pow2 or site.c_value is None)
        and any(any(isinstance(n, ast.Name) and n.id == x for n in ast.walk(chk)) for chk in scope.pow2_checks)
    ):
        return True, cdiv, True
    return div_guard, cdiv, pow2_guard


def _a_loop_handles_tail(loop: ast.For | ast.AsyncFor) -> bool:
    """``_loop_handles_tail``."""
    for st in loop.body:
        for n in ast.walk(st):
            if isinstance(n, (ast.Slice, ast.Compare, ast.If, ast.IfExp)):
                return True
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id in ("min", "max")
            ):
                return True
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
                return True
    return False


@dataclass
class _Replay:
    """What the replay leaves for the facts gate: a finding on the host for
    sure (``host``), the option-sensitive call names (``opt``), and the
    launches a live block reaches: (kernel as written, kinds of need that
    would not be silenced, keyword parameters, positional indices)."""

    host: bool = False
    opt: set[str] = field(default_factory=set)
    launches: list[tuple[str, str, tuple[str, ...], tuple[int, ...]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.host or self.opt or self.launches)


def _a_launch(
    call: ast.Call,
    kinds: str,
    out: _Replay,
    family: set[str] | None = None,
    inline: str | None = None,
) -> None:
    """A launch ``_kernel_consumers`` would look up: the kernel's dotted name
    (not through ``self``/``cls``), and where the block goes."""
    assert isinstance(call.func, ast.Subscript)
    kname = ast_dotted(call.func.value)
    if not kname or kname.split(".", 1)[0] in ("self", "cls"):
        return
    if inline is not None:
        keywords: tuple[str, ...] = (inline,)
        indices: tuple[int, ...] = ()
    else:
        assert family is not None
        keywords = tuple(k.arg for k in call.keywords if k.arg and _a_names_block(k.value, family))
        found = []
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                break  # ``_launch_args``: positions end at the first ``*args``
            if _a_names_block(a, family):
                found.append(i)
        indices = tuple(found)
    if keywords or indices:
        out.launches.append((kname, kinds, keywords, indices))


def _a_consumed(family: set[str], scope: _AScope) -> bool:
    """Something in the scope could be a consumer of the block whatever the
    width is: a launch it is passed to (as ``_a_launch`` reads it), ``% B``
    in an assert or raise test, ``// B`` outside a test, ``range(.., .., B)``
    without tail handling."""
    for call in scope.launches:
        probe = _Replay()
        _a_launch(call, "dp", probe, family=family)
        if probe.launches:
            return True
    for node, where in scope.ops:
        if _a_names_block(node.right, family) and (
            (isinstance(node.op, ast.Mod) and where in ("check", "raise"))
            or (isinstance(node.op, ast.FloorDiv) and where != "test")
        ):
            return True
    return any(
        _a_names_block(_a_call_values(loop.iter)[2], family)  # type: ignore[arg-type]
        and not _a_loop_handles_tail(loop)
        for loop in scope.loops
    )


def _a_analyse(
    scope: _AScope, env: _AEnv, src: _Source, out: _Replay, functions: Mapping[str, ast.FunctionDef] | None = None
) -> None:
    """``_analyse`` and ``_decide``."""
    values = _AValues(env, src, out.opt, functions)
    sites = []
    for name, binds in env.local.items():
        for b in binds:
            if not _is_call_to(b, "min"):
                continue
            # the family, the repairs and whether anything consumes the block
            # do not depend on which argument is the cap: a binding that
            # fails there is no finding under any option, and its calls are
            # not asked about (they would only widen ``opt``)
            family = _a_family(name, env.local)
            if _a_repaired(family, env.local) or not _a_consumed(family, scope):
                continue
            site = _a_min_site(b, name, values)
            if site is not None:
                site.family = family
                sites.append(site)
    for site in sites:
        same_x = _ASameX(site.x, env, src)
        if _a_pinned(site, scope, same_x, values):
            continue
        div_guard, cdiv, pow2_guard = _a_guards(site, scope)
        cv = site.c_value
        div_ok = not div_guard and not (cv is not None and cv <= 1)
        pow2_ok = not pow2_guard and not (cv is not None and _is_pow2(cv) and cv <= 2)
        if div_ok:
            for node, where in scope.ops:
                if not _a_names_block(node.right, site.family) or not same_x.maybe(node.left):
                    continue
                checked = isinstance(node.op, ast.Mod) and where in ("check", "raise")
                # a floor count, unless a ``cdiv`` next to it covers the tail
                floor = isinstance(node.op, ast.FloorDiv) and where != "test" and not cdiv
                if checked or floor:
                    out.host = True
            for loop in scope.loops:
                args = _a_call_values(loop.iter)  # type: ignore[arg-type]
                if (
                    same_x.maybe(args[1])
                    and _a_names_block(args[2], site.family)
                    and not _a_loop_handles_tail(loop)
                ):
                    out.host = True
        kinds = ("d" if div_ok else "") + ("p" if pow2_ok else "")
        if kinds:
            for call in scope.launches:
                _a_launch(call, kinds, out, family=site.family)
    for call in scope.launches:
        for k in call.keywords:
            inline = _a_min_site(k.value, k.arg, values) if k.arg else None
            if inline is not None:
                # ``_decide`` without a scope: no guards
                cv = inline.c_value
                kinds = ("" if cv is not None and cv <= 1 else "d") + (
                    "" if cv is not None and _is_pow2(cv) and cv <= 2 else "p"
                )
                _a_launch(call, kinds, out, inline=k.arg)


# the last text replayed, its tree and the replay: the ast gate and then the
# collector ask about the same text object (the collector is a text collector,
# handed no tree: the engine would otherwise build an ast for every file that
# merely binds a ``min(``, several times more than pass the text gate)
_REPLAY_MEMO: list[Any] = [None, None, None]


def _min_calls(text: str) -> list[int]:
    """The starts of the ``_MIN_CALL`` matches ``re.finditer`` gives: where
    a ``min`` that is not preceded by a word character or a dot fails the
    lookbehind, the search goes on from the next character, as ``finditer``
    would (a comment between ``min`` and ``(`` may hold another ``min(``)."""
    out: list[int] = []
    search = _MIN_OPEN.search
    pos = 0
    while True:
        m = search(text, pos)
        if m is None:
            return out
        at = m.start()
        if at and _WORD_CHAR.match(text, at - 1):
            pos = at + 1
            continue
        out.append(at)
        pos = m.end()


def _may_leave_anything(flat: str, starts: list[int], node: ast.AST) -> bool:
    """Whether ``_a_analyse`` can leave anything behind for the function
    ``node``, read from its lines (from its first decorator to its last line:
    a superset of its own nodes, nested definitions included). It can only
    through a site: a binding of this scope whose value is a ``min`` call
    (``name = min(``, ``name: T = min(``, ``(name := min(``, parenthesised
    or not, also ``(min)(``) or a launch keyword ``k=min(``, both spelled as
    ``_MIN_BINDING`` matches, without offset arithmetic in its arguments;
    and a site is only analysed when something in the scope consumes it
    (``_a_consumed``: ``% B``, ``// B``, ``range(.., .., B)``, ``B`` passed
    to a launch) or, inline, in a launch. That is the rule's structure the
    text gate looks for (``_text_may_fire``), asked here of the function's
    lines alone: every statement of the function starts within them, so the
    bindings, aliases and consumers it reads there are the function's own.
    Without it the scope adds no finding, option-sensitive call or launch
    (``opt`` is only filled while a site is classified), so skipping it
    changes nothing: most functions holding a ``min(`` have no such site."""
    a = starts[_scope_start(node) - 1]  # type: ignore[arg-type]
    end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    span = flat[a : starts[min(end, len(starts) - 1)]]
    bindings = _min_bindings(span)
    return bool(bindings) and _consumer_hint(span) and _text_may_fire(span, bindings)


def _replay_tree(tree: ast.Module, text: str) -> _Replay:
    """The replay over the scopes that hold a ``min(`` call (where the call
    sits is where the rule analyses it)."""
    if _REPLAY_MEMO[0] is text:
        return _REPLAY_MEMO[2]  # type: ignore[no-any-return]
    out = _Replay()
    src = _Source(text)
    module_binds: dict[str, list[object]] | None = None
    functions: dict[str, ast.FunctionDef] | None = None
    # line numbers as ``ast`` counts them (a lone \r ends a line too)
    starts = list(itertools.accumulate((len(ln) + 1 for ln in src.lines), initial=0))
    flat = "\n".join(src.lines)
    lines = {bisect.bisect_right(starts, at) for at in _min_calls(flat)}
    seen: set[int] = set()
    for line in sorted(lines):
        node = _innermost_scope(tree, line)
        if id(node) in seen or isinstance(node, ast.ClassDef):
            continue  # class bodies are never analysed (their methods are)
        seen.add(id(node))
        if not isinstance(node, ast.Module) and not _may_leave_anything(flat, starts, node):
            continue
        scope = _a_scope(node)
        if not scope.has_min:
            continue
        if isinstance(node, ast.Module):
            env = _AEnv(scope.bindings, frozenset(), scope.bindings, True)
        else:
            if module_binds is None:
                module_binds = _a_top_level_bindings(tree, src)
            env = _AEnv(scope.bindings, scope.params, module_binds, knobs=scope.knobs)
        if functions is None:
            functions = _a_module_functions(tree)
        try:
            _a_analyse(scope, env, src, out, functions)
        except _Unsure:
            out.host = True
    # the tree only where the collector reads it (a launch to qualify):
    # holding every file's tree until the next one frees it would charge
    # that file's deallocation to this gate and keep it alive for nothing
    _REPLAY_MEMO[:] = [text, tree if out.launches and not out.host else None, out]
    return out


def _replay_text(text: str) -> tuple[Any, _Replay] | None:
    """The tree and the replay of ``text``: those the ast gate just made, or
    made here (a file only scanned for facts); ``None`` if it does not parse.
    The tree is ``None`` unless the replay left launches to qualify."""
    if _REPLAY_MEMO[0] is not text:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        _replay_tree(tree, text)
    return _REPLAY_MEMO[1], _REPLAY_MEMO[2]


def _qualified(kname: str, tree: ast.Module, module: str, path: str) -> list[str]:
    """What ``qualify`` may make of a launched kernel's name: through every
    import binding its head (the rule takes the last in its own traversal
    order), else in this module."""
    head, _, rest = kname.partition(".")
    pkg = is_package_path(path)
    out: set[str] = set()
    for node in _import_nodes(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                if local == head:
                    base = a.name if a.asname else a.name.split(".")[0]
                    out.add(f"{base}.{rest}" if rest else base)
        elif isinstance(node, ast.ImportFrom):
            frm = resolve_relative(module, pkg, node.level, node.module)
            for a in node.names:
                if a.name != "*" and (a.asname or a.name) == head:
                    base = f"{frm}.{a.name}" if frm else a.name
                    out.add(f"{base}.{rest}" if rest else base)
    if not out:
        out.add(f"{module}.{kname}" if module else kname)
    return sorted(out)


class BlockMinSites(FactCollector):
    """Per module, what SHD101's facts gate decides (read by nothing else):
    the open questions of the replay, with each launched kernel's possible
    qualified names, and whether the module's text holds kernels of its own.
    ``{"host": true}`` when the replay found a host finding."""

    name = "block_min_sites"
    # 2: collected only for files whose functions the text gate admits
    version = 2
    # the text gate itself decides (memoised, usually already asked by the
    # rule): a needle regex would only scan the text once more
    needles = Needles(all_of=("min",))
    needs_ast = False

    @classmethod
    def collect(cls, tree: ast.Module | None, text: str, module: str, path: str) -> Any:
        if not _text_gate(text):
            return None  # the rule's text gate stops the file before any facts gate
        replayed = _replay_text(text)
        if replayed is None:
            return None  # unparsable: the facts gate lets the file through
        tree, rep = replayed
        if not rep:
            return None  # the ast gate stops it
        if rep.host:
            return {"path": path, "host": True}
        return {
            "path": path,
            "opt": sorted(rep.opt),
            "launches": [
                [_qualified(kname, tree, module, path), kinds, list(keywords), list(indices)]
                for kname, kinds, keywords, indices in dict.fromkeys(rep.launches)
            ],
            "tk": TritonKernels.needles.match(text),
        }


def _is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def _matches(name: str | None, patterns: Iterable[str]) -> bool:
    """``name`` is one of ``patterns`` or ends with ``.pattern``: ``jit``
    matches ``triton.jit``; ``triton.jit`` does not match ``jax.jit``."""
    if not name:
        return False
    return any(name == p or name.endswith("." + p) for p in patterns)


def _code(node: cst.CSTNode) -> str:
    return " ".join(cst.Module(body=[]).code_for_node(node).split())


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_OTHER = object()  # a binding that is not a plain ``name = expr`` (loop target, ``+=``, unpacking)
_KNOB = object()  # the incoming value of a knob parameter: taken to be a power of two


@dataclass
class _Env:
    """Names bound in one function (or at module level) and in the module."""

    local: dict[str, list[object]]
    params: frozenset[str]
    module: dict[str, list[object]]
    is_module: bool = False
    # parameters defaulting to a power-of-two literal or an UPPER_CASE
    # constant (``chunk_size: int = CHUNK``): tuning knobs, not model shapes
    knobs: frozenset[str] = frozenset()

    def bindings(self, name: str) -> tuple[list[object] | None, bool]:
        """The bindings of ``name`` and whether they live at module level;
        ``None`` for a name bound nowhere in this file. A parameter's incoming
        value counts as one unknown binding (``_OTHER``)."""
        if name in self.local:
            binds = self.local[name]
            if name in self.params:
                binds = [_KNOB if name in self.knobs else _OTHER, *binds]
            return binds, self.is_module
        if name in self.params:
            return [_KNOB if name in self.knobs else _OTHER], False
        if name in self.module:
            return self.module[name], True
        return None, False

    def at_module(self) -> _Env:
        return _Env(self.module, frozenset(), self.module, True)


def _bind_assignment(out: dict[str, list[object]], small: cst.CSTNode) -> bool:
    """Record what an assignment binds; False for anything else."""
    if isinstance(small, cst.Assign):
        for t in small.targets:
            _bind(out, t.target, small.value)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        _bind(out, small.target, small.value)
    elif isinstance(small, cst.AugAssign):
        _bind(out, small.target, _OTHER)
    else:
        return False
    return True


def _top_level_bindings(module: cst.Module) -> dict[str, list[object]]:
    """Module constants: assignments directly in the module body or under a
    top-level ``if``/``try`` (enough for ``BLOCK = 1024``; cheap, no walk)."""
    out: dict[str, list[object]] = {}
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        st = stack.pop()
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                _bind_assignment(out, small)
        elif isinstance(st, (cst.If, cst.Try, cst.Else, cst.ExceptHandler, cst.Finally)):
            body = st.body
            if isinstance(body, cst.IndentedBlock):
                stack.extend(body.body)
            for attr in ("orelse", "handlers", "finalbody"):
                more = getattr(st, attr, None)
                if isinstance(more, (list, tuple)):
                    stack.extend(more)
                elif more is not None:
                    stack.append(more)
    return out


def _bind(out: dict[str, list[object]], target: cst.BaseExpression, value: object) -> None:
    if isinstance(target, cst.Name):
        out.setdefault(target.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            _bind(out, el.value, _OTHER)
    elif isinstance(target, cst.StarredElement):
        _bind(out, target.value, _OTHER)


@dataclass
class _Scope:
    """What one function (or the module) holds that this rule looks at,
    gathered during the single batched traversal."""

    node: cst.CSTNode
    params: frozenset[str]
    knobs: frozenset[str] = frozenset()
    bindings: dict[str, list[object]] = field(default_factory=dict)
    # comparisons that must hold (assert: True) or must fail (``if ...:
    # raise``: False) for the code to go on
    pins: list[tuple[cst.Comparison, bool]] = field(default_factory=list)
    has_min: bool = False
    ops: list[tuple[cst.BinaryOperation, str]] = field(default_factory=list)
    cdiv_calls: list[cst.Call] = field(default_factory=list)
    launches: list[cst.Call] = field(default_factory=list)
    loops: list[cst.For] = field(default_factory=list)
    pow2_checks: list[cst.CSTNode] = field(default_factory=list)


def _module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The functions defined directly in the module body (a name defined
    twice is left out: which one a call reaches depends on the order)."""
    out: dict[str, cst.FunctionDef] = {}
    twice: set[str] = set()
    for st in module.body:
        if isinstance(st, cst.FunctionDef):
            name = st.name.value
            (twice.add(name) if name in out else out.__setitem__(name, st))
    for name in twice:
        del out[name]
    return out


def _function_env(fn: cst.FunctionDef, module: dict[str, list[object]]) -> tuple[_Env, list[object]]:
    """The environment of a helper function's body and what its ``return``
    statements return (``_OTHER`` for a bare ``return``, a ``yield`` or a
    body that may end without one)."""
    local: dict[str, list[object]] = {}
    returns: list[object] = []
    body = fn.body
    for n in walk_no_nested(body):
        if _bind_assignment(local, n):
            continue
        if isinstance(n, (cst.For, cst.CompFor)):
            _bind(local, n.target, _OTHER)
        elif isinstance(n, cst.AsName):
            if isinstance(n.name, (cst.Name, cst.Tuple, cst.List)):
                _bind(local, n.name, _OTHER)
        elif isinstance(n, cst.NamedExpr):
            _bind(local, n.target, _OTHER)
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n is not fn:
            _bind(local, n.name, _OTHER)
        elif isinstance(n, (cst.Global, cst.Nonlocal)):
            for item in n.names:
                _bind(local, item.name, _OTHER)
        elif isinstance(n, cst.ImportAlias):
            name = n.asname.name if n.asname is not None else n.name
            if isinstance(name, cst.Name):
                _bind(local, name, _OTHER)
        elif isinstance(n, cst.Return):
            returns.append(n.value if n.value is not None else _OTHER)
        elif isinstance(n, (cst.Yield, cst.Await)):
            returns.append(_OTHER)
    # the body must end in a return (else it may fall off the end: None)
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    if not (
        isinstance(last, cst.SimpleStatementLine) and any(isinstance(x, (cst.Return, cst.Raise)) for x in last.body)
    ):
        returns.append(_OTHER)
    return _Env(local, frozenset(function_params(fn)), module), returns


class _Values:
    """Constant folding and power-of-two proofs over one environment."""

    def __init__(
        self, env: _Env, pow2_functions: Sequence[str], functions: Mapping[str, cst.FunctionDef] | None = None
    ) -> None:
        self.env = env
        self.pow2_functions = pow2_functions
        # the module's own functions: a call returns a power of two when
        # every ``return`` of the function does (``def _block(n): return
        # max(16, triton.next_power_of_2(n))``)
        self.functions = functions or {}
        self._fn_pow2: dict[str, bool] = {}
        # names under evaluation: a self-referential binding such as
        # ``T = min(512, T)`` keeps the other bindings' power-of-two-ness
        self._assumed: set[tuple[str, bool]] = set()

    def const(self, e: object, env: _Env | None = None, depth: int = 0) -> int | None:
        env = env or self.env
        if depth > _MAX_DEPTH or not isinstance(e, cst.BaseExpression):
            return None
        if isinstance(e, cst.Integer):
            try:
                return int(e.value.replace("_", ""), 0)
            except ValueError:
                return None
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
            v = self.const(e.expression, env, depth + 1)
            return -v if v is not None else None
        if isinstance(e, cst.BinaryOperation):
            a = self.const(e.left, env, depth + 1)
            b = self.const(e.right, env, depth + 1)
            if a is None or b is None:
                return None
            return _fold(_CST_OPS.get(type(e.operator).__name__), a, b)
        if isinstance(e, cst.Call) and call_name(e) in ("int", "min", "max") and e.args:
            vals = [self.const(a.value, env, depth + 1) for a in e.args]
            if any(v is None for v in vals) or any(a.keyword or a.star for a in e.args):
                return None
            ints = [v for v in vals if v is not None]
            if call_name(e) == "int":
                return ints[0] if len(ints) == 1 else None
            return min(ints) if call_name(e) == "min" else max(ints)
        if isinstance(e, cst.Name):
            binds, at_module = env.bindings(e.value)
            if not binds:
                return None
            sub = env.at_module() if at_module else env
            vals = {self.const(b, sub, depth + 1) for b in binds}
            if len(vals) == 1:
                return vals.pop()
        return None

    def _function_pow2(self, name: str, env: _Env, depth: int) -> bool:
        return _values_function_pow2(self, name, env, depth, _function_env)

    def pow2(self, e: object, env: _Env | None = None, depth: int = 0) -> bool:
        """Provably a power of two: a literal, a power-of-two function,
        ``1 << k``, ``x & -x``, products and min/max of such, names bound
        only to such values in this file, and calls of this file's own
        functions that return only such values."""
        env = env or self.env
        if depth > _MAX_DEPTH or not isinstance(e, cst.BaseExpression):
            return False
        v = self.const(e, env, depth + 1)
        if v is not None:
            return _is_pow2(v)
        if isinstance(e, cst.Call):
            name = call_name(e)
            if _matches(name, self.pow2_functions):
                return True
            if isinstance(e.func, cst.Attribute) and e.func.attr.value == "element_size":
                return True  # dtype widths are 1, 2, 4 or 8 bytes
            args = [a.value for a in e.args if not a.keyword and not a.star]
            if name == "int" and len(args) == 1:
                return self.pow2(args[0], env, depth + 1)
            if name in ("min", "max") and len(args) == len(e.args) and args:
                return all(self.pow2(a, env, depth + 1) for a in args)
            if isinstance(e.func, cst.Name):
                return self._function_pow2(e.func.value, env, depth)
            return False
        if isinstance(e, cst.BinaryOperation):
            op = e.operator
            if isinstance(op, cst.LeftShift):
                return self.pow2(e.left, env, depth + 1)
            if isinstance(op, cst.BitAnd):
                for a, b in ((e.left, e.right), (e.right, e.left)):
                    if (
                        isinstance(b, cst.UnaryOperation)
                        and isinstance(b.operator, cst.Minus)
                        and _code(b.expression) == _code(a)
                    ):
                        return True
                return False
            if isinstance(op, (cst.Multiply, cst.FloorDivide)):
                # 65536 // x.element_size(): a quotient of powers of two
                return self.pow2(e.left, env, depth + 1) and self.pow2(e.right, env, depth + 1)
            if isinstance(op, cst.Power):
                return self.pow2(e.left, env, depth + 1)
            return False
        if isinstance(e, cst.Attribute) and e.attr.value == "itemsize":
            return True
        if isinstance(e, cst.IfExp):
            return self.pow2(e.body, env, depth + 1) and self.pow2(e.orelse, env, depth + 1)
        if isinstance(e, cst.Name):
            key = (e.value, env.is_module)
            if key in self._assumed:
                return True
            binds, at_module = env.bindings(e.value)
            if not binds or any(b is _OTHER for b in binds):
                return False
            sub = env.at_module() if at_module else env
            self._assumed.add(key)
            try:
                return all(b is _KNOB or self.pow2(b, sub, depth + 1) for b in binds)
            finally:
                self._assumed.discard(key)
        return False


def _values_function_pow2(self: Any, name: str, env: Any, depth: int, fn_env: Any) -> bool:
    """Shared by ``_Values`` and ``_AValues``: whether a call of the
    module's own function ``name`` (not shadowed where it is called) is a
    power of two, every ``return`` of it being one."""
    fn = self.functions.get(name)
    if fn is None or name in env.local or name in env.params or name in env.module:
        return False
    hit = self._fn_pow2.get(name)
    if hit is None:
        self._fn_pow2[name] = False  # (recursion: not proved)
        fenv, returns = fn_env(fn, env.module)
        hit = bool(returns) and all(
            r is not _OTHER and r is not _A_OTHER and self.pow2(r, fenv, depth + 1) for r in returns
        )
        self._fn_pow2[name] = hit
    return hit


def _has_offset_arith(e: cst.CSTNode) -> bool:
    """``min(off + B, n)``, ``min(B, n - start)``: an end index or a remainder,
    not a block size."""
    return any(
        isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract))
        for n in walk(e)
    )


@dataclass
class _MinSite:
    """One ``min(X, C)`` that may be used as a block size."""

    call: cst.Call
    x: cst.BaseExpression
    c: cst.BaseExpression
    c_value: int | None
    c_pow2: bool
    name: str  # the bound name, or the launch keyword for an inline min
    family: set[str] = field(default_factory=set)
    inline: bool = False


@dataclass
class _Consumer:
    kind: str  # "div" or "pow2"
    where: str  # what the user sees: the code or the kernel parameter
    note: Note | None = None
    host: bool = True
    floor: bool = False


def _raise_only(block: cst.BaseSuite) -> bool:
    """``if X % B: raise ...``: as hard a requirement as an assert."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return (
        len(body) == 1
        and isinstance(body[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and any(isinstance(s, cst.Raise) for s in body[0].body)
    )


# Triton-Ascend (Huawei NPUs) lifts CUDA Triton's power-of-two rule for
# ``tl.arange`` ranges (its ``arange`` documentation); vllm-ascend's and
# SGLang's NPU kernels live in packages named so.
_NPU_PACKAGES = ("npu", "npu_*", "*_npu", "*_npu_*", "*ascend*")


def on_npu_package(dotted_path: str, patterns: Sequence[str]) -> bool:
    """Whether a package component of ``dotted_path`` (a module name, or a
    path with dots) matches one of ``patterns`` (case-insensitive globs)."""
    parts = dotted_path.lower().split(".")[:-1]
    return any(fnmatch.fnmatchcase(part, p.lower()) for part in parts for p in patterns)


class BlockSizeMinDivisibility(Rule):
    """## What it finds
    A block or tile size computed as `min(X, C)` (either argument order, also
    through a plain alias such as `tile = BLOCK`) where `X` is not provably a
    power of two, used where the block must divide `X` or be a power of two:

    - on the host: `assert X % B == 0` (or `if X % B: raise`), `X // B` as a
      grid size or count, `for i in range(0, X, B)` whose body has no
      remainder handling;
    - in a kernel: `B` passed (by keyword or position) to a `@triton.jit`
      function, possibly autotuned and possibly defined in another module and
      imported or re-exported, whose parameter is a block shape
      (`tl.arange(0, P)`, `tl.zeros([P])`, `tl.full`, `tl.reshape`,
      `block_shape=`) or appears in `tl.static_assert(... % P == 0)`.

    Provably a power of two: a power-of-two literal, `triton.next_power_of_2`
    (see the option), `1 << k`, `x & -x`, products and min/max of such,
    names bound only to such values in this file (module constants too), and
    calls of a function defined at the top of this file whose every `return`
    is such a value (`def _block(n): return max(16, triton.next_power_of_2(n))`).

    Deliberately silent: when the block is repaired or the case is guarded in
    the same function (a halving loop `while X % B: B //= 2`, any rebinding
    of `B`, an `if X % B` fallback, a power-of-two test of `X` itself
    (`if not is_pow2(X): return ...`) with a cap that is a power of two or
    not visible here, an `EVEN_K = X % B == 0` flag for a
    masked kernel, a `cdiv` grid next to an `X // B` count); `min(off + B, n)`
    and other end-index arithmetic; `min` of two runtime values with no
    constant cap (`min(BLOCK_K, group_size)`); an UPPER_CASE cap whose value
    is not visible here facing a power of two (`min(MAX_FUSED_SIZE,
    triton.next_power_of_2(n))` with the cap imported: the cap is `C`, the
    width side is a power of two); kernels reached through attributes
    (`self.kernel[grid]`); a kernel's power-of-two needs when the kernel or
    its launch sits in a package of NPU code (option `npu-packages`:
    Triton-Ascend builds `tl.arange` ranges of any length; divisibility
    needs still count).

    ## Why it breaks
    `min(X, C)` equals `C` whenever `X >= C`, and divides `X` only when `X` is
    a multiple of `C`; below `C` it is `X` itself, a power of two only if `X`
    is. `X` is usually a per-rank width (hidden size, head dimension,
    intermediate size divided by TP or EP) and changes with the model and the
    parallel layout: a width of 3584 or 1536 under `C = 1024`, or of 384 or
    768 reaching `tl.arange`, crashes at start-up on that model only, after
    every test with the usual 4096-wide shapes passed.

    ## Example
    See the corpus files below: `BLOCK_D = min(hidden_size, 1024)` followed by
    `assert hidden_size % BLOCK_D == 0` and a kernel launch with
    `BLOCK_D=BLOCK_D`.

    ## Fix
    Where divisibility is what the consumer needs, use `math.gcd(X, C)`: the
    largest block not above `C` that divides `X` (a power of two when `C`
    is). This is an *unsafe* fix (applied with `--unsafe-fixes`): it changes
    the block for widths that are not multiples of `C` (384 → 128 instead of
    384), which is the point but may cost speed. Where the kernel only needs a
    power of two, round up with `triton.next_power_of_2(X)` (capped at `C`)
    and mask the tail in the kernel: a suggestion, not an edit.

    ## Options
    - `power-of-two-functions` (list[str]): calls whose result is a power of
      two. Default `["triton.next_power_of_2", "next_power_of_2",
      "next_power_of_two"]`; a name matches the call's dotted name or its
      trailing components (`next_power_of_2` matches `utils.next_power_of_2`).
      The three defaults always count (they are facts, not preferences, and
      the prefilter relies on them); setting the option adds your helpers.
    - `kernel-decorators` (list[str]): decorators that make a function a
      kernel whose parameters are checked. Default `["triton.jit", "jit"]`;
      other decorators on the same function (`triton.autotune`,
      `triton.heuristics`) do not matter.
    - `npu-packages` (list[str]): package names (case-insensitive globs,
      matched against each package of the launching module and of the
      kernel's module) of code built by Triton-Ascend for Huawei NPUs, whose
      `tl.arange` has no power-of-two rule: kernels there keep only their
      divisibility needs. Default `["npu", "npu_*", "*_npu", "*_npu_*",
      "*ascend*"]`
      (vllm-ascend's `vllm_ascend/`, SGLang's `hardware_backend/npu/`); set
      `[]` to apply CUDA Triton's rule everywhere.
    """

    code = "SHD101"
    name = "block-size-min-divisibility"
    summary = "Block size min(X, C) used as a divisor of X or as a power-of-two block shape"
    severity = Severity.ERROR
    fixable = Fixability.SOMETIMES
    needles = Needles(all_of=("min",))
    facts = ("triton_kernels", "facade_imports", "block_min_sites")
    tags = ("correctness", "triton")
    options: ClassVar[Mapping[str, Option]] = {
        "power-of-two-functions": Option(
            _BUILTIN_POW2,
            "list[str]",
            "Calls whose result is a power of two.",
        ),
        "kernel-decorators": Option(
            ("triton.jit", "jit"),
            "list[str]",
            "Decorators that make a function a kernel whose parameters are checked.",
        ),
        "npu-packages": Option(
            _NPU_PACKAGES,
            "list[str]",
            "Package names (globs) of code built by Triton-Ascend, where block shapes need no power of two.",
        ),
    }

    @classmethod
    def candidate(cls, text: str) -> bool:
        """Regex only: a name bound to ``min(`` (or an alias of it) reaches
        ``%``, ``/``, ``range(..)`` or a launch, or a launch has a ``min(``
        argument."""
        return _text_gate(text)

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        """The rule's analysis replayed on the shared ``ast`` (see
        ``_replay_tree``): a host finding, a launch a live block reaches, or
        a call that the ``power-of-two-functions`` option could turn into a
        power of two."""
        return bool(_replay_tree(tree, text))

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        """The replay's open questions answered (``block_min_sites``): does
        the option name one of the calls the replay asked about, and does a
        launch reach a kernel (with a ``kernel-decorators`` decorator) that
        needs the parameter the block is passed as, with a kind of need the
        site's guards do not silence? Resolved as ``_kernel`` resolves it."""
        rec = facts.raw("block_min_sites").get(module)
        if rec is None or rec.get("path") != path or rec.get("host"):
            return True  # not collected (or another file's), or a host finding
        extra = tuple(options["power-of-two-functions"])
        if any(_matches(n, extra) for n in rec.get("opt", ())):
            return True  # the replay assumed only the built-in functions
        launches = rec.get("launches", ())
        if not launches:
            return False
        if rec.get("tk"):
            # the rule also reads this file's own kernels from its text: the
            # facts must hold them (they do when collected from this text)
            own = facts.raw("triton_kernels").get(module)
            if own is None or own.get("path") != path:
                return True
        index = facts.index("triton_kernels")
        if not isinstance(index, KernelIndex):
            return True
        facades = facts.raw("facade_imports")

        def imports(m: str) -> Mapping[str, str] | None:
            return index.imports.get(m) or facades.get(m)

        def defined(q: str) -> bool:
            return q in index.kernels

        decorators = options["kernel-decorators"]
        for quals, kinds, keywords, indices in launches:
            for q in quals:
                k = index.kernels.get(follow_reexports(q, defined, imports))
                if k is None or not any(_matches(d, decorators) for d in k.decorators):
                    continue
                params = [*keywords, *(k.params[i] for i in indices if i < len(k.params))]
                if any(n.kind[:1] in kinds for p in params for n in k.needs.get(p, ())):
                    return True
        return False

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._module_bindings: dict[str, list[object]] = {}
        self._module_functions: dict[str, cst.FunctionDef] = {}
        self._scopes: list[_Scope] = []
        # where the node being visited sits: "check" (assert test), "raise"
        # (the test of ``if ...: raise``, a check with the opposite polarity),
        # raise`` test), "test" (another condition) or "" (plain code)
        self._where: list[str] = [""]
        self._imports: dict[str, str] | None = None
        self._local_kernels: dict[str, KernelFacts] | None = None

    # -- traversal: one pass records what each scope holds -------------------
    def _top(self) -> _Scope:
        # a method, not a property: libcst's get_visitors() reads every
        # attribute of the visitor, properties included
        return self._scopes[-1]

    def visit_Module(self, node: cst.Module) -> None:
        self._module_bindings = _top_level_bindings(node)
        self._module_functions = _module_functions(node)
        self._scopes.append(_Scope(node, frozenset()))

    def leave_Module(self, node: cst.Module) -> None:
        scope = self._scopes.pop()
        if scope.has_min:
            env = _Env(scope.bindings, frozenset(), scope.bindings, True)
            self._analyse(scope, env)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_Scope(node, frozenset(function_params(node)), _knobs(node)))
        self._where.append("")

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        # analysed here, while the engine's scope names still include the
        # function, so that fingerprints carry the qualified name
        scope = self._scopes.pop()
        self._where.pop()
        if scope.has_min:
            env = _Env(scope.bindings, scope.params, self._module_bindings, knobs=scope.knobs)
            self._analyse(scope, env)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(_Scope(node, frozenset()))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            _bind(self._top().bindings, t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            _bind(self._top().bindings, node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        _bind(self._top().bindings, node.target, _OTHER)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        _bind(self._top().bindings, node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        _bind(self._top().bindings, node.target, _OTHER)
        it = node.iter
        if isinstance(it, cst.Call) and call_name(it) == "range" and len(it.args) == 3:
            self._top().loops.append(node)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        _bind(self._top().bindings, node.target, _OTHER)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            _bind(self._top().bindings, node.asname.name, _OTHER)

    def visit_Assert_test(self, node: cst.Assert) -> None:
        self._where.append("check")

    def leave_Assert_test(self, node: cst.Assert) -> None:
        self._where.pop()

    def visit_If_test(self, node: cst.If) -> None:
        self._where.append("raise" if _raise_only(node.body) else "test")

    def leave_If_test(self, node: cst.If) -> None:
        self._where.pop()

    def visit_While_test(self, node: cst.While) -> None:
        self._where.append("test")

    def leave_While_test(self, node: cst.While) -> None:
        self._where.pop()

    def visit_IfExp_test(self, node: cst.IfExp) -> None:
        self._where.append("test")

    def leave_IfExp_test(self, node: cst.IfExp) -> None:
        self._where.pop()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._where[-1] in ("check", "raise"):
            self._top().pins.append((node, self._where[-1] == "check"))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        op = node.operator
        if isinstance(op, (cst.Modulo, cst.FloorDivide)) and isinstance(node.right, cst.Name):
            self._top().ops.append((node, self._where[-1]))
        elif isinstance(op, cst.BitAnd) and self._where[-1]:
            self._top().pow2_checks.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        scope = self._top()
        if name == "min":
            scope.has_min = True
        elif isinstance(node.func, cst.Subscript):
            scope.launches.append(node)
        elif _matches(name, _CDIV_NAMES):
            scope.cdiv_calls.append(node)
        elif name and self._where[-1] and ("pow" in name.lower()):
            scope.pow2_checks.append(node)

    # -- analysis ------------------------------------------------------------
    def _analyse(self, scope: _Scope, env: _Env) -> None:
        values = _Values(env, (*_BUILTIN_POW2, *self.opts["power-of-two-functions"]), self._module_functions)
        sites: list[_MinSite] = []
        for name, binds in env.local.items():
            for b in binds:
                site = self._min_site(b, name, values)
                if site is not None:
                    sites.append(site)
        for site in sites:
            site.family = _family(site.name, env.local)
            if self._repaired(site, env.local) or _pinned(site, scope, env, values):
                continue
            consumers = self._host_consumers(site, scope, env)
            consumers += self._kernel_consumers(site, scope.launches)
            self._decide(site, consumers, scope)
        for call in scope.launches:
            for kw, m in _inline_mins(call):
                site = self._min_site(m, kw, values)
                if site is None:
                    continue
                site.inline = True
                consumers = self._kernel_consumers(site, [call], inline=kw)
                self._decide(site, consumers, None)

    def _min_site(self, value: object, name: str, values: _Values) -> _MinSite | None:
        if not isinstance(value, cst.Call) or call_name(value) != "min":
            return None
        if len(value.args) != 2 or any(a.keyword or a.star for a in value.args):
            return None
        a, b = value.args[0].value, value.args[1].value
        if _has_offset_arith(a) or _has_offset_arith(b):
            return None
        va, vb = values.const(a), values.const(b)
        if va is not None and vb is not None:
            return None
        pa, pb = values.pow2(a), values.pow2(b)
        cap = _cap_side(va, vb, pa, pb, _constant_like(a, values.env), _constant_like(b, values.env))
        if cap == 0:
            c, x, cv, cp = a, b, va, pa
        elif cap == 1:
            c, x, cv, cp = b, a, vb, pb
        else:
            return None
        if values.pow2(x) or values.const(x) is not None:
            return None
        return _MinSite(value, x, c, cv, cp, name, {name})

    def _repaired(self, site: _MinSite, local: Mapping[str, list[object]]) -> bool:
        """Any other kind of binding of the block (``B //= 2`` in a halving
        loop, ``B = gcd(...)``, ``B = next_power_of_2(B)``) means the function
        adjusts it: silence rather than guess which value reaches the use."""
        for n in site.family:
            for b in local.get(n, ()):
                if b is _OTHER:
                    return True
                if isinstance(b, cst.Call) and call_name(b) == "min":
                    continue
                if isinstance(b, cst.Name) and b.value in site.family:
                    continue
                if isinstance(b, cst.Integer):
                    continue
                return True
        return False

    def _host_consumers(self, site: _MinSite, scope: _Scope, env: _Env) -> list[_Consumer]:
        out: list[_Consumer] = []
        same_x = _SameX(site.x, env)
        for node, where in scope.ops:
            if not _names_block(node.right, site.family) or not same_x(node.left):
                continue
            if isinstance(node.operator, cst.Modulo) and where in ("check", "raise"):
                verb = "is asserted" if where == "check" else "is required (else it raises)"
                out.append(_Consumer("div", f"`{_short(_code(node))} == 0` {verb}"))
            elif isinstance(node.operator, cst.FloorDivide) and where != "test":
                out.append(
                    _Consumer("div", f"`{_short(_code(node))}` drops the remainder", floor=True)
                )
        for loop in scope.loops:
            it = loop.iter
            assert isinstance(it, cst.Call)
            if (
                same_x(it.args[1].value)
                and _names_block(it.args[2].value, site.family)
                and not _loop_handles_tail(loop)
            ):
                out.append(_Consumer("div", f"`{_short(_code(it))}` has no tail handling"))
        return out

    def _kernel_consumers(
        self, site: _MinSite, launches: Sequence[cst.Call], inline: str | None = None
    ) -> list[_Consumer]:
        out: list[_Consumer] = []
        for call in launches:
            kname = dotted(call.func.value) if isinstance(call.func, cst.Subscript) else None
            if not kname:
                continue
            facts = self._kernel(kname)
            if facts is None:
                continue
            for param, value in _launch_args(call, facts.params):
                if inline is not None:
                    if value is not site.call:
                        continue
                elif not _names_block(value, site.family):
                    continue
                for need in facts.needs.get(param, ()):
                    if need.kind == "pow2" and self._on_npu(facts):
                        continue
                    out.append(_kernel_consumer(kname, param, need, facts))
        return out

    def _on_npu(self, kernel: KernelFacts) -> bool:
        """Whether the launch or the kernel lives in a package of NPU code
        (option ``npu-packages``): Triton-Ascend builds ``tl.arange`` and
        block shapes of any size, so only divisibility needs remain."""
        pats = self.opts["npu-packages"]
        return on_npu_package(self.ctx.module_name, pats) or on_npu_package(
            kernel.path.replace("/", ".").removesuffix(".py"), pats
        )

    def _kernel(self, name: str) -> KernelFacts | None:
        head = name.split(".", 1)[0]
        if head in ("self", "cls"):
            return None
        if self._imports is None:
            self._imports = imports_from_cst(self.ctx.module, self.ctx.module_name, self.ctx.path)
        mod = self.ctx.module_name
        qual = qualify(name, mod, self._imports)
        index = self.ctx.facts.index("triton_kernels")
        kernels = index.kernels if isinstance(index, KernelIndex) else {}
        kernel_imports = index.imports if isinstance(index, KernelIndex) else {}
        facades = self.ctx.facts.raw("facade_imports")

        def imports(m: str) -> Mapping[str, str] | None:
            return kernel_imports.get(m) or facades.get(m)

        if self._local_kernels is None:
            self._local_kernels = collect_text(self.ctx.text, mod, self.ctx.path)
        local = self._local_kernels

        def defined(q: str) -> bool:
            return q in local or q in kernels

        qual = follow_reexports(qual, defined, imports)
        facts = local.get(qual) or kernels.get(qual)
        if facts is None or not any(
            _matches(d, self.opts["kernel-decorators"]) for d in facts.decorators
        ):
            return None
        return facts

    # -- reporting -------------------------------------------------------------
    def _decide(self, site: _MinSite, consumers: list[_Consumer], scope: _Scope | None) -> None:
        div_guard, cdiv, pow2_guard = _guards(site, scope) if scope else (False, False, False)
        live: list[_Consumer] = []
        for c in consumers:
            if c.kind == "div":
                if div_guard or (cdiv and c.floor):
                    continue
                if site.c_value is not None and site.c_value <= 1:
                    continue
            else:
                if pow2_guard:
                    continue
                if site.c_value is not None and _is_pow2(site.c_value) and site.c_value <= 2:
                    continue
            live.append(c)
        if not live:
            return
        x, c, b = _code(site.x), _code(site.c), site.name
        div = [k for k in live if k.kind == "div"]
        pow2 = [k for k in live if k.kind == "pow2"]
        call = _call_text(site.call)
        head = f"`{b}={call}`" if site.inline else f"`{b} = {call}`"
        if div:
            first = div[0]
            message = (
                f"block size {head} need not divide `{x}`, as {_need_text(first)}: "
                f"{_div_example(x, b, c, site.c_value)}"
            )
        else:
            first = pow2[0]
            message = (
                f"block size {head} need not be a power of two, as {_need_text(first)}: "
                f"{_pow2_example(x, b, c, site.c_value, site.c_pow2)}"
            )
        notes: list[Note] = []
        if div:
            notes.append(
                Note(
                    f"`{x}` is a per-model, per-layout width (a hidden, head or intermediate "
                    f"size divided by the TP/EP size); `{call}` is `{c}` whenever "
                    f"`{x}` >= `{c}`, and divides `{x}` only when `{x}` is a multiple of it: "
                    f"a model whose width is not fails at start-up (or silently loses the "
                    f"tail), while the usual power-of-two widths pass every test."
                )
            )
        if pow2:
            notes.append(
                Note(
                    f"Triton block shapes must be powers of two; `{call}` is `{x}` "
                    f"itself whenever `{x}` < `{c}` and widths such as 384, 768 or 96 are "
                    f"not powers of two: the kernel fails to compile for such a model "
                    f"({_pow2_example(x, b, c, site.c_value, site.c_pow2)})."
                )
            )
        for k in live:
            if k.note is not None:
                notes.append(k.note)
            elif k is not first:
                notes.append(Note(f"also: {_need_text(k)}"))
        fix = self._fix(site, bool(div), bool(pow2))
        self.report(site.call, message, notes=notes, fix=fix)

    def _fix(self, site: _MinSite, div: bool, pow2: bool) -> PendingFix:
        x, c = _code(site.x), _code(site.c)
        # gcd(X, C) divides X by construction and is a power of two when C is,
        # so it satisfies both kinds of consumer; with a cap that is not a
        # power of two it would not satisfy a block shape.
        if div and (not pow2 or site.c_pow2):
            return PendingFix(
                title=(
                    f"Use `math.gcd({x}, {c})`: the largest block not above {c} that divides "
                    f"{x} (changes the block for widths that are not multiples of {c})"
                ),
                applicability=Applicability.UNSAFE,
                replacements=[(site.call, f"math.gcd({x}, {c})")],
                add_imports=["math"],
            )
        return PendingFix(
            title=(
                f"Round up with `triton.next_power_of_2({x})` (capped at {c}) and mask the "
                f"tail in the kernel (`offs < {x}`)"
            ),
            applicability=Applicability.DISPLAY_ONLY,
        )


def _call_text(call: cst.Call) -> str:
    """The call as written, without comments or line breaks."""
    return f"min({', '.join(_code(a.value) for a in call.args)})"


def _need_text(c: _Consumer) -> str:
    return c.where


def _kernel_consumer(kname: str, param: str, need: Need, facts: KernelFacts) -> _Consumer:
    if need.kind == "pow2":
        where = f"`{kname}` uses it as `{param}` in `{need.op}`, which needs a power of two"
        note = f"`{kname}` needs `{param}` to be a power of two: it is a block shape in `{need.op}`"
    else:
        where = f"`{kname}` requires it as `{param}` in `{need.op}(... % {param} == 0)`"
        note = f"`{kname}` requires its input to be divisible by `{param}` (`{need.op}`)"
    return _Consumer(
        need.kind,
        where,
        Note(note, path=facts.path, span=Span(*need.span)),
        host=False,
    )


def _div_example(x: str, b: str, c: str, cv: int | None) -> str:
    if cv is None:
        return f"any `{x}` above `{c}` that is not a multiple of it leaves a remainder"
    # A realistic width: for a power-of-two cap, 1.5 * C is a multiple of C/2
    # (so still "aligned" to a large power of two, as real widths are) but
    # not of C; for any other cap the next power of two above it, which no
    # such cap divides (and which a width tested for a power of two can be).
    xv = cv * 3 // 2 if _is_pow2(cv) else 1 << cv.bit_length()
    return f"{x}={xv} → {b}={cv}, {xv} % {cv} = {xv % cv}"


def _pow2_example(x: str, b: str, c: str, cv: int | None, c_pow2: bool) -> str:
    if cv is None:
        return f"any `{x}` below `{c}` that is not a power of two passes through unchanged"
    if not _is_pow2(cv):
        # every X at or above the cap yields the cap itself
        xv = 1 << cv.bit_length()
        return f"{x}={xv} → {b}={cv}, not a power of two"
    # 3/4 of a power-of-two cap lies between C/2 and C and is three times a
    # power of two: the kind of width real models have (768, 384, 96).
    xv = cv * 3 // 4
    return f"{x}={xv} → {b}={xv}, not a power of two"


def _constant_like(e: cst.BaseExpression, env: _Env) -> bool:
    """An imported or module-level UPPER_CASE name: a cap chosen by the
    author, though its value is not visible here."""
    name = dotted(e)
    if not name:
        return False
    leaf = name.rsplit(".", 1)[-1]
    if not (leaf.isupper() and any(ch.isalpha() for ch in leaf)):
        return False
    head = name.split(".", 1)[0]
    return head not in env.params and (head not in env.local or env.is_module)


def _knobs(fn: cst.FunctionDef) -> frozenset[str]:
    out = set()
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        d = param.default
        if d is None:
            continue
        v = int_literal(d)
        if (v is not None and _is_pow2(v)) or (v is None and _upper_name(d)):
            out.add(param.name.value)
    return frozenset(out)


def _upper_name(e: cst.BaseExpression) -> bool:
    name = dotted(e)
    if not name:
        return False
    leaf = name.rsplit(".", 1)[-1]
    return leaf.isupper() and any(ch.isalpha() for ch in leaf)


def _pinned(site: _MinSite, scope: _Scope, env: _Env, values: _Values) -> bool:
    """``assert D == 256`` or ``if n not in (64, 128): raise`` in the same
    function: the width is fixed, ``min`` of it is a constant."""
    same_x = _SameX(site.x, env)
    for cmp, holds in scope.pins:
        if len(cmp.comparisons) != 1:
            continue
        op = cmp.comparisons[0].operator
        left, right = cmp.left, cmp.comparisons[0].comparator
        if not isinstance(op, (cst.Equal, cst.In) if holds else (cst.NotEqual, cst.NotIn)):
            continue
        for a, b in ((left, right), (right, left)):
            if not same_x(a):
                continue
            if isinstance(op, (cst.Equal, cst.NotEqual)) and values.const(b) is not None:
                return True
            if (
                isinstance(op, (cst.In, cst.NotIn))
                and b is right
                and isinstance(b, (cst.Tuple, cst.List, cst.Set))
                and b.elements
                and all(values.const(el.value) is not None for el in b.elements)
            ):
                return True
    return False


def _names_block(e: cst.CSTNode, family: set[str]) -> bool:
    return isinstance(e, cst.Name) and e.value in family


def _family(name: str, local: Mapping[str, list[object]]) -> set[str]:
    """``name`` and every name bound only to a member (``tile = BLOCK``)."""
    fam = {name}
    changed = True
    while changed:
        changed = False
        for n, binds in local.items():
            if n in fam or not binds:
                continue
            if all(isinstance(b, cst.Name) and b.value in fam for b in binds):
                fam.add(n)
                changed = True
    return fam


class _SameX:
    """Whether an expression denotes the same width as the ``min`` argument:
    equal code, or a name bound once to it (``h = x.shape[1]``)."""

    def __init__(self, x: cst.BaseExpression, env: _Env) -> None:
        self.env = env
        self.target = self._canon(x)

    def _canon(self, e: cst.CSTNode, depth: int = 0) -> str:
        if isinstance(e, cst.Name) and depth < 4:
            binds = self.env.local.get(e.value)
            if binds and len(binds) == 1 and isinstance(binds[0], cst.BaseExpression):
                b = binds[0]
                if isinstance(b, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and not (
                    isinstance(b, cst.Call) and call_name(b) == "min"
                ):
                    return self._canon(b, depth + 1)
        if isinstance(e, cst.Call) and call_name(e) == "int" and len(e.args) == 1:
            return self._canon(e.args[0].value, depth)
        return _code(e)

    def __call__(self, e: cst.CSTNode) -> bool:
        return self._canon(e) == self.target


def _guards(site: _MinSite, scope: _Scope) -> tuple[bool, bool, bool]:
    """(divisibility guard, ceil-division present, power-of-two guard)."""
    # ``if X % B``, ``EVEN_K = X % B == 0``, ``rem = X % B``, a halving loop's
    # ``while X % B``: the remainder is looked at, so the code knows it can be
    # non-zero. Only the asserted form is a requirement.
    div_guard = any(
        isinstance(n.operator, cst.Modulo)
        and where not in ("check", "raise")
        and _names_block(n.right, site.family)
        for n, where in scope.ops
    )
    cdiv = any(any(_names_block(a.value, site.family) for a in c.args) for c in scope.cdiv_calls)
    pow2_guard = any(
        any(isinstance(n, cst.Name) and n.value in site.family for n in walk(chk))
        for chk in scope.pow2_checks
    )
    # The width itself tested for a power of two (``if not is_pow2(n):
    # return ...``): with a cap that is one too, or whose value is not
    # visible here, ``min(n, C)`` is a power of two dividing ``n`` on the
    # path that reaches the use (the test's polarity is not checked, as
    # for the block's own test above).
    x = site.x.value if isinstance(site.x, cst.Name) else None
    if (
        x is not None
        and (site.c_pow2 or site.c_value is None)
        and any(any(isinstance(n, cst.Name) and n.value == x for n in walk(chk)) for chk in scope.pow2_checks)
    ):
        return True, cdiv, True
    return div_guard, cdiv, pow2_guard


def _loop_handles_tail(loop: cst.For) -> bool:
    """A loop body that clips (``min``/``max``), slices (Python slices clip),
    compares (a mask) or branches is taken to handle the last partial block."""
    for n in walk(loop.body):
        if isinstance(n, (cst.Slice, cst.Comparison, cst.If, cst.IfExp)):
            return True
        if isinstance(n, cst.Call) and call_name(n) in ("min", "max"):
            return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo):
            return True
    return False


def _launch_args(call: cst.Call, params: Sequence[str]) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(kernel parameter, argument) pairs of a launch; positional arguments
    are mapped until the first ``*args``."""
    i = 0
    positional = True
    for a in call.args:
        if a.keyword is not None:
            yield a.keyword.value, a.value
        elif a.star:
            positional = False
        elif positional:
            if i < len(params):
                yield params[i], a.value
            i += 1


def _inline_mins(call: cst.Call) -> list[tuple[str, cst.Call]]:
    return [
        (a.keyword.value, a.value)
        for a in call.args
        if a.keyword is not None and isinstance(a.value, cst.Call) and call_name(a.value) == "min"
    ]
