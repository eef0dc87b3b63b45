"""The class's own methods SHD501's analysis across classes follows
(``self.helper(...)``), read from the file's CPython ``ast``
(``RuleContext.ast_tree``): the engine hands the rule only the definitions
its needles match (``follows_definitions = False``), and a helper may match
none. Per method, the dotted names of the calls in its body, in source order
(libcst's pre-order), nested definitions and lambdas apart."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence

from linter.astwalk import ast_dotted, first_line

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_METHODS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _classes(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    """Every class not inside a function, by its name qualified with the
    classes holding it (blocks such as ``if`` add nothing)."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _classes(node.body, f"{name}.")
        elif not isinstance(node, _METHODS):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(node, field, None)
                if isinstance(sub, list):
                    yield from _classes(sub, prefix)
            for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                yield from _classes(clause.body, prefix)


def _calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    found: list[ast.Call] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Call):
            found.append(n)
        stack.extend(ast.iter_child_nodes(n))
    # source order; a call holding another one starting where it starts first
    found.sort(key=lambda c: (c.lineno, c.col_offset, -(c.end_lineno or 0), -(c.end_col_offset or 0)))
    return [name for name in map(lambda c: ast_dotted(c.func), found) if name is not None]


def method_calls(cls: ast.ClassDef) -> dict[str, list[str]]:
    """Per method of ``cls`` (a later definition of a name replacing an
    earlier one), the calls of its body."""
    return {st.name: _calls(st) for st in cls.body if isinstance(st, _METHODS)}


def _source(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: Sequence[str]) -> str:
    first = first_line(fn)
    return "".join(lines[first - 1 : fn.end_lineno or fn.lineno])


def helpers_of(
    tree: ast.Module | None, text: str, qualified: str, method: str, code: Callable[[], str]
) -> Mapping[str, list[str]]:
    """The methods of the class ``qualified`` holding ``method`` (whose
    code ``code()`` gives). Several classes of that name (branches of an ``if``):
    the one whose ``method`` is ``code``, blanks aside; else the last one, the
    one Python binds."""
    if tree is None:
        return {}
    classes = [c for name, c in _classes(tree.body) if name == qualified]
    found = [method_calls(c) for c in classes]
    if len(found) < 2 or all(f == found[0] for f in found):
        return found[0] if found else {}
    lines = text.splitlines(keepends=True)
    bare = "".join(code().split())
    same = [
        f
        for c, f in zip(classes, found)
        if any(isinstance(st, _METHODS) and st.name == method and "".join(_source(st, lines).split()) in bare for st in c.body)
    ]
    return (same or found)[-1]
