"""SHD302 pp-cross-rank-module-alias: a draft model wired to the target's
embedding or LM head by reference, with no pipeline-parallel guard."""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from checks._helpers import (
    ascii_lower,
    ast_nodes_no_nested,
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
from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.rule import Option, Rule
from linter.types import Severity

DEFAULT_FIRST_RANK = (
    "embed_tokens",
    "embed_in",
    "wte",
    "word_embeddings",
    "tok_embeddings",
    "embedding",
    "embeddings",
    "get_input_embeddings",
)
DEFAULT_LAST_RANK = ("lm_head", "lm_heads", "get_output_embeddings")
DEFAULT_GUARDS = (
    "is_first_rank",
    "is_last_rank",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
    "PPMissingLayer",
    "*pp_size*",
    "*pp_world_size*",
    "*pipeline_parallel_size*",
    "*pp_rank*",
)
DEFAULT_SETTERS = (
    "set_input_embeddings",
    "set_output_embeddings",
    "set_embed*",
    "set_lm_head*",
    "set_*_head",
)

FIRST, LAST = "first", "last"

# -- text gate -------------------------------------------------------------------
# Under the default options every finding is an alias (``_aliases``) whose
# source (``_source``) is, directly or through a local it was assigned to:
#   - an attribute chain with a default module name as a segment after the
#     first (``t.model.embed_tokens``, ``t.lm_head.weight``, ``(t).wte``), or
#     a no-argument call of one (``t.get_input_embeddings()``);
#   - ``getattr(obj, "<default module name>"[, ...])``;
#   - one end of ``a, b = t.get_embed_and_head()`` (a method whose name holds
#     "embed" and "head").
# Module names match case-insensitively (``name_matches``: ``nn.Embedding``
# is an ``embedding``). A chain counts only where ``_source`` is asked: as
# an assignment's value or a branch of its ``or``/``if else``, or as an
# argument of ``setattr`` or of a default setter (``set_input_embeddings``,
# ``set_output_embeddings``, ``set_embed*``, ``set_lm_head*``,
# ``set_*_head``); one called with arguments, subscripted, an operand, a
# ``return``/``if`` value or another call's argument is no source. The
# layout does not matter: line continuations, brackets around the value,
# comments between tokens, several statements on a line.
_MODULE_NAMES = (
    r"(?:embed_tokens|embed_in|wte|word_embeddings|tok_embeddings|embeddings?"
    r"|get_input_embeddings|lm_heads?|get_output_embeddings)"
)
# between tokens: blanks, line continuations, comments (each to its line's end)
_GAP = r"(?:[ \t\r\n\\]|#[^\n]*\n)*"
_IDENT = r"[^\W\d]\w*"
_NAMES = frozenset(
    (
        "embed_tokens",
        "embed_in",
        "wte",
        "word_embeddings",
        "tok_embeddings",
        "embedding",
        "embeddings",
        "get_input_embeddings",
        "lm_head",
        "lm_heads",
        "get_output_embeddings",
    )
)
_WORD_REST = re.compile(r"\w*")
# after it: more segments, then the empty call of a getter
_CHAIN_REST = re.compile(
    r"(?:" + _GAP + r"\." + _GAP + _IDENT + r")*[ \t]*(?:\(" + _GAP + r"\)[ \t]*)?"
)
_VALUE_END = re.compile(r"(?:if|or|else)(?!\w)")
_SETTER_LEAF = re.compile(r"set_(?:input_embeddings|output_embeddings|embed\w*|lm_head\w*|\w*_head)")
_QUOTE = r"""(?:'''|\"\"\"|'|")"""
# ``getattr(obj, "<name>"`` (or a key spelled with an escape; ``(getattr)(``
# too), lower-cased
_GETATTR_KEY = re.compile(
    r"getattr(?:"
    + _GAP
    + r"\))*"
    + _GAP
    + r"\((?:"
    + _GAP
    + r"\()*"
    + _GAP
    + _IDENT
    + r"(?:"
    + _GAP
    + r"\."
    + _GAP
    + _IDENT
    + r")*(?:"
    + _GAP
    + r"\))*"
    + _GAP
    + ","
    + _GAP
    + r"[ru]?"
    + _QUOTE
    + r"(?:"
    + _MODULE_NAMES
    + _QUOTE
    + r"""|[^'"\n\\]*\\)"""
)


def _word_start(text: str, j: int) -> int:
    """Start of the identifier ending at ``j`` (``j + 1`` if none)."""
    while j >= 0 and (text[j].isalnum() or text[j] == "_"):
        j -= 1
    return j + 1


def _skip_back(text: str, j: int, chars: str) -> int:
    """The last index at or before ``j`` not in ``chars`` nor in a comment
    (a line crossed on the way may end with one); -2 when a line crossed
    holds a quote before its ``#`` (then where the comment starts is not
    known)."""
    while j >= 0:
        c = text[j]
        if c == "\n" and c in chars:
            ls = text.rfind("\n", 0, j) + 1
            h = text.find("#", ls, j)
            if h >= 0:
                if text.find("'", ls, h) >= 0 or text.find('"', ls, h) >= 0:
                    return -2
                j = h - 1
                continue
        elif c not in chars:
            return j
        j -= 1
    return j


def _chain_start(low: str, i: int) -> int:
    """Start of the attribute chain whose dot at ``i`` leads to a module
    name; -1 when the chain hangs off a call or a subscript (no source),
    -2 when unsure."""
    while True:
        j = _skip_back(low, i - 1, " \t\\\r\n")
        if j == -2:
            return -2
        if j >= 0 and low[j] == ")":
            # a parenthesised chain: ``(target.model).embed_tokens``
            k = j - 1
            while k >= 0 and (low[k].isalnum() or low[k] in "_. \t\r\n\\"):
                k -= 1
            if k >= 0 and low[k] == "(" and low[k + 1 : j].strip(" \t\r\n\\."):
                return k
            return -2 if k >= 0 and low[k] == "#" else -1
        k = _word_start(low, j)
        if k > j:
            return -1  # ``f(x).lm_head``, ``layers[0].wte``, a string's attribute
        m = _skip_back(low, k - 1, " \t\\\r\n")
        if m == -2:
            return -2
        if m >= 0 and low[m] == ".":
            i = m
            continue
        return k


def _setter_call(low: str, j: int) -> bool:
    """Whether ``j`` (a ``(`` or a ``,``) lies in the argument list of
    ``setattr`` or of a default setter method (True when unsure)."""
    depth = 0
    k = j if low[j] == "(" else j - 1
    stop = max(-1, k - 4000)
    while k > stop:
        c = low[k]
        if c in "'\"#":
            return True  # a string or a comment: brackets not counted
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth:
                depth -= 1
            elif c != "(":
                return False  # a list, a subscript, a dict or a set
            else:
                e = _skip_back(low, k - 1, " \t\\\r\n")
                if e == -2:
                    return True
                b = _word_start(low, e)
                if b > e:
                    return False  # a group, or a call of a call's result
                leaf = low[b : e + 1]
                if leaf == "setattr":
                    return True
                d = _skip_back(low, b - 1, " \t\\\r\n")
                return d == -2 or (
                    d >= 0 and low[d] == "." and _SETTER_LEAF.fullmatch(leaf) is not None
                )
        k -= 1
    return True


def _source_position(low: str, s: int) -> bool:
    """Whether the expression starting at ``s`` stands where ``_source``
    looks: an assignment's value or a branch of its ``or``/``if else``
    (bracketed or not), or an argument of setattr or of a setter."""
    paren = -1
    j = _skip_back(low, s - 1, " \t\\\r\n")
    while j >= 0 and low[j] == "(":
        paren = j
        j = _skip_back(low, j - 1, " \t\\\r\n")
    if j == -2:
        return True  # unsure
    if j < 0:
        return False
    c = low[j]
    if c == "=":
        if j and low[j - 1] in "=!<>:+-*/%&|^@":
            return False  # a comparison, an augmented assignment, a walrus
        # a keyword argument (``f(x=...)``) is an argument, not a value
        e = _skip_back(low, j - 1, " \t")
        b = _word_start(low, e)
        if b <= e:
            d = _skip_back(low, b - 1, " \t\\\r\n")
            if d == -2:
                return True
            if d >= 0 and low[d] in "(,":
                return _setter_call(low, d)
        return True
    if (c.isalnum() or c == "_") and low[_word_start(low, j) : j + 1] in ("or", "else"):
        return True
    if c == ",":
        return _setter_call(low, j)
    return paren >= 0 and _setter_call(low, paren)


def _re_find(word: str) -> Callable[[str, int], int]:
    """``str.find`` for a short word by ``re``, which finds a three-letter
    word about twice as fast here (on a text without it: a whole scan)."""
    search = re.compile(re.escape(word)).search

    def find(text: str, pos: int) -> int:
        m = search(text, pos)
        return -1 if m is None else m.start()

    return find


_KEY_FINDS: tuple[tuple[str, Callable[[str, int], int]], ...] = (
    ("embed", lambda text, pos: text.find("embed", pos)),
    ("wte", _re_find("wte")),
    ("lm_head", lambda text, pos: text.find("lm_head", pos)),
)


def _may_alias(text: str) -> bool:
    """The text gate: whether ``text`` may hold an alias whose source has a
    default module name (see above)."""
    if "\u212a" in text or "\u0130" in text:
        return True  # (these lower-case to ASCII letters)
    low = ascii_lower(text)
    if "getattr" in low and _GETATTR_KEY.search(low):
        return True
    n = len(low)
    # every identifier holding "embed", "wte" or "lm_head" (``str.find``
    # jumps between them; most files hold few)
    for key, find in _KEY_FINDS:
        i = find(low, 0)
        while i >= 0:
            b = _word_start(low, i - 1)
            e = _WORD_REST.match(low, i).end()  # type: ignore[union-attr]
            i = find(low, e)
            word = low[b:e]
            pair = key == "embed" and "head" in text[b:e] and "embed" in text[b:e]
            if not pair and word not in _NAMES:
                continue
            d = _skip_back(low, b - 1, " \t\\\r\n")
            if d == -2:
                return True
            if d < 0 or low[d] != ".":
                continue  # not an attribute
            if pair:
                return True  # ``a, b = t.get_embed_and_head()``
            r = _CHAIN_REST.match(low, e).end()  # type: ignore[union-attr]
            if not (r >= n or low[r] in "\r\n\\;#),]}" or _VALUE_END.match(low, r)):
                continue  # called with arguments, subscripted, an operand...
            s = _chain_start(low, d)
            if s == -2 or (s >= 0 and _source_position(low, s)):
                return True
    return False


class _AliasNeedles(Needles):
    """:func:`_may_alias`; the fields (what the registry records) are a
    looser search it implies."""

    def _match(self, text: str) -> bool:
        return _may_alias(text)


_TEXT_NEEDLES = _AliasNeedles(
    regex=r"(?i)\." + _GAP + _MODULE_NAMES + r"|getattr|embed\w*head|head\w*embed"
)

# -- prefilter on CPython ``ast`` --------------------------------------------------
# Which names are rank-placed, which setters install modules, where the draft
# runs and which names are guards are options the ast gate cannot see. So the
# ast pass records, per function, every alias *candidate* (an assignment,
# ``setattr`` or method call handing over something reached through an
# object, receiver and source as written) that crosses objects under some
# options, with the names of the function, of the functions around it and
# of its class's raising ``if`` tests that match a default guard pattern.
# The facts gate replays ``_source``, ``_owner``, ``_cross`` and
# ``_mentions_guard`` on them under the effective options. Where the record
# is coarser than the rule it errs towards a finding: locals are a superset
# of what the rule tracks (order and rebinding ignored), guard names are
# only those matching a default pattern (a guard only a configured pattern
# matches is not seen) and ``_validated`` is not replayed.

# ``embed, head = t.get_embed_and_head()``: a source ``(PAIR, owner, rank)``
# whose rank is fixed, whatever the options
PAIR = "<embed-and-head>"
# A source is ``(base, *tail)``: the module is the last segment of ``tail``
# that is rank-placed, its owner ``base`` and the segments before it
# (``_source`` on a chain, a getattr or a getter call); or a PAIR end.
_Src = tuple[str, ...]


def _cst_dotted(node: ast.AST | None) -> str | None:
    """``dotted`` (libcst) on ast: ``a.b.c`` for a chain of attributes on a
    name, the keywords ``None``/``True``/``False`` included (constants in
    ast, names in libcst)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool)):
        parts.append(str(node.value))
    else:
        return None
    return ".".join(reversed(parts))


def _ordered_args(call: ast.Call) -> list[ast.expr]:
    """The argument values in source order (libcst's ``call.args``), ``*x``
    and ``**x`` unwrapped."""
    items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    if call.keywords and call.args:
        items.sort(key=lambda a: (a.lineno, a.col_offset))
    return [a.value if isinstance(a, (ast.Starred, ast.keyword)) else a for a in items]


def _str_constant(node: ast.AST) -> str | None:
    """``str(evaluated_value)`` of a string literal (bytes included, as the
    rule reads a ``SimpleString``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return str(node.value)
    return None


def _ast_sources(expr: ast.AST | None, locals_: Mapping[str, set[_Src]]) -> set[_Src]:
    """Every source ``PpCrossRankModuleAlias._source`` may find in ``expr``
    under some options (both sides of ``or``/``if else``)."""
    if isinstance(expr, ast.Name):
        return set(locals_.get(expr.id, ()))
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return {o for v in expr.values for o in _ast_sources(v, locals_)}
    if isinstance(expr, ast.IfExp):
        return _ast_sources(expr.body, locals_) | _ast_sources(expr.orelse, locals_)
    if isinstance(expr, ast.Call):
        fn = _cst_dotted(expr.func)
        args = _ordered_args(expr)
        if fn == "getattr" and len(args) >= 2:
            obj, key = _cst_dotted(args[0]), _str_constant(args[1])
            return {(obj, key)} if obj and key is not None else set()
        if not args and fn and "." in fn:
            owner, _, leaf = fn.rpartition(".")
            return {(owner, leaf + "()")}  # (called: a getter's result)
        return set()
    chain = _cst_dotted(expr)
    if not chain or "." not in chain:
        return set()
    return {tuple(chain.split("."))}


def _source_owners(src: _Src) -> set[str]:
    """Every owner the source may resolve to under some options."""
    if src[0] == PAIR:
        return {src[1]}
    return {".".join(src[: j + 1]) for j in range(len(src) - 1)}


def _receiver_owners(receiver: str) -> set[str]:
    """Every object ``_owner(receiver)`` may name under some options."""
    parts = receiver.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))} | {receiver.rpartition(".")[0]}


def _may_cross(owners: set[str], src: _Src) -> bool:
    return any(
        not (_is_prefix(o, so) or _is_prefix(so, o)) for o in owners for so in _source_owners(src)
    )


def _function_locals(nodes: list[ast.AST]) -> dict[str, set[_Src]]:
    """Locals bound to a source anywhere in the function (order and
    rebinding ignored: a superset of what the rule tracks)."""
    locals_: dict[str, set[_Src]] = {}
    assigns = [n for n in nodes if isinstance(n, ast.Assign)]
    changed = True
    while changed:  # an alias of an alias, in any order
        changed = False
        for n in assigns:
            for t in n.targets:
                new: list[tuple[str, set[_Src]]] = []
                if isinstance(t, ast.Name):
                    new = [(t.id, _ast_sources(n.value, locals_))]
                elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Call):
                    # ``_unpack_pair``: libcst's names include a starred one
                    bound = [
                        e.value.id if isinstance(e, ast.Starred) else e.id  # type: ignore[attr-defined]
                        for e in t.elts
                        if isinstance(e, ast.Name)
                        or isinstance(e, ast.Starred)
                        and isinstance(e.value, ast.Name)
                    ]
                    fn_name = _cst_dotted(n.value.func)
                    leaf = (fn_name or "").rpartition(".")[2]
                    if (
                        len(bound) == 2
                        and fn_name
                        and "." in fn_name
                        and "embed" in leaf
                        and "head" in leaf
                    ):
                        owner = fn_name.rpartition(".")[0]
                        new = [
                            (bound[0], {(PAIR, owner, FIRST)}),
                            (bound[1], {(PAIR, owner, LAST)}),
                        ]
                for name, srcs in new:
                    if not srcs <= locals_.get(name, set()):
                        locals_.setdefault(name, set()).update(srcs)
                        changed = True
    return locals_


def _function_candidates(nodes: list[ast.AST]) -> list[list[Any]]:
    """``_aliases`` before the options, on the nodes of a function's body:
    ``["=", receiver, source]`` for an attribute assignment or ``setattr``,
    ``[setter, owner, source]`` for a method call given the source (a
    setter if the options say so); only those that cross objects under some
    options."""
    if not any(isinstance(n, (ast.Assign, ast.Call)) for n in nodes):
        return []
    locals_ = _function_locals(nodes)
    out: set[tuple[str, str, _Src]] = set()
    installed = _installed_map(
        (n.value.id, r)
        for n in nodes
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
        for t in n.targets
        if (r := _cst_dotted(t)) and "." in r
    )

    def assign(receiver: str, value: ast.AST) -> None:
        receiver = _install_root(receiver, installed)
        owners = _receiver_owners(receiver)
        for src in _ast_sources(value, locals_):
            if _may_cross(owners, src):
                out.add(("=", receiver, src))

    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, (ast.Name, ast.Tuple)):
                    continue
                receiver = _cst_dotted(t)
                if receiver and "." in receiver:
                    assign(receiver, n.value)
        elif isinstance(n, ast.Call):
            fn_name = _cst_dotted(n.func)
            args = _ordered_args(n)
            if fn_name == "setattr" and len(args) >= 3:
                obj = _cst_dotted(args[0])
                if obj:
                    key = _str_constant(args[1])
                    # a literal made of several strings is not a libcst
                    # SimpleString: the rule then names the attribute "..."
                    for attr in {"...", key} - {None}:
                        assign(f"{obj}.{attr}", args[2])
            elif fn_name and "." in fn_name:
                owner, _, leaf = fn_name.rpartition(".")
                for a in args:
                    for src in _ast_sources(a, locals_):
                        if _may_cross({owner}, src):
                            out.add((leaf, owner, src))
    return [[kind, where, list(src)] for kind, where, src in sorted(out)]


# ``get_pp_group().world_size`` (``_mentions_guard``): a guard whatever
# ``guard-names`` says, recorded as this marker
PP_GROUP_SIZE = "<pp-group-size>"
_SIZE_ATTRS = ("world_size", "size", "rank_in_group")


def _utf8(line: str) -> bytes:
    return line.encode("utf-8", "surrogatepass")


# what a default guard name holds, lower-cased (``name_matches`` ignores case)
_GUARD_WORDS = (
    "is_first_rank",
    "is_last_rank",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
    "ppmissinglayer",
    "pp_size",
    "pp_world_size",
    "pipeline_parallel_size",
    "pp_rank",
    "world_size",
    "rank_in_group",
)
# the attribute ``size`` (``get_pp_group().size``) as a word; led by the literal
_SIZE_WORD = re.compile(r"size(?!\w)(?<!\wsize)")


def _guard_text_lines(text: str) -> list[int] | None:
    """Sorted lines of ``text`` that :meth:`_Segments.may_guard` keeps."""
    if "\r" in text:
        return None
    found: set[int] = set()

    def add(s: str, positions: Iterable[int]) -> None:
        line, pos = 1, 0
        for p in sorted(positions):
            line += s.count("\n", pos, p)
            pos = p
            found.add(line)

    # ``lower`` keeps every line break (and may change other lengths: lines
    # are counted in the string searched)
    low = text.lower()
    hits: list[int] = []
    for w in _GUARD_WORDS:
        i = low.find(w)
        while i >= 0:
            hits.append(i)
            i = low.find(w, i + 1)
    add(low, hits)
    add(text, (m.start() for m in _SIZE_WORD.finditer(text)))
    if not text.isascii():
        found.update(i for i, line in enumerate(text.split("\n"), 1) if not line.isascii())
    return sorted(found)


class _Segments:
    """Source text of ast nodes (``code_for`` of the rule; libcst adds the
    node's own parentheses, which hold neither "pp" nor "pipeline"). Lines
    are split as the ast counts them; columns are UTF-8 offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None
        self._guard_lines: list[int] | None = None
        self._guard_done = False

    def may_guard(self, first: int, last: int) -> bool:
        """Whether lines ``first..last`` may hold a name :func:`_guard_names`
        records: a default guard name (any case), the word ``size``,
        ``world_size`` or ``rank_in_group``, or a non-ASCII character (an
        identifier that only normalises or lower-cases to one). True when
        the text has a ``\r`` (lines are then not counted here)."""
        if not self._guard_done:
            self._guard_lines, self._guard_done = _guard_text_lines(self.text), True
        lines = self._guard_lines
        if lines is None:
            return True
        i = bisect_left(lines, first)
        return i < len(lines) and lines[i] <= last

    def __call__(self, node: ast.AST) -> str:
        if self._lines is None:
            self._lines = re.split(r"\r\n|\r|\n", self.text)
        lines = self._lines
        first, last = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        if not 1 <= first <= last <= len(lines):
            return ""
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if first == last:
            return _utf8(lines[first - 1])[start:end].decode("utf-8", "replace")
        parts = [_utf8(lines[first - 1])[start:].decode("utf-8", "replace")]
        parts += lines[first : last - 1]
        parts.append(_utf8(lines[last - 1])[:end].decode("utf-8", "replace"))
        return "\n".join(parts)


@functools.lru_cache(maxsize=4096)
def _default_guard(name: str) -> bool:
    return name_matches(name, DEFAULT_GUARDS)


def _guard_names(nodes: Iterable[ast.AST], segment: _Segments) -> set[str]:
    """What ``_mentions_guard`` finds among ``nodes`` whatever the options
    (:data:`PP_GROUP_SIZE`) or may find: identifiers that are libcst
    ``Name`` nodes as well and match a default guard pattern."""
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Name):
            name = n.id
        elif isinstance(n, ast.Attribute):
            name = n.attr
            if name in _SIZE_ATTRS and PP_GROUP_SIZE not in out:
                owner = segment(n.value).lower()
                if "pp" in owner or "pipeline" in owner:
                    out.add(PP_GROUP_SIZE)
        elif isinstance(n, ast.arg) or isinstance(n, ast.keyword) and n.arg is not None:
            name = n.arg
        else:
            continue
        if _default_guard(name):
            out.add(name)
    return out


def _statements(body: list[ast.stmt], nested: bool) -> Iterator[ast.stmt]:
    """The statements of ``body``, compound ones entered; nested functions
    and classes entered only with ``nested``."""
    stack = list(body)
    while stack:
        s = stack.pop()
        yield s
        if not nested and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, name, ()) or ())
        for h in getattr(s, "handlers", ()):
            stack.extend(h.body)
        for c in getattr(s, "cases", ()):
            stack.extend(c.body)


def _class_guards(cls: ast.ClassDef, segment: _Segments) -> set[str]:
    """``_class_refuses_pp``: the tests of every ``if`` in the class (nested
    scopes included) that raises in its body (nested scopes not)."""
    out: set[str] = set()
    for s in _statements(cls.body, nested=True):
        if (
            isinstance(s, ast.If)
            and segment.may_guard(s.test.lineno, s.test.end_lineno or s.test.lineno)
            and any(isinstance(r, ast.Raise) for r in _statements(s.body, nested=False))
        ):
            out |= _guard_names(ast_nodes_no_nested([s.test]), segment)
    return out


@memo_on_tree
def alias_shapes(tree: ast.Module, text: str) -> dict[str, Any]:
    """``funcs``: per function with alias candidates, ``{"a": candidates,
    "g": guards}`` (see :func:`_function_candidates`; the guards of the
    function, of the functions it is nested in and of the raising tests of
    its innermost class, see :func:`_guard_names`). Memoised on the tree:
    the ast gate and the collector share one parse."""
    return _alias_shapes(tree, _Segments(text))


def _alias_shapes(tree: ast.Module, segment: _Segments) -> dict[str, Any]:
    funcs: list[dict[str, Any]] = []
    body_nodes: dict[int, list[ast.AST]] = {}
    fn_guards: dict[int, set[str]] = {}
    cls_guards: dict[int, set[str]] = {}

    def nodes_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
        if id(fn) not in body_nodes:
            body_nodes[id(fn)] = ast_nodes_no_nested(fn.body)
        return body_nodes[id(fn)]

    def guards_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        # ``_mentions_guard(fn)``: the function itself entered (name,
        # parameters, decorators, annotations, body), nested functions,
        # classes and lambdas not (nor their names)
        if id(fn) not in fn_guards:
            first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            if not segment.may_guard(first, fn.end_lineno or fn.lineno):
                fn_guards[id(fn)] = set()
                return fn_guards[id(fn)]
            header = ast_nodes_no_nested(
                [fn.args, *fn.decorator_list, *([fn.returns] if fn.returns else [])]
            )
            names = _guard_names([*header, *nodes_of(fn)], segment)
            fn_guards[id(fn)] = names | {fn.name} if _default_guard(fn.name) else names
        return fn_guards[id(fn)]

    def visit(
        body: list[ast.stmt],
        enclosing: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...],
        cls: ast.ClassDef | None,
    ) -> None:
        for s in body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                chain = (*enclosing, s)
                cands = _function_candidates(nodes_of(s))
                if cands:
                    guards: set[str] = set()
                    for f in chain:
                        guards |= guards_of(f)
                    if cls is not None:
                        if id(cls) not in cls_guards:
                            cls_guards[id(cls)] = _class_guards(cls, segment)
                        guards |= cls_guards[id(cls)]
                    funcs.append({"a": cands, "g": sorted(guards)})
                visit(s.body, chain, cls)
                continue
            if isinstance(s, ast.ClassDef):
                visit(s.body, enclosing, s)
                continue
            for name in ("body", "orelse", "finalbody"):
                visit(getattr(s, name, ()) or [], enclosing, cls)
            for h in getattr(s, "handlers", ()):
                visit(h.body, enclosing, cls)
            for c in getattr(s, "cases", ()):
                visit(c.body, enclosing, cls)

    visit(tree.body, (), None)
    del visit  # (a recursive closure is a reference cycle: see engine._scan_job)
    return {"funcs": funcs}


# -- what the ast readers read -------------------------------------------------
# An alias's source reaches a rank-placed module (``_source``): a chain
# segment, a ``getattr`` key or a getter named by ``first-rank-modules`` or
# ``last-rank-modules`` (directly or through a local of the same function),
# in a function whose guards are its own, its enclosing functions' and its
# class's. So this rule's ast readers (its gate, ``PpAliasShapes``) and its
# check read only the top-level statements whose text holds a literal part
# of one of those globs or a default word of the text gate, in any case
# (``checks._textfunctions.regions_naming``); the others hold no alias that
# can be reported.
_SCOPE_WORDS = ("embed", "wte", "lm_head")


def _scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """The regions of ``text`` this rule's ast readers read (None: all)."""
    own = options.get("SHD302", {})
    names = [*own.get("first-rank-modules", DEFAULT_FIRST_RANK), *own.get("last-rank-modules", DEFAULT_LAST_RANK)]
    return regions_naming(text, _SCOPE_WORDS, names)


def _module_names(options: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    own = options.get("SHD302", {})
    return (*own.get("first-rank-modules", DEFAULT_FIRST_RANK), *own.get("last-rank-modules", DEFAULT_LAST_RANK))


@memo_last_text_under(_module_names)
def _scan_scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """``_scope``, and in its classes only the statements the scan's readers
    can take something from: a method records an alias only where its code
    names a rank-placed module (the words ``_scope`` looks for; a function
    nested in it counts as its code), and the class's guards come from the
    ``if`` tests that ``raise`` anywhere in it; a method holding neither
    adds nothing (see ``narrow_classes``). The libcst check reads the
    classes whole (``ast_scope``). (The gate and the collector of one text
    ask in turn: the answer is kept.)"""
    spans = _scope(text, options)
    if spans is None:
        return None
    sk = skeleton_to(text, len(text))
    low = ascii_lower(text)
    # (``_scope`` read these words on the lower-cased text: so do the methods)
    words = (*_SCOPE_WORDS, *(glob_words(_module_names(options)) or ()), "raise", "\u0130", "\u212a")
    return narrow_classes(sk, spans, lambda a, b: any(low.find(w, a, b) >= 0 for w in words))


class PpAliasShapes(FactCollector):
    """Per module, what the SHD302 facts gate matches against the options
    (see :func:`alias_shapes`). Read only by the gate."""

    name = "pp_alias_shapes"
    # 3: a getter's call is recorded as ``leaf()``; 4: only the top-level
    # statements in ``_scope``
    version = 4
    needles = _TEXT_NEEDLES

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        # always something for a file the text gate lets in, so the facts
        # gate can tell "nothing here" from "not collected"
        return alias_shapes(tree, text)


# -- does the project place modules on pipeline ranks at all? --------------------
# What an engine that partitions its models across pipeline ranks writes
# somewhere: the placeholder class, or a test of the rank (vLLM and SGLang:
# ``get_pp_group().is_first_rank``, ``PPMissingLayer``; Megatron:
# ``is_pipeline_first_stage``; DeepSpeed: ``is_first_stage``; TensorRT-LLM:
# ``mapping.is_first_pp_rank()``). Matched inside identifiers.
PIPELINE_MARKERS = (
    "PPMissingLayer",
    "first_rank",
    "last_rank",
    "is_first_stage",
    "is_last_stage",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
    "first_pp_rank",
    "last_pp_rank",
    "pp_rank",
)
# every marker holds one of these: found with ``str.find``, then the whole
# identifier around it is read and compared
_MARKER_STEMS = ("_rank", "_stage", "MissingLayer")
# an embedding module built into an attribute: ``self.embed_tokens =
# VocabParallelEmbedding(``, ``self.wte = nn.Embedding(`` (the line before the
# callee's ``Embedding``: the target and the callee's dotted prefix)
_EMBEDDING_CALL = re.compile(r"Embedding\w*[ \t]*\(")
_EMBED_TARGET = re.compile(r"(?:^|[.\s])([^\W\d]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*(?:[^\W\d][\w.]*)?$", re.MULTILINE)
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def pipeline_layout(text: str) -> dict[str, list[str]] | None:
    """The pipeline markers (whole identifiers holding one) and the
    attributes assigned an ``*Embedding*(...)`` construction in ``text``."""
    markers: set[str] = set()
    n = len(text)
    for stem in _MARKER_STEMS:
        i = text.find(stem)
        while i >= 0:
            a, b = i, i + len(stem)
            while a > 0 and text[a - 1] in _WORD_CHARS:
                a -= 1
            while b < n and text[b] in _WORD_CHARS:
                b += 1
            word = text[a:b]
            if any(m in word for m in PIPELINE_MARKERS):
                markers.add(word)
            i = text.find(stem, b)
    embeds: set[str] = set()
    for hit in _EMBEDDING_CALL.finditer(text):
        ls = text.rfind("\n", 0, hit.start()) + 1
        t = _EMBED_TARGET.search(text, ls, hit.start())
        if t is not None:
            embeds.add(t.group(1))
    if not markers and not embeds:
        return None
    return {"m": sorted(markers), "e": sorted(embeds)}


# How many modules must build an input embedding before a project without a
# pipeline marker counts as an engine without pipeline parallelism: a draft
# model file linted alone (or with a few neighbours) builds its own embedding
# and need not mention the pipeline, while a whole engine has many models.
MIN_EMBEDDING_MODULES = 5


@dataclass(frozen=True)
class PipelineLayoutIndex:
    markers: frozenset[str]
    # per module, the attributes it assigns an embedding construction
    embeds: tuple[frozenset[str], ...]

    def without_pipeline(self, first_rank_modules: Sequence[str]) -> bool:
        """Whether the project is an engine without pipeline parallelism,
        where every rank holds the whole model: several of its modules build
        a first-rank module (an embedding) and none places anything on a
        pipeline rank."""
        if self.markers:
            return False
        building = sum(1 for names in self.embeds if any(name_matches(e, first_rank_modules) for e in names))
        return building >= MIN_EMBEDDING_MODULES


class PipelineLayout(FactCollector):
    """Per module, the pipeline markers and the embeddings built (see
    :func:`pipeline_layout`): whether the project partitions its models
    across pipeline ranks at all."""

    name = "pipeline_layout"
    version = 1
    needles = Needles(any_of=((*_MARKER_STEMS, "Embedding"),))
    needs_ast = False

    @classmethod
    def collect(cls, tree: ast.Module | None, text: str, module: str, path: str) -> Any:
        return pipeline_layout(text)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> PipelineLayoutIndex:
        markers: set[str] = set()
        embeds: list[frozenset[str]] = []
        for data in per_module.values():
            if data:
                markers.update(data.get("m", ()))
                if data.get("e"):
                    embeds.append(frozenset(data["e"]))
        return PipelineLayoutIndex(frozenset(markers), tuple(embeds))


def _without_pipeline(facts: ProjectFacts, options: Mapping[str, Any]) -> bool:
    if options.get("assume-pipeline-parallel"):
        return False
    index = facts.index("pipeline_layout")
    return isinstance(index, PipelineLayoutIndex) and index.without_pipeline(options["first-rank-modules"])


@dataclass(frozen=True)
class _Source:
    """A module reached through another object: ``target.model.embed_tokens``
    is ``owner="target.model"``, ``module="embed_tokens"``."""

    owner: str
    module: str
    rank: str
    text: str


@dataclass(frozen=True)
class _Alias:
    node: cst.CSTNode
    receiver: str
    source: _Source


def _install_root(receiver: str, installed: Mapping[str, str]) -> str:
    """``receiver`` seen from where its root is installed: ``lm_head.weight``
    is ``model.lm_head.weight`` in a function that also does ``model.lm_head
    = lm_head`` (a module built here, then placed in a model: that model
    owns it)."""
    root, dot, rest = receiver.partition(".")
    where = installed.get(root)
    return f"{where}{dot}{rest}" if where else receiver


def _installed_map(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``local -> receiver`` for ``receiver = local`` statements of one
    function (a local placed in two places is left out)."""
    out: dict[str, str] = {}
    twice: set[str] = set()
    for local, receiver in pairs:
        if out.get(local, receiver) != receiver:
            twice.add(local)
        out[local] = receiver
    for local in twice:
        del out[local]
    return out


# what may follow a borrowed module and still share its storage: a parameter
# (``lm_head.weight``) or its tensor (``.weight.data``); anything else
# (``.dtype``, ``.shape``, ``.num_embeddings``) is a value read from it
_ALIAS_TAIL = frozenset({"weight", "bias", "data"})


def _aliasing_tail(segments: Sequence[str]) -> bool:
    return all(s in _ALIAS_TAIL for s in segments)


def _is_getter(name: str) -> bool:
    """A getter method (``get_input_embeddings``): the module only once called."""
    return name.startswith("get_")


def _is_prefix(a: str, b: str) -> bool:
    return a == b or b.startswith(a + ".")


# what a module holds, not a module: assigning one replaces the parameter of
# the module before it (``self.embed_out.weight``: ``self.embed_out``'s)
_PARAMETERS = frozenset({"weight", "bias"})


def _param_owner(receiver: str) -> str:
    """The object owning what ``receiver`` names when no segment of it is a
    rank-placed module: the object before the last segment, or, for a
    parameter, the object holding its module (a model tying the weight of
    its own head, whatever the head is called: ``self.embed_out.weight``,
    ``self.output.weight`` -> ``self``)."""
    head, _, last = receiver.rpartition(".")
    if last in _PARAMETERS and "." in head:
        return head.rpartition(".")[0]
    return head


class PpCrossRankModuleAlias(Rule):
    """## What it finds
    A function that wires one model's module to another model's input
    embedding or LM head by reference — `draft.model.embed_tokens =
    target.model.embed_tokens`, `setattr(draft, "embed_tokens", ...)`,
    `draft.set_input_embeddings(target.get_input_embeddings())`, or
    `embed, head = target.get_embed_and_head(); draft.set_embed_and_head(embed,
    head)` — when the borrowed module lives on a pipeline rank other than the
    one the draft runs on, and nothing in the function (or the functions it
    is nested in) looks at the pipeline layout: no `pp_size`/`world_size`
    check, no `is_first_rank`/`is_last_rank`, no `PPMissingLayer`.

    Drafts run on the last pipeline rank in vLLM and SGLang, so by default
    borrowing the LM head alone is fine and borrowing the embedding is not;
    borrowing both is reported with both named.

    Also counted as a guard: a method of the same class that raises under a
    pipeline test (a validator refusing PP up front), and a check of the
    borrowed module itself that raises (`if not isinstance(embed,
    VocabParallelEmbedding): raise ...`, `assert embed is not None`), which
    is how a placeholder on the wrong rank is refused. A model tying its own
    head to its own embedding (`self.lm_head.weight =
    self.model.embed_tokens.weight`, whatever the head is called:
    `self.embed_out.weight`, `self.output.weight`) is one model, not an alias
    across models; so is a module built in the function, given the
    embedding's weight and then placed in the embedding's own model (`head =
    nn.Linear(...); head.weight = model.model.embed_tokens.weight;
    model.lm_head = head`). A getter taken without a call
    (`wrapper.get_input_embeddings = core.get_input_embeddings`) is a method,
    not a module: not a source; nor is a value read from the module
    (`embed_tokens.weight.dtype`, `.num_embeddings`): a source ends at the
    module, a parameter or its tensor (`.weight`, `.bias`, `.data`).
    Setters that install what their caller passes (`def
    set_embed_and_head(self, embed, head)`) are left to their callers.

    Only in a project that places modules on pipeline ranks: when the
    project's modules build input embeddings (an attribute named like a
    `first-rank-modules` entry assigned an `*Embedding*(...)` construction)
    and no file of it holds a pipeline marker — `PPMissingLayer`, or an
    identifier containing `first_rank`, `last_rank`, `first_pp_rank`,
    `last_pp_rank`, `pp_rank`, `is_first_stage`, `is_last_stage`,
    `is_pipeline_first_stage` or `is_pipeline_last_stage` — the engine has no
    pipeline parallelism (every rank holds the whole model, as in LMDeploy's
    PyTorch engine) and borrowing the embedding is fine: nothing is reported.
    It takes at least five modules building an embedding to judge so: a draft
    model file linted alone (or with a few others) builds its own embedding
    and need not mention the pipeline.

    Deliberately left out: a function that silently `return`s when the
    pipeline size is not 1. On vLLM 0.33 and SGLang 0.5.23 every such early
    return sits where the engine already refuses PP for that model (for
    example a draft class that does not implement `SupportsPP`), which the
    function cannot show; it would be noise.

    ## Why it breaks
    With pipeline parallelism the input embedding is built on the first rank
    and the LM head on the last; the other ranks hold a `PPMissingLayer`
    placeholder. No rank holds both, so a draft that reuses the target's
    embedding on the last rank gets the placeholder: start-up fails (the
    engine refuses the model, or the draft's first forward crashes), or worse,
    a half-fixed version runs with a wrong embedding.

    ## Example
    Below, a draft loader points the draft's `embed_tokens` and `lm_head` at
    the target's; the finding is on the embedding (the draft runs on the last
    rank) and names the head too.

    ## Fix
    Check the pipeline size first and fail loudly (`if pp_size > 1: raise
    NotImplementedError(...)`), or place the draft on the last rank and
    broadcast the embedding weights from the first rank once at load time, or
    let the draft load its own embedding from its checkpoint under PP.

    ## Options
    - `first-rank-modules` (list[str], default `["embed_tokens", "embed_in",
      "wte", "word_embeddings", "tok_embeddings", "embedding", "embeddings",
      "get_input_embeddings"]`): attributes (or getter methods) of modules
      that live on the first pipeline rank.
    - `last-rank-modules` (list[str], default `["lm_head", "lm_heads",
      "get_output_embeddings"]`): the same for the last rank.
    - `draft-rank` (str, default `"last"`): where the project runs its draft
      model: `"last"`, `"first"`, or `"any"` (report every borrowed module).
    - `guard-names` (list[str], default `["is_first_rank", "is_last_rank",
      "is_pipeline_first_stage", "is_pipeline_last_stage", "PPMissingLayer",
      "*pp_size*", "*pp_world_size*", "*pipeline_parallel_size*",
      "*pp_rank*"]`): names whose mention in the function counts as a
      pipeline guard (besides `<pp group>.world_size`).
    - `setter-patterns` (list[str], default `["set_input_embeddings",
      "set_output_embeddings", "set_embed*", "set_lm_head*", "set_*_head"]`):
      methods that install modules they are given.
    - `assume-pipeline-parallel` (bool, default `false`): report even in a
      project where no file holds a pipeline marker (for an engine whose
      pipeline code uses other names).

    Prefilter and options: the raw-text gate runs before options are known
    and looks for the default module names (in any case): a file is parsed
    only when an attribute chain holding one (or a getter call of one) stands
    where the rule looks for a source, as an assignment's value or a branch
    of its `or`/`if else`, or as an argument of `setattr` or of a default
    setter, in any layout (line continuations, brackets, comments, several
    statements on a line); when `getattr` is given one as its key; or when a
    method whose name holds "embed" and "head" is called (see `_may_alias`).
    The `ast` gate records, per
    function and without options, every assignment, `setattr` or method call
    that hands over something reached through another object under some
    options, and the names in the function, in the functions around it and
    in its class's raising `if` tests that match a default guard pattern;
    the facts gate replays the rule on them with the effective
    `first-rank-modules`, `last-rank-modules`, `setter-patterns`,
    `draft-rank` and `guard-names` (a pipeline group's `world_size` check
    guards whatever they say). So configured names work in any file the
    raw-text gate lets in (a guard only a configured pattern matches is
    seen once the file is parsed); a file whose only alias uses custom
    names, with no default-looking line, is not analysed. The `ast` gate
    and the check read only the top-level statements (a class, a function)
    whose text holds `embed`, `wte`, `lm_head` or a literal part of a
    configured `first-rank-modules`/`last-rank-modules` glob, in any case
    (a glob without one, or outside ASCII, makes them read every
    statement): only those are compiled where no other rule needs more.
    Of those classes, the `ast` gate reads only the methods holding one of
    these words or a `raise`.
    """

    # (per file: whether the project has no pipeline layout, see _without_pipeline)
    _no_pipeline: bool | None = None
    # (per function: locals placed in an object, see _install_root)
    _installed: Mapping[str, str] = {}
    code = "SHD302"
    name = "pp-cross-rank-module-alias"
    summary = "A draft model borrows a module that lives on another pipeline rank"
    severity = Severity.ERROR
    needles = _TEXT_NEEDLES
    facts = ("pp_alias_shapes", "pipeline_layout")
    tags = ("correctness", "pipeline-parallel", "speculative-decoding")
    options: ClassVar[Mapping[str, Option]] = {
        "first-rank-modules": Option(DEFAULT_FIRST_RANK, "list[str]", "first-rank modules"),
        "last-rank-modules": Option(DEFAULT_LAST_RANK, "list[str]", "last-rank modules"),
        "draft-rank": Option("last", "str", "where the draft runs: last, first or any"),
        "guard-names": Option(DEFAULT_GUARDS, "list[str]", "pipeline guard names"),
        "setter-patterns": Option(DEFAULT_SETTERS, "list[str]", "module-installing setters"),
        "assume-pipeline-parallel": Option(
            False, "bool", "report even where no file of the project places modules on pipeline ranks"
        ),
    }

    @classmethod
    def candidate(cls, text: str) -> bool:
        # "embed"/"head" occur in nearly every model file; what an alias
        # needs is a module taken by reference: a plain attribute chain on the
        # right of ``=``, a getattr/setattr naming one, or a getter/setter
        return _TEXT_NEEDLES.match(text)

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        # some function assigns, sets or hands to a method something reached
        # through an object other than the receiver
        return bool(alias_shapes(tree, text)["funcs"])

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        if _without_pipeline(facts, options):
            return False  # (the rule reports nothing either)
        shapes = facts.raw("pp_alias_shapes").get(module)
        if shapes is None:
            return True  # not collected: no claim either way
        draft = options["draft-rank"]
        if draft not in (FIRST, LAST, "any"):
            return False  # the rule reports nothing with an unknown draft rank
        first, last = options["first-rank-modules"], options["last-rank-modules"]

        def rank_of(name: str) -> str | None:  # ``_rank_of``
            if name_matches(name, first):
                return FIRST
            if name_matches(name, last):
                return LAST
            return None

        def resolve(src: Sequence[str]) -> tuple[str, str] | None:  # ``_source``
            if src[0] == PAIR:
                return src[1], src[2]
            for j in range(len(src) - 1, 0, -1):
                seg = src[j]
                called = seg.endswith("()")
                name = seg[:-2] if called else seg
                if not called and _is_getter(name):
                    continue  # the method itself, not the module it returns
                rank = rank_of(name)
                if rank:
                    if not _aliasing_tail(src[j + 1 :]):
                        return None
                    return ".".join(src[:j]), rank
            return None

        def owner_of(receiver: str) -> str:  # ``_owner``
            parts = receiver.split(".")
            for i in range(1, len(parts)):
                if rank_of(parts[i]):
                    return ".".join(parts[:i])
            return _param_owner(receiver)

        for f in shapes["funcs"]:
            # ``_guarded`` on the function or one around it, or
            # ``_class_refuses_pp``: the rule reports nothing in it
            guards = f["g"]
            if PP_GROUP_SIZE in guards or any(
                name_matches(g, options["guard-names"]) for g in guards
            ):
                continue
            for kind, where, src in f["a"]:
                found = resolve(src)
                if found is None or (draft != "any" and found[1] == draft):
                    continue  # no rank-placed module, or on the draft's rank
                if kind == "=":
                    owner = owner_of(where)
                elif name_matches(kind, options["setter-patterns"]):
                    owner = where
                else:
                    continue
                if not (_is_prefix(owner, found[0]) or _is_prefix(found[0], owner)):
                    return True  # ``_cross``
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._no_pipeline is None:
            self._no_pipeline = _without_pipeline(self.ctx.facts, self.opts)
        if self._no_pipeline:
            return
        aliases = list(self._aliases(node))
        if not aliases:
            return
        if self.opts["draft-rank"] not in (FIRST, LAST, "any"):
            return
        wrong = [a for a in aliases if a.source.rank != self.opts["draft-rank"]]
        if not wrong:
            return
        enclosing = [n for n in self.ctx.scope_nodes if isinstance(n, cst.FunctionDef)]
        if node not in enclosing:
            enclosing.append(node)
        if any(self._guarded(f) for f in enclosing) or self._validated(node, aliases):
            return
        cls = self.ctx.current_class
        if cls is not None and self._class_refuses_pp(cls):
            return
        ranks = {a.source.rank for a in aliases}
        for a in wrong:
            where = "first" if a.source.rank == FIRST else "last"
            what = "input embedding" if a.source.rank == FIRST else "LM head"
            msg = (
                f"`{a.receiver}` borrows `{a.source.text}` by reference, but the {what} exists only on "
                f"the {where} pipeline rank"
            )
            if ranks == {FIRST, LAST}:
                others = sorted({b.source.text for b in aliases if b.source.rank != a.source.rank})
                msg += (
                    f" (and {', '.join(f'`{o}`' for o in others)}, also borrowed here, only on the "
                    f"{'last' if where == 'first' else 'first'}: no rank holds both)"
                )
            msg += f"; `{node.name.value}` never checks the pipeline layout"
            self.report(
                a.node,
                msg,
                notes=[
                    (
                        "Under pipeline parallelism every other rank holds a PPMissingLayer "
                        "placeholder there; the draft model runs on one rank and cannot reach it."
                    ),
                    (
                        "Check the pipeline size and raise when it is not 1, or load/broadcast "
                        "the weights onto the draft's rank."
                    ),
                ],
            )

    # -- finding aliases ---------------------------------------------------------
    def _rank_of(self, name: str | None) -> str | None:
        if name_matches(name, self.opts["first-rank-modules"]):
            return FIRST
        if name_matches(name, self.opts["last-rank-modules"]):
            return LAST
        return None

    def _source(self, expr: cst.BaseExpression, locals_: dict[str, _Source]) -> _Source | None:
        """The rank-placed module ``expr`` reaches on some object."""
        if isinstance(expr, cst.Name):
            return locals_.get(expr.value)
        # ``getattr(t, "embed_tokens", None) or getattr(t, "embedding", None)``
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            return self._source(expr.left, locals_) or self._source(expr.right, locals_)
        if isinstance(expr, cst.IfExp):
            return self._source(expr.body, locals_) or self._source(expr.orelse, locals_)
        # ``getattr(target, "embed_tokens"[, None])``
        if isinstance(expr, cst.Call) and call_name(expr) == "getattr" and len(expr.args) >= 2:
            obj = dotted(expr.args[0].value)
            key = expr.args[1].value
            if obj and isinstance(key, cst.SimpleString):
                leaf = str(key.evaluated_value)
                rank = None if _is_getter(leaf) else self._rank_of(leaf)
                if rank:
                    return _Source(obj, leaf, rank, f"{obj}.{leaf}")
            return None
        # ``target.get_input_embeddings()``
        if isinstance(expr, cst.Call) and not expr.args:
            expr_name = dotted(expr.func)
            if expr_name and "." in expr_name:
                owner, _, leaf = expr_name.rpartition(".")
                rank = self._rank_of(leaf)
                if rank:
                    return _Source(owner, leaf, rank, f"{expr_name}()")
            return None
        chain = dotted(expr)
        if not chain or "." not in chain:
            return None
        parts = chain.split(".")
        # the module is the last rank-placed segment: ``t.lm_head.weight``
        # borrows the head's parameter, which lives where the head does
        for i in range(len(parts) - 1, 0, -1):
            if _is_getter(parts[i]):
                continue  # ``core.get_input_embeddings``: the method, not the module
            rank = self._rank_of(parts[i])
            if rank:
                if not _aliasing_tail(parts[i + 1 :]):
                    return None  # ``embed_tokens.weight.dtype``: a value read, no alias
                return _Source(".".join(parts[:i]), parts[i], rank, chain)
        return None

    def _aliases(self, func: cst.FunctionDef) -> Iterator[_Alias]:
        locals_: dict[str, _Source] = {}
        nodes = list(walk_no_nested(func.body))
        self._installed = _installed_map(
            (n.value.value, r)
            for n in nodes
            if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name)
            for t in n.targets
            if (r := dotted(t.target)) and "." in r
        )
        for n in nodes:
            if isinstance(n, cst.Assign):
                yield from self._assign(n, locals_)
            elif isinstance(n, cst.Call):
                yield from self._call(n, locals_)

    def _assign(self, n: cst.Assign, locals_: dict[str, _Source]) -> Iterator[_Alias]:
        value = n.value
        for t in n.targets:
            target = t.target
            if isinstance(target, cst.Name):
                src = self._source(value, locals_)
                if src is not None:
                    locals_[target.value] = src
                else:
                    locals_.pop(target.value, None)
                continue
            if isinstance(target, cst.Tuple):
                self._unpack_pair(target, value, locals_)
                continue
            receiver = dotted(target)
            src = self._source(value, locals_)
            if (
                receiver
                and src is not None
                and "." in receiver
                and self._cross(self._owner(_install_root(receiver, self._installed)), src)
            ):
                yield _Alias(n, receiver, src)

    def _unpack_pair(
        self, target: cst.Tuple, value: cst.BaseExpression, locals_: dict[str, _Source]
    ) -> None:
        """``embed, head = target.get_embed_and_head()``: a getter that hands
        out both ends of the pipeline at once."""
        names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        for nm in names:
            locals_.pop(nm, None)
        if len(names) != 2 or not isinstance(value, cst.Call):
            return
        fn = dotted(value.func)
        leaf = last_name(fn) or ""
        if fn and "." in fn and "embed" in leaf and "head" in leaf:
            owner = fn.rpartition(".")[0]
            locals_[names[0]] = _Source(owner, "embedding", FIRST, f"{fn}()[0]")
            locals_[names[1]] = _Source(owner, "lm_head", LAST, f"{fn}()[1]")

    def _call(self, n: cst.Call, locals_: dict[str, _Source]) -> Iterator[_Alias]:
        fn = call_name(n)
        if fn == "setattr" and len(n.args) >= 3:
            obj = dotted(n.args[0].value)
            key = n.args[1].value
            src = self._source(n.args[2].value, locals_)
            attr = str(key.evaluated_value) if isinstance(key, cst.SimpleString) else "..."
            if obj and src is not None and self._cross(self._owner(_install_root(f"{obj}.{attr}", self._installed)), src):
                yield _Alias(n, f"{obj}.{attr}", src)
            return
        if not fn or "." not in fn or not name_matches(last_name(fn), self.opts["setter-patterns"]):
            return
        owner = fn.rpartition(".")[0]
        for a in n.args:
            src = self._source(a.value, locals_)
            if src is not None and self._cross(owner, src):
                yield _Alias(n, owner, src)

    def _owner(self, receiver: str) -> str:
        """The object whose module is replaced: ``self`` for
        ``self.lm_head.weight``, ``draft.model`` for ``draft.model.embed_tokens``."""
        parts = receiver.split(".")
        for i in range(1, len(parts)):
            if self._rank_of(parts[i]):
                return ".".join(parts[:i])
        return _param_owner(receiver)

    @staticmethod
    def _cross(receiver_owner: str, src: _Source) -> bool:
        """Whether the receiving object and the source's owner are different
        models: neither contains the other (``self`` tying its own
        ``self.transformer.wte`` to ``self.lm_head`` is one model)."""
        return not (_is_prefix(receiver_owner, src.owner) or _is_prefix(src.owner, receiver_owner))

    # -- guards ------------------------------------------------------------------
    def _class_refuses_pp(self, cls: cst.ClassDef) -> bool:
        """Whether some method of the class raises under a pipeline test (a
        config validator refusing PP up front guards every method)."""
        for n in walk(cls.body):
            if (
                isinstance(n, cst.If)
                and self._mentions_guard(n.test)
                and any(isinstance(s, cst.Raise) for s in walk_no_nested(n.body))
            ):
                return True
        return False

    def _validated(self, func: cst.FunctionDef, aliases: list[_Alias]) -> bool:
        """Whether the function checks what it borrowed and raises when it is
        not a real module (``if not isinstance(embed, VocabParallelEmbedding):
        raise ...``, ``assert embed is not None``): on a rank without the
        module that is an honest refusal, not a silent alias."""
        borrowed = {a.source.text for a in aliases}
        names = set()
        for n in walk_no_nested(func.body):
            if isinstance(n, cst.Assign) and isinstance(n.targets[0].target, cst.Name):
                src = self._source(n.value, {})
                if src is not None and (
                    src.text in borrowed or any(a.source.owner == src.owner for a in aliases)
                ):
                    names.add(n.targets[0].target.value)
        if not names:
            return False
        for n in walk_no_nested(func.body):
            test = None
            if (
                isinstance(n, cst.If)
                and any(isinstance(s, cst.Raise) for s in walk_no_nested(n.body))
                or isinstance(n, cst.Assert)
            ):
                test = n.test
            if test is not None and any(
                isinstance(x, cst.Name) and x.value in names for x in walk(test)
            ):
                return True
        return False

    def _guarded(self, func: cst.FunctionDef) -> bool:
        return self._mentions_guard(func)

    def _mentions_guard(self, node: cst.CSTNode) -> bool:
        guards: Sequence[str] = self.opts["guard-names"]
        for n in walk_no_nested(node):
            if isinstance(n, cst.Name) and name_matches(n.value, guards):
                return True
            if isinstance(n, cst.Attribute):
                if name_matches(n.attr.value, guards):
                    return True
                # ``get_pp_group().world_size``, ``self.pp_group.world_size``
                if n.attr.value in ("world_size", "size", "rank_in_group"):
                    owner = self.ctx.code_for(n.value)
                    if "pp" in owner.lower() or "pipeline" in owner.lower():
                        return True
        return False
