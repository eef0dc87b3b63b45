"""libcst helpers for rules: names, literals, arguments, walking, and name
classification from configurable glob patterns. Rules track the little scope
they need themselves instead of asking libcst for Scope/QualifiedName
metadata, which costs several times the parse. Part of the public rule API
(see :mod:`linter.api`)."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import libcst as cst


def dotted(node: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def call_name(node: cst.CSTNode) -> str | None:
    """The dotted name a call invokes (``torch.empty`` for ``torch.empty(...)``)."""
    if isinstance(node, cst.Call):
        return dotted(node.func)
    return None


def last_name(name: str | None) -> str | None:
    return name.rsplit(".", 1)[-1] if name else None


def int_literal(node: cst.CSTNode | None) -> int | None:
    """The value of an integer literal (``1024``, ``0x400``, ``1_024``, ``-1``)."""
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = int_literal(node.expression)
        return -v if v is not None else None
    return None


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below ``node`` that carries code (pre-order, ``node``
    included; tokens and whitespace left out, see :func:`child_nodes`)."""
    return walk_fast(node, nested=True)


def walk_no_nested(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Like :func:`walk` but does not enter nested functions, lambdas or classes."""
    return walk_fast(node, nested=False)


def keyword_args(call: cst.Call) -> dict[str, cst.BaseExpression]:
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def name_matches(name: str | None, patterns: Iterable[str]) -> bool:
    """Case-insensitive glob match of the last component of ``name`` against any
    pattern (``*_world_size``, ``num_blocks``)."""
    if not name:
        return False
    leaf = name.rsplit(".", 1)[-1].lower()
    return globs_matcher(tuple(patterns))(leaf) is not None


@functools.lru_cache(maxsize=256)
def globs_matcher(patterns: tuple[str, ...]) -> Callable[[str], Any]:
    """``fnmatch.fnmatchcase`` of any of the lower-cased ``patterns``, as one
    compiled pattern (what ``fnmatchcase`` matches each one with, joined)."""
    if not patterns:
        return lambda leaf: None
    return re.compile("|".join(f"(?:{fnmatch.translate(p.lower())})" for p in patterns)).match


def function_params(func: cst.FunctionDef) -> list[str]:
    p = func.params
    names = [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]
    if isinstance(p.star_arg, cst.Param):
        names.append(p.star_arg.name.value)
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return names


def decorator_names(func: cst.FunctionDef | cst.ClassDef) -> list[str]:
    out = []
    for d in func.decorators:
        target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        n = dotted(target)
        if n:
            out.append(n)
    return out


# -- fast child iteration ------------------------------------------------------
# `CSTNode.children` runs a visitor over the node to collect its children and
# costs about ten times a field read; on big files rules that walk expressions
# spend most of their time there. These read the dataclass fields directly and
# leave out tokens and whitespace (parentheses, commas, operators' spacing),
# which no rule walks for.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_TOKEN_FIELDS = frozenset(
    {"lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon",
     "newline", "leading_lines", "lines_after_decorators", "header", "footer", "dot",
     "equal", "colon", "asynchronous"}
)


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The CST children of ``node`` that carry code (no tokens or whitespace),
    in field order (source order for all but decorators and ``a if t else b``)."""
    import dataclasses

    cls = type(node)
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _TOKEN_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[cls] = names
    out: list[cst.CSTNode] = []
    for name in names:
        v = getattr(node, name)
        kind = field_kind(type(v))
        if kind is NODE:
            out.append(v)
        elif kind is SEQUENCE:
            out.extend(x for x in v if field_kind(type(x)) is NODE)
    return out


NODE, SEQUENCE, OTHER = "node", "sequence", "other"
_KINDS: dict[type, str] = {}


def field_kind(cls: type) -> str:
    """Whether a field value of type ``cls`` is a CST node, a list or tuple
    (of nodes, maybe), or neither; memoised per type (``CSTNode`` is an
    abstract base class: ``isinstance`` against it is several times slower
    than this lookup, and a traversal asks once per field)."""
    kind = _KINDS.get(cls)
    if kind is None:
        import libcst as cst

        if issubclass(cls, cst.CSTNode):
            kind = NODE
        elif cls in (list, tuple):
            kind = SEQUENCE
        else:
            kind = OTHER
        _KINDS[cls] = kind
    return kind


def walk_fast(node: cst.CSTNode, nested: bool = True) -> Iterator[cst.CSTNode]:
    """Like :func:`walk` (or :func:`walk_no_nested` with ``nested=False``) over
    :func:`child_nodes`: pre-order, ``node`` included, several times faster."""
    stack = [node]
    first = True
    while stack:
        n = stack.pop()
        yield n
        if not nested and not first and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        first = False
        stack.extend(reversed(child_nodes(n)))


# the integer operators size arithmetic uses, by libcst class name (modules
# the scan imports must not load libcst: see ``linter._lazy``)
_FOLD = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "FloorDivide": lambda a, b: a // b if b else None,
    "LeftShift": lambda a, b: a << b if 0 <= b < 64 else None,
    "Power": lambda a, b: a**b if 0 <= b < 64 else None,
}


def fold_int(op: cst.BaseBinaryOp, a: int, b: int) -> int | None:
    """``a op b`` for the operators size arithmetic uses (``+ - * // << **``),
    None for any other (or a result too big to be a size)."""
    f = _FOLD.get(type(op).__name__)
    if f is None:
        return None
    try:
        return f(a, b)
    except (ValueError, OverflowError):
        return None


def raises_only(block: cst.BaseSuite) -> bool:
    """The body of an ``if`` is one statement line that raises (``if X % B:
    raise ...``): as hard a requirement as an assert."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return (
        len(body) == 1
        and isinstance(body[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and any(isinstance(s, cst.Raise) for s in body[0].body)
    )
