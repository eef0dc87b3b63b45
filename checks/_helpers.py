"""Helpers several rules share: names, literals, small-scope walking, name
classification from configurable patterns. Rules track the little scope they
need themselves instead of asking libcst for Scope/QualifiedName metadata,
which costs several times the parse."""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from linter.syntax import (  # noqa: F401  (re-exported while the rules move to linter.syntax)
    call_name,
    child_nodes,
    decorator_names,
    dotted,
    function_params,
    int_literal,
    keyword_args,
    last_name,
    name_matches,
    positional_args,
    walk,
    walk_fast,
    walk_no_nested,
)

T = TypeVar("T")


def ast_dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a CPython-ast Name/Attribute chain, else None (the
    prefilter gates' counterpart of :func:`dotted`)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# Fields that never hold a node in a tree ``compile`` builds (the ASDL of
# Python 3.11 to 3.14: identifiers, strings, constants, ints; and the
# expression contexts, which no check looks for), by name for every node
# type (``str``: 3.14's t-string ``Interpolation`` text) ...
_LEAF_FIELDS = frozenset(
    {
        "ctx", "name", "type_comment", "simple", "module", "level", "id", "attr",
        "kind", "conversion", "is_async", "arg", "asname", "rest", "kwd_attrs", "tag",
        "str",
    }
)
# ... except where a field of such a name holds a node (3.12's ``type X = ...``)
_NODE_FIELDS_OF: dict[type, frozenset[str]] = (
    {ast.TypeAlias: frozenset({"name"})} if hasattr(ast, "TypeAlias") else {}
)
# ... and for the types where a field of that name elsewhere holds nodes.
_LEAF_FIELDS_OF: dict[type, frozenset[str]] = {
    ast.Global: frozenset({"names"}),
    ast.Nonlocal: frozenset({"names"}),
    ast.Constant: frozenset({"value"}),
    ast.MatchSingleton: frozenset({"value"}),
    ast.TypeIgnore: frozenset({"lineno"}),
}
# The only node lists that may hold None (`{**d}`'s key, a keyword-only
# argument without a default).
_NONE_LISTS = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults")})

# per node type: its node-holding fields, each with whether it is a list
# that may hold None; () for a type without children (Name, Constant, ...)
AST_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def ast_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """The node-holding fields of ``cls`` (see ``AST_FIELDS``), computed and
    stored: loops that inline :func:`ast_children` read ``AST_FIELDS`` first."""
    skip = (_LEAF_FIELDS - _NODE_FIELDS_OF.get(cls, frozenset())) | _LEAF_FIELDS_OF.get(cls, frozenset())
    names = AST_FIELDS[cls] = tuple(
        (f, (cls, f) in _NONE_LISTS) for f in cls._fields if f not in skip
    )
    return names


def ast_children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without the expression contexts
    (``Load``/``Store``/``Del``, which no check looks for), several times as
    fast: the fields that can hold a node are known per node type, not
    discovered per node (a ``Name`` or a ``Constant`` has none to read)."""
    cls = type(node)
    names = AST_FIELDS.get(cls)
    if names is None:
        names = ast_fields(cls)
    if not names:
        return []
    out: list[ast.AST] = []
    for name, nones in names:
        v = getattr(node, name, None)
        if type(v) is list:
            if nones:
                out.extend([x for x in v if x is not None])
            else:
                out.extend(v)
        elif v is not None:
            out.append(v)
    return out


_STMT_FIELDS: dict[type, tuple[str, ...]] = {}


def ast_stmt_fields(cls: type) -> tuple[str, ...]:
    """The fields of a statement (or ``except``/``case`` clause) type that
    hold statements or clauses, in ``_fields`` order; ``()`` for any other
    node type (no expression holds a statement)."""
    names = _STMT_FIELDS.get(cls)
    if names is None:
        names = _STMT_FIELDS[cls] = (
            tuple(
                f for f in cls._fields if f in ("body", "orelse", "finalbody", "handlers", "cases")
            )
            if issubclass(cls, (ast.stmt, ast.excepthandler, ast.match_case))
            else ()
        )
    return names


def ast_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (breadth first, ``node`` included) over
    :func:`ast_children`: the same nodes in the same order, less the
    expression contexts, at about half the cost."""
    todo = deque([node])
    pop, extend = todo.popleft, todo.extend
    while todo:
        n = pop()
        extend(ast_children(n))
        yield n


def lines_with(text: str, words: Iterable[str]) -> list[int]:
    """The sorted 1-based numbers of the lines of ``text`` holding any of
    ``words`` (a node of the file's ast that holds such a token spans one of
    them: gates use this to skip the definitions that cannot)."""
    at = sorted({m.start() for w in words for m in re.finditer(re.escape(w), text)})
    out: list[int] = []
    line, prev = 1, 0
    for pos in at:
        line += text.count("\n", prev, pos)
        prev = pos
        if not out or out[-1] != line:
            out.append(line)
    return out


_DEF_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_STMT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)
# the concrete classes (``compile`` builds no subclass), for a set lookup
_FUNCTION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_DEF_TYPES = frozenset(_DEF_SCOPES)
_STMT_HOLDER_TYPES = frozenset(
    c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, _STMT_HOLDERS)
)


def function_bodies_at(tree: ast.Module, hits: Sequence[int]) -> Iterator[list[ast.AST]]:
    """The nodes of every function body of ``tree`` that spans one of the
    sorted 1-based lines ``hits`` (see :func:`lines_with`), nested
    functions, classes and lambdas left out (each node is visited once).
    The other definitions are never entered: a definition spans every line
    of the definitions nested in it."""

    def spans_hit(n: ast.AST) -> bool:
        i = bisect_left(hits, n.lineno)  # type: ignore[attr-defined]
        return i < len(hits) and hits[i] <= n.end_lineno  # type: ignore[attr-defined]

    fields_of = AST_FIELDS
    pending: list[ast.AST] = [tree]
    while pending:
        owner = pending.pop()
        stack: list[ast.AST] = list(getattr(owner, "body", ()))
        pop, push = stack.pop, stack.extend
        if type(owner) not in _FUNCTION_TYPES:
            # module or class level: only statements can hold a definition,
            # so only statement fields are entered (no expression holds one)
            while stack:
                n = pop()
                cls = type(n)
                if cls in _DEF_TYPES:
                    if spans_hit(n):
                        pending.append(n)
                elif cls is ast.match_case or (cls in _STMT_HOLDER_TYPES and spans_hit(n)):
                    for f in ast_stmt_fields(cls):
                        push(getattr(n, f))
            continue
        nodes: list[ast.AST] = []
        keep = nodes.append
        while stack:
            n = pop()
            cls = type(n)
            if cls in _DEF_TYPES:
                if spans_hit(n):
                    pending.append(n)
                continue
            if cls is ast.Lambda:
                continue
            keep(n)
            # ``push(ast_children(n))``, inlined
            names = fields_of.get(cls)
            if names is None:
                names = ast_fields(cls)
            for name, nones in names:
                v = getattr(n, name, None)
                if type(v) is list:
                    push([x for x in v if x is not None] if nones else v)
                elif v is not None:
                    stack.append(v)
        yield nodes


_NESTED_SCOPE_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def ast_nodes_no_nested(roots: Iterable[ast.AST]) -> list[ast.AST]:
    """The roots and every node under them, depth first, nested functions,
    classes and lambdas listed but not entered (a scope's own nodes);
    :func:`ast_children` inlined, as this walk serves whole function bodies."""
    out: list[ast.AST] = []
    keep = out.append
    stack = list(roots)
    pop, push, push1 = stack.pop, stack.extend, stack.append
    fields_of = AST_FIELDS
    while stack:
        n = pop()
        keep(n)
        cls = type(n)
        if cls in _NESTED_SCOPE_TYPES:  # (``compile`` builds no subclass)
            continue
        names = fields_of.get(cls)
        if names is None:
            names = ast_fields(cls)
        for name, nones in names:
            v = getattr(n, name, None)
            if type(v) is list:
                push([x for x in v if x is not None] if nones else v)
            elif v is not None:
                push1(v)
    return out


def memo_on_tree(fn: Callable[..., T]) -> Callable[..., T]:
    """Memoise a per-file computation on the ast object itself: a rule's ast
    gate and its gate-shape fact collector receive the same tree (the engine
    parses once), so they share one result. Further arguments (the text the
    tree was parsed from) are the same for one tree and are not part of the
    key."""
    attr = f"_shardlint_{fn.__module__.rsplit('.', 1)[-1]}_{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(tree: ast.Module, *args: Any) -> T:
        memo = getattr(tree, attr, None)
        if memo is None:
            memo = fn(tree, *args)
            setattr(tree, attr, memo)
        return memo

    return wrapper


def memo_last_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    """Keep ``fn``'s answer for the last text it was asked about (by
    identity): the scan asks several gates and collectors about one file in
    a row, then moves on to the next."""
    # one (text, answer) pair, read and replaced whole: a thread asking
    # about another text meanwhile cannot hand this one its answer
    last: list[tuple[Any, Any]] = [(None, None)]

    @functools.wraps(fn)
    def wrapper(text: str) -> T:
        seen, answer = last[0]
        if seen is not text:
            answer = fn(text)
            last[0] = (text, answer)
        return answer  # type: ignore[no-any-return]

    return wrapper


def memo_last_text_under(key_of: Callable[[Any], Any]) -> Callable[[Callable[[str, Any], T]], Callable[[str, Any], T]]:
    """``memo_last_text`` for ``fn(text, options)``: the last text's answer,
    kept while ``key_of(options)`` (what of the options ``fn`` reads) stays
    equal (a rule's gate and its collectors ask in turn, under one
    configuration)."""

    def decorate(fn: Callable[[str, Any], T]) -> Callable[[str, Any], T]:
        last: list[tuple[Any, Any, Any]] = [(None, None, None)]

        @functools.wraps(fn)
        def wrapper(text: str, options: Any) -> T:
            key = key_of(options)
            seen, seen_key, answer = last[0]
            if seen is not text or seen_key != key:
                answer = fn(text, options)
                last[0] = (text, key, answer)
            return answer  # type: ignore[no-any-return]

        return wrapper

    return decorate


@memo_last_text
def reversed_text(text: str) -> str:
    """``text[::-1]`` (the sentinel outline and the SHD501 text gate both
    search a file backwards)."""
    return text[::-1]


@memo_last_text
def ascii_lower(text: str) -> str:
    """``text`` with its ASCII letters lower-cased and every offset kept: what
    a raw-text gate searches for names ``name_matches`` compares in any case
    (the other letters that lower-case to ASCII ones, U+0130 and U+212A, are
    the caller's to look for). Several gates ask about the same text in a
    row."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
