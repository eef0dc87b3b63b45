"""SHD401 repeated-budget-division (seed 002)."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from checks._helpers import (
    ascii_lower,
    ast_dotted,
    call_name,
    child_nodes,
    dotted,
    function_bodies_at,
    last_name,
    lines_with,
    memo_last_text,
    memo_on_tree,
    name_matches,
    walk_fast,
)
from checks._textfunctions import delimit, narrow_classes, regions_at, skeleton_to, top_level_regions
from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.rule import Option, PendingFix, Rule, RuleContext
from linter.types import Applicability, Severity

DEFAULT_BUDGETS = (
    "num_blocks",
    "num_gpu_blocks",
    "num_cpu_blocks",
    "*_budget",
    "*memory*",
    "*_bytes",
    "max_num_*",
    "max_total_*",
    "max_running_requests",
)

# Parallel-group sizes. `*_tp_size`-style prefixes cover SGLang's `attn_tp_size`,
# `moe_ep_size`, `attn_dp_size`. Sizes that are not parallel groups (`page_size`,
# `block_size`, `ring_size`) are deliberately absent.
DEFAULT_SIZES = (
    "dp_size",
    "ep_size",
    "tp_size",
    "pp_size",
    "cp_size",
    "dcp_size",
    "pcp_size",
    "*_dp_size",
    "*_ep_size",
    "*_tp_size",
    "*_pp_size",
    "*_cp_size",
    "world_size",
    "*_world_size",
    "*_parallel_size",
)

# Calls that keep the value of their one budget-derived argument (clamps,
# conversions, roundings): `max(1, num_blocks // dp_size)` is still a share.
_PASS_THROUGH = frozenset(
    {"int", "max", "min", "floor", "ceil", "round", "abs", "round_up", "round_down", "align"}
)
# Ceiling divisions written as calls: `cdiv(num_blocks, dp_size)`.
_DIV_CALLS = frozenset({"cdiv", "ceil_div", "ceildiv", "div_ceil", "div_round_up"})
# Calls that write a value back into shared configuration. A budget divided
# into one of their keywords of the same name is divided again on every call.
_OVERRIDE_CALL = re.compile(r"(^|_)(override|overrides|update|set|patch)($|_)|^setattr$", re.I)
# Calls whose result is a private object: dividing its fields in place is a
# one-time derivation, not a mutation of shared state.
_FRESH_CALLS = frozenset({"deepcopy", "copy", "replace", "clone", "dict", "list"})


@dataclass(frozen=True)
class _Step:
    size: str  # the divisor as written
    code: str  # the expression or statement that divided, for the message


def _bare_code(ctx: Any, node: cst.CSTNode) -> str:
    """A divisor as written, without the parentheses around it (``(\n
    ep_size\n)`` names ``ep_size``)."""
    if isinstance(node, cst.BaseExpression) and (node.lpar or node.rpar):
        node = node.with_changes(lpar=[], rpar=[])
        return cst.Module(body=[]).code_for_node(node)
    return ctx.code_for(node)


@dataclass(frozen=True)
class _Chain:
    """A value derived from one budget by zero or more splits over parallel sizes."""

    budget: str
    steps: tuple[_Step, ...]
    nodes: frozenset[int]  # ids of the division nodes inside the expression

    def plus(self, step: _Step, node: cst.CSTNode) -> _Chain:
        return _Chain(self.budget, (*self.steps, step), self.nodes | {id(node)})



_SIZE_WORDS = ("dp_size", "ep_size", "tp_size", "pp_size", "cp_size", "world_size", "parallel_size")
_BUDGET_WORDS = ("blocks", "budget", "memory", "bytes", "max_num_", "max_total_", "max_running")

# -- prefilter: the text a finding needs, before any parse ----------------------
# Derived from the rule (the options are not known yet: see the docstring's
# Options section). Every finding divides by a parallel size at least once:
# `x // s`, `x / s`, `x //= s`, `x /= s` with `s` a name, an attribute (of
# anything: `cfg.groups[0].dp_size`) or a getter called without arguments
# whose last name holds a size word, or `cdiv(x, s)`-style calls
# (``_is_size``, ``_chain``, ``_aug``). A chain finding divides twice, at two
# division sites; a finding with one division stores the split under a budget
# name (an attribute assigned, `//=`/`/=`, or a keyword: `num_blocks=`). The
# budget itself can reach the division through local copies on other lines,
# so only its word anywhere in the function is required.
_SIZE_FIND = re.compile(
    r"(?i)_size(?:(?<=[detpc]p_size)|(?<=world_size)|(?<=parallel_size))"
).finditer
_BLANKS = " \t\n\r\f\\"
# a budget name followed by an assignment's, a divide-assignment's or a
# keyword's `=`, or by a `:` (an annotated assignment) (lower case)
_BUDGET_STORE = re.compile(
    r"(?:blocks|budget|memory|bytes|max_num_|max_total_|max_running)\w*[\s)\\/]*(?:=(?!=)|:)"
).search


def _skip_group_back(text: str, j: int) -> int | None:
    """The index before the bracket that opens the group closing at ``j``,
    or None when a string or comment inside makes it unsure."""
    depth = 0
    while j >= 0:
        ch = text[j]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            depth -= 1
            if depth == 0:
                return j - 1
        elif ch in "'\"#":
            return None
        j -= 1
    return -1


def _text_divisor(text: str, i: int) -> bool:
    """Whether the name starting at ``i`` may be (the last name of) a
    divisor: what precedes it, skipping a dotted chain with its calls and
    subscripts, is a `/`, a `/=`, a `(` right after one, or the argument
    list of a ceiling-division call. Unsure (strings, comments, a line
    above that may end in a comment: `// (  # why` then the name): True."""
    j = i - 1
    while j >= 0:
        c = text[j]
        if c.isalnum() or c == "_" or c == "." or c in _BLANKS:
            if c == "\n" and "#" in text[text.rfind("\n", 0, j) + 1 : j]:
                return True
            j -= 1
            continue
        if c in ")]}":
            k = _skip_group_back(text, j)
            if k is None:
                return True
            j = k
            continue
        if c == "/":
            return True
        if c == "=":
            return j > 0 and text[j - 1] == "/"
        if c not in "(,":
            return False
        if c == ",":
            # the argument list this argument belongs to
            depth = 0
            j -= 1
            while j >= 0:
                ch = text[j]
                if ch in ")]}":
                    depth += 1
                elif ch in "([{":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch in "'\"#":
                    return True
                j -= 1
            if j < 0 or text[j] != "(":
                return False
        e = j - 1
        while e >= 0 and text[e] in _BLANKS:
            e -= 1
        if e >= 0 and text[e] == "/":
            return True  # `x // (cfg.dp_size)`
        if e >= 0 and text[e] == ")":
            # a bracketed callee, `(cdiv)(x, dp_size)` (or a call's result)
            k = _skip_group_back(text, e)
            if k is None:
                return True
            name = text[k + 2 : e].strip(_BLANKS + "()").rsplit(".", 1)[-1].strip(_BLANKS)
            return any(name.endswith(w) for w in _DIV_CALLS)
        if c == "(" and (e < 0 or not (text[e].isalnum() or text[e] == "_")):
            j = e  # a grouping parenthesis (`cdiv(x, (dp_size))`): look past it
            continue
        s = e
        while s >= 0 and (text[s].isalnum() or text[s] == "_"):
            s -= 1
        name = text[s + 1 : e + 1]
        return any(name.endswith(w) for w in _DIV_CALLS)
    return False


def _text_size_divisions(text: str, enough: int) -> int:
    """How many size words stand as divisors (counting up to ``enough``)."""
    n = 0
    for m in _SIZE_FIND(text):
        i = m.start()
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            i -= 1
        if _text_divisor(text, i):
            n += 1
            if n >= enough:
                break
    return n


@memo_last_text
def _text_size_sites(text: str) -> list[int]:
    """The positions of every size word standing as a divisor
    (``_text_divisor``; the text gate and the scope of one text share them)."""
    out = []
    for m in _SIZE_FIND(text):
        i = m.start()
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            i -= 1
        if _text_divisor(text, i):
            out.append(m.start())
    return out


# -- per function, by text ------------------------------------------------------
# Every finding is made inside one function body (``leave_FunctionDef`` walks
# the body alone; see the ast prefilter below), so the words above must meet
# in one function: its budget word, its divisions and its store. Functions
# are delimited on a skeleton of the file (``checks._textfunctions``); the
# words are then looked for in the text of the span from the `def` to the end
# of its body (nested definitions, strings and comments included: only ever
# more). Whenever the skeleton may differ from Python's own tokens the
# file-wide test decides.


def _statements(sk: str, start: int, end: int) -> list[tuple[int, int]]:
    """The logical lines of the skeleton between ``start`` and ``end`` (a
    line break ends one outside brackets and not after a backslash), each
    split at its top-level semicolons."""
    out = []
    a = start
    depth = 0
    pos = start
    while True:
        nl = sk.find("\n", pos, end)
        stop = end if nl < 0 else nl
        piece = sk[pos:stop]
        for ch in "([{":
            depth += piece.count(ch)
        for ch in ")]}":
            depth -= piece.count(ch)
        if nl < 0 or (depth <= 0 and sk[nl - 1 : nl] != "\\"):
            out.append((a, stop))
            a = stop + 1
            depth = 0
            if nl < 0:
                break
        pos = nl + 1
    split = []
    for a, b in out:
        j = sk.find(";", a, b)
        if j < 0:
            split.append((a, b))
            continue
        # semicolons inside brackets (none in valid code outside strings,
        # but keep the statement whole then)
        k = a
        while j >= 0:
            seg = sk[k:j]
            if sum(seg.count(c) for c in "([{") == sum(seg.count(c) for c in ")]}"):
                split.append((k, j))
                k = j + 1
            j = sk.find(";", j + 1, b)
        split.append((k, b))
    return split


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").findall
# a target's last name: not followed by a `.` (``self.per`` -> ``per``)
_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_]|\s*\.)").findall
_ASSIGN_EQ = re.compile(r"(?<![=<>!])=(?!=)").search


def _lhs(sk: str, a: int, b: int) -> str | None:
    """The text before the last top-level ``=`` of the statement (every
    target of an assignment, a chained, annotated or augmented one), or
    None."""
    pos = a
    out = None
    while (m := _ASSIGN_EQ(sk, pos, b)) is not None:
        j = m.start()
        seg = sk[a:j]
        if sum(seg.count(c) for c in "([{") == sum(seg.count(c) for c in ")]}"):
            out = seg
        pos = j + 1
    return out


def _budget_sites(text: str, sk: str, start: int, end: int, sites: list[int]) -> int:
    """How many of ``sites`` (in one function's span) stand in a statement
    that mentions a budget word or a name a budget can flow into: the last
    names of the targets of assignments (plain, annotated, augmented, chained
    or unpacking) whose statement mentions a budget word or such a name,
    closed over the function in any order. Every split the rule counts
    divides a value read from a budget name or from a local it derived
    (``_chain``, ``_aug``), so its statement mentions one of them."""
    stmts = _statements(sk, start, end)
    # where the budget words stand (lower case, as everywhere above)
    low = text[start:end].lower()
    hits = []
    for w in _BUDGET_WORDS:
        i = low.find(w)
        while i >= 0:
            hits.append(start + i)
            i = low.find(w, i + 1)
    hits.sort()
    info = []  # per statement: (start, end, mentions a budget word, its names, targets)
    for a, b in stmts:
        k = bisect_left(hits, a)
        budget = k < len(hits) and hits[k] < b
        lhs = _lhs(sk, a, b) if sk.find("=", a, b) >= 0 else None
        targets = set(_TARGET(lhs)) if lhs is not None else set()
        info.append([a, b, budget, None, targets])
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for row in info:
            a, b, budget, names, targets = row
            if not targets or targets <= tainted:
                continue
            if not budget and tainted:
                if names is None:
                    names = row[3] = set(_IDENT(text[a:b]))
                budget = not names.isdisjoint(tainted)
            if budget:
                tainted |= targets
                changed = True
    n = 0
    for p in sites:
        for row in info:
            a, b, budget, names, _ = row
            if a <= p <= b:
                if not budget and tainted:
                    if names is None:
                        names = set(_IDENT(text[a:b]))
                    budget = not names.isdisjoint(tainted)
                n += budget
                break
        else:
            n += 1  # not inside a statement read here: count it
    return n


_BUDGET_BYTES = tuple(w.encode("ascii") for w in _BUDGET_WORDS)


def _budget_word_in_lower(text: str) -> bool:
    """``any(w in text.lower() for w in _BUDGET_WORDS)`` for a non-ASCII
    text, searched in its UTF-8 bytes lower-cased (about four times faster).
    The words are ASCII, and every byte of a non-ASCII character's UTF-8
    form is >= 0x80, so they match the ASCII characters alone; those
    ``bytes.lower`` lower-cases as ``str.lower`` does. Only U+0130 and
    U+212A lower-case into ASCII letters (``i`` and a combining dot, ``k``):
    a text holding one is lower-cased as a string."""
    if "\u0130" in text or "\u212a" in text:
        low = text.lower()
        return any(w in low for w in _BUDGET_WORDS)
    data = text.encode("utf-8", "surrogatepass").lower()
    return any(w in data for w in _BUDGET_BYTES)


class _CandidateNeedles(Needles):
    """The collector's needles: exactly ``RepeatedBudgetDivision.candidate``
    (lower-cased, as the rule's names are matched case-insensitively), so
    that every file the text gate admits is collected and the facts gate
    can judge it. The fields (what the registry records) are the part of
    that test that needs no lower-casing, a superset of it."""

    def _match(self, text: str) -> bool:
        return RepeatedBudgetDivision._text_gate(text)


_TEXT_NEEDLES = _CandidateNeedles(any_of=(("/", *sorted(_DIV_CALLS)),))

# -- prefilter: the shapes a finding needs, on CPython ``ast`` -------------------
# The ast gate records, per function, only what is option-independent (the
# divisors' last names of the divisions that can reach each finding site, and
# the names a budget could be read from); the facts gate matches those names
# against the effective options. Every finding is made inside one function
# body (nested functions, classes and lambdas are analysed on their own or not
# at all), so each function is summarised on its own.
#
# The rule follows a budget through an environment of local derivations
# (``_chain``: ``per_dp = num_blocks // dp_size`` then ``per_dp // ep_size``).
# The gate over-approximates it with a def-use closure: a value reaches the
# divisions a chain can flow through inside it (``_Flow._summary``) and,
# through every dotted name on that flow, everything reachable from any
# assignment to that name anywhere in the function (statement order, branches
# and rebinding ignored), so a split the rule can see along a path is always
# among the divisions the closure finds.

_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_AST_DIV = (ast.FloorDiv, ast.Div)


def _ast_leaf(e: ast.AST) -> str | None:
    """``RepeatedBudgetDivision._leaf`` on ``ast``: a name, an attribute, or a
    getter called without arguments."""
    if isinstance(e, ast.Call):
        if e.args or e.keywords:
            return None
        e = e.func
    if isinstance(e, ast.Attribute):
        return e.attr
    return e.id if isinstance(e, ast.Name) else None


def _ast_call_leaf(c: ast.Call) -> str | None:
    f = c.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _ast_div_call_args(c: ast.Call) -> list[ast.AST] | None:
    """``[x, size]`` of ``cdiv(x, size)`` (two positional arguments)."""
    if _ast_call_leaf(c) not in _DIV_CALLS:
        return None
    args = [a for a in c.args if not isinstance(a, ast.Starred)]
    return args if len(args) == 2 else None


def _ast_division(n: ast.AST) -> tuple[ast.AST, str] | None:
    """(numerator, divisor's last name) of a division the rule can count as a
    split: ``x // d``, ``x / d``, ``cdiv(x, d)`` with ``d`` a name, attribute
    or getter (a split needs ``_is_size`` of the divisor, which needs a leaf)."""
    if isinstance(n, ast.BinOp):
        if isinstance(n.op, _AST_DIV) and (leaf := _ast_leaf(n.right)) is not None:
            return n.left, leaf
    elif isinstance(n, ast.Call):
        args = _ast_div_call_args(n)
        if args is not None and (leaf := _ast_leaf(args[1])) is not None:
            return args[0], leaf
    return None


# A split needs a division (``/``, ``//``, ``/=``, ``//=``) or a
# ceiling-division call (every name in ``_DIV_CALLS`` holds "div"): a
# function with neither on its lines holds no finding.
_DIV_WORDS = ("/", "div")


_Summary = tuple[list[tuple[ast.AST, str]], set[str]]


class _Flow:
    """The def-use closure of one function (see above). ``defs`` maps a dotted
    name to what the rule's environment can take its value from: the value of
    an assignment to it (``_assign``: plain and annotated, one dotted target;
    a tuple target only forgets), or a divide-assignment ``name //= d``
    (``_aug``; other augmented operators only forget)."""

    def __init__(self, nodes: list[ast.AST]) -> None:
        self.defs: dict[str, list[ast.AST]] = {}
        for n in nodes:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if (k := ast_dotted(t)) is not None:
                        self.defs.setdefault(k, []).append(n.value)
            elif isinstance(n, ast.AnnAssign):
                if n.value is not None and (k := ast_dotted(n.target)) is not None:
                    self.defs.setdefault(k, []).append(n.value)
            elif (
                isinstance(n, ast.AugAssign)
                and isinstance(n.op, _AST_DIV)
                and (k := ast_dotted(n.target)) is not None
            ):
                self.defs.setdefault(k, []).append(n)
        self._memo: dict[int, _Summary] = {}

    def _summary(self, e: ast.AST) -> _Summary:
        """The divisions and dotted names a budget chain can flow through
        from ``e`` (``_chain_uncached``: names and attributes, unary minus,
        ``+ - *`` on both sides, the numerator of a division or of a
        ceiling-division call, the positional arguments of a pass-through
        call; anything else carries no chain). A divide-assignment: its own
        division and its target."""
        got = self._memo.get(id(e))
        if got is None:
            divs: list[tuple[ast.AST, str]] = []
            keys: set[str] = set()
            if isinstance(e, ast.AugAssign):
                if (leaf := _ast_leaf(e.value)) is not None:
                    divs.append((e, leaf))
                keys.add(ast_dotted(e.target) or "")
                self._memo[id(e)] = got = (divs, keys)
                return got
            stack = [e]
            while stack:
                x = stack.pop()
                if isinstance(x, (ast.Name, ast.Attribute)):
                    if (k := ast_dotted(x)) is not None:
                        keys.add(k)
                elif isinstance(x, ast.UnaryOp):
                    if isinstance(x.op, ast.USub):
                        stack.append(x.operand)
                elif isinstance(x, ast.BinOp):
                    if isinstance(x.op, _AST_DIV):
                        stack.append(x.left)
                        if (leaf := _ast_leaf(x.right)) is not None:
                            divs.append((x, leaf))
                    elif isinstance(x.op, (ast.Add, ast.Sub, ast.Mult)):
                        stack += (x.left, x.right)
                elif isinstance(x, ast.Call):
                    name = _ast_call_leaf(x)
                    args = [a for a in x.args if not isinstance(a, ast.Starred)]
                    if name in _DIV_CALLS:
                        if len(args) == 2:
                            stack.append(args[0])
                            if (leaf := _ast_leaf(args[1])) is not None:
                                divs.append((x, leaf))
                    elif name in _PASS_THROUGH:
                        stack += args
            self._memo[id(e)] = got = (divs, keys)
        return got

    def reach(
        self, exprs: Iterable[ast.AST], keys: Iterable[str] = (), skip: ast.AST | None = None
    ) -> tuple[set[str], set[str]]:
        """(divisors' last names, dotted names) reachable from ``exprs`` and
        ``keys``; the division ``skip`` is left out (a site's own step is
        not in the environment before the rule reaches the site: every
        statement is walked once)."""
        divisors: set[str] = set()
        seen: set[str] = set()
        todo = list(exprs)
        pending = list(keys)
        while todo or pending:
            if pending:
                k = pending.pop()
                if k in seen:
                    continue
                seen.add(k)
                todo.extend(self.defs.get(k, ()))
                continue
            divs, ks = self._summary(todo.pop())
            divisors.update(leaf for node, leaf in divs if node is not skip)
            pending.extend(k for k in ks if k not in seen)
        return divisors, seen


def _leaves(keys: Iterable[str]) -> list[str]:
    return sorted({k.rsplit(".", 1)[-1] for k in keys})


def _function_shape(nodes: list[ast.AST]) -> dict[str, Any] | None:
    """What the facts gate needs of one function, or None when no options
    can make it hold a finding. Each row names the divisors whose splits
    can reach a finding site (``_is_size`` on the facts side):

    ``c``: ``[divisor, reached divisors, reached names]`` of a division the
    rule reports as a second split (``_scan_expr``, ``_aug``: the chain of
    its numerator already holds a split, and starts at a budget name);
    ``t``: ``[attribute, reached divisors]`` of an assignment to an
    attribute whose value can carry that same attribute's budget
    (``_assign``: ``chain.budget == key``); ``a``: ``[target, divisor]`` of
    a divide-assignment into shared state (an attribute, or a name the
    function declares global); ``k``: ``[keyword, reached divisors]`` of a
    keyword argument that may write a split budget back under its own name
    (``_keyword_splits``: an override-named call, or a call stored over its
    own first argument)."""
    sites: list[tuple[ast.AST, ast.AST | None, str]] = []
    attr_targets: list[tuple[str, ast.AST]] = []
    loads: set[str] = set()
    augs: list[tuple[ast.AugAssign, str]] = []
    calls: list[ast.Call] = []
    stores: list[tuple[ast.Attribute | ast.Name, ast.Call]] = []
    shared: set[str] = set()
    for n in nodes:
        if isinstance(n, (ast.BinOp, ast.Call)):
            if (d := _ast_division(n)) is not None:
                sites.append((n, d[0], d[1]))
            if isinstance(n, ast.Call) and n.keywords:
                calls.append(n)
        elif isinstance(n, ast.Attribute):
            if isinstance(n.ctx, ast.Load) and (k := ast_dotted(n)) is not None:
                loads.add(k)
        elif isinstance(n, ast.AugAssign):
            if isinstance(n.op, _AST_DIV) and (leaf := _ast_leaf(n.value)) is not None:
                sites.append((n, None, leaf))
                augs.append((n, leaf))
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            if n.value is not None:
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    if isinstance(t, ast.Attribute) and (k := ast_dotted(t)) is not None:
                        attr_targets.append((k, n.value))
                    if isinstance(n.value, ast.Call) and isinstance(t, (ast.Attribute, ast.Name)):
                        stores.append((t, n.value))
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            shared.update(n.names)
    if not sites:
        return None  # every finding divides by a parallel size at least once
    flow = _Flow(nodes)
    chains: set[tuple[str, tuple[str, ...], tuple[str, ...]]] = set()
    if len(sites) >= 2:  # a second split needs a first one elsewhere
        for site, numerator, leaf in sites:
            if numerator is not None:
                reached, keys = flow.reach([numerator], skip=site)
            elif isinstance(site, ast.AugAssign):  # the chain `key` held before `key //= d`
                key = ast_dotted(site.target)
                if key is None:
                    continue
                reached, keys = flow.reach([], [key], skip=site)
            else:
                continue
            if reached:
                chains.add((leaf, tuple(sorted(reached)), tuple(_leaves(keys))))
    stored: dict[str, list[str]] = {}
    for key, value in attr_targets:
        # the chain's budget is a read of `key` (or a divide-assignment to it)
        if key in loads or any(isinstance(x, ast.AugAssign) for x in flow.defs.get(key, ())):
            reached, keys = flow.reach([value])
            if reached and key in keys:
                stored.setdefault(key.rsplit(".", 1)[-1], []).extend(reached)
    in_place = sorted(
        {
            (t.attr if isinstance(t, ast.Attribute) else t.id, leaf)
            for s, leaf in augs
            if isinstance(t := s.target, ast.Attribute)
            or (isinstance(t, ast.Name) and t.id in shared)
        }
    )
    keywords: dict[str, set[str]] = {}
    for c in calls:
        if not _OVERRIDE_CALL.search(_ast_call_leaf(c) or ""):
            continue
        for kw in c.keywords:
            if kw.arg:
                reached, keys = flow.reach([kw.value])
                if reached and kw.arg in _leaves(keys):
                    keywords.setdefault(kw.arg, set()).update(reached)
    for t, value in stores:
        # `_check_stored_override`: `self.cfg = replace(self.cfg, k=...)`,
        # the keyword's chain read with no environment
        if not (isinstance(t, ast.Attribute) or t.id in shared):
            continue
        # its first argument without a keyword (`*x` and `**x` included)
        # is the target; any such argument is a superset
        unnamed = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
        unnamed += [k.value for k in value.keywords if k.arg is None]
        if ast_dotted(t) not in {ast_dotted(a) for a in unnamed}:
            continue
        for kw in value.keywords:
            if kw.arg:
                divs, ks = flow._summary(kw.value)
                if divs and kw.arg in _leaves(ks):
                    keywords.setdefault(kw.arg, set()).update(leaf for _, leaf in divs)
    if not (chains or stored or in_place or keywords):
        return None
    return {
        "c": [[s, list(r), list(b)] for s, r, b in sorted(chains)],
        "t": [[t, sorted(set(r))] for t, r in sorted(stored.items())],
        "a": [list(x) for x in in_place],
        "k": [[k, sorted(r)] for k, r in sorted(keywords.items())],
    }


@memo_on_tree
def budget_shapes(tree: ast.Module, text: str) -> list[dict[str, Any]]:
    """The functions of ``tree`` (parsed from ``text``) that could hold a
    finding (memoised on the tree: the ast gate and the collector share one
    parse)."""
    hits = lines_with(text, _DIV_WORDS)
    return [
        s for nodes in function_bodies_at(tree, hits) if (s := _function_shape(nodes)) is not None
    ]


def _shape_may_fire(shape: Mapping[str, Any], budgets: Sequence[str], sizes: Sequence[str]) -> bool:
    """Whether ``shape`` can hold a finding under these names (the rule's
    ``_is_size`` and ``_is_budget_name`` on the recorded names)."""

    def is_size(leaf: str) -> bool:
        return name_matches(leaf.removeprefix("get_"), sizes)

    def is_budget(leaf: str) -> bool:
        return name_matches(leaf, budgets) and not name_matches(leaf, sizes)

    def any_size(leaves: Iterable[str]) -> bool:
        return any(is_size(x) for x in leaves)

    # a budget split by a size, then again by a size along one path
    if any(
        is_size(s) and any_size(r) and any(is_budget(x) for x in b) for s, r, b in shape["c"]
    ):
        return True
    # a split budget stored into the attribute it was read from
    if any(is_budget(t) and any_size(r) for t, r in shape["t"]):
        return True
    if any(is_budget(t) and is_size(d) for t, d in shape["a"]):
        return True  # `self.num_blocks //= dp_size`
    # a split budget written back under its own name through a keyword
    return any(is_budget(kw) and any_size(r) for kw, r in shape["k"])


@memo_last_text
def _functions_passing(text: str) -> list[tuple[int, int]] | None:
    """The spans of the functions whose text passes the test (see the
    prefilter section), or None where functions cannot be delimited (the
    file-wide test then decides). The text gate and the scope of one text
    share the answer."""
    sites = _text_size_sites(text)
    got = delimit(text, sites)
    if got is None:
        return None
    sk, cut = got.skeleton, got.cut
    out: list[tuple[int, int]] = []
    for start, end in got.spans:
        if end >= cut:
            end = len(text)
        i = bisect_left(sites, start)
        n = bisect_left(sites, end) - i
        if n == 0:
            continue
        low = text[start:end].lower()
        if not any(w in low for w in _BUDGET_WORDS):
            continue
        if not (n >= 2 or _BUDGET_STORE(low) is not None):
            continue
        # (a body open at the cut has no statements to read: it passes)
        if end <= len(sk):
            n = _budget_sites(text, sk, start, end, sites[i : i + n])
            if not (n >= 2 or (n == 1 and _BUDGET_STORE(low) is not None)):
                continue
        out.append((start, end))
    return out


# -- what the ast readers read -------------------------------------------------
# Under the default names every finding is made inside one function whose
# text passes the raw-text prefilter's test (the section "per function, by
# text": its words are those of the default names), so this rule's ast
# readers (its gate, ``BudgetDivisionShapes``) and its check then read only
# the top-level statements that hold such a function; the other statements'
# lines are blanked before the file is compiled or parsed (the engine's
# scopes, ``Rule.ast_scope``). With configured names a function the test
# passes over may hold one (a file another function let in is read whole).


def _scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """The top-level regions holding a function the text test passes
    (None: all, under configured names, or where functions or statements
    cannot be delimited)."""
    own = options.get("SHD401", {})
    if tuple(own.get("budget-names", DEFAULT_BUDGETS)) != tuple(DEFAULT_BUDGETS) or tuple(
        own.get("parallel-size-names", DEFAULT_SIZES)
    ) != tuple(DEFAULT_SIZES):
        return None
    spans = _functions_passing(text)
    if not spans:
        return None  # (no function passed: the file-wide test admitted it)
    regions = top_level_regions(text)
    if regions is None:
        return None
    return [regions[k] for k in sorted(regions_at(regions, (a for a, _ in spans)))]


def _scan_scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """``_scope``, and in its classes only the methods holding a function
    the text test passes (with every statement of the class body that is
    no method): the readers summarise each function alone, and a function
    the test passes over holds no finding under the default names (see
    ``narrow_classes``). The libcst check reads the classes whole."""
    spans = _scope(text, options)
    if not spans:
        return spans
    passing = sorted(a for a, _ in _functions_passing(text) or ())
    if not passing:
        return spans
    sk = skeleton_to(text, len(text))
    return narrow_classes(sk, spans, lambda a, b: bisect_left(passing, a) < bisect_left(passing, b))


class BudgetDivisionShapes(FactCollector):
    """Per module, the functions that could hold a SHD401 finding, with the
    names the facts gate matches against the effective options. Read only
    by the gate."""

    name = "budget_division_shapes"
    # 3: only the top-level statements in ``_scope``
    version = 3
    needles = _TEXT_NEEDLES

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        # always something for a collected file, so that the facts gate can
        # tell "nothing here" from "not collected"; the path tells two files
        # of one module name apart
        return {"path": path, "functions": budget_shapes(tree, text)}


class RepeatedBudgetDivision(Rule):
    """## What it finds
    A global budget (KV-cache blocks, memory bytes, request or token slots) that
    is split over parallel groups more than once along one path, or that is
    divided in place and stored back into shared state:

    - `num_blocks // dp_size // ep_size`, or `per_dp = num_blocks // dp_size`
      followed by `per_dp // ep_size` in the same function (simple local
      derivations, clamps such as `max(1, ...)` and `cdiv` are followed);
    - `cfg.num_blocks = cfg.num_blocks // dp_size`, `self.max_num_seqs //= dp_size`,
      `override(num_blocks=num_blocks // dp_size)`.

    ## Why it breaks
    A budget must be split exactly once per parallel dimension that owns a share
    of it. With expert + data parallelism, one code path divides the KV-cache
    blocks by `dp_size` and another divides the result again by `ep_size`; the
    ranks then disagree on the block table's shape and start-up fails with
    `RuntimeError: shape mismatch` at KV-cache init (or, worse, some ranks run
    with a fraction of their memory). An in-place division of shared state is
    correct the first time and wrong the second: a re-run `__post_init__`
    (`dataclasses.replace`), a second engine in the process, or a retry after
    profiling divides the already-divided budget again.

    ## Example
    See the flagged and correct corpus examples below.

    ## Fix
    Split the global budget once per parallel dimension that owns a share of it,
    in one place, into a new name (`blocks_per_dp_rank`), and make the ranks agree
    (a min all-reduce or an equality assert) before sizing shared structures.
    Never divide a configuration field in place. The rule offers this as a
    suggestion only: which division is the extra one depends on ownership.

    ## Options
    - `budget-names` (list of globs, case-insensitive, matched against the last
      name component): names of global budgets. Default: `num_blocks`,
      `num_gpu_blocks`, `num_cpu_blocks`, `*_budget`, `*memory*`, `*_bytes`,
      `max_num_*`, `max_total_*`, `max_running_requests`.
    - `parallel-size-names` (list of globs): names of parallel-group sizes,
      also matched on the attribute of `parallel_config.data_parallel_size` and
      on getters such as `get_tensor_model_parallel_world_size()`. Default:
      `dp_size`, `ep_size`, `tp_size`, `pp_size`, `cp_size`, `dcp_size`,
      `pcp_size`, `*_dp_size`, `*_ep_size`, `*_tp_size`, `*_pp_size`,
      `*_cp_size`, `world_size`, `*_world_size`, `*_parallel_size`.
    A name matching both lists is treated as a parallel size (topology
    arithmetic such as `tp_size // dp_size // cp_size` is never a budget).
    Both options are fully honoured by the `ast` and facts prefilters. Only
    the raw-text prefilter runs before options are known: a file is analysed
    only if it holds a division (`/`, `cdiv`, `ceil_div`, `ceildiv`,
    `div_ceil`, `div_round_up`) and, in the text of one function (from its
    `def` to the end of its body), one of the lower-cased budget words
    `blocks`, `budget`, `memory`, `bytes`, `max_num_`, `max_total_`,
    `max_running`; and either two divisors, or one divisor and a budget word
    before an assignment's or keyword's `=` (or an annotation's `:`), each
    in a statement that mentions a budget word or a name assigned (directly
    or through other names) from a statement that does, and whose
    last name holds one of
    the default size words `dp_size`, `ep_size`, `tp_size`, `pp_size`,
    `cp_size`, `world_size`, `parallel_size` (any case; even when the
    configured sizes are other names). So a configured budget name should
    contain one of the budget words, and a configured size one of the size
    words. Under the default names a finding is made within one function
    that passes this test, so the `ast` and facts prefilters and the check
    then read only the top-level statements (a class, a function) holding
    such a function (the `ast` prefilters, of such a class, only the
    methods holding one); with configured names they read the whole file.
    """

    code = "SHD401"
    name = "repeated-budget-division"
    summary = (
        "A global budget is split over parallel groups twice, or divided in place in shared state"
    )
    severity = Severity.ERROR
    tags = ("correctness", "parallelism")
    options = {
        "budget-names": Option(DEFAULT_BUDGETS, "list[str]", "Globs naming global budgets."),
        "parallel-size-names": Option(
            DEFAULT_SIZES, "list[str]", "Globs naming parallel-group sizes."
        ),
    }

    # A budget-like word and a division within one logical neighbourhood. The
    # default names all carry one of these words; a project configuring names
    # without them is not prefiltered correctly (the prefilter cannot see options).
    facts = ("budget_division_shapes",)
    _BUDGET_WORDS = _BUDGET_WORDS
    _SIZE_WORDS = _SIZE_WORDS
    _SIZE_SEARCH = re.compile(
        r"(?i)_size(?:(?<=[detpc]p_size)|(?<=world_size)|(?<=parallel_size))"
    ).search

    @classmethod
    def candidate(cls, text: str) -> bool:
        # the collector's needles run this same test first: the answer is
        # remembered for the text (``Needles.match``)
        return _TEXT_NEEDLES.match(text)

    @classmethod
    def _text_gate(cls, text: str) -> bool:
        # plain substring tests first, the divisor scan last (see the
        # prefilter section above)
        if "/" not in text and not any(w in text for w in _DIV_CALLS):
            return False
        # `any(w in text.lower() for w in _SIZE_WORDS)` in one scan led by the
        # literal `_` (case-insensitive: ``re`` then also folds a few
        # non-ASCII letters, only ever admitting more), before lower-casing
        if cls._SIZE_SEARCH(text) is None:
            return False
        if text.isascii():
            low: str | None = ascii_lower(text)  # (shared: SHD302's gate lowered it)
            if not any(w in low for w in cls._BUDGET_WORDS):  # type: ignore[operator]
                return False
        else:
            low = None  # lower-casing a non-ASCII text is slow: only when needed
            if not _budget_word_in_lower(text):
                return False
        sites = _text_size_sites(text)
        n = len(sites)
        if n == 0:
            return False
        if n == 1 and _BUDGET_STORE(text.lower() if low is None else low) is None:
            return False
        return cls._function_gate(text)

    @classmethod
    def _function_gate(cls, text: str) -> bool:
        """The same test within each function (see the prefilter section)."""
        spans = _functions_passing(text)
        return spans is None or bool(spans)

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        # a division whose numerator can already carry a split, a split that
        # can reach the attribute it was read from, a divide-assignment into
        # shared state, or a split that can reach a keyword of its own name
        # (see ``_function_shape``)
        return bool(budget_shapes(tree, text))

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        shapes = facts.raw("budget_division_shapes").get(module)
        if shapes is None or shapes.get("path") != path:
            return True  # not collected (or another file of this module name): no claim
        budgets = tuple(options["budget-names"])
        sizes = tuple(options["parallel-size-names"])
        return any(_shape_may_fire(f, budgets, sizes) for f in shapes["functions"])

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._budgets: tuple[str, ...] = tuple(self.opts["budget-names"])
        self._sizes: tuple[str, ...] = tuple(self.opts["parallel-size-names"])
        self._reported: set[int] = set()
        self._size_cache: dict[str, bool] = {}
        self._stack: list[list[Any]] = []
        self._budget_cache: dict[str, bool] = {}

    # -- classification -------------------------------------------------------
    def _leaf(self, node: cst.CSTNode) -> str | None:
        """The last name of a name, attribute (also on a call result) or getter call."""
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return node.attr.value
        if isinstance(node, cst.Call) and not node.args:
            return last_name(dotted(node.func))
        return None

    def _is_size(self, node: cst.CSTNode) -> bool:
        leaf = self._leaf(node)
        if leaf is None:
            return False
        hit = self._size_cache.get(leaf)
        if hit is None:
            hit = name_matches(leaf.removeprefix("get_"), self._sizes)
            self._size_cache[leaf] = hit
        return hit

    def _is_budget_name(self, name: str | None) -> bool:
        if name is None:
            return False
        leaf = name.rsplit(".", 1)[-1]
        hit = self._budget_cache.get(leaf)
        if hit is None:
            hit = name_matches(leaf, self._budgets) and not name_matches(leaf, self._sizes)
            self._budget_cache[leaf] = hit
        return hit

    # -- the walk ---------------------------------------------------------------
    # The traversal only notes which functions divide at all; the statement
    # walk runs on those alone, when the function is left.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append([node, False])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        node, divides = self._stack.pop()
        if divides:
            self._block(node.body, {}, set(), assigned=set())

    def _mark(self) -> None:
        if self._stack:
            self._stack[-1][1] = True

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.FloorDivide, cst.Divide)):
            self._mark()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.FloorDivideAssign, cst.DivideAssign)):
            self._mark()

    def visit_Call(self, node: cst.Call) -> None:
        if _leaf_of_call(node) in _DIV_CALLS:
            self._mark()

    def _block(
        self,
        body: cst.BaseSuite | Sequence[cst.BaseStatement] | None,
        env: dict[str, _Chain],
        fresh: set[str],
        assigned: set[str],
    ) -> None:
        if body is None:
            return
        stmts: Iterable[cst.CSTNode]
        if isinstance(body, cst.IndentedBlock):
            stmts = body.body
        elif isinstance(body, cst.SimpleStatementSuite):
            stmts = body.body
        elif isinstance(body, (list, tuple)):
            stmts = body
        else:
            return
        for s in stmts:
            self._stmt(s, env, fresh, assigned)

    def _stmt(
        self, s: cst.CSTNode, env: dict[str, _Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                self._small(small, env, fresh, assigned)
        elif isinstance(s, (cst.BaseSmallStatement,)):
            self._small(s, env, fresh, assigned)
        elif isinstance(s, cst.If):
            self._scan_expr(s.test, env)
            branch_envs = []
            e1 = dict(env)
            self._block(s.body, e1, fresh, assigned)
            branch_envs.append(e1)
            e2 = dict(env)
            if isinstance(s.orelse, cst.If):
                self._stmt(s.orelse, e2, fresh, assigned)
            elif isinstance(s.orelse, cst.Else):
                self._block(s.orelse.body, e2, fresh, assigned)
            branch_envs.append(e2)
            # After the branches a name holds whichever derivation its branch
            # made; keep one that either branch made so a later split is seen.
            merged: dict[str, _Chain] = {}
            for e in branch_envs:
                for k, v in e.items():
                    old = merged.get(k)
                    if old is None or len(v.steps) > len(old.steps):
                        merged[k] = v
            env.clear()
            env.update(merged)
        elif isinstance(s, (cst.For, cst.While)):
            self._scan_expr(s.iter if isinstance(s, cst.For) else s.test, env)
            self._block(s.body, env, fresh, assigned)
            if s.orelse is not None:
                self._block(s.orelse.body, env, fresh, assigned)
        elif isinstance(s, cst.With):
            for item in s.items:
                self._scan_expr(item.item, env)
            self._block(s.body, env, fresh, assigned)
        elif isinstance(s, (cst.Try, cst.TryStar)):
            self._block(s.body, env, fresh, assigned)
            for h in s.handlers:
                self._block(h.body, dict(env), fresh, assigned)
            if s.orelse is not None:
                self._block(s.orelse.body, env, fresh, assigned)
            if s.finalbody is not None:
                self._block(s.finalbody.body, env, fresh, assigned)
        # Nested functions and classes are visited on their own.

    def _small(
        self,
        s: cst.BaseSmallStatement,
        env: dict[str, _Chain],
        fresh: set[str],
        assigned: set[str],
    ) -> None:
        if isinstance(s, cst.Global | cst.Nonlocal):
            for n in s.names:
                fresh.discard(n.name.value)
                assigned.add("<shared>" + n.name.value)
            return
        if isinstance(s, cst.Assign):
            value = s.value
            chain = self._scan_expr(value, env)
            for t in s.targets:
                self._assign(t.target, value, chain, env, fresh, assigned, stmt=s)
            return
        if isinstance(s, cst.AnnAssign):
            if s.value is not None:
                chain = self._scan_expr(s.value, env)
                self._assign(s.target, s.value, chain, env, fresh, assigned, stmt=s)
            return
        if isinstance(s, cst.AugAssign):
            self._aug(s, env, fresh, assigned)
            return
        for child in s.children:
            if isinstance(child, cst.BaseExpression):
                self._scan_expr(child, env)

    # -- assignments --------------------------------------------------------------
    def _assign(
        self,
        target: cst.BaseAssignTargetExpression,
        value: cst.BaseExpression,
        chain: _Chain | None,
        env: dict[str, _Chain],
        fresh: set[str],
        assigned: set[str],
        stmt: cst.CSTNode,
    ) -> None:
        key = dotted(target)
        if key is None:
            for n in _target_names(target):
                env.pop(n, None)
                fresh.discard(n)
            return
        if (
            chain is not None
            and chain.steps
            and isinstance(target, cst.Attribute)
            and chain.budget == key
            and key not in assigned
            and not self._fresh_owner(key, fresh)
        ):
            self._report_in_place(stmt, key, chain)
        if isinstance(target, cst.Attribute) or ("<shared>" + key) in assigned:
            self._check_stored_override(value, key, fresh)
        assigned.add(key)
        if isinstance(target, cst.Name):
            if isinstance(value, cst.Call) and self._is_fresh_call(value):
                fresh.add(key)
            else:
                fresh.discard(key)
        # Rebinding a name forgets what was derived through it.
        for k in [k for k in env if k == key or k.startswith(key + ".")]:
            del env[k]
        if chain is not None:
            if chain.steps:
                chain = _named_steps(chain, self.ctx.code_for(stmt).strip())
            env[key] = chain

    def _aug(
        self, s: cst.AugAssign, env: dict[str, _Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        self._scan_expr(s.value, env)
        key = dotted(s.target)
        if key is None or not isinstance(s.operator, (cst.FloorDivideAssign, cst.DivideAssign)):
            if key is not None:
                env.pop(key, None)
            return
        if not self._is_size(s.value):
            return
        before = env.get(key)
        if before is None:
            if not self._is_budget_name(last_name(key)):
                return
            before = _Chain(key, (), frozenset())
        code = self.ctx.code_for(s).strip()
        chain = before.plus(_Step(_bare_code(self.ctx, s.value), code), s)
        shared = (
            isinstance(s.target, cst.Attribute) and not self._fresh_owner(key, fresh)
        ) or ("<shared>" + key) in assigned
        if shared and key not in assigned and not before.steps:
            self._report_in_place(s, key, chain)
        elif len(chain.steps) >= 2:
            self._report_chain(s, chain)
        env[key] = chain

    def _fresh_owner(self, key: str, fresh: set[str]) -> bool:
        """Whether the object owning attribute ``key`` was made in this function."""
        root = key.split(".", 1)[0]
        return root in fresh

    def _is_fresh_call(self, call: cst.Call) -> bool:
        leaf = last_name(call_name(call))
        if leaf is None:
            return False
        return leaf in _FRESH_CALLS or (leaf[:1].isupper() and not leaf.isupper())

    def _check_stored_override(self, value: cst.BaseExpression, key: str, fresh: set[str]) -> None:
        """`self.cfg = replace(self.cfg, num_blocks=self.cfg.num_blocks // dp_size)`:
        stored back into shared state. Rebinding a local name is not: the
        caller's object keeps the global value."""
        if not isinstance(value, cst.Call) or key in fresh:
            return
        pos = [a.value for a in value.args if a.keyword is None]
        if pos and dotted(pos[0]) == key:
            self._keyword_splits(value, force=True)

    # -- expressions ----------------------------------------------------------------
    def _scan_expr(self, expr: cst.BaseExpression, env: dict[str, _Chain]) -> _Chain | None:
        """Report every split chain in ``expr``; return the chain ``expr`` itself
        carries (if any)."""
        memo: dict[int, _Chain | None] = {}
        top = self._chain(expr, env, memo)
        stack: list[cst.CSTNode] = [expr]
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
                continue
            c = None
            # A chain is reported at the division that completes it, so only
            # divisions need their chain computed here.
            if isinstance(n, cst.Call):
                self._keyword_splits(n, force=False, env=env)
                if _leaf_of_call(n) in _DIV_CALLS:
                    c = self._chain(n, env, memo)
            elif isinstance(n, cst.BinaryOperation) and isinstance(
                n.operator, (cst.FloorDivide, cst.Divide)
            ):
                c = self._chain(n, env, memo)
            if (
                c is not None
                and len(c.steps) >= 2
                and id(n) in c.nodes
                and not (c.nodes & self._reported)
            ):
                self._report_chain(n, c)
            stack.extend(reversed(child_nodes(n)))
        return top

    def _chain(
        self, n: cst.CSTNode, env: dict[str, _Chain], memo: dict[int, _Chain | None]
    ) -> _Chain | None:
        if id(n) in memo:
            return memo[id(n)]
        memo[id(n)] = None  # cycle guard
        out = self._chain_uncached(n, env, memo)
        memo[id(n)] = out
        return out

    def _chain_uncached(
        self, n: cst.CSTNode, env: dict[str, _Chain], memo: dict[int, _Chain | None]
    ) -> _Chain | None:
        if isinstance(n, (cst.Name, cst.Attribute)):
            key = dotted(n)
            if key is not None and key in env:
                return env[key]
            if isinstance(n, cst.Name) or key is not None:
                if self._is_budget_name(self._leaf(n)):
                    return _Chain(key or self.ctx.code_for(n), (), frozenset())
            return None
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Minus):
            return self._chain(n.expression, env, memo)
        if isinstance(n, cst.BinaryOperation):
            op = n.operator
            left = self._chain(n.left, env, memo)
            if isinstance(op, (cst.FloorDivide, cst.Divide)):
                if left is None:
                    return None
                if self._is_size(n.right):
                    return left.plus(_Step(_bare_code(self.ctx, n.right), self.ctx.code_for(n)), n)
                if self._mentions_size(n.right):
                    return None  # divided by an expression of sizes: a deliberate split
                return left
            right = self._chain(n.right, env, memo)
            if isinstance(op, cst.Multiply):
                # Multiplying by a parallel size undoes a split: not a share any more.
                other = n.right if left is not None else n.left
                if (left is None) == (right is None) and left is not None:
                    return None
                if left is None and right is None:
                    return None
                if self._mentions_size(other):
                    return None
                return left or right
            if isinstance(op, (cst.Add, cst.Subtract)):
                if left is not None and right is not None:
                    return None
                return left or right
            return None
        if isinstance(n, cst.Call):
            leaf = last_name(call_name(n))
            args = [a.value for a in n.args if a.keyword is None and not a.star]
            if leaf in _DIV_CALLS and len(args) == 2:
                base = self._chain(args[0], env, memo)
                if base is not None and self._is_size(args[1]):
                    return base.plus(_Step(_bare_code(self.ctx, args[1]), self.ctx.code_for(n)), n)
                return None
            if leaf in _PASS_THROUGH or leaf in {"math.floor", "math.ceil"}:
                found = [c for a in args if (c := self._chain(a, env, memo)) is not None]
                if len(found) == 1:
                    return found[0]
            return None
        return None

    def _mentions_size(self, n: cst.CSTNode) -> bool:
        return any(
            isinstance(x, (cst.Name, cst.Attribute, cst.Call)) and self._is_size(x)
            for x in walk_fast(n)
        )

    def _keyword_splits(
        self, call: cst.Call, force: bool, env: dict[str, _Chain] | None = None
    ) -> None:
        """`override(num_blocks=num_blocks // dp_size)`: the divided value is
        written back under the name it was read from."""
        leaf = last_name(call_name(call))
        if not force and (leaf is None or not _OVERRIDE_CALL.search(leaf)):
            return
        for a in call.args:
            if a.keyword is None:
                continue
            c = self._chain(a.value, env or {}, {})
            if c is None or not c.steps or id(a.value) in self._reported:
                continue
            if last_name(c.budget) != a.keyword.value:
                continue
            self._reported.add(id(a.value))
            self._reported |= c.nodes
            sizes = ", ".join(f"`{st.size}`" for st in c.steps)
            self.report(
                a,
                f"budget `{c.budget}` is divided by {sizes} and written back as "
                f"`{a.keyword.value}=` through `{leaf}(...)`: every further call divides "
                "the already-divided value again",
                notes=[
                    f"path: `{self.ctx.code_for(a).strip()}` inside `{leaf}(...)`",
                    "the override is applied again on re-initialisation, on a second engine "
                    "in the process or on a retry, each time shrinking the budget",
                ],
                fix=self._suggestion(),
            )

    # -- reporting -------------------------------------------------------------------
    def _suggestion(self) -> PendingFix:
        return PendingFix(
            title=(
                "Split the global budget once per parallel dimension that owns a share of "
                "it, into a new name, and make all ranks agree on the result (min all-reduce "
                "or equality assert); do not divide shared configuration in place"
            ),
            applicability=Applicability.DISPLAY_ONLY,
        )

    def _report_chain(self, node: cst.CSTNode, chain: _Chain) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        self._reported |= chain.nodes
        sizes = [st.size for st in chain.steps]
        path = " → ".join(f"`{st.code}`" for st in _dedupe(chain.steps))
        self.report(
            node,
            f"budget `{chain.budget}` is split over parallel groups {len(sizes)} times "
            f"(by {', '.join(f'`{s}`' for s in sizes)}) along one path",
            notes=[
                f"path: {path}",
                f"if only one of {', '.join(f'`{s}`' for s in sizes)} owns a share of "
                f"`{chain.budget}`, ranks size their buffers from different values "
                "(`shape mismatch` at KV-cache init with expert + data parallelism)",
            ],
            fix=self._suggestion(),
        )

    def _report_in_place(self, node: cst.CSTNode, key: str, chain: _Chain) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        self._reported |= chain.nodes
        sizes = ", ".join(f"`{st.size}`" for st in chain.steps)
        self.report(
            node,
            f"budget `{key}` is divided by {sizes} and stored back into shared state: "
            "running this twice divides it twice",
            notes=[
                f"path: `{self.ctx.code_for(node).strip()}`",
                "a re-run `__post_init__` (`dataclasses.replace`), a second engine in the "
                "process or a retry divides the already-divided budget again",
            ],
            fix=self._suggestion(),
        )


def _leaf_of_call(call: cst.Call) -> str | None:
    f = call.func
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return f.value if isinstance(f, cst.Name) else None


def _named_steps(chain: _Chain, stmt_code: str) -> _Chain:
    """Show a split stored into a name as its statement (`per_dp = num_blocks // dp_size`)."""
    first = stmt_code.splitlines()[0] if stmt_code else stmt_code
    steps = tuple(
        _Step(st.size, first) if "=" not in st.code and st.code in stmt_code else st
        for st in chain.steps
    )
    return _Chain(chain.budget, steps, chain.nodes)


def _dedupe(steps: Sequence[_Step]) -> list[_Step]:
    seen: set[str] = set()
    out = []
    for st in steps:
        if st.code not in seen:
            seen.add(st.code)
            out.append(st)
    return out


def _target_names(t: cst.CSTNode) -> list[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for e in t.elements for n in _target_names(e.value)]
    if isinstance(t, cst.StarredElement):
        return _target_names(t.value)
    return []
