"""SHD501 padded-unpadded-width-mismatch (seed 001)."""

from __future__ import annotations

import ast
import fnmatch
import functools
import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks._helpers import (
    ast_dotted,
    call_name,
    child_nodes,
    dotted,
    function_bodies_at,
    int_literal,
    keyword_args,
    last_name,
    lines_with,
    memo_on_tree,
    name_matches,
    positional_args,
    reversed_text,
    walk_fast,
)
from checks._textfunctions import ascii_lookalikes, function_regions
from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.rule import Option, Rule, RuleContext
from linter.types import Severity

DEFAULT_PADDED_NAMES = ("*_padded", "padded_*", "*_padded_*")
# Names that say "not padded" although they contain the word.
_NOT_PADDED = ("*unpadded*", "*non_padded*", "*not_padded*", "*nonpadded*")
DEFAULT_ROUNDING = (
    "round_up",
    "_round_up",
    "round_up_to_multiple",
    "align",
    "align_up",
    "_align",
    "ceil_to",
    "round_to_multiple",
    "next_multiple_of",
)
_CDIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_ceil", "div_round_up"})

# Allocators and where their shape is. `*_like` copies the width of its argument.
_ALLOC = frozenset({"empty", "zeros", "ones", "full", "empty_strided", "randn", "rand"})
_ALLOC_METHOD = frozenset({"new_empty", "new_zeros", "new_ones", "new_full"})
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like"})
_UNINIT = frozenset({"empty", "new_empty", "empty_strided", "empty_like"})

# In-place elementwise methods: both operands must have the same width (or
# broadcast), so a padded buffer meeting an unpadded tensor as a whole fails.
_INPLACE_STRICT = frozenset(
    {"copy_", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_"}
)
# libcst class names (the scan imports this module without loading libcst)
_AUG_OPS = frozenset({"AddAssign", "SubtractAssign", "MultiplyAssign", "DivideAssign"})

# Consumers that read every element of an operand along its width: a garbage
# tail in an `empty` buffer leaks into every output.
_GEMM = frozenset({"matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "linear", "mv",
                   "tensordot", "inner"})
_REDUCE = frozenset({"sum", "mean", "norm", "amax", "amin", "max", "min", "prod",
                     "logsumexp", "softmax", "log_softmax", "var", "std"})
_ZEROING = frozenset({"zero_", "fill_", "zeros_"})


# -- prefilter: the shapes a finding needs, on CPython ``ast`` -------------------
# The ast gate records, per function, each way a finding can arise regardless
# of the options, with the names that may make the tensor involved padded; the
# facts gate matches those names against the effective options. ``_analyse``
# works on one function body at a time (nested functions, classes and lambdas
# are analysed on their own or not at all), and so does the gate. It follows
# the rule's bookkeeping by name, ignoring statement order and rebinding (an
# over-approximation of what ``_analyse`` knows at any point):
#
# - only a tensor bound by ``name = <allocation>`` is tracked (``tensors``),
#   and only a tracked tensor can be the padded side; its width is padded by
#   a dimension that is a rounded expression, a name bound to one
#   (``widths``) or a padded name (``_width_of``);
# - an exchange pairs two dotted names, and is reported only when the other
#   side has a dimension whose last name is a stem of the padded width
#   (``_unpadded_match``). The stem of a rounded width is the last name of
#   what it rounds (``_stem_set(base)``), those of a padded name come from
#   the pattern it matches (``_pattern_stems``); the other side's names are
#   the dotted dimensions of its allocation or names read from its shape
#   (plain dims, ``shape_src``). So for an exchange the gate keeps only the
#   rounded widths whose stem is among the other side's names, and the facts
#   gate pairs padded names with those names under the configured patterns;
# - a consumer reports a tensor allocated uninitialised, written through a
#   subscript and consumed whole (``_consumer``), with any padded width.

_AST_AUG_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_AST_CONSUMERS = _GEMM | _REDUCE


def _ast_leaf(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _ast_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _ast_int(node.operand)
        return -v if v is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _ast_same(a: ast.AST, b: ast.AST) -> bool:
    """``_same`` on ``ast`` (literal values, else the same dotted name)."""
    ia, ib = _ast_int(a), _ast_int(b)
    if ia is not None or ib is not None:
        return ia == ib
    da = ast_dotted(a)
    return da is not None and da == ast_dotted(b)


def _ast_ceil_numerator(e: ast.AST, n: ast.AST) -> ast.AST | None:
    """``_ceil_numerator`` on ``ast``: X for ``X + n - 1`` (also ``X + (n - 1)``)."""
    if not isinstance(e, ast.BinOp):
        return None
    if isinstance(e.op, ast.Sub) and _ast_int(e.right) == 1:
        inner = e.left
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add) and _ast_same(inner.right, n):
            return inner.left
    if isinstance(e.op, ast.Add):
        r = e.right
        if (
            isinstance(r, ast.BinOp)
            and isinstance(r.op, ast.Sub)
            and _ast_same(r.left, n)
            and _ast_int(r.right) == 1
        ):
            return e.left
        ni = _ast_int(n)
        if ni is not None and _ast_int(r) == ni - 1:
            return e.left
    return None


def _ast_position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _ast_positional(call: ast.Call) -> list[ast.AST]:
    return [a for a in call.args if not isinstance(a, ast.Starred)]


def _ast_stem(base: ast.AST) -> str:
    """``_stem_set`` on ``ast``: the lower-cased last name of a dotted base,
    or "" (a base with no name pairs with nothing)."""
    k = ast_dotted(base)
    return k.rsplit(".", 1)[-1].lower() if k is not None else ""


# Every name ``_ast_alloc`` knows holds one of these: a function with none
# of them on its lines tracks no tensor and holds no finding.
_ALLOC_WORDS = ("empty", "zeros", "ones", "full", "rand")


def _ast_rounded(e: ast.AST) -> tuple[str | None, str] | None:
    """``_rounded_base`` on ``ast``, with the options left open: (the name of
    a call with two positional arguments, a rounding function if the options
    say so; or None for a ceiling multiple ``cdiv(X, n) * n``,
    ``(X + n - 1) // n * n``) and the stem of X, else None."""
    while (
        isinstance(e, ast.Call)
        and (ast_dotted(e.func) or "").rsplit(".", 1)[-1] == "int"
        and (e.args or e.keywords)
    ):
        # the first argument as written, whatever its kind (``e.args[0]``)
        first = min([*e.args, *(k.value for k in e.keywords)], key=_ast_position)
        e = first.value if isinstance(first, ast.Starred) else first
    if isinstance(e, ast.Call):
        name = ast_dotted(e.func)
        pos = _ast_positional(e)
        if name is not None and len(pos) >= 2:
            return name.rsplit(".", 1)[-1], _ast_stem(pos[0])
        return None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if isinstance(a, ast.Call):
                f = a.func
                leaf = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                pos = _ast_positional(a)
                if leaf in _CDIV and len(pos) == 2 and _ast_same(pos[1], b):
                    return None, _ast_stem(pos[0])
            elif (
                isinstance(a, ast.BinOp)
                and isinstance(a.op, ast.FloorDiv)
                and _ast_same(a.right, b)
                and (x := _ast_ceil_numerator(a.left, b)) is not None
            ):
                return None, _ast_stem(x)
    return None


def _ast_alloc(v: ast.AST) -> tuple[str, ast.Call] | None:
    """(allocator, call) when ``v`` is an allocation ``_alloc`` knows
    (``.to(...)`` of one included; ``tl.zeros`` in a Triton kernel is not one)."""
    while (
        isinstance(v, ast.Call)
        and isinstance(v.func, ast.Attribute)
        and v.func.attr == "to"
        and isinstance(v.func.value, ast.Call)
    ):
        v = v.func.value
    if not isinstance(v, ast.Call):
        return None
    f = v.func
    leaf = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if leaf is None:
        return None
    if (
        leaf in _ALLOC
        and (isinstance(f, ast.Name) or ast_dotted(f) == f"torch.{leaf}")
        or leaf in _ALLOC_METHOD
        or leaf in _LIKE
    ):
        return leaf, v
    return None


def _shape_dims(call: ast.Call) -> Iterator[ast.AST]:
    """Every expression ``_shape_args`` can take for a dimension (positional
    arguments and ``size=``, one level into a shape tuple)."""
    dims: list[ast.AST] = list(_ast_positional(call))
    for k in call.keywords:
        if k.arg == "size":
            dims.append(k.value)
    for d in dims:
        for e in d.elts if isinstance(d, (ast.Tuple, ast.List)) else (d,):
            # `size=(m, *rest)` takes `rest` as a dimension
            yield e.value if isinstance(e, ast.Starred) else e


def _shape_owner(v: ast.AST) -> str | None:
    """The tensor a shape is read from (``_shape_read``, ``_on_unpack``:
    ``x.shape[-1]``, ``x.size(1)``, ``x.shape``, ``x.size()``)."""
    if isinstance(v, ast.Subscript):
        v = v.value
    if isinstance(v, ast.Attribute) and v.attr == "shape":
        return ast_dotted(v.value)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size":
        return ast_dotted(v.func.value)
    return None


class _Evidence:
    """What may make a tensor's width padded (``_width_of``): ceiling
    multiples and two-argument calls with the stems they round, and names
    (padded by name); plus the names of its dimensions (an unpadded side)."""

    def __init__(self) -> None:
        self.rounded: set[tuple[str | None, str]] = set()
        self.names: set[str] = set()
        self.dims: set[str] = set()  # lower-cased
        self.uninit = False

    def row(self, unpadded: set[str] | None) -> dict[str, Any] | None:
        """A row for the facts gate; for an exchange with a side whose
        dimensions may be named ``unpadded``, only rounded widths whose stem
        is among them (``_unpadded_match``)."""
        keep = [
            (r, s) for r, s in self.rounded if unpadded is None or (s and s in unpadded)
        ]
        s = any(r is None for r, _ in keep)
        rounding = sorted({r for r, _ in keep if r is not None})
        if not (s or rounding or self.names):
            return None
        return {
            "s": s,
            "r": rounding,
            "p": sorted(self.names),
            "u": sorted(unpadded) if unpadded is not None else None,
        }


def _function_shape(nodes: list[ast.AST]) -> list[dict[str, Any]]:
    """Rows for the facts gate, one for each way one function can hold a
    finding (none when no options can make it hold one).

    A finding needs a tensor the rule tracks (an allocation bound to a
    dotted name, ``_on_assign``/``_alloc``) whose width may be padded: an
    exchange (``_exchange``: ``+=``-style, ``.copy_(src)``-style, ``out=``
    on a torch function) between two dotted names, one such a tensor and
    the other an allocation or a tensor whose shape is read; or a consumer
    (``_consumer``) of a tensor allocated uninitialised that is also
    written through a subscript.

    A row: ``s`` (a ceiling multiple), ``r`` (names of two-argument calls:
    rounding functions), ``p`` (dotted dimension names: padded names) that
    may pad the tensor; ``u``, for an exchange, the lower-cased names the
    other side's dimensions may have (None for a consumer)."""
    bound: dict[str, set[tuple[str | None, str]]] = {}
    allocs: dict[str, list[tuple[str, ast.Call]]] = {}
    owners: dict[str, set[str]] = {}
    pairs: set[tuple[str, str]] = set()
    written: set[str] = set()
    consumed: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Assign):
            value = n.value
            rounded = _ast_rounded(value)
            alloc = _ast_alloc(value)
            owner = _shape_owner(value)
            for t in n.targets:
                if isinstance(t, ast.Subscript):
                    if (k := ast_dotted(t.value)) is not None:
                        written.add(k)
                    continue
                if owner is not None:
                    for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else (t,):
                        if ast_dotted(e) is not None:
                            owners.setdefault(owner, set()).add(_ast_leaf(e).lower())  # type: ignore[union-attr]
                if (k := ast_dotted(t)) is None:
                    continue
                if rounded is not None:
                    bound.setdefault(k, set()).add(rounded)
                if alloc is not None:
                    allocs.setdefault(k, []).append(alloc)
        elif isinstance(n, ast.AugAssign):
            if isinstance(n.op, _AST_AUG_OPS):
                d, s = ast_dotted(n.target), ast_dotted(n.value)
                if d is not None and s is not None and d != s:
                    pairs.add((d, s))
        elif isinstance(n, ast.Call):
            f = n.func
            pos = _ast_positional(n)
            if isinstance(f, ast.Attribute):
                if f.attr in _INPLACE_STRICT:
                    if isinstance(f.value, ast.Subscript):
                        if (k := ast_dotted(f.value.value)) is not None:
                            written.add(k)
                    elif pos:
                        d, s = ast_dotted(f.value), ast_dotted(pos[0])
                        if d is not None and s is not None and d != s:
                            pairs.add((d, s))
                    continue
                if f.attr in _AST_CONSUMERS and (k := ast_dotted(f.value)) is not None:
                    consumed.add(k)
            leaf = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if leaf in _AST_CONSUMERS:
                consumed.update(k for a in pos if (k := ast_dotted(a)) is not None)
            for kw in n.keywords:
                if kw.arg == "out" and (d := ast_dotted(kw.value)) is not None:
                    full = ast_dotted(f) or ""
                    if full.startswith("torch.") and not full.startswith("torch.ops."):
                        pairs.update(
                            (d, s) for a in pos if (s := ast_dotted(a)) is not None and s != d
                        )
    if not allocs:
        return []

    evidence: dict[str, _Evidence] = {}

    def tensor(k: str, seen: frozenset[str] = frozenset()) -> _Evidence | None:
        """What the allocations bound to ``k`` may give it (``*_like``
        copies its source's width and dimensions)."""
        if k not in allocs or k in seen:
            return None
        got = evidence.get(k)
        if got is not None:
            return got
        ev = _Evidence()
        for leaf, call in allocs[k]:
            ev.uninit = ev.uninit or leaf in _UNINIT
            if leaf in _LIKE:
                pos = _ast_positional(call)
                src = tensor(ast_dotted(pos[0]) or "", seen | {k}) if pos else None
                if src is not None:
                    ev.rounded |= src.rounded
                    ev.names |= src.names
                    ev.dims |= src.dims
                continue
            for d in _shape_dims(call):
                dk = ast_dotted(d)
                if dk is not None:
                    leaf_d = dk.rsplit(".", 1)[-1]
                    ev.names.add(leaf_d)
                    ev.dims.add(leaf_d.lower())
                    ev.rounded |= bound.get(dk, set())
                elif (r := _ast_rounded(d)) is not None:
                    ev.rounded.add(r)
        if not seen:
            evidence[k] = ev
        return ev

    rows: list[dict[str, Any]] = []
    for d, s in sorted(pairs):
        for p, q in ((d, s), (s, d)):
            padded = tensor(p)
            if padded is None:
                continue
            other = tensor(q)
            names = set(other.dims) if other is not None else set()
            names |= owners.get(q, set())
            if names and (row := padded.row(names)) is not None:
                rows.append(row)
    for k in sorted(written & consumed):
        t = tensor(k)
        if t is not None and t.uninit and (row := t.row(None)) is not None:
            rows.append(row)
    del tensor  # (a recursive closure is a reference cycle: see engine._scan_job)
    unique = {json.dumps(r, sort_keys=True): r for r in rows}
    return [unique[k] for k in sorted(unique)]


@memo_on_tree
def padding_shapes(tree: ast.Module, text: str) -> list[dict[str, Any]]:
    """The ways the functions of ``tree`` (parsed from ``text``) could hold a
    finding (memoised on the tree: the ast gate and the collector share one
    parse)."""
    hits = lines_with(text, _ALLOC_WORDS)
    return [row for nodes in function_bodies_at(tree, hits) for row in _function_shape(nodes)]


def _pattern_stems(name: str, patterns: Sequence[str]) -> frozenset[str]:
    """Unpadded names a padded name pairs with, read off the pattern it
    matched: `hidden_size_padded` (`*_padded`) → `hidden_size`,
    `hidden_size_unpadded`, `unpadded_hidden_size`."""
    leaf = name.rsplit(".", 1)[-1].lower()
    out: set[str] = set()
    for pat in patterns:
        parts = pat.lower().split("*")
        if not fnmatch.fnmatchcase(leaf, pat.lower()):
            continue
        if len(parts) == 2:
            pre, suf = parts
            stem = leaf[len(pre) : len(leaf) - len(suf)]
        elif len(parts) == 3 and parts[0] == "" and parts[2] == "":
            stem = leaf.replace(parts[1], "_", 1)
        else:
            continue
        stem = stem.strip("_")
        if stem:
            out |= {stem, f"{stem}_unpadded", f"unpadded_{stem}", f"{stem}_non_padded"}
    return frozenset(out)


def _shape_may_fire(
    row: Mapping[str, Any], padded: Sequence[str], rounding: frozenset[str]
) -> bool:
    """Whether the tensor of ``row`` can be padded under these options (the
    rule's ``_width_of``: a ceiling multiple, a rounding call, a padded name)
    and, for an exchange, pair with the other side's names
    (``_unpadded_match``: a padded name pairs through its pattern's stems)."""
    if row["s"] or rounding.intersection(row["r"]):
        return True
    names = [p for p in row["p"] if name_matches(p, padded) and not name_matches(p, _NOT_PADDED)]
    if row["u"] is None:
        return bool(names)
    u = frozenset(row["u"])
    return any(_pattern_stems(p, padded) & u for p in names)


# -- prefilter: the text a finding needs, before any parse ----------------------
# Derived from the rule, not from examples (the options are not known yet:
# see the docstring's Options section). Every finding needs
#
# - an allocation the rule tracks: a call named `empty`, `empty_strided`,
#   `zeros`, `ones`, `full`, `rand`, `randn` or `new_*` of the first four
#   (`*_like` copies one of those), spelled in lower case, its name
#   separated from `(` by blanks, comments or line continuations at most,
#   called bare, as `torch.<name>` or as a `new_*` method (``_alloc``: not
#   `tl.zeros`, `np.empty`, `my_empty`);
# - exactly one padded dimension among its arguments (``_width_of``): a
#   rounded expression inline (a rounding call, `cdiv(X, n) * n`,
#   `(X + n - 1) // n * n`, at any depth: `int(...)` and a shape tuple
#   wrap it), a padded name inline, or a dimension that is a (dotted) name
#   bound by an assignment whose value is rounded (``_on_assign``:
#   `hp = round_up(...)`, `hp = int(cdiv(h, 8) * 8)`, also chained and
#   parenthesised). A name is such a dimension only when it opens an
#   argument or a shape element, past its dotted chain (`(`, `,`, `[`, a
#   starred `*`, `size=`): not a keyword's value (`dtype=hp`), an operand
#   (`n * hp`) or an attribute of a call (`g().hp`). The allocations are
#   scanned first; each name's assignments are searched only in files that
#   also hold a rounded expression;
# - an exchange (an in-place method `.copy_(`-style, `+=`-style, `out=` on a
#   `torch.` function) or, for an `empty`-style buffer written through a
#   subscript (`]`), a GEMM or reduction call.
#
# Text cannot tell code from strings and comments; wherever the scan cannot
# delimit an argument list or an assigned value, it assumes the worst and
# admits the file.
_STR = (
    r'"""[\s\S]*?"""|' r"'''[\s\S]*?'''|"
    r"""'[^'\\\n]*+(?:\\[\s\S][^'\\\n]*+)*+'|"""
    r'"[^"\\\n]*+(?:\\[\s\S][^"\\\n]*+)*+"'
)
# what may stand between a call's name and its `(` (inside brackets)
_GAP = r"(?:\s|\\|#[^\n]*)*+"


def _balanced(depth: int, opens: str, closes: str) -> str:
    """A bracketed group nested up to ``depth`` levels (strings and comments
    skipped): deeper nesting does not match."""
    group = ""
    excl = re.escape(opens + closes)
    for _ in range(depth):
        inner = rf"(?:[^{excl}'\"#]|{_STR}|#[^\n]*" + (f"|{group}" if group else "") + ")*+"
        group = "(?:" + "|".join(rf"\{o}{inner}\{c}" for o, c in zip(opens, closes)) + ")"
    return group


# an argument list from its `(`, without the closing `)`: the match ends at
# the `)` when the list is balanced (and nested at most 6 deep)
_ARGS = re.compile(rf"\((?:[^()'\"#]|{_STR}|#[^\n]*|{_balanced(6, '(', ')')})*+")
# an assigned value up to the end of its logical line (a comment, a line
# break outside brackets): anything else where the match ends means the `=`
# was not a statement's (a keyword inside brackets, a string), or nesting
# too deep to follow
_VALUE_PATTERN = rf"(?:[^\n\\()\[\]{{}}'\"#]|\\\r?\n|{_STR}|{_balanced(5, '([{', ')]}')})*+"


@functools.cache
def _value() -> re.Pattern[str]:
    """``_VALUE_PATTERN`` compiled: the reference ``_value_end`` answers
    without (~60 ms of ``re`` compiling, a 52 kB pattern, that a cold run
    would pay for the first assignment it reads)."""
    return re.compile(_VALUE_PATTERN)


# ``_VALUE_PATTERN`` read token by token: every alternative of its loops
# starts with its own characters (a bracket opens a group, a quote a string,
# `#` a comment, `\\` a continuation), so a possessive run of the flat
# alternatives, then a bracketed group matched by hand (nested at most five
# deep, as ``_balanced(5, ...)``), ends exactly where the pattern does.
_TOP_FLAT = re.compile(rf"(?:[^\n\\()\[\]{{}}'\"#]|\\\r?\n|{_STR})*+").match
_INNER_FLAT = re.compile(rf"(?:[^()\[\]{{}}'\"#]|{_STR}|#[^\n]*)*+").match
_CLOSER = {"(": ")", "[": "]", "{": "}"}


def _group_end(text: str, i: int, depth: int) -> int:
    """The end of the group ``_balanced(depth, '([{', ')]}')`` matches at
    the bracket ``text[i]`` (just past its closer), or -1 where it fails."""
    close = _CLOSER[text[i]]
    j = i + 1
    while True:
        j = _INNER_FLAT(text, j).end()  # type: ignore[union-attr]
        c = text[j : j + 1]
        if c == close:
            return j + 1
        if depth > 1 and c in _CLOSER:
            k = _group_end(text, j, depth - 1)
            if k >= 0:
                j = k
                continue
        return -1


def _value_end(text: str, pos: int) -> int:
    """``_value().match(text, pos).end()``."""
    n = len(text)
    j = pos
    while True:
        j = _TOP_FLAT(text, j).end()  # type: ignore[union-attr]
        if j < n and text[j] in _CLOSER:
            k = _group_end(text, j, 5)
            if k >= 0:
                j = k
                continue
        return j
# what may follow an assignment target's name before its `=`
_AFTER_TARGET = ("=", " ", "\t", ")", "\\", "\n", "\r", "\f")
_ALLOC_WORDS_TEXT = ("empty", "zeros", "ones", "full", "rand")
# Each allocator word with what may follow it up to the call's `(`: found
# by ``str.find`` (much faster than a regex led by the word), then matched
# at the word's end (`empty_strided(`, `randn(` included).
_ALLOC_CALLS = tuple(
    (w, re.compile(tail + _GAP + r"\(").match)
    for w, tail in (("empty", "(?:_strided)?"), ("zeros", ""), ("ones", ""), ("full", ""),
                    ("rand", "n?"))
)
# a name standing alone as an argument (or shape element): a dimension
_DIM = re.compile(r"([^\W\d]\w*)(?=" + _GAP + r"[,)\]])")
# Rounding: the default rounding functions hold one of these words (a
# configured one should too); the ceiling divisions of ``_CDIV`` hold
# `cdiv`, `ceil` or `round_up`.
_ROUND_WORDS = ("round_up", "round_to", "align", "ceil_to", "next_multiple_of")
_CDIV_WORDS = ("cdiv", "ceil")
_EXCHANGE_CALLS = tuple(
    re.compile(w + _GAP + r"\(").search
    for w in ("copy_", "add_", "sub_", "mul_", "div_", "lerp_")  # `addcmul_`, `addcdiv_`
)
_OUT_KEYWORD = re.compile(r"out" + _GAP + r"=(?!=)").search
_CONSUMER_CALLS = tuple(
    re.compile(w + _GAP + r"\(").search
    for w in ("mm", "mv", "matmul", "einsum", "linear", "tensordot", "inner", "sum", "mean",
              "norm", "max", "min", "prod", "softmax", "var", "std")
)


def _text_rounded(code: str) -> bool:
    """Whether ``code`` may hold a rounded width (``_rounded_base``): a
    rounding call, a ceiling-division call times something, or
    `(X + c) // n * n`."""
    # the common characters first: on a whole file they end the test
    # early more often than the words, which are mostly absent
    if "*" in code:
        if "//" in code and "+" in code:
            return True
        if "cdiv" in code or "ceil" in code:  # _CDIV_WORDS
            return True
    # _ROUND_WORDS spelled out: this runs on every allocation's arguments
    # and every assigned value read, where a generator costs more than the
    # searches (a test holds the two equal)
    return (
        "round_up" in code
        or "round_to" in code
        or "align" in code
        or "ceil_to" in code
        or "next_multiple_of" in code
    )


def _text_padded(code: str) -> bool:
    """A rounded width or a padded name (`padded`/`aligned`, any case) in ``code``."""
    if _text_rounded(code):
        return True
    low = code.lower()
    return "padded" in low or "aligned" in low


# after an assignment target's name, its `=` (`hp =`, `(hp) =`; not `==`)
_ASSIGN_AFTER = re.compile(r"[\s)\\]*=(?!=)").match
_WORD_CHAR = re.compile(r"\w").match


def _text_assigned_rounded(text: str, name: str) -> bool:
    """Whether some assignment to ``name`` (the last name of a target) may
    give it a rounded value: ``_on_assign`` binds a padded width only so.
    (``str.find`` jumps between the name's occurrences faster than ``re``;
    a one-letter name occurs so often that a search for it followed by an
    assignment's `=` is faster.)"""
    if len(name) == 1:
        for m in _one_letter_assigned(name)(text):
            i = m.start()
            if i == 0 or not _WORD_CHAR(text, i - 1):
                a = _ASSIGN_AFTER(text, i + 1)
                if _rounded_value_at(text, a.end()):  # type: ignore[union-attr]
                    return True
        return False
    size = len(name)
    i = text.find(name)
    while i >= 0:
        j = i + size
        # what ``_ASSIGN_AFTER`` needs first (``\s`` is ``str.isspace``)
        c = text[j : j + 1]
        if (c == "=" or c == ")" or c == "\\" or c.isspace()) and (
            i == 0 or not _WORD_CHAR(text, i - 1)
        ):
            m = _ASSIGN_AFTER(text, j)
            if m is not None and _rounded_value_at(text, m.end()):
                return True
        i = text.find(name, j)
    return False


@functools.lru_cache(maxsize=256)
def _one_letter_assigned(name: str) -> Callable[[str], Iterator[re.Match[str]]]:
    """The occurrences of ``name`` that ``_ASSIGN_AFTER`` matches after."""
    return re.compile(re.escape(name) + r"(?=[\s)\\]*=(?!=))").finditer


def _rounded_value_at(text: str, start: int) -> bool:
    """Whether the value assigned from ``start`` may be rounded: it holds a
    rounded width, or it cannot be delimited (assume the worst)."""
    end = _value_end(text, start)
    c = text[end] if end < len(text) else "\n"
    if c in "\n#":
        return _text_rounded(text[start:end])
    return c not in ")]}'\""


def _may_be_dimension(text: str, i: int) -> bool:
    """Whether the name starting at ``i`` (inside an allocation's arguments)
    may be a whole dimension that is a dotted name (``_width_of`` reads a
    padded width off a name only then, ``dotted(dim)``): what precedes it
    on its line, past a dotted chain, opens an argument, a tuple or a list
    (`(`, `,`, `[`, a starred `*`) or is `size=`. Unsure (a line break or
    a continuation before it): True."""
    j = i - 1
    if j >= 0 and _WORD_CHAR(text, j):
        return False  # the tail of a longer token (`0x1f`): not a name
    while True:
        while j >= 0 and text[j] in " \t\f":
            j -= 1
        if j < 0:
            return True
        c = text[j]
        if c in "\n\r\\":
            return True
        if c in "([,":
            return True
        if c == ".":
            j -= 1
            while j >= 0 and text[j] in " \t\f":
                j -= 1
            if j < 0 or text[j] in "\n\r\\":
                return True
            if not _WORD_CHAR(text, j):
                return False  # `f().x`, `a[0].x`: not a dotted name
            while j >= 0 and _WORD_CHAR(text, j):
                j -= 1
            continue
        if c == "*":
            # a starred element (`size=(m, *rest)`), not a product
            j -= 1
            while j >= 0 and text[j] in " \t\f":
                j -= 1
            return j < 0 or text[j] in "\n\r\\([,"
        if c == "=":
            # the `size=` keyword (no other keyword is a shape); not `==`
            j -= 1
            while j >= 0 and text[j] in " \t\f":
                j -= 1
            if j < 0 or text[j] in "\n\r\\":
                return True
            e = j + 1
            while j >= 0 and _WORD_CHAR(text, j):
                j -= 1
            return text[j + 1 : e] == "size"
        return False


def _may_be_allocator(text: str, i: int) -> bool:
    """Whether the allocator word at ``i`` may name a call ``_alloc``
    tracks: a bare name (`empty(`), `torch.` and the word, or a `new_` method
    (`x.new_zeros(`); not another module's (`tl.zeros(`, `np.empty(`) or a
    longer name (`my_empty(`). Unsure (blanks or a line break around the
    dot): True."""
    if i == 0:
        return True
    c = text[i - 1]
    if c == ".":
        # `torch.` exactly, as the whole dotted callee
        if i < 2 or text[i - 2] in " \t\f\n\r\\":
            return True
        return (
            i >= 6
            and text[i - 6 : i - 1] == "torch"
            and (i == 6 or not (_WORD_CHAR(text, i - 7) or text[i - 7] == "."))
        )
    if _WORD_CHAR(text, i - 1):
        # `new_empty`, `new_zeros`, `new_ones`, `new_full`, bare or a method
        if i < 4 or text[i - 4 : i] != "new_" or text[i] == "r":
            return False
        return i == 4 or not _WORD_CHAR(text, i - 5)
    return True


# ``_allocation_calls``'s end of an argument list that cannot be delimited
# (nested too deep to follow), and of one that ends at a quote (not a call:
# text in a string)
_UNDELIMITED = -1
_IN_STRING = -2


# Where an allocation call may stand, found on the reversed text (which the
# sentinel outline reads too): a `(` led backwards by what ``_GAP`` allows
# (blanks, backslashes, and comments, each ending at a line break) and an
# allocator word with its tail reversed. One search led by the literal `(`
# instead of one ``str.find`` per word; every call ``_ALLOC_CALLS`` matches is
# among its hits (it may hold more: each is matched as before).
_REVERSED_CALL = re.compile(
    r"\((?:\s|\\|(?<=\n)[^\n]*#)*(?:"
    + "|".join(re.escape(w[::-1]) for w in ("empty_strided", "empty", "zeros", "ones", "full", "randn", "rand"))
    + ")"
)
_AFTER_WORD = {w: after for w, after in _ALLOC_CALLS}


def _allocation_calls(text: str) -> Iterator[tuple[int, int, int]]:
    """Every allocation call, in the text's order: (the allocator word's
    offset, the offset after its `(`, the offset after its `)`, or
    ``_UNDELIMITED``, or ``_IN_STRING``)."""
    n = len(text)
    rev = reversed_text(text)
    search = _REVERSED_CALL.search
    found: set[int] = set()
    r = search(rev)
    while r is not None:
        found.add(n - r.end())  # the word's offset (its tail reversed is matched)
        r = search(rev, r.start() + 1)  # (a `(` in a comment crossed may open another)
    for at in sorted(found):
        word = next(w for w in _ALLOC_WORDS_TEXT if text.startswith(w, at))
        m = _AFTER_WORD[word](text, at + len(word))
        if m is None or not _may_be_allocator(text, at):
            continue
        end = _ARGS.match(text, m.end() - 1).end()  # type: ignore[union-attr]
        if end >= n or text[end] != ")":
            yield at, m.end(), _IN_STRING if end < n and text[end] in "'\"" else _UNDELIMITED
        else:
            # the match stops before the `)`: the names before it may end there
            yield at, m.end(), end + 1


def _allocation_scan(text: str) -> tuple[bool, list[tuple[int, int]]] | None:
    """Over every allocation call: (whether one may have a padded dimension
    inline, or cannot be delimited; the spans of the argument lists, where
    ``_dimension_names`` reads the names that may be dimensions of one).
    None when the file calls no allocator."""
    spans: list[tuple[int, int]] = []
    called = False
    for _, start, end in _allocation_calls(text):
        called = True
        if end == _IN_STRING:
            continue
        if end == _UNDELIMITED:
            return True, spans  # nested too deep to follow: assume the worst
        if _text_padded(text[start - 1 : end - 1]):
            return True, spans
        spans.append((start, end))
    return (False, spans) if called else None


def _dimension_names(text: str, spans: list[tuple[int, int]]) -> set[str]:
    """The names that may be dimensions in the argument lists at ``spans``
    (read only for a file whose text may hold a rounded width)."""
    names: set[str] = set()
    for start, end in spans:
        for d in _DIM.finditer(text, start, end):
            k = d.group(1)
            if k not in names and _may_be_dimension(text, d.start()):
                names.add(k)
    return names


# -- in one function ---------------------------------------------------------
# Every finding is made inside one function body (``padding_shapes`` reads
# the bodies alone): the padded allocation, the tensor it is bound to and the
# exchange or the consumer that tensor meets. So the file-wide test above is
# then asked again of each function's text (``checks._textfunctions``), with
# what the ast gate needs of an allocation there:
#
# - its arguments may hold a padded dimension inline, or name a dimension
#   assigned a rounded value in that function (``bound`` is per function);
# - it is the whole value of an assignment (``_on_assign`` binds only those:
#   not a keyword's value, a return, a tuple's element, an operand; a
#   parenthesised value and a ``.to(...)`` after the call are kept);
# - the name it is bound to (its last component) is then, in that function,
#   a side of an exchange: before an augmented operator or after one, the
#   receiver of an in-place method (`k.copy_(`) or inside the arguments of
#   one, of a `*_like(` copy, of a `torch.` call with an `out=` keyword, or
#   that keyword's value; or, for an uninitialised allocation (`empty`,
#   `empty_strided`, `new_empty`), both followed by `[` somewhere and the
#   receiver of a consumer method (`k.sum(`) or inside a consumer call's
#   arguments.
#
# Anything this reading cannot vouch for admits the file: an allocation it
# cannot delimit, a target or an occurrence read across a comment or a line
# continuation, a chained or parenthesised target, a receiver that is a call's
# or a subscript's result, a line break after a comma (a tuple statement
# ends so, as does an argument).

_AUG_OPS_TEXT = ("+=", "-=", "*=", "/=")
_WORD_AT = re.compile(r"\w+").match
_INPLACE_OPEN = re.compile("(?:" + "|".join(sorted(_INPLACE_STRICT)) + ")" + _GAP + r"\(")
_CONSUMER_OPEN = re.compile("(?:" + "|".join(sorted(_AST_CONSUMERS)) + ")" + _GAP + r"\(")
_LIKE_OPEN = re.compile("_like" + _GAP + r"\(")
_TORCH_OPEN = re.compile("torch(?:" + _GAP + r"\." + _GAP + r"\w+)+" + _GAP + r"\(")
_UNSURE = -2
_NOT_NAME = -3


def _allocation_sites(text: str) -> list[tuple[int, int, int | None]]:
    """Every allocation call ``_allocation_scan`` reads, in text order: (the
    allocator word's offset, the offset after its `(`, the offset after its
    `)` or None where the arguments cannot be delimited)."""
    return sorted(
        (at, start, None if end == _UNDELIMITED else end)
        for at, start, end in _allocation_calls(text)
        if end != _IN_STRING
    )


def _prev(text: str, i: int) -> int:
    """The offset of the last character at or before ``i`` that is not a
    blank, line breaks and comment lines crossed; -1 at the start;
    ``_UNSURE`` when a line crossed holds a comment after code or ends with
    a backslash (what stands there cannot be told without a tokenizer)."""
    while i >= 0:
        c = text[i]
        if c == " " or c == "\t":
            i -= 1
        elif c == "\n":
            s = text.rfind("\n", 0, i) + 1
            line = text[s:i]
            if "#" in line:
                if not line.lstrip(" \t").startswith("#"):
                    return _UNSURE  # a comment after code: where does the code end?
                i = s - 1  # a comment line: read on above it
                continue
            if line.rstrip(" \t").endswith("\\"):
                return _UNSURE
            i -= 1
        elif c == "\\":
            return _UNSURE
        else:
            return i
    return -1


def _next(text: str, j: int) -> int:
    """The offset of the first character at or after ``j`` that is not a
    blank, line breaks, comments and line continuations crossed (read from
    code, a `#` can only start a comment); -1 at the end; ``_UNSURE`` at a
    stray backslash."""
    n = len(text)
    while j < n:
        c = text[j]
        if c == " " or c == "\t" or c == "\n":
            j += 1
        elif c == "#":
            nl = text.find("\n", j)
            if nl < 0:
                return -1
            j = nl + 1
        elif c == "\\":
            if text[j + 1 : j + 2] != "\n":
                return _UNSURE
            j += 2
        else:
            return j
    return -1


def _chain_start(text: str, i: int) -> int:
    """Given ``i`` on the `.` before a name, the offset of the first
    character of the dotted name it ends (``x . y .``); ``_NOT_NAME`` when
    the chain starts at a closing bracket or a quote (a call's or a
    subscript's result, a string's method: no dotted name), ``_UNSURE``
    when at anything else (a chain over lines)."""
    while True:
        i -= 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        if i >= 0 and text[i] in ")]}'\"":
            return _NOT_NAME
        if i < 0 or not (text[i].isalnum() or text[i] == "_"):
            return _UNSURE
        while i >= 0 and (text[i].isalnum() or text[i] == "_"):
            i -= 1
        k = i
        while k >= 0 and text[k] in " \t":
            k -= 1
        if k >= 0 and text[k] == ".":
            i = k
            continue
        return i + 1


def _bound_name(text: str, at: int) -> str | None:
    """The last name of the target the allocation whose word is at ``at`` is
    assigned to whole; None when it surely is not; "" when unsure."""
    j = at - 1
    if j >= 3 and text[j - 3 : j + 1] == "new_":
        j -= 4  # ``x.new_empty(``
    j = _prev(text, j)
    if j == _UNSURE:
        return ""
    if j >= 0 and text[j] == ".":
        start = _chain_start(text, j)  # ``torch.``, the receiver of ``new_*``
        if start < 0:
            return ""
        j = start - 1
    while True:
        j = _prev(text, j)
        if j >= 0 and text[j] == "(":
            j -= 1  # a parenthesised value
            continue
        break
    if j == _UNSURE:
        return ""
    if j < 0 or text[j] != "=":
        return None  # a call's argument, a return, an operand ...
    if j and text[j - 1] in "=!<>+-*/%&|^@:":
        return None if text[j - 1] != ":" else ""  # a comparison, an augmented assignment
    e = _prev(text, j - 1)
    if e == _UNSURE or e < 0:
        return ""
    s = e
    while s >= 0 and (text[s].isalnum() or text[s] == "_"):
        s -= 1
    name = text[s + 1 : e + 1]
    if not name or name[0].isdigit() or not name.isascii():
        # ``(x) =``, ``a[0] =``: not read here; a name outside ASCII may be
        # spelled otherwise where it is used (the compiler normalises it)
        return ""
    first = s + 1
    p = _prev(text, s)
    if p == _UNSURE:
        return ""
    if p >= 0 and text[p] == ".":
        first = _chain_start(text, p)
        if first < 0:
            return ""
    b = _prev(text, first - 1)
    if b == _UNSURE:
        return ""
    if b >= 0:
        c = text[b]
        if c == "=" and not (b and text[b - 1] in "=!<>"):
            return ""  # a chained assignment: the other targets are bound too
        if c == "(" or c == "," or c == "*":
            if c == "," and "\n" in text[b:first]:
                return ""  # ``y = 1,`` ends a statement too
            return None  # a keyword argument, a tuple's element
    return name


def _call_spans(region: str, opener: re.Pattern[str], out_keyword: bool = False) -> list[tuple[int, int]]:
    """The argument spans of the calls ``opener`` finds in ``region`` (to its
    end where they cannot be delimited); with ``out_keyword``, only those
    holding an `out=` keyword."""
    spans = []
    n = len(region)
    for m in opener.finditer(region):
        end = _ARGS.match(region, m.end() - 1).end()  # type: ignore[union-attr]
        if end >= n or region[end] != ")":
            end = n
        if out_keyword and _OUT_KEYWORD(region[m.end() : end]) is None:
            continue
        spans.append((m.end(), end))
    return spans


def _inside(spans: list[tuple[int, int]], p: int) -> bool:
    return any(a <= p < b for a, b in spans)


def _tensor_uses(region: str, name: str, memo: dict[str, Any]) -> tuple[bool, bool, bool]:
    """Whether the tensor named ``name`` (a last name) may be a side of an
    exchange in ``region``, be written through a subscript, be read by a
    consumer (see the section comment); all three when unsure."""
    exchange = written = consumed = False
    unsure = (True, True, True)
    for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", region):
        a, e = m.start(), m.end()
        j = _next(region, e)
        if j == _UNSURE:
            return unsure
        if j >= 0:
            c = region[j]
            if region[j : j + 2] in _AUG_OPS_TEXT:
                exchange = True
                continue
            if c == "=" and region[j + 1 : j + 2] != "=":
                continue  # a target, or a keyword's name
            if c == "[":
                written = True
            elif c == ".":
                j2 = _next(region, j + 1)
                if j2 == _UNSURE:
                    return unsure
                w = _WORD_AT(region, j2) if j2 >= 0 else None
                if w is not None:
                    j3 = _next(region, w.end())
                    if j3 == _UNSURE:
                        return unsure
                    if j3 >= 0 and region[j3] == "(":
                        exchange = exchange or w.group() in _INPLACE_STRICT
                        consumed = consumed or w.group() in _AST_CONSUMERS
        first = a
        p = _prev(region, a - 1)
        if p == _UNSURE:
            return unsure
        if p >= 0 and region[p] == ".":
            first = _chain_start(region, p)
            if first == _NOT_NAME:
                continue  # ``f().k``: no dotted name the rule tracks
            if first == _UNSURE:
                return unsure
        b = _prev(region, first - 1)
        if b == _UNSURE:
            return unsure
        if b >= 1 and region[b] == "=":
            if region[b - 1] in "+-*/":
                exchange = True  # ``x += k``
                continue
            if region[b - 1] not in "=!<>":
                o = _prev(region, b - 1)
                if o == _UNSURE:
                    return unsure
                if o >= 2 and region[o - 2 : o + 1] == "out" and not (
                    o >= 3 and (region[o - 3].isalnum() or region[o - 3] == "_")
                ):
                    exchange = True  # ``out=k``
        spans = memo.get("spans")
        if spans is None:
            spans = memo["spans"] = (
                _call_spans(region, _INPLACE_OPEN)
                + _call_spans(region, _LIKE_OPEN)
                + _call_spans(region, _TORCH_OPEN, out_keyword=True),
                _call_spans(region, _CONSUMER_OPEN),
            )
        exchange = exchange or _inside(spans[0], a)
        consumed = consumed or _inside(spans[1], a)
    return exchange, written, consumed


_RULE_NEEDLES = Needles(
    any_of=(
        _ALLOC_WORDS_TEXT,
        ("copy_", "add_", "sub_", "mul_", "div_", "lerp_", "+=", "-=", "*=", "/=", "out", "]"),
    )
)


class _CandidateNeedles(Needles):
    """The collector's needles: exactly ``PaddedUnpaddedWidthMismatch.candidate``
    (partly lower-cased, as names are matched case-insensitively), so that
    every file the text gate admits is collected and the facts gate can
    judge it. The fields (what the registry records) are the rule's own
    needles, a superset of that test."""

    def _match(self, text: str) -> bool:
        return PaddedUnpaddedWidthMismatch._text_gate(text)


_TEXT_NEEDLES = _CandidateNeedles(any_of=_RULE_NEEDLES.any_of)


class PaddingShapes(FactCollector):
    """Per module, the functions that could hold a SHD501 finding, with the
    names the facts gate matches against the effective options. Read only
    by the gate."""

    name = "padding_width_shapes"
    # 3: collected only for files whose functions the text gate admits
    version = 3
    needles = _TEXT_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        # always something for a collected file, so that the facts gate can
        # tell "nothing here" from "not collected"; the path tells two files
        # of one module name apart
        return {"path": path, "rows": padding_shapes(tree, text)}


@dataclass(frozen=True)
class _Width:
    padded: bool
    code: str  # the width as written in the shape
    origin: str  # where it comes from, for the message
    stems: frozenset[str]  # names of the unpadded width it pairs with (last components)
    multiple: int | None = None  # the literal it rounds up to, for a counterexample


@dataclass
class _Tensor:
    name: str
    width: _Width
    dim: int  # negative: position from the end of the shape
    uninit: bool
    where: str
    ndim: int = 0  # 0 when unknown
    # every named dim (position from the end, width) of an unpadded tensor
    plain_dims: list[tuple[int, _Width]] = field(default_factory=list)
    written_partly: bool = False
    written_upto: str | None = None  # `k` in `buf[:, :k] = x`
    tail_zeroed: bool = False


class PaddedUnpaddedWidthMismatch(Rule):
    """## What it finds
    In one function, a buffer sized by a padded width — `round_up(X, n)`,
    `align(X, n)`, `cdiv(X, n) * n`, `(X + n - 1) // n * n`, or a name such as
    `hidden_size_padded` — exchanging data as a whole with a tensor of the
    unpadded width `X`: `dst.copy_(src)`, `out=dst`, `dst.add_(src)`, `dst += src`,
    with no slice to `X` on either side. Also an `empty`-allocated padded buffer
    that is written only up to `X` and then handed whole to a GEMM or a
    reduction, with its tail never zeroed and the result never sliced back.

    The unpadded side is known when it is allocated with `X` in the same
    position of its shape, or when `X` was read from its shape
    (`X = y.shape[-1]`, `m, X = y.shape`).

    ## Why it breaks
    Quantised MoE kernels pad the hidden width (2880 → 3072 for a multiple of
    256). When one side of a copy is padded and the other is not, the copy fails
    with `The size of tensor a (3072) must match the size of tensor b (2880)`,
    typically only on the expert-parallel path whose prepare/finalize step owns
    the output buffer. An uninitialised tail that reaches a GEMM or a reduction
    silently mixes garbage (possibly NaN) into every output.

    ## Example
    See the flagged and correct corpus examples below.

    ## Fix
    Write through a slice (`out[:, :hidden].copy_(y)`), slice the result back
    (`out = out[:, :hidden]`), allocate the padded buffer with `zeros` and write
    into a slice, zero the tail before the GEMM, or pass the padded width to the
    callee that fills the buffer.

    ## Options
    - `padded-names` (list of globs, case-insensitive, last name component):
      names of padded widths. Default: `*_padded`, `padded_*`, `*_padded_*`.
      Names containing `unpadded`, `non_padded` or `not_padded` never count.
    - `rounding-functions` (list of names, last component): functions whose
      result rounds their first argument up to a multiple of the second.
      Default: `round_up`, `_round_up`, `round_up_to_multiple`, `align`,
      `align_up`, `_align`, `ceil_to`, `round_to_multiple`, `next_multiple_of`.
    Both options are fully honoured by the `ast` and facts prefilters. Only
    the raw-text prefilter runs before options are known: a file is analysed
    only if it calls `empty`, `zeros`, `ones`, `full`, `rand` (or `randn`,
    `empty_strided`; bare or as `torch.<name>`; or `new_*`), has an
    exchange or consumer token (an
    in-place `copy_(`-style call, `+=`-style operators, `out=`, or a GEMM or
    reduction call with `empty` and a subscript), and one allocation's
    arguments hold `padded` or `aligned` (any case), a rounding word
    (`round_up`, `round_to`, `align`, `ceil_to`, `next_multiple_of`), `cdiv`
    or `ceil` with `*`, or `//` with `*` and `+` — or a name assigned such a
    rounded value elsewhere in the file. The same is then asked of each
    function: an allocation whose arguments hold such a width inline or a
    name assigned a rounded value in that function, assigned whole to a name
    that the function exchanges (an in-place call, `+=`-style operators,
    `out=`, a `*_like` copy) or, allocated uninitialised, writes through a
    subscript and hands to a GEMM or a reduction. So a configured padded
    name should contain `padded` or `aligned`, and a configured rounding
    function one of the rounding words.

    Left out on purpose: a padded buffer allocated in another function, `out=`
    on custom ops (a kernel may fill a padded output on purpose), and tensors
    whose width the function cannot see.
    """

    code = "SHD501"
    name = "padded-unpadded-width-mismatch"
    summary = "A padded-width buffer exchanges data whole with an unpadded tensor"
    severity = Severity.WARNING
    tags = ("correctness", "shapes")
    needles = _RULE_NEEDLES
    facts = ("padding_width_shapes",)
    options = {
        "padded-names": Option(DEFAULT_PADDED_NAMES, "list[str]", "Globs naming padded widths."),
        "rounding-functions": Option(
            DEFAULT_ROUNDING, "list[str]", "Functions that round a width up to a multiple."
        ),
    }

    # The text a finding needs (see the prefilter section above); the ast
    # and facts gates, which can see more, judge the files it admits.

    @classmethod
    def candidate(cls, text: str) -> bool:
        # the collector's needles run this same test first: the answer is
        # remembered for the text (``Needles.match``)
        return _TEXT_NEEDLES.match(text)

    @classmethod
    def _text_gate(cls, text: str) -> bool:
        # the allocation calls first (the most selective test, and one that
        # also tells whether the file allocates at all), the exchange tokens
        # and the searches for rounded assignments last
        scan = _allocation_scan(text)
        if scan is None:
            return False
        inline, spans = scan
        if inline:
            # a padded dimension inline holds a rounded expression or a
            # padded word; one that cannot be delimited still needs them
            if not _text_rounded(text):
                low = text.lower()
                if "padded" not in low and "aligned" not in low:
                    return False
            return cls._exchange_or_consumer(text) and cls._function_gate(text)
        # a dimension padded by name: bound to a rounded value in the file
        if not spans or not _text_rounded(text):
            return False
        names = _dimension_names(text, spans)
        if not any(_text_assigned_rounded(text, k) for k in names):
            return False
        return cls._exchange_or_consumer(text) and cls._function_gate(text)

    @classmethod
    def _function_gate(cls, text: str) -> bool:
        """The file-wide test asked again of each function's text (see the
        section "in one function")."""
        sites = _allocation_sites(text)
        offsets = [s[0] for s in sites]
        regions = function_regions(text, offsets)
        if regions is None:
            return True  # the file-wide test decides
        for start, end in regions:
            i, j = bisect_left(offsets, start), bisect_left(offsets, end)
            if i == j:
                continue
            region = text[start:end]
            if not cls._exchange_or_consumer(region):
                continue
            if not region.isascii() and ascii_lookalikes(region):
                return True  # a name may be spelled there as the compiler reads it
            memo: dict[str, Any] = {}
            for at, a0, a1 in sites[i:j]:
                if a1 is None:
                    return True  # arguments not delimited: assume the worst
                if not _text_padded(text[a0 - 1 : a1 - 1]):
                    names = _dimension_names(text, [(a0, a1)])
                    if not any(_text_assigned_rounded(region, k) for k in names):
                        continue
                name = _bound_name(text, at)
                if name is None:
                    continue
                if not name:
                    return True
                exchange, written, consumed = _tensor_uses(region, name, memo)
                if exchange or (written and consumed and text.startswith("empty", at)):
                    return True
        return False

    @staticmethod
    def _exchange_or_consumer(text: str) -> bool:
        if "+=" in text or "-=" in text or "*=" in text or "/=" in text:
            return True
        if any(search(text) for search in _EXCHANGE_CALLS):
            return True
        if "torch" in text and _OUT_KEYWORD(text):
            return True
        # a consumer reads an uninitialised buffer written through a subscript
        return "empty" in text and "]" in text and any(s(text) for s in _CONSUMER_CALLS)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        # a tensor bound to an allocation that may be padded, exchanged
        # whole with one whose dimension names it can pair with, or
        # allocated uninitialised, written in part and consumed (see
        # ``_function_shape``)
        return bool(padding_shapes(tree, text))

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        shapes = facts.raw("padding_width_shapes").get(module)
        if shapes is None or shapes.get("path") != path:
            return True  # not collected (or another file of this module name): no claim
        padded = tuple(options["padded-names"])
        rounding = frozenset(options["rounding-functions"])
        return any(_shape_may_fire(r, padded, rounding) for r in shapes["rows"])

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._padded_names: tuple[str, ...] = tuple(self.opts["padded-names"])
        self._rounding: frozenset[str] = frozenset(self.opts["rounding-functions"])
        self._stack: list[list[Any]] = []

    # -- widths ----------------------------------------------------------------------
    def _is_padded_name(self, name: str | None) -> bool:
        return (
            name is not None
            and name_matches(name, self._padded_names)
            and not name_matches(name, _NOT_PADDED)
        )

    def _stems(self, name: str) -> frozenset[str]:
        return _pattern_stems(name, self._padded_names)

    def _rounded_base(self, e: cst.CSTNode) -> tuple[cst.BaseExpression, int | None] | None:
        """(X, n) when ``e`` rounds X up to a multiple of n (n when a literal)."""
        while isinstance(e, cst.Call) and last_name(call_name(e)) in {"int"} and e.args:
            e = e.args[0].value
        if isinstance(e, cst.Call):
            leaf = last_name(call_name(e))
            args = positional_args(e)
            if leaf in self._rounding and len(args) >= 2:
                return args[0], int_literal(args[1])
            return None
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                a = a
                # cdiv(X, n) * n
                if isinstance(a, cst.Call) and last_name(call_name(a)) in _CDIV:
                    args = positional_args(a)
                    if len(args) == 2 and _same(args[1], b):
                        return args[0], int_literal(b)
                # (X + n - 1) // n * n
                if isinstance(a, cst.BinaryOperation) and isinstance(a.operator, cst.FloorDivide):
                    if _same(a.right, b):
                        x = _ceil_numerator(a.left, b)
                        if x is not None:
                            return x, int_literal(b)
        return None

    def _width_of(self, e: cst.CSTNode, widths: dict[str, _Width]) -> _Width | None:
        e = e
        key = dotted(e)
        if key is not None and key in widths:
            return widths[key]
        rb = self._rounded_base(e)
        if rb is not None:
            base, mult = rb
            b = self.ctx.code_for(base)
            return _Width(
                True, self.ctx.code_for(e), f"rounded up from `{b}`", _stem_set(base), mult
            )
        if key is not None and self._is_padded_name(key):
            return _Width(True, key, f"the padded name `{key}`", self._stems(key))
        return None

    # -- the walk ----------------------------------------------------------------------
    # The traversal only notes which functions allocate a tensor at all; the
    # analysis runs on those alone, when the function is left.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append([node, False])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        node, allocates = self._stack.pop()
        if allocates:
            self._analyse(node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._stack:
            return
        f = node.func
        leaf = f.attr.value if isinstance(f, cst.Attribute) else getattr(f, "value", None)
        if leaf in _ALLOC or leaf in _ALLOC_METHOD or leaf in _LIKE:
            self._stack[-1][1] = True

    def _analyse(self, node: cst.FunctionDef) -> None:
        widths: dict[str, _Width] = {}
        tensors: dict[str, _Tensor] = {}
        # name → (tensor, dim) whose shape the name was read from
        shape_src: dict[str, tuple[str, int]] = {}
        subscripted: set[str] = set()
        pending: list[tuple[cst.CSTNode, _Tensor, str, str | None]] = []
        # Pre-order over the function (nested definitions are analysed on
        # their own), remembering each node's parent.
        nodes: list[cst.CSTNode] = []
        parent: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [node.body]
        while stack:
            n = stack.pop()
            nodes.append(n)
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(n, cst.Subscript):
                k = dotted(n.value)
                if k:
                    subscripted.add(k)
            kids = child_nodes(n)
            for c in kids:
                parent[id(c)] = n
            stack.extend(reversed(kids))
        for n in nodes:
            if isinstance(n, cst.Assign):
                self._on_assign(n, widths, tensors, shape_src)
            elif isinstance(n, cst.AugAssign):
                if type(n.operator).__name__ in _AUG_OPS:
                    self._exchange(n, n.target, n.value, tensors, shape_src, widths, what=None)
            elif isinstance(n, cst.Call):
                self._on_call(n, parent, tensors, shape_src, widths, pending)
        for site, t, consumer, result in pending:
            if t.tail_zeroed or (result is not None and result in subscripted):
                continue
            upto = t.written_upto or "n"
            self.report(
                site,
                f"`{t.name}` is allocated with `empty` at the padded width "
                f"{_describe(t.width)}, written only up to the unpadded width, then passed "
                f"whole to `{consumer}`: its uninitialised tail is read",
                notes=[
                    f"`{t.name}` comes from {_flat(t.where)}",
                    "the padded tail holds garbage (possibly NaN) that the GEMM or reduction "
                    "mixes into every output",
                    f"zero the tail (`{t.name}{_tail(t, upto)}.zero_()`), allocate with "
                    f"`zeros`, or pass the slice `{t.name}{_slice(t, upto)}`",
                ],
            )

    def _on_assign(
        self,
        n: cst.Assign,
        widths: dict[str, _Width],
        tensors: dict[str, _Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> None:
        value = n.value
        for t in n.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript):
                self._on_subscript_write(tgt, value, tensors)
                continue
            if isinstance(tgt, (cst.Tuple, cst.List)):
                self._on_unpack(tgt, value, widths, tensors, shape_src)
                continue
            key = dotted(tgt)
            if key is None:
                continue
            _forget(key, tensors, widths, shape_src)
            w = self._width_of(value, widths) if self._rounded_base(value) else None
            if w is not None:
                widths[key] = _Width(
                    True, key, f"`{key} = {self.ctx.code_for(value)}`", w.stems, w.multiple
                )
                continue
            src = _shape_read(value)
            if src is not None:
                shape_src[key] = src
                continue
            t = self._alloc(value, key, widths, tensors, shape_src)
            if t is not None:
                tensors[key] = t

    def _on_unpack(
        self,
        tgt: cst.Tuple | cst.List,
        value: cst.BaseExpression,
        widths: dict[str, _Width],
        tensors: dict[str, _Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> None:
        names = [dotted(e.value) for e in tgt.elements]
        for k in names:
            if k:
                _forget(k, tensors, widths, shape_src)
        owner = None
        v = value
        if isinstance(v, cst.Attribute) and v.attr.value == "shape":
            owner = dotted(v.value)
        elif (
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Attribute)
            and v.func.attr.value == "size"
            and not v.args
        ):
            owner = dotted(v.func.value)
        if owner is None or any(isinstance(e.value, cst.StarredElement) for e in tgt.elements):
            return
        count = len(names)
        for i, k in enumerate(names):
            if k:
                shape_src[k] = (owner, i - count)

    def _alloc(
        self,
        value: cst.BaseExpression,
        key: str,
        widths: dict[str, _Width],
        tensors: dict[str, _Tensor],
        shape_src: dict[str, tuple[str, int]],
    ) -> _Tensor | None:
        v = value
        if not isinstance(v, cst.Call):
            return None
        name = call_name(v) or ""
        leaf = last_name(name) or ""
        if leaf == "to" and isinstance(v.func, cst.Attribute):
            if not isinstance(v.func.value, cst.Call):
                return None
            return self._alloc(v.func.value, key, widths, tensors, shape_src)
        if leaf in _LIKE:
            args = positional_args(v)
            src = tensors.get(dotted(args[0]) or "") if args else None
            if src is None:
                return None
            return _Tensor(
                key, src.width, src.dim, leaf in _UNINIT, f"`{key} = {self.ctx.code_for(v)}`",
                src.ndim, list(src.plain_dims),
            )
        torch_alloc = leaf in _ALLOC and (
            not isinstance(v.func, cst.Attribute) or name == f"torch.{leaf}"
        )
        if not (torch_alloc or leaf in _ALLOC_METHOD):
            return None
        shape = self._shape_args(v, leaf)
        if not shape:
            return None
        n = len(shape)
        found_padded: list[tuple[int, _Width]] = []
        found_plain: list[tuple[int, _Width]] = []
        for i, dim in enumerate(shape):
            w = self._width_of(dim, widths)
            if w is not None and w.padded:
                found_padded.append((i - n, w))
                continue
            k = dotted(dim)
            if k is not None:
                found_plain.append(
                    (i - n, _Width(False, k, _plain_origin(k, shape_src), _leaf_set(k)))
                )
        uninit = leaf in _UNINIT
        where = f"`{key} = {self.ctx.code_for(v)}`"
        if len(found_padded) == 1:
            d, w = found_padded[0]
            return _Tensor(key, w, d, uninit, where, n)
        if found_padded:
            return None
        # An unpadded tensor: remember every named dim; the exchange check
        # decides which one pairs with a padded width.
        if found_plain:
            return _Tensor(
                key, found_plain[-1][1], found_plain[-1][0], uninit, where, n, found_plain
            )
        return None

    def _shape_args(self, call: cst.Call, leaf: str) -> list[cst.BaseExpression]:
        kw = keyword_args(call)
        args = positional_args(call)
        if "size" in kw:
            s = kw["size"]
            return [e.value for e in s.elements] if isinstance(s, (cst.Tuple, cst.List)) else [s]
        if not args:
            return []
        if leaf in {"full", "new_full"}:
            args = args[:1]
        if leaf == "empty_strided":
            args = args[:1]
        first = args[0]
        if isinstance(first, (cst.Tuple, cst.List)):
            return [e.value for e in first.elements if not isinstance(e, cst.StarredElement)]
        if any(a.star for a in call.args):
            return []
        return args

    # -- writes, exchanges, consumers ------------------------------------------------------
    def _on_subscript_write(
        self, tgt: cst.Subscript, value: cst.BaseExpression, tensors: dict[str, _Tensor]
    ) -> None:
        k = dotted(tgt.value)
        t = tensors.get(k or "")
        if t is None or not t.width.padded:
            return
        if _is_zero(value) and _slice_has_lower(tgt):
            t.tail_zeroed = True
        else:
            self._mark_written(t, tgt)

    def _mark_written(self, t: _Tensor, sub: cst.Subscript) -> None:
        t.written_partly = True
        for el in sub.slice:
            sl = el.slice
            if isinstance(sl, cst.Slice) and sl.lower is None and sl.upper is not None:
                t.written_upto = self.ctx.code_for(sl.upper)

    def _on_call(
        self,
        n: cst.Call,
        parent: dict[int, cst.CSTNode],
        tensors: dict[str, _Tensor],
        shape_src: dict[str, tuple[str, int]],
        widths: dict[str, _Width],
        pending: list[tuple[cst.CSTNode, _Tensor, str, str | None]],
    ) -> None:
        func = n.func
        leaf = last_name(call_name(n)) if call_name(n) else (
            func.attr.value if isinstance(func, cst.Attribute) else None
        )
        # Method calls on a (possibly sliced) tensor.
        if isinstance(func, cst.Attribute):
            recv = func.value
            method = func.attr.value
            rk = dotted(recv)
            if method == "resize_" and rk in tensors:
                del tensors[rk]
                return
            if method in _ZEROING:
                base = recv.value if isinstance(recv, cst.Subscript) else recv
                t = tensors.get(dotted(base) or "")
                if t is not None and (
                    method != "fill_" or (n.args and _is_zero(n.args[0].value))
                ):
                    t.tail_zeroed = True
                return
            if method in _INPLACE_STRICT:
                if isinstance(recv, cst.Subscript):
                    t = tensors.get(dotted(recv.value) or "")
                    if t is not None:
                        self._mark_written(t, recv)
                    return
                args = positional_args(n)
                if args:
                    what = f".{method}(...)"
                    self._exchange(n, recv, args[0], tensors, shape_src, widths, what=what)
                return
            if method in _REDUCE | {"matmul", "mm", "bmm"} and rk in tensors:
                self._consumer(n, tensors[rk], f"{rk}.{method}()", parent, pending)
        kw = keyword_args(n)
        full = call_name(n) or ""
        # Only torch's own functions promise that `out=` has the inputs' shape;
        # a custom op may fill a padded output on purpose.
        if "out" in kw and full.startswith("torch.") and not full.startswith("torch.ops."):
            out = kw["out"]
            ins = positional_args(n)
            for a in ins:
                if self._exchange(n, out, a, tensors, shape_src, widths, what="out=", call=n):
                    break
        if leaf in _GEMM or (leaf in _REDUCE and full.startswith(("torch.", "F."))):
            for a in positional_args(n):
                t = tensors.get(dotted(a) or "")
                if t is not None:
                    self._consumer(n, t, f"{call_name(n)}", parent, pending)

    def _consumer(
        self,
        n: cst.Call,
        t: _Tensor,
        consumer: str,
        parent: dict[int, cst.CSTNode],
        pending: list[tuple[cst.CSTNode, _Tensor, str, str | None]],
    ) -> None:
        if not (t.width.padded and t.uninit and t.written_partly):
            return
        p = parent.get(id(n))
        if isinstance(p, cst.Subscript):
            return  # the result is sliced back right here
        result = None
        if isinstance(p, cst.Assign) and len(p.targets) == 1:
            result = dotted(p.targets[0].target)
        pending.append((n, t, consumer, result))

    def _exchange(
        self,
        site: cst.CSTNode,
        dst: cst.BaseExpression,
        src: cst.BaseExpression,
        tensors: dict[str, _Tensor],
        shape_src: dict[str, tuple[str, int]],
        widths: dict[str, _Width],
        what: str | None,
        call: cst.Call | None = None,
    ) -> bool:
        dk, sk = dotted(dst), dotted(src)
        if dk is None or sk is None or dk == sk:
            return False
        a, b = self._side(dk, tensors, shape_src), self._side(sk, tensors, shape_src)
        pair = None
        for p, q in ((a, b), (b, a)):
            if p is None or q is None:
                continue
            pt = p
            if not pt.width.padded:
                continue
            match = self._unpadded_match(pt, q)
            if match is not None:
                pair = (pt, match)
                break
        if pair is None:
            return False
        padded, (uname, uwidth) = pair
        if call is not None and self._passes_width(call, padded.width, exclude=dst):
            return False
        op = what or _flat(self.ctx.code_for(site))
        if what == "out=":
            op = f"{call_name(call) or 'call'}(..., out={dk})"
        elif what is not None:
            op = f"{dk}{what}"
        pw, uw = padded.width, uwidth
        self.report(
            site,
            f"`{op}` exchanges `{padded.name}`, padded to width {_describe(pw)}, with "
            f"`{uname}` of the unpadded width {_describe(uw)} as a whole",
            notes=[
                f"`{padded.name}` comes from {_flat(padded.where)}",
                _counterexample(pw, uw),
                f"slice the padded side to the unpadded width "
                f"(`{padded.name}{_slice(padded, uw.code)}`) or slice the result back",
            ],
        )
        return True

    def _side(
        self, k: str, tensors: dict[str, _Tensor], shape_src: dict[str, tuple[str, int]]
    ) -> _Tensor | None:
        t = tensors.get(k)
        if t is not None:
            return t
        dims = [(name, d) for name, (owner, d) in shape_src.items() if owner == k]
        if not dims:
            return None
        plain = [
            (d, _Width(False, name, f"read from `{k}.shape`", _leaf_set(name))) for name, d in dims
        ]
        return _Tensor(k, plain[-1][1], plain[-1][0], False, f"`{k}`", 0, plain)

    def _unpadded_match(self, padded: _Tensor, other: _Tensor) -> tuple[str, _Width] | None:
        for d, w in other.plain_dims:
            if d >= 0:
                # `x.shape[1]`: comparable when the padded buffer's rank is known
                if not padded.ndim:
                    continue
                d -= padded.ndim
            if w.padded or d != padded.dim:
                continue
            if w.stems & padded.width.stems:
                return other.name, w
        return None

    def _passes_width(self, call: cst.Call, w: _Width, exclude: cst.BaseExpression) -> bool:
        """A callee that also receives the padded width knows the buffer is padded."""
        for a in call.args:
            if a.value is exclude:
                continue
            for x in walk_fast(a.value):
                k = dotted(x)
                if k is not None and (k == w.code or self._is_padded_name(k)):
                    return True
                if isinstance(x, cst.BaseExpression) and self.ctx.code_for(x) == w.code:
                    return True
        return False


def _forget(
    key: str,
    tensors: dict[str, _Tensor],
    widths: dict[str, _Width],
    shape_src: dict[str, tuple[str, int]],
) -> None:
    """``key`` is rebound: what was known about it, and the widths read from
    its old shape, no longer hold (`x = F.pad(x, ...)` makes x padded)."""
    tensors.pop(key, None)
    widths.pop(key, None)
    shape_src.pop(key, None)
    for k in [k for k, (owner, _) in shape_src.items() if owner == key]:
        del shape_src[k]


def _flat(code: str) -> str:
    flat = " ".join(code.split())
    return flat.replace("( ", "(").replace(" )", ")")


def _describe(w: _Width) -> str:
    if w.origin in (f"`{w.code}`", f"the padded name `{w.code}`"):
        return f"`{w.code}`"
    return f"`{w.code}` ({_flat(w.origin)})"


def _counterexample(pw: _Width, uw: _Width) -> str:
    m = pw.multiple
    if m is not None and m >= 4:
        x = 11 * m + m // 4
        return (
            f"with `{uw.code}` = {x}, `{pw.code}` = {12 * m}: `The size of tensor a "
            f"({12 * m}) must match the size of tensor b ({x})`"
        )
    return (
        "the widths differ whenever the unpadded width is not already a multiple "
        "(2880 padded to 3072: `The size of tensor a (3072) must match the size of "
        "tensor b (2880)`)"
    )


def _slice(t: _Tensor, upto: str) -> str:
    if t.dim == -1:
        return f"[..., :{upto}]"
    if t.ndim:
        return "[" + ":, " * (t.ndim + t.dim) + f":{upto}]"
    return f".narrow({t.dim}, 0, {upto})"


def _tail(t: _Tensor, start: str) -> str:
    if t.dim == -1:
        return f"[..., {start}:]"
    if t.ndim:
        return "[" + ":, " * (t.ndim + t.dim) + f"{start}:]"
    return f".narrow({t.dim}, {start}, -1)"


def _plain_origin(k: str, shape_src: dict[str, tuple[str, int]]) -> str:
    src = shape_src.get(k)
    if src is not None:
        return f"read from `{src[0]}.shape`"
    return f"`{k}`"


def _leaf_set(k: str) -> frozenset[str]:
    return frozenset({k.rsplit(".", 1)[-1].lower()})


def _stem_set(base: cst.CSTNode) -> frozenset[str]:
    k = dotted(base)
    if k is None:
        return frozenset()
    return frozenset({k.rsplit(".", 1)[-1].lower()})


def _same(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    ia, ib = int_literal(a), int_literal(b)
    if ia is not None or ib is not None:
        return ia == ib
    da, db = dotted(a), dotted(b)
    return da is not None and da == db


def _ceil_numerator(e: cst.CSTNode, n: cst.CSTNode) -> cst.BaseExpression | None:
    """X for ``X + n - 1`` (also ``X + (n - 1)``), else None."""
    if not isinstance(e, cst.BinaryOperation):
        return None
    if isinstance(e.operator, cst.Subtract) and int_literal(e.right) == 1:
        inner = e.left
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Add):
            if _same(inner.right, n):
                return inner.left
    if isinstance(e.operator, cst.Add):
        r = e.right
        if (
            isinstance(r, cst.BinaryOperation)
            and isinstance(r.operator, cst.Subtract)
            and _same(r.left, n)
            and int_literal(r.right) == 1
        ):
            return e.left
        ni = int_literal(n)
        if ni is not None and int_literal(r) == ni - 1:
            return e.left
    return None


def _shape_read(v: cst.CSTNode) -> tuple[str, int] | None:
    """(tensor, dim) for ``t.shape[d]`` / ``t.size(d)`` with a literal d."""
    if (
        isinstance(v, cst.Subscript)
        and isinstance(v.value, cst.Attribute)
        and v.value.attr.value == "shape"
    ):
        owner = dotted(v.value.value)
        if owner and len(v.slice) == 1 and isinstance(v.slice[0].slice, cst.Index):
            d = int_literal(v.slice[0].slice.value)
            if d is not None:
                return owner, d
    if (
        isinstance(v, cst.Call)
        and isinstance(v.func, cst.Attribute)
        and v.func.attr.value == "size"
        and len(v.args) == 1
    ):
        owner = dotted(v.func.value)
        d = int_literal(v.args[0].value)
        if owner and d is not None:
            return owner, d
    return None


def _is_zero(e: cst.CSTNode) -> bool:
    if int_literal(e) == 0:
        return True
    return isinstance(e, cst.Float) and float(e.value) == 0.0


def _slice_has_lower(s: cst.Subscript) -> bool:
    """``buf[..., n:]``: a write that starts past the beginning (the tail)."""
    for el in s.slice:
        sl = el.slice
        if isinstance(sl, cst.Slice) and sl.lower is not None and sl.upper is None:
            return True
    return False
