"""SHD301 pp-payload-drops-tensors: a pipeline stage's hand-off payload that
silently leaves behind tensors the forward collected for the last rank."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from checks._classes import ClassIndex, ClassInfo, NonLiteral
from checks._helpers import (
    ascii_lower,
    ast_children,
    ast_dotted,
    ast_stmt_fields,
    ast_walk,
    call_name,
    dotted,
    last_name,
    memo_last_text_under,
    memo_on_tree,
    name_matches,
    walk,
    walk_no_nested,
)
from checks._textfunctions import glob_words, narrow_classes, regions_naming, skeleton_to
from linter.facts import FactCollector, ProjectFacts, scoped_tree
from linter.needles import Needles
from linter.rule import Option, Rule
from linter.types import Note, Severity, Span

DEFAULT_PAYLOAD_CLASSES = ("IntermediateTensors", "PPProxyTensors")
DEFAULT_LAST_RANK = ("is_last_rank", "is_last_pp_rank", "is_pipeline_last_stage")
DEFAULT_FLAGS = ("supports_aux_hidden_states_over_pp",)
DEFAULT_RECEIVER_FACTORIES = ("make_empty_intermediate_tensors_factory",)
DEFAULT_RECEIVER_METHODS = ("make_empty_intermediate_tensors",)
# ``hidden`` alone would make every ``hidden_states`` a candidate; it only
# becomes an accumulator when appended to, so the pattern stays cheap to match
DEFAULT_ACCUMULATORS = ("*aux*", "*hidden*", "*tap*", "*captur*")
DEFAULT_HELPERS = ("*add*", "*captur*", "*collect*", "*record*", "*append*", "*tap*")
_MUTATORS = {"append", "extend", "insert", "capture"}


# Source text that may separate tokens inside brackets: whitespace, a
# comment, a line continuation. A comment runs to the end of its line (the
# lookahead): read any shorter, a line of ``#`` could be split into comments
# in exponentially many ways before a failing match gives up.
_GAP = r"(?:\s|\\|#[^\r\n]*(?=[\r\n]|\Z))*"
# ``make_empty_intermediate_tensors_factory([...`` / ``((...``: a call of the
# default factory whose first positional argument may be a list or tuple
# display (``(factory)(...)`` too); where ``_receiver_keys_ast`` can record
# a layout. Led by the literal name, so the scan jumps between occurrences.
_FACTORY_CALL = re.compile(
    rf"make_empty_intermediate_tensors_factory(?:{_GAP}\))*{_GAP}\({_GAP}[\[(]"
)


def _match_lines(pattern: re.Pattern[str], text: str) -> list[int] | None:
    """Sorted 1-based lines (as CPython's ast counts them) where ``pattern``
    starts a match; None when the text has a ``\r`` (a line break of the
    tokenizer's that ``str.count("\n")`` would not see)."""
    if "\r" in text:
        return None
    out: list[int] = []
    line, pos = 1, 0
    for m in pattern.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if not out or out[-1] != line:
            out.append(line)
    return out


def _spans_a_line(node: ast.AST, lines: Sequence[int]) -> bool:
    """Whether ``node``'s lines hold one of ``lines`` (sorted); True for a
    node without a position."""
    lo = getattr(node, "lineno", None)
    if lo is None:
        return True
    hi = node.end_lineno or lo  # type: ignore[attr-defined]
    i = bisect_left(lines, lo)
    return i < len(lines) and lines[i] <= hi


def _walk_lines(node: ast.AST, lines: Sequence[int] | None) -> Iterator[ast.AST]:
    """``ast_walk(node)`` without the subtrees whose lines hold none of
    ``lines``: the nodes kept come in the same relative order (breadth first,
    so dropping whole subtrees changes neither a node's depth nor the order
    of the nodes at one depth). Nothing inside an f-string is dropped: the
    positions there are not trusted. ``lines`` None: every node."""
    if lines is None:
        yield from ast_walk(node)
        return
    todo = deque([(node, True)])
    pop, extend = todo.popleft, todo.extend
    while todo:
        n, prune = pop()
        if prune and type(n) is not ast.JoinedStr:
            extend([(c, True) for c in ast_children(n) if _spans_a_line(c, lines)])
        else:
            extend([(c, False) for c in ast_children(n)])
        yield n


def _receiver_keys_ast(
    node: ast.AST, factories: Sequence[str], lines: Sequence[int] | None = None
) -> list[list[str]]:
    """String key lists of every ``factory(["a", "b"], ...)`` under ``node``
    (a class may allocate one layout per mode). ``lines``: walk only the
    subtrees holding one of them (see :func:`_walk_lines`)."""
    out: list[list[str]] = []
    for n in _walk_lines(node, lines):
        if not isinstance(n, ast.Call) or not n.args:
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in factories:
            continue
        first = n.args[0]
        if isinstance(first, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
        ):
            out.append([e.value for e in first.elts])  # type: ignore[attr-defined]
    return out


class PpReceiverFacts(FactCollector):
    """Per class: the keys its receiving side allocates for the incoming
    pipeline payload (``make_empty_intermediate_tensors_factory([...], ...)``),
    so a subclass in another file can be compared with its base's receiver.

    Only a call of the factory given a list or tuple display first can be
    recorded, so the needle is that call (:data:`_FACTORY_CALL`), and only the
    classes and subtrees spanning a line where it matches are walked."""

    name = "pp_receivers"
    version = 1
    needles = Needles(
        all_of=("make_empty_intermediate_tensors_factory",), regex=_FACTORY_CALL.pattern
    )

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        # (a class spanning a factory call holds the factory's name)
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        # (so does the method holding the call)
        return _scan_scope(text, options)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        lines = _match_lines(_FACTORY_CALL, text)
        out: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and (lines is None or _spans_a_line(node, lines)):
                layouts = _receiver_keys_ast(node, DEFAULT_RECEIVER_FACTORIES, lines)
                if layouts:
                    out[node.name] = {"layouts": layouts, "line": node.lineno}
        return out or None


# -- prefilter: the shapes a finding needs, on CPython ``ast`` -------------------
# Everything here is option-independent (names are recorded, not matched), so
# the ast gate is sound under any configuration; the facts gate replays the
# rule's per-method decisions on what is recorded, under the effective
# options. Where the record is coarser than the rule, it errs towards a
# finding: a payload carries at most the names written in it (the rule also
# counts the non-last branch and writes into the payload's container), a
# return whose rank context cannot be enumerated is both a payload and a
# last-rank return.

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody")
# accessor candidates of one return whose subsets are enumerated (2**n
# replays of its path of ``if`` tests); beyond that its context is unknown
_MAX_LEAVES = 8


def _cst_name(node: ast.AST | None) -> str | None:
    """The identifier libcst reads as a ``Name``: ast's names and the
    keywords ``None``, ``True`` and ``False`` (constants in ast)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool)):
        return str(node.value)
    return None


def _cst_dotted(node: ast.AST | None) -> str | None:
    """``dotted`` (libcst) on ast: ``a.b.c`` for a chain of attributes on a
    name, ``None.x`` included."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    name = _cst_name(node)
    if name is None:
        return None
    parts.append(name)
    return ".".join(reversed(parts))


def _stmt_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast_walk(node)`` of a statement restricted to statements and their
    ``except``/``case`` clauses, in the same relative order (breadth first:
    dropping the expression subtrees, which hold no statement, changes
    neither a statement's depth nor the order at one depth)."""
    todo = deque([node])
    pop, extend = todo.popleft, todo.extend
    while todo:
        n = pop()
        for f in ast_stmt_fields(type(n)):
            extend(getattr(n, f))
        yield n


def _classes_ast(body: list[ast.stmt]) -> Iterator[ast.ClassDef]:
    """Every class of the module, nested in classes and functions too (the
    rule visits them all); statements only, expressions are never entered."""
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, ast.ClassDef):
            yield s
        for f in ast_stmt_fields(type(s)):
            stack.extend(getattr(s, f))


def _walk_ast_no_nested(node: ast.AST) -> Iterator[ast.AST]:
    stack = list(ast_children(node))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _NESTED):
            stack.extend(ast_children(n))


def _carried_names(v: ast.AST | None, out: set[str]) -> None:
    """Names a return hands back as themselves (``_carried_by_last``)."""
    name = _cst_name(v)
    if name is not None:
        out.add(name)
    elif isinstance(v, ast.Starred):
        _carried_names(v.value, out)
    elif isinstance(v, (ast.Tuple, ast.List)):
        for e in v.elts:
            _carried_names(e, out)
    elif isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
        _carried_names(v.left, out)
        _carried_names(v.right, out)


def _first_arg(call: ast.Call) -> ast.AST | None:
    """The call's first argument in source order (libcst's ``call.args[0]``),
    a ``*x`` unwrapped."""
    cands: list[ast.AST] = [*call.args, *(k.value for k in call.keywords)]
    if not cands:
        return None
    first = min(cands, key=lambda a: (a.lineno, a.col_offset))  # type: ignore[attr-defined]
    return first.value if isinstance(first, ast.Starred) else first


def _literal_keys(elts: Sequence[ast.AST | None]) -> list[str] | None:
    """String forms of literal string keys (``str()`` of the value, as the
    rule does), or None when one is not a plain literal."""
    out = []
    for e in elts:
        if not (isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes))):
            return None
        out.append(str(e.value))
    return out


def _call_leaf(value: ast.AST | None) -> str | None:
    """``Leaf`` of a return of ``a.b.Leaf(...)`` (``last_name(call_name(...))``)."""
    if not isinstance(value, ast.Call):
        return None
    return (_cst_dotted(value.func) or "").rsplit(".", 1)[-1] or None


def _dict_keys_ast(value: ast.AST | None) -> list[str] | None:
    """Sorted keys of ``Leaf({"k": ...})`` (``_dict_keys`` of the call's first
    argument), None when the first argument is not a string-keyed dict."""
    if not isinstance(value, ast.Call):
        return None
    first = _first_arg(value)
    if not isinstance(first, ast.Dict):
        return None
    keys = _literal_keys(first.keys)
    return sorted(set(keys)) if keys is not None else None


def _has_splat(value: ast.AST) -> bool:
    """A ``**x`` anywhere in the value (``_carried_by_payload`` gives up)."""
    for n in ast_walk(value):
        if isinstance(n, ast.Dict) and None in n.keys:
            return True
        if isinstance(n, ast.keyword) and n.arg is None:
            return True
    return False


def _identifiers(value: ast.AST) -> set[str]:
    """Identifiers of a value that are libcst ``Name`` nodes too (``_names_in``
    sees at least these)."""
    out: set[str] = set()
    for n in ast_walk(value):
        name = _cst_name(n)
        if name is not None:
            out.add(name)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg is not None:
            out.add(n.arg)
    return out


def _test_leaf(test: ast.AST) -> str | None:
    """The name ``_classify`` matches in a test that is not ``not``/``and``/
    ``or``: ``x.leaf``, ``leaf``, or either called without arguments."""
    if isinstance(test, ast.Call) and not test.args and not test.keywords:
        test = test.func
    if isinstance(test, ast.Attribute):
        return test.attr
    return _cst_name(test)


def _test_leaves(test: ast.AST, out: list[str]) -> None:
    """The names ``PpPayloadDropsTensors._classify`` may match against
    ``last-rank-accessors`` in an ``if`` test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _test_leaves(test.operand, out)
        return
    if isinstance(test, ast.BoolOp):
        for v in test.values:
            _test_leaves(v, out)
        return
    leaf = _test_leaf(test)
    if leaf is not None and leaf not in out:
        out.append(leaf)


# the rank contexts of a return (``_Return.ctx``): LAST, NONLAST or 0 (unknown)
LAST, NONLAST = 1, -1


def _classify_ast(test: ast.AST, matched: frozenset[str]) -> tuple[int, int]:
    """``PpPayloadDropsTensors._classify`` with the accessors that match
    given as the set of leaves they match. ``a and b and c`` is one BoolOp
    here and nested pairs in libcst: "the first non-zero, left to right" is
    the same either way."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        b, e = _classify_ast(test.operand, matched)
        return e, b
    if isinstance(test, ast.BoolOp):
        parts = [_classify_ast(v, matched) for v in test.values]
        if isinstance(test.op, ast.And):
            return next((p[0] for p in parts if p[0]), 0), 0
        return 0, next((p[1] for p in parts if p[1]), 0)
    leaf = _test_leaf(test)
    if leaf is not None and leaf in matched:
        return LAST, NONLAST
    return 0, 0


_BODY, _ELSE, _AFTER = range(3)


def _rank_paths(body: list[ast.stmt]) -> list[tuple[ast.Return, list[tuple[int, ast.expr]]]]:
    """Every return ``PpPayloadDropsTensors._block`` records, in its order,
    with the ``if`` tests its rank context depends on: the ``if`` branches
    it sits in (``_BODY``/``_ELSE``) and, in every block on the way, the
    earlier ``if <test>: ... return`` without ``else`` that make the rest of
    that block the other context (``_AFTER``). Mirrors ``_block``/``_if``:
    ``if``/``for``/``while``/``with``/``try`` are entered (``match`` and
    ``try/except*`` are not, nor nested functions)."""
    out: list[tuple[ast.Return, list[tuple[int, ast.expr]]]] = []
    _rank_block(body, [], out)
    return out


def _rank_block(
    stmts: list[ast.stmt],
    path: list[tuple[int, ast.expr]],
    out: list[tuple[ast.Return, list[tuple[int, ast.expr]]]],
) -> None:
    """``_rank_paths`` of one block (a function of the module, not a closure:
    a recursive closure is a reference cycle that would keep the returns'
    trees alive until the cyclic collector runs)."""
    for s in stmts:
        if isinstance(s, ast.Return):
            out.append((s, path))
        elif isinstance(s, ast.If):
            _rank_block(s.body, [*path, (_BODY, s.test)], out)
            # ``elif`` is an ``if`` alone in ``orelse`` here; libcst's
            # ``_if`` on it and ``_block`` on an ``else:`` holding one
            # ``if`` agree: what the inner ``if`` would set for later
            # statements has none to apply to
            _rank_block(s.orelse, [*path, (_ELSE, s.test)], out)
            if not s.orelse and isinstance(s.body[-1], (ast.Return, ast.Raise)):
                path = [*path, (_AFTER, s.test)]
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            _rank_block(s.body, path, out)
            _rank_block(s.orelse, path, out)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            _rank_block(s.body, path, out)
        elif isinstance(s, ast.Try):
            _rank_block(s.body, path, out)
            for h in s.handlers:
                _rank_block(h.body, path, out)
            _rank_block(s.orelse, path, out)
            _rank_block(s.finalbody, path, out)


def _path_context(path: Sequence[tuple[int, ast.expr]], matched: frozenset[str]) -> int:
    """The rank context ``_block``/``_if`` give a return on ``path``."""
    ctx = 0
    for op, test in path:
        b, e = _classify_ast(test, matched)
        if op == _BODY:
            ctx = b or ctx
        elif op == _ELSE:
            ctx = e or ctx
        elif e:  # ``_if`` hands back its else context only when there is one
            ctx = e
    return ctx


def _nonlast_masks(path: Sequence[tuple[int, ast.expr]]) -> tuple[list[str], list[int] | None]:
    """The accessor candidates a return's context depends on and the masks
    over them (bit i: ``leaves[i]`` matches) that make it non-last; None
    when there are too many candidates to enumerate."""
    leaves: list[str] = []
    for _, test in path:
        _test_leaves(test, leaves)
    if len(leaves) > _MAX_LEAVES:
        return leaves, None
    masks = []
    for mask in range(1, 1 << len(leaves)):  # mask 0: nothing matches, context 0
        matched = frozenset(k for i, k in enumerate(leaves) if mask >> i & 1)
        if _path_context(path, matched) == NONLAST:
            masks.append(mask)
    return leaves, masks


_SPLIT_MEMO: list[Any] = [None, None]


def _text_lines(text: str) -> list[str] | None:
    """``text.split("\n")`` (kept for the last text), None when it has a
    ``\r`` (see :func:`_match_lines`)."""
    if _SPLIT_MEMO[0] is not text:
        _SPLIT_MEMO[:] = [text, None if "\r" in text else text.split("\n")]
    return _SPLIT_MEMO[1]  # type: ignore[no-any-return]


def _name_lines(node: ast.AST, names: Iterable[str], text: str) -> list[int] | None:
    """Sorted lines of ``node`` holding one of ``names`` (as a substring) or
    a non-ASCII character (an identifier may be written in a form that only
    normalises to the name); None (walk everything) when the text has a
    ``\r``."""
    lines = _text_lines(text)
    lo, hi = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if lines is None or lo is None or hi is None or hi > len(lines):
        return None
    names = tuple(names)
    return [
        i
        for i, line in enumerate(lines[lo - 1 : hi], lo)
        if not line.isascii() or any(n in line for n in names)
    ]


def _walk_no_nested_lines(node: ast.AST, lines: Sequence[int] | None) -> Iterator[ast.AST]:
    """``_walk_ast_no_nested(node)`` (in another order) without the subtrees
    whose lines hold none of ``lines``; inside an f-string nothing is
    dropped (its inner positions are not trusted). ``lines`` None: every
    node."""
    if lines is None:
        yield from _walk_ast_no_nested(node)
        return
    stack = [(c, True) for c in ast_children(node) if _spans_a_line(c, lines)]
    while stack:
        n, prune = stack.pop()
        yield n
        if isinstance(n, _NESTED):
            continue
        if prune and type(n) is not ast.JoinedStr:
            stack.extend([(c, True) for c in ast_children(n) if _spans_a_line(c, lines)])
        else:
            stack.extend([(c, False) for c in ast_children(n)])


def _accumulator_candidates(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, carried: set[str], text: str
) -> dict[str, list[str]]:
    """Names some return hands back that the method also adds to
    (``_accumulators`` before the options): ``""`` for an append/``+=``/
    capture keyword, else the name of the call that may add to it (whether it
    is a helper is an option). Every such site names the accumulator, so
    only the subtrees spanning a line where a returned name occurs are
    walked."""
    acc: dict[str, set[str]] = {}

    def add(name: str | None, how: str | None) -> None:
        if name in carried and how is not None:
            acc.setdefault(name, set()).add(how)

    for n in _walk_no_nested_lines(fn, _name_lines(fn, carried, text)):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and _cst_name(f.value):
                add(_cst_name(f.value), "")
                continue
            leaf = (_cst_dotted(f) or "").rsplit(".", 1)[-1] or None
            positional = [a for a in n.args if not isinstance(a, ast.Starred)]
            if positional:
                add(_cst_name(positional[0]), leaf)
            for k in n.keywords:
                if k.arg is None or not name_matches(k.arg, ("*captur*",)):
                    continue
                v = k.value
                for c in (v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,):
                    if isinstance(c, ast.Attribute):
                        add(_cst_name(c.value), "")
                    else:
                        add(_cst_name(c), "")
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            if isinstance(n.value, (ast.List, ast.Tuple)):
                add(n.target.id, "")
        elif (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Call)
        ):
            add(n.targets[0].id, (_cst_dotted(n.value.func) or "").rsplit(".", 1)[-1] or None)
    return {k: sorted(v) for k, v in acc.items()}


# One return of a method, as the facts gate replays it:
#   [leaf, splat, carried, has, keys, k, nonlast]
# leaf: ``Leaf`` of ``return a.Leaf(...)`` or None; splat: a ``**`` in the
# value; carried: accumulator candidates it returns as themselves; has: those
# written anywhere in it; keys: the sorted keys of ``Leaf({"k": ...})`` or
# None; k: the accessor candidates its rank context depends on; nonlast: the
# masks over ``k`` (bit i: ``k[i]`` matches ``last-rank-accessors``) under
# which the rule puts it in the non-last context, or None when not
# enumerated (either may hold).
_LEAF, _SPLAT, _CARRIED, _HAS, _KEYS, _K, _NL = range(7)


def _method_shape(fn: ast.FunctionDef | ast.AsyncFunctionDef, text: str) -> dict[str, Any] | None:
    """What the facts gate needs to replay ``visit_ClassDef`` on one method,
    or None when no options can make it report."""
    paths = [(r, p) for r, p in _rank_paths(fn.body) if r.value is not None]
    if not paths:
        return None
    carried_by: list[set[str]] = [set() for _ in paths]
    for (r, _), out in zip(paths, carried_by):
        _carried_names(r.value, out)
    all_carried = set().union(*carried_by)
    # a drop needs a payload and another return carrying an accumulator
    acc = _accumulator_candidates(fn, all_carried, text) if len(paths) >= 2 and all_carried else {}
    keys = [_dict_keys_ast(r.value) for r, _ in paths]
    if not acc and all(k is None for k in keys):
        return None
    names = set(acc)
    rets: list[list[Any]] = []
    for (r, path), c, k in zip(paths, carried_by, keys):
        assert r.value is not None
        leaf = _call_leaf(r.value)
        carried = sorted(c & names)
        leaves, nl = _nonlast_masks(path)
        # a return that is never a payload (no call, never non-last) and
        # returns no accumulator changes nothing the rule decides
        if leaf is None and nl == [] and not carried:
            continue
        has = sorted(_identifiers(r.value) & names) if names else []
        rets.append([leaf, _has_splat(r.value), carried, has, k, leaves, nl])
    shape = {"acc": acc, "rets": rets}
    return shape if _could_drop(shape) or _could_mismatch(shape) else None


def _maybe_payload(ret: Sequence[Any]) -> bool:
    nl = ret[_NL]
    return ret[_LEAF] is not None or nl is None or bool(nl)


def _could_drop(m: Mapping[str, Any]) -> bool:
    """Under some options: a payload with no ``**`` misses an accumulator
    another return hands back (every return is a last-rank one when no
    accessor matches and its call is not a payload class)."""
    if not m["acc"]:
        return False
    rets = m["rets"]
    for i, rl in enumerate(rets):
        if not rl[_CARRIED]:
            continue
        for j, rp in enumerate(rets):
            if (
                i != j
                and not rp[_SPLAT]
                and _maybe_payload(rp)
                and set(rl[_CARRIED]) - set(rp[_HAS])
            ):
                return True
    return False


def _could_mismatch(m: Mapping[str, Any]) -> bool:
    """Under some options: a keyed payload returned on a non-last rank."""
    return any(r[_KEYS] is not None and (r[_NL] is None or r[_NL]) for r in m["rets"])


# ``f([`` / ``f((`` / ``f(*[`` / ``f(k=[``: a call whose first argument in
# source order may be a list or tuple display (``_first_arg``), matched at
# its ``(``; a line without one holds no call ``_receiver_shape`` records
_LIST_FIRST_CALL = re.compile(rf"\({_GAP}(?:\*\*?|[^\W\d]\w*{_GAP}=)?{_GAP}[\[(]")


def _list_first_call_lines(node: ast.AST, text: str) -> list[int] | None:
    """``_match_lines(_LIST_FIRST_CALL, text)`` within ``node``'s lines."""
    lines = _text_lines(text)
    lo, hi = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if lines is None or lo is None or hi is None or hi > len(lines):
        return None
    found = _match_lines(_LIST_FIRST_CALL, "\n".join(lines[lo - 1 : hi]))
    return None if found is None else [i + lo - 1 for i in found]


def _receiver_shape(node: ast.ClassDef, text: str) -> dict[str, Any]:
    """What ``_own_receiver`` reads, before the options: calls given a
    list/tuple first (``[leaf, keys]``, keys None when not all literal), and
    per function defined anywhere in the class the ``[leaf, keys]`` of its
    returns, or None when one cannot be a keyed payload under any options
    (the rule then finds the receiver opaque). Functions and returns are
    statements: only statements are walked for them; calls are looked for
    only in the subtrees spanning a line where such a call may start."""
    calls: list[list[Any]] = []
    defs: dict[str, list[list[Any]] | None] = {}
    lines = _list_first_call_lines(node, text)
    for stmt in node.body:
        for n in _stmt_walk(stmt):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                layouts: list[list[Any]] | None = []
                for s in n.body:
                    for r in _stmt_walk(s):
                        if not isinstance(r, ast.Return) or layouts is None:
                            continue
                        leaf, keys = _call_leaf(r.value), _dict_keys_ast(r.value)
                        layouts = None if leaf is None or keys is None else [*layouts, [leaf, keys]]
                prev = defs.get(n.name, [])
                defs[n.name] = None if prev is None or layouts is None else prev + layouts
        if lines is not None and not _spans_a_line(stmt, lines):
            continue
        for n in _walk_lines(stmt, lines):
            if isinstance(n, ast.Call):
                first = _first_arg(n)
                leaf = (_cst_dotted(n.func) or "").rsplit(".", 1)[-1]
                if leaf and isinstance(first, (ast.List, ast.Tuple)):
                    keys = _literal_keys(first.elts)
                    rec = [leaf, sorted(set(keys)) if keys is not None else None]
                    if rec not in calls:
                        calls.append(rec)
    return {"calls": calls, "defs": defs}


def _class_shape(node: ast.ClassDef, text: str) -> dict[str, Any] | None:
    methods = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            m = _method_shape(stmt, text)
            if m is not None:
                methods.append(m)
    if not methods:
        return None
    own: dict[str, bool] = {}
    for stmt in node.body:
        target = value = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and target.id not in own:
            # only a literal ``True`` set on the class itself is a claim; any
            # other value still hides the bases' flag
            own[target.id] = isinstance(value, ast.Constant) and value.value is True
    bases = []
    for b in node.bases:
        d = _cst_dotted(b.value if isinstance(b, ast.Starred) else b)
        if d:
            bases.append(d)
    out: dict[str, Any] = {"bases": bases, "own": own, "methods": methods}
    if any(_could_mismatch(m) for m in methods):
        out["recv"] = _receiver_shape(node, text)
    return out


@memo_on_tree
def payload_shapes(tree: ast.Module, text: str) -> list[dict[str, Any]]:
    """The classes of ``tree`` whose methods could hold a finding (memoised
    on the tree: the ast gate and the collector share one parse)."""
    return [s for s in (_class_shape(c, text) for c in _classes_ast(tree.body)) if s is not None]


# -- text gate -----------------------------------------------------------------
# Every finding reports a payload return (``_is_payload_return``): a call of
# a ``payload-classes`` name, or a return the rule puts in the non-last
# context, which takes an ``if`` whose test (through ``not``/``and``/``or``)
# is a ``last-rank-accessors`` name, bare, as an attribute, or called with
# no arguments (``_classify``). With configured names that contain one of
# the default strings, the text then holds one of:
#   - ``...IntermediateTensors...(`` / ``...PPProxyTensors...(``: the call's
#     leaf name (any identifier characters around the string), closing
#     brackets of a parenthesised callee, then ``(``;
#   - ``...is_last_rank...`` / ``last_stage`` / ``last_pp_rank`` ending a
#     test operand: followed by ``:`` (the test ends), ``)`` (a bracket
#     closes), ``(`` (the no-argument call) or ``and``/``or``.
# Between tokens: whitespace, comments, line continuations (``_GAP``).
# identifier characters (ASCII word characters or any non-ASCII one), one
# class so that a failing match backtracks linearly
# (written as the ASCII characters it excludes: a class spanning every
# character outside ASCII costs ``re`` ~2 ms to compile, per pattern)
_IDENT_TAIL = r"[^\x00-/:-@\[-^`{-\x7f]*"
_PAYLOAD_CALL = rf"(?:IntermediateTensors|PPProxyTensors){_IDENT_TAIL}(?:{_GAP}\))*{_GAP}\("
_LAST_RANK_TEST = rf"(?:is_last_rank|last_stage|last_pp_rank){_IDENT_TAIL}{_GAP}(?:[:()]|and|or)"


class _PayloadNeedles(Needles):
    """The ``any_of`` group below (what the registry records), asked in two
    passes over a text without any of the names instead of five (the
    payload classes share ``Tensors``, the last-rank names ``last_``), then
    the ``regex``: a payload call or a last-rank test; else the last-rank
    names and test on the text with its ASCII letters lower-cased
    (``name_matches`` compares accessors in any case)."""

    def _match(self, text: str) -> bool:
        if (
            ("Tensors" in text and ("IntermediateTensors" in text or "PPProxyTensors" in text))
            or (
                "last_" in text
                and ("is_last_rank" in text or "last_stage" in text or "last_pp_rank" in text)
            )
        ) and self._search(text):  # type: ignore[misc]
            return True
        # the accessors match in any case (``name_matches``): the last-rank
        # test on the lower-cased text (``IS_LAST_RANK``, ``Last_Stage``)
        if "\u212a" in text:
            return True  # (the Kelvin sign lower-cases to ``k``)
        low = ascii_lower(text)
        return (
            "last_" in low
            and ("is_last_rank" in low or "last_stage" in low or "last_pp_rank" in low)
            and _LAST_RANK_SEARCH(low) is not None
        )


# what every default last-rank test holds (the text gate's words, also read
# by ``capture_setters``)
_LAST_RANK_WORDS = ("is_last_rank", "last_stage", "last_pp_rank")
_LAST_RANK_SEARCH = re.compile(_LAST_RANK_TEST).search

# -- what the ast readers read -------------------------------------------------
# A finding is made in a class whose methods return a payload: a
# ``payload-classes`` call, or a return on the other ranks' path of a
# ``last-rank-accessors`` test; capture is turned on by functions that name
# ``captur``, and a receiver layout is a factory call. So this rule's ast
# readers (its gate, ``PpPayloadShapes``, ``PpReceiverFacts``) read only the
# top-level statements whose text holds one of: a configured payload class,
# a literal part of a configured accessor glob, a default word of the text
# gate, ``captur`` or the factory's name — ASCII letters in any case, as
# ``name_matches`` compares names (U+0130 and U+212A, which lower-case to
# ASCII letters, count as a word). A name the text may spell otherwise than
# the compiler reads it (a non-ASCII configured name, an NFKC look-alike in
# the text) or a glob without a literal part: every statement. Where no
# other reader needs the file, only those statements are compiled
# (``Rule.ast_scope``); the others hold no class that can fire.
_SCOPE_WORDS = ("intermediatetensors", "ppproxytensors", *_LAST_RANK_WORDS, "captur", "make_empty_intermediate_tensors_factory")


def _scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """The regions of ``text`` this rule's ast readers read (None: all)."""
    own = options.get("SHD301", {})
    names = [*own.get("payload-classes", DEFAULT_PAYLOAD_CLASSES), *own.get("last-rank-accessors", DEFAULT_LAST_RANK)]
    return regions_naming(text, _SCOPE_WORDS, names)


def _scan_names(options: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """The configured names the scan scope keeps a method for."""
    own = options.get("SHD301", {})
    return (
        *own.get("payload-classes", DEFAULT_PAYLOAD_CLASSES),
        *own.get("last-rank-accessors", DEFAULT_LAST_RANK),
        *own.get("receiver-factories", DEFAULT_RECEIVER_FACTORIES),
        *own.get("receiver-methods", DEFAULT_RECEIVER_METHODS),
    )


@memo_last_text_under(_scan_names)
def _scan_scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """``_scope``, and in its classes only the statements the scan's readers
    can take something from: every statement that is no method, and the
    methods whose text holds a word ``_scope`` looks for or a configured
    ``receiver-factories``/``receiver-methods`` name (see
    ``narrow_classes``). A method holding none returns no payload the rule
    can report (a payload call or a last-rank test names one), captures
    nothing, and neither allocates nor is a receiver the options name: its
    absence from what the readers record (the class's ``recv`` lists every
    function and list-led call) changes no answer of the facts gate. The
    libcst check reads the classes whole (``ast_scope``). (The gate and
    the collectors of one text ask in turn: the answer is kept.)"""
    spans = _scope(text, options)
    if spans is None:
        return None
    more = glob_words(_scan_names(options))
    if more is None:
        return spans  # (a glob with no literal part: the classes whole)
    sk = skeleton_to(text, len(text))
    low = ascii_lower(text)
    words = (*_SCOPE_WORDS, *more, "\u0130", "\u212a")
    return narrow_classes(sk, spans, lambda a, b: any(low.find(w, a, b) >= 0 for w in words))


_TEXT_NEEDLES = _PayloadNeedles(
    any_of=(("IntermediateTensors", "PPProxyTensors", *_LAST_RANK_WORDS),),
    regex=f"{_PAYLOAD_CALL}|{_LAST_RANK_TEST}",
)


def _mentions_last_rank(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and any(w in n.attr for w in _LAST_RANK_WORDS))
        or (isinstance(n, ast.Name) and any(w in n.id for w in _LAST_RANK_WORDS))
        for n in ast.walk(node)
    )


def _mentions_pp(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and ("pp" in n.attr.lower() or "pipeline" in n.attr.lower()))
        or (isinstance(n, ast.Name) and ("pp" in n.id.lower() or "pipeline" in n.id.lower()))
        for n in ast.walk(node)
    )


def _falsy_literal(value: ast.AST | None) -> bool:
    """``False``, ``None``, ``0``, ``[]``, ``()``, ``{}``, ``set()``: capture off."""
    if value is None or (isinstance(value, ast.Constant) and not value.value):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and not value.elts:
        return True
    if isinstance(value, ast.Dict) and not value.keys:
        return True
    return isinstance(value, ast.Call) and ast_dotted(value.func) in ("set", "list", "tuple", "dict") and not value.args


def _module_functions(body: Sequence[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and classes' methods of a module's ``body`` (nested
    classes, and definitions under ``if``/``try`` at those levels, included)."""
    stack: list[ast.stmt] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            stack.extend(node.body)
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend([*node.body, *node.orelse, *getattr(node, "finalbody", ())])
            for h in getattr(node, "handlers", ()):
                stack.extend(h.body)


def _sets_capture(stmts: Sequence[ast.stmt]) -> bool:
    """Whether the statements turn capture on: a capture attribute (a name
    holding ``captur``) assigned something other than an empty or false
    literal (``__init__``'s ``self.capture_aux_hidden_states = False`` turns
    nothing on)."""
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Assign):
                targets, value = n.targets, n.value
            elif isinstance(n, ast.AnnAssign):
                targets, value = [n.target], n.value
            else:
                continue
            if _falsy_literal(value):
                continue
            if any(isinstance(t, ast.Attribute) and "captur" in t.attr.lower() for t in targets):
                return True
    return False


def capture_setters(tree: ast.Module, text: str | None = None) -> str | None:
    """How the module turns tap capture on: ``"gated"`` when a function that
    turns a capture attribute on (a name holding ``captur``) first returns
    unless on the last pipeline rank (SGLang's ``if not
    self.pp_group.is_last_rank: return`` in ``set_eagle3_layers_to_capture``)
    or raises under a pipeline test (``if pp_group.world_size != 1: raise``):
    other ranks then collect nothing, and their payloads drop nothing (the
    inner model's own setter, called by the gated one, counts with it);
    ``"open"`` when such functions exist and none is gated; None when there
    is none."""
    state: str | None = None
    if text is not None and "captur" not in text.lower():
        return None  # (nothing can turn capture on: no walk)
    lines = text.split("\n") if text is not None else None
    for node in _module_functions(tree.body):
        if lines is not None:
            seg = "\n".join(lines[node.lineno - 1 : node.end_lineno or node.lineno])
            if "captur" not in seg.lower():
                continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # (a docstring)
        if not _sets_capture(body):
            continue
        first = body[0]
        gated = isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 and (
            (
                isinstance(first.test, ast.UnaryOp)
                and isinstance(first.test.op, ast.Not)
                and _mentions_last_rank(first.test.operand)
                and isinstance(first.body[0], ast.Return)
                and first.body[0].value is None
            )
            or (isinstance(first.body[0], ast.Raise) and _mentions_pp(first.test))
        )
        if gated:
            return "gated"
        state = "open"
    return state


class PpPayloadShapes(FactCollector):
    """Per module, the classes that could hold a SHD301 finding, with what
    the facts gate needs to decide under the effective options (bases as
    written, class-level names and whether each is a literal ``True``,
    accumulator candidates, receiver candidates). Read only by the gate."""

    name = "pp_payload_shapes"
    # 4: "cs", how the module turns tap capture on; 5: only the top-level
    # statements holding a scope word (``_scope``)
    version = 5
    needles = _TEXT_NEEDLES

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        # always something for a file the text gate lets in, so that the
        # facts gate can tell "nothing here" from "not collected"
        out: dict[str, Any] = {"classes": payload_shapes(tree, text)}
        cs = capture_setters(tree, text)
        if cs is not None:
            out["cs"] = cs
        return out

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> Mapping[str, Any]:
        return _ShapesIndex(per_module)


class _ShapesIndex(dict):  # type: ignore[type-arg]
    """The per-module shapes, and whether some module of the project turns
    capture on for the last rank only (a convention a model file follows
    when it inherits its capture setter from another module)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        super().__init__(per_module)
        self.any_gated = any(isinstance(d, Mapping) and d.get("cs") == "gated" for d in per_module.values())


# where the engine reads a capability flag (``getattr(model,
# "supports_aux_hidden_states_over_pp", False)``, ``inner.supports_x``): a
# ``support`` name read by ``getattr`` or as an attribute that is not assigned
_FLAG_GETATTR = re.compile(r"getattr\(\s*[^,()]+,\s*['\"]$")
_ASSIGNED = re.compile(r"\s*(?::[^=\n]*)?=(?!=)")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def capability_reads(text: str) -> list[str] | None:
    """The ``support``-named flags this text reads, not assigns: an
    attribute (``inner.supports_x``) not followed by ``=``, or the name in
    ``getattr(obj, "supports_x"...)``. Found from the word ``support``
    (a literal search), the identifier around it read by hand."""
    names: set[str] = set()
    n = len(text)
    i = text.find("support")
    while i >= 0:
        a, b = i, i + 7
        while a > 0 and text[a - 1] in _WORD:
            a -= 1
        while b < n and text[b] in _WORD:
            b += 1
        name = text[a:b]
        before = text[a - 1] if a > 0 else ""
        if before == "." and not _ASSIGNED.match(text, b):
            names.add(name)
        elif before in ("'", '"') and text[b : b + 1] == before:
            ls = text.rfind("\n", 0, a) + 1
            if _FLAG_GETATTR.search(text, ls, a):
                names.add(name)
        i = text.find("support", b)
    return sorted(names) or None


class CapabilityReads(FactCollector):
    """Per module, the capability flags it reads: the engine consults a flag
    somewhere (vLLM's ``verify_supports_aux_hidden_states_over_pp``), so a
    class that never sets it is refused at start-up, not run."""

    name = "capability_reads"
    version = 1
    needles = Needles(all_of=("support",))
    needs_ast = False

    @classmethod
    def collect(cls, tree: ast.Module | None, text: str, module: str, path: str) -> Any:
        return capability_reads(text)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> frozenset[str]:
        return frozenset(n for names in per_module.values() if names for n in names)


def _engine_checks_flag(facts: ProjectFacts, options: Mapping[str, Any]) -> bool:
    """Whether some module of the project reads a capability flag: the
    engine then refuses, at start-up, a class that never sets it."""
    read = facts.index("capability_reads")
    return isinstance(read, frozenset) and any(f in read for f in options["capability-flags"])


def _capture_gated(module_state: str | None, facts: ProjectFacts) -> bool:
    """Whether the other ranks collect no taps: the module's own capture
    setters are gated, or it has none and the project's are."""
    if module_state is not None:
        return module_state == "gated"
    index = facts.index("pp_payload_shapes")
    return bool(getattr(index, "any_gated", False))


# -- small syntax helpers ----------------------------------------------------------


def _statements(block: cst.BaseSuite | Sequence[cst.BaseStatement]) -> list[cst.CSTNode]:
    """Statements of a suite with simple statement lines flattened into their
    small statements (``x = 1; return x`` is two)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else block
    out: list[cst.CSTNode] = []
    for s in body:
        if isinstance(s, cst.SimpleStatementLine):
            out.extend(s.body)
        else:
            out.append(s)
    return out


def _terminates(block: cst.BaseSuite) -> bool:
    stmts = _statements(block)
    return bool(stmts) and isinstance(stmts[-1], (cst.Return, cst.Raise))


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _root(node: cst.CSTNode) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


@dataclass
class _Return:
    node: cst.Return
    ctx: int  # LAST, NONLAST or 0 (unknown)
    guard: cst.CSTNode | None  # the branch (suite) that made ctx NONLAST, if any


@dataclass
class _Method:
    func: cst.FunctionDef
    returns: list[_Return] = field(default_factory=list)


class _LazyMro:
    """The MRO of a class's bases, computed on first call (most classes are
    decided before it is needed)."""

    def __init__(self, index: ClassIndex, module: str, bases: Sequence[str]) -> None:
        self.index, self.module, self.bases = index, module, bases
        self._mro: list[tuple[str, ClassInfo]] | None = None

    def __call__(self) -> list[tuple[str, ClassInfo]]:
        if self._mro is None:
            self._mro = self.index.mro_of_bases(self.module, self.bases)
        return self._mro


def _nonlast(ret: Sequence[Any], options: Mapping[str, Any]) -> bool | None:
    """Whether the rule puts ``ret`` in the non-last context under these
    options (None: not enumerated, either may hold)."""
    nl = ret[_NL]
    if nl is None:
        return None
    if not nl:
        return False
    accessors = options["last-rank-accessors"]
    mask = sum(1 << i for i, k in enumerate(ret[_K]) if name_matches(k, accessors))
    return mask in nl


def _may_drop(m: Mapping[str, Any], options: Mapping[str, Any]) -> bool:
    """``_dropped`` on the record: an accumulator (``_accumulators``) that a
    last-rank return hands back and a payload without ``**`` does not name."""
    pats, helpers = options["accumulator-patterns"], options["accumulator-helpers"]
    accs = {
        name
        for name, hows in m["acc"].items()
        if name_matches(name, pats) and any(h == "" or name_matches(h, helpers) for h in hows)
    }
    if not accs:
        return False
    classes = options["payload-classes"]
    last: set[str] = set()
    payloads: list[set[str]] = []
    for ret in m["rets"]:
        call = ret[_LEAF] in classes
        nonlast = _nonlast(ret, options)
        if not call and nonlast is not True:  # ``_is_payload_return`` may be false
            last |= set(ret[_CARRIED]) & accs
        if (call or nonlast is not False) and not ret[_SPLAT]:
            payloads.append(set(ret[_HAS]))
    return bool(last) and any(last - has for has in payloads)


def _payload_keys(m: Mapping[str, Any], options: Mapping[str, Any]) -> list[set[str]]:
    """Key sets ``_report_key_mismatch`` compares: keyed payload calls in
    the non-last context."""
    return [
        set(ret[_KEYS])
        for ret in m["rets"]
        if ret[_KEYS] is not None
        and ret[_LEAF] in options["payload-classes"]
        and _nonlast(ret, options) is not False
    ]


def _own_layouts(recv: Mapping[str, Any], options: Mapping[str, Any]) -> list[set[str]] | None:
    """``_own_receiver`` on the record: ``[]`` for an opaque receiver, None
    for none. A factory given something other than a list or tuple is not
    recorded (the rule finds it opaque: here its siblings still count, or
    the bases are read; either way the gate only lets more through)."""
    factories, methods = options["receiver-factories"], options["receiver-methods"]
    classes = options["payload-classes"]
    layouts: list[set[str]] = []
    opaque = False
    for leaf, keys in recv["calls"]:
        if leaf in factories:
            if keys is None:
                opaque = True
            else:
                layouts.append(set(keys))
    for name, rets in recv["defs"].items():
        if name not in methods:
            continue
        if rets is None:
            opaque = True
            continue
        for leaf, keys in rets:
            if leaf in classes:
                layouts.append(set(keys))
            else:
                opaque = True
    if opaque:
        return []
    return layouts or None


def _may_mismatch(
    payloads: list[set[str]],
    recv: Mapping[str, Any],
    bases_mro: _LazyMro,
    receivers: Mapping[str, Any],
    options: Mapping[str, Any],
) -> bool:
    """Whether a payload's keys can differ from what the receiver allocates
    (``PpPayloadDropsTensors._receiver``, on the facts)."""
    layouts = _own_layouts(recv, options)
    if layouts is None:
        for _, info in bases_mro():
            if any(name_matches(m, options["receiver-methods"]) for m in info.methods):
                return False
            got = (receivers.get(info.module) or {}).get(info.name)
            if got is not None and set(DEFAULT_RECEIVER_FACTORIES) <= set(
                options["receiver-factories"]
            ):
                layouts = [set(k) for k in got["layouts"]]
                break
    return any(p not in layouts for p in payloads) if layouts else False


def _may_claim(
    shape: Mapping[str, Any],
    bases_mro: _LazyMro,
    index: ClassIndex,
    options: Mapping[str, Any],
) -> bool:
    """Whether the class claims the capability (``PpPayloadDropsTensors._claim``
    with a truthy literal), on the facts."""
    own: Mapping[str, bool] = shape.get("own", {})
    for flag in options["capability-flags"]:
        if flag in own:
            return own[flag]
        hit = index.attr_in(bases_mro(), flag)
        if hit is not None:
            return not isinstance(hit.value, NonLiteral) and bool(hit.value)
    return False


def _flag_unset(
    shape: Mapping[str, Any],
    bases_mro: _LazyMro,
    index: ClassIndex,
    options: Mapping[str, Any],
) -> bool:
    """Whether no class along the MRO sets a capability flag at all (the
    unclaimed case: a set flag, true or false, decides otherwise)."""
    own: Mapping[str, bool] = shape.get("own", {})
    return not any(
        flag in own or index.attr_in(bases_mro(), flag) is not None for flag in options["capability-flags"]
    )


class PpPayloadDropsTensors(Rule):
    """## What it finds
    A model's `forward` that collects extra tensors for the last pipeline rank
    (auxiliary hidden states tapped for an EAGLE-3 / DSpark draft: an
    `aux_hidden_states` list filled with `.append`, a helper, or a
    `capture=` keyword) and returns them on the last rank, while the early
    return of the other ranks — `if not get_pp_group().is_last_rank: return
    IntermediateTensors({...})` (SGLang: `self.pp_group.is_last_rank`,
    `PPProxyTensors`) — hands only `hidden_states`/`residual` to the next
    stage. It is an error when the class claims the combination works: a
    capability flag such as `supports_aux_hidden_states_over_pp = True`, set
    on the class or inherited from a base class in any file of the project
    (the typical live bug: a subclass that overrides `forward` and loses the
    packing its base had, while still inheriting the base's claim). It is a
    warning when no class of the hierarchy sets a flag at all and nothing in
    the project reads one: latent, safe only while the engine refuses the
    combination (vLLM 0.20–0.28 refuse EAGLE-3 with pipeline parallelism
    globally and drop the taps of every EAGLE-3 model this way, the seed's
    Kimi-K3 among them: what lifting that refusal meant fixing).
    Where some module reads the flag (`getattr(model,
    "supports_aux_hidden_states_over_pp", False)`, as vLLM 0.30 on does at
    start-up), a class that never sets it is refused, not run: silent. A
    flag set to a false value is a refusal too: silent. So is a project
    that turns tap capture on for the last rank only (SGLang:
    `set_eagle3_layers_to_capture` returns
    at once unless `self.pp_group.is_last_rank`, or raises under a pipeline
    test): the other ranks collect nothing to drop. That is read per module
    (a module with such a setter), or for the project when the module has no
    capture setter of its own.

    It also fires when a payload's keys differ from the keys the receiving
    stage allocates (`make_empty_intermediate_tensors_factory([...], ...)` or a
    `make_empty_intermediate_tensors` method) in the same class or a base.

    ## Why it breaks
    With pipeline parallelism each rank runs a slice of the layers. The taps
    of layers that live on rank 0..N-2 are computed there and then dropped
    with the payload: only the last rank's taps reach the draft. Nothing
    crashes; the draft is conditioned on a fraction of its inputs and the
    acceptance rate quietly collapses, worse as the PP degree grows (with
    taps at layers 7, 31, 47, 63 and 87 of 93 and PP=2, four of five are
    lost). A payload whose keys differ from the receiver's allocation fails
    on the receiving rank (`KeyError`, or a shape/recv mismatch in CUDA-graph
    capture).

    ## Example
    Below, the decoder appends its taps in every layer and returns them on
    the last rank, but the other ranks' `IntermediateTensors` carries only the
    hidden states and residual, while the class claims PP support. The same
    shape with the flag on a base class in another module (the subclass
    overriding `forward`) is reported with a related location on the flag
    (`corpus/pp_payload_drops_tensors/stages/`).

    ## Fix
    Carry the taps in the payload (`**self.pack_local_aux_hidden_states(aux)`,
    or a key per tap), collect the upstream ones on the receiving ranks and
    reserve their slots in `make_empty_intermediate_tensors`; or set the
    capability flag to `False` on the subclass so the runtime refuses the
    combination honestly.

    ## Options
    - `payload-classes` (list[str], default `["IntermediateTensors",
      "PPProxyTensors"]`): constructors of the inter-stage payload.
    - `last-rank-accessors` (list[str], default `["is_last_rank",
      "is_last_pp_rank", "is_pipeline_last_stage"]`): attribute (or
      no-argument call) names that test for the last pipeline rank.
    - `capability-flags` (list[str], default
      `["supports_aux_hidden_states_over_pp"]`): class attributes whose truthy
      value claims the collected tensors survive pipeline parallelism.
    - `require-claim` (bool, default `false`): `true` reports only classes
      that claim the capability (errors), dropping the warnings on classes
      that never set a flag: for an engine that gates the combination at
      start-up and wants no word on models it refuses.
    - `accumulator-patterns` (list[str], default `["*aux*", "*hidden*",
      "*tap*", "*captur*"]`): globs for local lists that collect tensors.
    - `accumulator-helpers` (list[str], default `["*add*", "*captur*",
      "*collect*", "*record*", "*append*", "*tap*"]`): globs for helper calls
      that add to an accumulator passed to them.
    - `receiver-factories` (list[str], default
      `["make_empty_intermediate_tensors_factory"]`) and `receiver-methods`
      (list[str], default `["make_empty_intermediate_tensors"]`): where the
      receiving stage's payload keys are allocated. Receivers in base classes
      of other files are read for the default factory name only.

    Severity: errors for claimed drops and receiver-key mismatches, warnings
    for unclaimed drops (as RULES.md asks).

    Prefilter and options: a file is parsed only when (1) its text holds a
    call of a name containing `IntermediateTensors` or `PPProxyTensors`
    (`IntermediateTensors(`, `seq.IntermediateTensors (`, `(IntermediateTensors)(`)
    or a name containing `is_last_rank`, `last_stage` or `last_pp_rank` that
    can end an `if` test's operand (followed by `:`, `)`, `(`, `and` or `or`):
    every finding reports a payload return, which is a `payload-classes` call
    or sits on the other ranks' path of a `last-rank-accessors` test; (2) a
    class in it has a method where, under some options, a return without
    `**` may be the other ranks' payload while another return hands back a
    name the method adds to, or a string-keyed payload may be returned on a
    non-last rank, and (3) after the project's facts are merged, the rule's
    decision on that method holds under the effective options: the rank
    context of each return under `last-rank-accessors`, the accumulators
    under `accumulator-patterns` and `accumulator-helpers`, the payloads
    under `payload-classes` (counted as carrying only the names written in
    them), and a claim through `capability-flags` (own or inherited; any
    class when `require-claim = false`); or a non-last payload's keys differ
    from what the receiver allocates (`receiver-factories` calls or
    `receiver-methods` returns in the class, else in a base). Steps 2 and 3
    honour configured names; step 1 does not (it runs on raw text before
    options are known): configured payload classes and last-rank accessors
    must contain one of those default strings, and a finding whose payload
    is written with a name containing none of them (a renamed payload class
    called outside any last-rank test, or a plain value returned under a
    renamed accessor) is not analysed. Step 2 and the check itself read
    only the top-level statements (a class with its decorators, a function,
    an `if` block) whose text holds a configured payload class, a literal
    part of a configured accessor glob (an accessor glob without one, or a
    name outside ASCII, makes them read every statement), one of the
    default strings above, `captur` or the receiver factory's name, in any
    case: the other statements are not compiled (a file's syntax error is
    still reported when the rule checks it). Of those classes, step 2 reads
    only the methods holding one of these words or a configured
    `receiver-factories`/`receiver-methods` name.
    """

    # (per file: capture turned on for the last rank only, see _capture_gated)
    _cg: bool | None = None
    code = "SHD301"
    name = "pp-payload-drops-tensors"
    summary = "A non-last pipeline rank's payload drops tensors the forward collected"
    severity = Severity.ERROR
    needles = _TEXT_NEEDLES
    facts = ("classes", "pp_receivers", "pp_payload_shapes", "capability_reads")
    tags = ("correctness", "pipeline-parallel", "speculative-decoding")
    options: ClassVar[Mapping[str, Option]] = {
        "payload-classes": Option(DEFAULT_PAYLOAD_CLASSES, "list[str]", "payload constructors"),
        "last-rank-accessors": Option(DEFAULT_LAST_RANK, "list[str]", "last-rank tests"),
        "capability-flags": Option(DEFAULT_FLAGS, "list[str]", "class flags claiming PP support"),
        "require-claim": Option(False, "bool", "report only classes that claim the capability"),
        "accumulator-patterns": Option(DEFAULT_ACCUMULATORS, "list[str]", "accumulator names"),
        "accumulator-helpers": Option(DEFAULT_HELPERS, "list[str]", "helpers that add to lists"),
        "receiver-factories": Option(DEFAULT_RECEIVER_FACTORIES, "list[str]", "receiver factories"),
        "receiver-methods": Option(DEFAULT_RECEIVER_METHODS, "list[str]", "receiver methods"),
    }

    # -- prefilter -----------------------------------------------------------
    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        # a class with a method where, under some options, a payload misses
        # an accumulator another return hands back, or a keyed payload is
        # returned on a non-last rank (see ``_method_shape``)
        return bool(payload_shapes(tree, text))

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        shapes = facts.raw("pp_payload_shapes").get(module)
        if shapes is None:
            return True  # not collected (unparsable, or a collector error): no claim either way
        index = facts.index("classes")
        if not isinstance(index, ClassIndex):
            return True
        receivers = facts.raw("pp_receivers")
        for shape in shapes.get("classes", ()):
            bases_mro = _LazyMro(index, module, shape["bases"])
            methods = shape["methods"]
            # ``visit_ClassDef``: a method drops taps and the class claims
            # the capability (any class when ``require-claim`` is off) ...
            if any(_may_drop(m, options) for m in methods) and (
                _may_claim(shape, bases_mro, index, options)
                or (
                    not options["require-claim"]
                    and _flag_unset(shape, bases_mro, index, options)
                    and not _capture_gated(shapes.get("cs"), facts)
                    and not _engine_checks_flag(facts, options)
                )
            ):
                return True
            # ... or a keyed non-last payload differs from the receiver
            keys = [k for m in methods for k in _payload_keys(m, options)]
            if (
                keys
                and "recv" in shape
                and _may_mismatch(keys, shape["recv"], bases_mro, receivers, options)
            ):
                return True
        return False

    # -- traversal -----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        methods = [m for m in self._methods(node) if m.returns]
        if not methods:
            return
        # the claim and the receiver are looked up lazily, once per class:
        # most classes with a payload drop nothing
        claim: tuple[Any, str, Note | None] | None = None
        claim_done = receiver_done = False
        receiver: tuple[list[set[str]], str] | None = None
        for m in methods:
            payloads = [r for r in m.returns if self._is_payload_return(r)]
            if not payloads:
                continue
            dropped = self._dropped(m, payloads)
            if dropped:
                if not claim_done:
                    claim, claim_done = self._claim(node), True
                self._report_drops(node, m, dropped, claim)
            if not receiver_done:
                receiver, receiver_done = self._receiver(node), True
            if receiver:
                self._report_key_mismatch(node, m, payloads, receiver)

    def _methods(self, cls: cst.ClassDef) -> Iterator[_Method]:
        for stmt in _statements(cls.body):
            if isinstance(stmt, cst.FunctionDef):
                m = _Method(stmt)
                self._block(_statements(stmt.body), 0, None, m)
                yield m

    def _block(
        self, stmts: list[cst.CSTNode], ctx: int, guard: cst.CSTNode | None, m: _Method
    ) -> None:
        for s in stmts:
            if isinstance(s, cst.Return):
                m.returns.append(_Return(s, ctx, guard if ctx == NONLAST else None))
            elif isinstance(s, cst.If):
                after = self._if(s, ctx, guard, m)
                if after is not None:
                    # ``if last: return ...`` makes the rest of the block the
                    # other ranks' path (and the reverse)
                    ctx, guard = after, None
            elif isinstance(s, (cst.For, cst.While)):
                self._block(_statements(s.body), ctx, guard, m)
                if s.orelse is not None:
                    self._block(_statements(s.orelse.body), ctx, guard, m)
            elif isinstance(s, cst.With):
                self._block(_statements(s.body), ctx, guard, m)
            elif isinstance(s, cst.Try):
                self._block(_statements(s.body), ctx, guard, m)
                for h in s.handlers:
                    self._block(_statements(h.body), ctx, guard, m)
                if s.orelse is not None:
                    self._block(_statements(s.orelse.body), ctx, guard, m)
                if s.finalbody is not None:
                    self._block(_statements(s.finalbody.body), ctx, guard, m)

    def _if(self, s: cst.If, ctx: int, guard: cst.CSTNode | None, m: _Method) -> int | None:
        body_ctx, else_ctx = self._classify(s.test)
        b = body_ctx or ctx
        self._block(_statements(s.body), b, s.body if body_ctx == NONLAST else guard, m)
        e = else_ctx or ctx
        else_guard = s.orelse if else_ctx == NONLAST else guard
        if isinstance(s.orelse, cst.If):
            self._if(s.orelse, e, else_guard, m)
        elif isinstance(s.orelse, cst.Else):
            self._block(_statements(s.orelse.body), e, else_guard, m)
        if else_ctx and s.orelse is None and _terminates(s.body):
            return else_ctx
        return None

    def _classify(self, test: cst.BaseExpression) -> tuple[int, int]:
        """(context of the body, context of the else branch) for an ``if``."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            b, e = self._classify(test.expression)
            return e, b
        if isinstance(test, cst.BooleanOperation):
            left, right = self._classify(test.left), self._classify(test.right)
            if isinstance(test.operator, cst.And):
                # ``a and not last`` → body is on a non-last rank; the else
                # branch could be either
                return (left[0] or right[0]), 0
            return 0, (left[1] or right[1])
        if isinstance(test, cst.Call) and not test.args:
            test = test.func
        if isinstance(test, (cst.Attribute, cst.Name)):
            leaf = test.attr.value if isinstance(test, cst.Attribute) else test.value
            if name_matches(leaf, self.opts["last-rank-accessors"]):
                return LAST, NONLAST
        return 0, 0

    # -- payloads and accumulators ---------------------------------------------
    def _payload_call(self, node: cst.CSTNode | None) -> cst.Call | None:
        if (
            isinstance(node, cst.Call)
            and last_name(call_name(node)) in self.opts["payload-classes"]
        ):
            return node
        return None

    def _is_payload_return(self, r: _Return) -> bool:
        if self._payload_call(r.node.value) is not None:
            return True
        return r.ctx == NONLAST and r.node.value is not None

    def _accumulators(self, func: cst.FunctionDef) -> dict[str, cst.CSTNode]:
        pats = self.opts["accumulator-patterns"]
        helpers = self.opts["accumulator-helpers"]
        out: dict[str, cst.CSTNode] = {}

        def add(name: str | None, where: cst.CSTNode) -> None:
            if name and name_matches(name, pats):
                out.setdefault(name, where)

        for n in walk_no_nested(func):
            if isinstance(n, cst.Call):
                f = n.func
                if (
                    isinstance(f, cst.Attribute)
                    and f.attr.value in _MUTATORS
                    and isinstance(f.value, cst.Name)
                ):
                    add(f.value.value, n)
                    continue
                if not name_matches(last_name(call_name(n)), helpers):
                    helper_arg = None
                else:
                    # ``self._maybe_add_tap(taps, i, hidden)``: the list is
                    # the first argument; the others are what gets added
                    positional = [a.value for a in n.args if a.keyword is None and not a.star]
                    helper_arg = positional[0] if positional else None
                if isinstance(helper_arg, cst.Name):
                    add(helper_arg.value, n)
                for a in n.args:
                    if a.keyword is None or not name_matches(a.keyword.value, ("*captur*",)):
                        continue
                    # ``capture_output=aux.capture`` / ``capture=aux.append``,
                    # possibly only for some layers (``... if i in ids else None``)
                    v = a.value
                    for c in (v.body, v.orelse) if isinstance(v, cst.IfExp) else (v,):
                        if isinstance(c, cst.Attribute) and isinstance(c.value, cst.Name):
                            add(c.value.value, n)
                        elif isinstance(c, cst.Name):
                            add(c.value, n)
            elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                if isinstance(n.value, (cst.List, cst.Tuple)):
                    add(n.target.value, n)
            elif (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call)
                and name_matches(last_name(call_name(n.value)), helpers)
            ):
                # ``taps = self._maybe_add_tap([], 0, hidden)`` starts the list
                add(n.targets[0].target.value, n)
        return out

    def _carried_by_last(self, value: cst.BaseExpression | None, accs: Iterable[str]) -> set[str]:
        """Accumulators that are themselves returned (bare, in a tuple or list,
        or concatenated), not merely passed to something that is returned."""
        found: set[str] = set()

        def visit(v: cst.BaseExpression) -> None:
            if isinstance(v, cst.Name):
                found.add(v.value)
            elif isinstance(v, (cst.Tuple, cst.List)):
                for e in v.elements:
                    visit(e.value)
            elif isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
                visit(v.left)
                visit(v.right)

        if value is not None:
            visit(value)
        return found & set(accs)

    def _dropped(self, m: _Method, payloads: list[_Return]) -> list[tuple[_Return, list[str]]]:
        accs = self._accumulators(m.func)
        if not accs:
            return []
        last: set[str] = set()
        for r in m.returns:
            if r in payloads or r.ctx == NONLAST:
                continue
            last |= self._carried_by_last(r.node.value, accs)
        if not last:
            return []
        out = []
        for r in payloads:
            carried = self._carried_by_payload(m.func, r, accs)
            if carried is None:
                continue
            missing = sorted(last - carried)
            if missing:
                out.append((r, missing))
        return out

    def _carried_by_payload(
        self, func: cst.FunctionDef, r: _Return, accs: Mapping[str, cst.CSTNode]
    ) -> set[str] | None:
        """Accumulators the payload carries; ``None`` when it cannot be told
        (a ``**`` splat: whatever it unpacks may hold them)."""
        value = r.node.value
        assert value is not None
        for n in walk(value):
            if isinstance(n, cst.StarredDictElement):
                return None
            if isinstance(n, cst.Arg) and n.star == "**":
                return None
        names = _names_in(value)
        carried = names & set(accs)
        if r.guard is not None:
            # anything the non-last branch does with the taps (a key written
            # into the payload, a helper that packs them) counts as carrying
            carried |= _names_in(r.guard) & set(accs)
        # writes into the container the payload is built from: ``p = {...};
        # p["k"] = aux; p.update(pack(aux)); return Payload(p)`` or ``return p``
        built_from: set[str] = set()
        call = self._payload_call(value)
        if isinstance(value, cst.Name):
            built_from.add(value.value)
        elif call is not None and call.args and isinstance(call.args[0].value, cst.Name):
            built_from.add(call.args[0].value.value)
        for n in walk_no_nested(func):
            targets: list[cst.CSTNode] = []
            if isinstance(n, cst.Assign):
                targets = [t.target for t in n.targets]
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
                targets = [n.target]
            elif (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Attribute)
                and n.func.attr.value in {"update", "__setitem__", "setdefault"}
            ):
                targets = [n.func.value]
            if any(_root(t) in built_from for t in targets):
                carried |= _names_in(n) & set(accs)
        return carried

    # -- the claim -------------------------------------------------------------
    def _class_qualname(self, node: cst.ClassDef) -> str:
        names = [n.name.value for n in self.ctx.scope_nodes if isinstance(n, cst.ClassDef)]
        if not names or names[-1] != node.name.value:
            names.append(node.name.value)
        return ".".join(names)

    def _own_flag(self, node: cst.ClassDef, flag: str) -> tuple[Any, cst.CSTNode] | None:
        for s in _statements(node.body):
            target = value = None
            if isinstance(s, cst.Assign) and len(s.targets) == 1:
                target, value = s.targets[0].target, s.value
            elif isinstance(s, cst.AnnAssign) and s.value is not None:
                target, value = s.target, s.value
            if isinstance(target, cst.Name) and target.value == flag and value is not None:
                if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                    return {"True": True, "False": False, "None": None}[value.value], target
                return NonLiteral(self.ctx.code_for(value)), target
        return None

    def _claim(self, node: cst.ClassDef) -> tuple[Any, str, Note | None] | None:
        """(value, flag, note) of the first capability flag set on the class
        or along its bases; ``None`` when no flag is set anywhere."""
        index: ClassIndex | None = self._index()
        mro: list[tuple[str, ClassInfo]] | None = None
        for flag in self.opts["capability-flags"]:
            own = self._own_flag(node, flag)
            if own is not None:
                return own[0], flag, None
            if index is None:
                continue
            if mro is None:
                bases = [dotted(a.value) for a in node.bases if a.keyword is None]
                mro = index.mro_of_bases(self.ctx.module_name, [b for b in bases if b])
            hit = index.attr_in(mro, flag)
            if hit is None:
                continue
            loc = index.attr_location(hit.owner, flag)
            note = None
            if loc is not None:
                path, line, col, end_line, end_col = loc
                note = Note(
                    f"`{flag} = {hit.value!r}` is inherited from `{hit.owner}`",
                    path,
                    Span(line, col, end_line, end_col),
                )
            return hit.value, flag, note
        return None

    def _index(self) -> ClassIndex | None:
        idx = self.ctx.facts.index("classes")
        return idx if isinstance(idx, ClassIndex) else None

    def _report_drops(
        self,
        node: cst.ClassDef,
        m: _Method,
        dropped: list[tuple[_Return, list[str]]],
        claim: tuple[Any, str, Note | None] | None,
    ) -> None:
        severity = None
        if claim is None:
            if (
                self.opts["require-claim"]
                or self._capture_gated()
                or _engine_checks_flag(self.ctx.facts, self.opts)
            ):
                return
            flags = " or ".join(f"`{f}`" for f in self.opts["capability-flags"])
            why = (
                f"no class in its hierarchy sets {flags}: safe only while the engine refuses "
                "a draft with pipeline parallelism for this model at start-up"
            )
            notes: list[Note | str] = []
            severity = Severity.WARNING
        else:
            value, flag, note = claim
            if isinstance(value, NonLiteral) or not value:
                return
            where = "inherited from a base class" if note is not None else "set on this class"
            why = f"`{flag} = {value!r}` ({where}) claims they survive pipeline parallelism"
            notes = [note] if note is not None else []
        cls = self._class_qualname(node)
        for r, names in dropped:
            payload = self._payload_call(r.node.value)
            what = f"`{call_name(payload)}`" if payload is not None else "the payload"
            shown = ", ".join(f"`{n}`" for n in names)
            self.report(
                payload or r.node,
                f"`{cls}.{m.func.name.value}` returns {shown} on the last pipeline rank but "
                f"{what} returned by the other ranks does not carry {'it' if len(names) == 1 else 'them'}: "
                f"their taps are silently dropped; {why}",
                notes=[
                    *notes,
                    (
                        "Every rank but the last computes the taps of its own layers and discards them "
                        "here; the draft model is then conditioned on the last rank's taps only."
                    ),
                    (
                        "Pack them into the payload (e.g. `**self.pack_local_aux_hidden_states(...)`) and "
                        "reserve their slots on the receiving side, or set the flag to False."
                    ),
                ],
                severity=severity,
            )

    def _capture_gated(self) -> bool:
        """``_capture_gated`` for this file: its own setters from its facts
        (collected from this text; an editor buffer's replace the file's),
        read from the text only when the file has none; the project's
        convention from the facts."""
        if self._cg is None:
            shapes = self.ctx.facts.raw("pp_payload_shapes").get(self.ctx.module_name)
            if isinstance(shapes, Mapping):
                state = shapes.get("cs")
            else:
                try:
                    text = self.ctx.text
                    tree = scoped_tree(ast.parse(text), text, _scope(text, {self.code: self.opts}))
                    state = capture_setters(tree, text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    state = None
            self._cg = _capture_gated(state, self.ctx.facts)
        return self._cg

    # -- receiver keys -----------------------------------------------------------
    def _receiver(self, node: cst.ClassDef) -> tuple[list[set[str]], str] | None:
        """The key layouts the receiving side may allocate, and where."""
        own = self._own_receiver(node)
        if own is not None:
            return (own, f"`{node.name.value}`") if own else None
        index = self._index()
        if index is None:
            return None
        bases = [dotted(a.value) for a in node.bases if a.keyword is None]
        facts = self.ctx.facts.raw("pp_receivers")
        for q, info in index.mro_of_bases(self.ctx.module_name, [b for b in bases if b]):
            if any(name_matches(mm, self.opts["receiver-methods"]) for mm in info.methods):
                # a hand-written allocator we did not read: cannot compare
                return None
            # the collector reads the default factory names only (it cannot
            # see per-project options)
            got = (facts.get(info.module) or {}).get(info.name)
            if got is not None and set(DEFAULT_RECEIVER_FACTORIES) <= set(
                self.opts["receiver-factories"]
            ):
                return [set(k) for k in got["layouts"]], f"`{q}`"
        return None

    def _own_receiver(self, node: cst.ClassDef) -> list[set[str]] | None:
        """Layouts allocated in the class itself; ``[]`` when it has a
        receiver we cannot read (nothing to compare), ``None`` when it has none."""
        factories = self.opts["receiver-factories"]
        methods = self.opts["receiver-methods"]
        layouts: list[set[str]] = []
        opaque = False
        for n in walk(node.body):
            if isinstance(n, cst.Call) and last_name(call_name(n)) in factories and n.args:
                keys = _str_list(n.args[0].value)
                if keys is None:
                    opaque = True
                else:
                    layouts.append(set(keys))
            elif isinstance(n, cst.FunctionDef) and n.name.value in methods:
                returns = [r for r in walk(n.body) if isinstance(r, cst.Return)]
                for r in returns:
                    call = self._payload_call(r.value)
                    keys = _dict_keys(call.args[0].value) if call and call.args else None
                    if keys is None:
                        opaque = True
                    else:
                        layouts.append(set(keys))
        if opaque:
            return []
        return layouts or None

    def _report_key_mismatch(
        self,
        node: cst.ClassDef,
        m: _Method,
        payloads: list[_Return],
        receiver: tuple[list[set[str]], str],
    ) -> None:
        layouts, where = receiver
        for r in payloads:
            call = self._payload_call(r.node.value)
            if call is None or not call.args or r.ctx != NONLAST:
                continue
            keys = _dict_keys(call.args[0].value)
            if keys is None or set(keys) in layouts:
                continue
            # a class may allocate one layout per mode; compare with the
            # closest so the message names the smallest difference
            want = min(layouts, key=lambda w: (len(w ^ set(keys)), sorted(w)))
            missing = sorted(want - set(keys))
            extra = sorted(set(keys) - want)
            parts = []
            if missing:
                parts.append("misses " + ", ".join(f"'{k}'" for k in missing))
            if extra:
                parts.append("adds " + ", ".join(f"'{k}'" for k in extra))
            self.report(
                call,
                f"`{call_name(call)}` returned by `{node.name.value}.{m.func.name.value}` on non-last "
                f"ranks {' and '.join(parts)} compared with the keys the receiving rank allocates in "
                f"{where} ({', '.join(repr(k) for k in sorted(want))})",
                notes=[
                    (
                        "The next stage allocates its receive buffers from that key list; a missing key "
                        "fails there with KeyError, an extra one is never received (or breaks CUDA-graph "
                        "capture)."
                    ),
                    "Keep the payload keys and the allocation in one place.",
                ],
            )


def _str_list(node: cst.BaseExpression) -> list[str] | None:
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    out = []
    for e in node.elements:
        if not isinstance(e, cst.Element) or not isinstance(e.value, cst.SimpleString):
            return None
        out.append(e.value.evaluated_value)
    return [str(x) for x in out]


def _dict_keys(node: cst.BaseExpression) -> list[str] | None:
    """Keys of a dict display with only string-literal keys (no splat)."""
    if not isinstance(node, cst.Dict):
        return None
    out = []
    for e in node.elements:
        if not isinstance(e, cst.DictElement) or not isinstance(e.key, cst.SimpleString):
            return None
        out.append(str(e.key.evaluated_value))
    return out
