"""Walking CPython ``ast`` trees fast, for the fact collectors: dotted
names, a node's children without visiting the fields that never hold one,
and a pre-order walk. Part of the public rule API (facts access)."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator


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


def module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at module level, in source order: ``body``
    and, nested, the blocks of its ``if`` and ``try`` statements (imports
    guarded by ``if TYPE_CHECKING:`` or "is Triton available"); not the
    bodies of functions and classes."""
    out: list[ast.stmt] = []
    for st in body:
        out.append(st)
        if isinstance(st, ast.If):
            out += module_statements(st.body + st.orelse)
        elif isinstance(st, ast.Try):
            out += module_statements(st.body)
            for h in st.handlers:
                out += module_statements(h.body)
            out += module_statements(st.orelse + st.finalbody)
    return out


def line_starts(text: str) -> list[int]:
    """The offset at which each line of ``text`` starts (lines as ``\n``
    ends them): ``starts[n - 1]`` is where an ``ast`` node's line ``n`` begins."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def first_line(node: ast.AST) -> int:
    """The first line of a statement, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])  # type: ignore[attr-defined]



def statement_start(body: list[ast.stmt], line: int) -> int | None:
    """The last line at or before ``line`` where a statement of ``body``, at
    any depth, or an ``except``/``case`` clause starts (decorators
    included); None when none does. ``tokenize`` started there reads
    ``line`` as it does reading the whole text: no string, bracket or
    logical line is open at the start of that line."""
    best = None
    items: list[ast.AST] = list(body)
    while items:
        at = None
        for st in items:  # (source order)
            if _starts(st) > line:
                break
            at = st
        if at is None:
            break
        best = _starts(at)
        if _ends(at) < line:
            break
        items = [c for name in ast_stmt_fields(type(at)) for c in getattr(at, name)]
    return best


def _starts(node: ast.AST) -> int:
    return node.pattern.lineno if isinstance(node, ast.match_case) else first_line(node)


def _ends(node: ast.AST) -> int:
    last = node.body[-1] if isinstance(node, ast.match_case) else node
    return last.end_lineno or last.lineno  # type: ignore[attr-defined]
