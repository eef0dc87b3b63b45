"""Fact collector ``block_min_uses`` (read by SHD101's facts gate): per
module, what the functions that call ``min(...)`` do that could use a block
where the rule reports it.

A finding needs, in the function (or the module-level code) binding the
``min``, either a host use -- ``X % B`` or ``X // B`` with a name on the
right, or a ``for`` loop over ``range(...)`` -- or a call the block may be
handed to: a launch ``K[grid](...)`` or a call with a name among its
arguments, which must reach a Triton kernel (``triton_kernels``, through
``facade_imports``) or a launcher (``kernel_launchers``). The facts record
whether such a host use exists and, where none does, every name those calls
may stand for, through any import of the file; the rule's
``candidate_facts`` looks them up. Each function is read with the functions
nested in it (a superset of the rule's scopes), from the file's ``ast``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from linter.astwalk import ast_dotted, first_line, line_starts, module_statements
from linter.facts import FactCollector
from linter.imports import import_nodes, is_package_path, resolve_relative
from linter.needles import Needles

# SHD101's sites: a ``min(`` call bound by ``=``, ``:=`` or a launch keyword
# (``B = min(``, ``B: int = (min(``, ``(B := min(``, ``BLOCK=min(``), with
# whitespace, brackets, backslashes or comments between the tokens (the
# rule's file and definition needles, and this collector's)
SITE_NEEDLES = Needles(all_of=("min",), regex=r"=(?:[\s(\\]|#[^\n]*)*min(?:[\s)\\]|#[^\n]*)*\(")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _is_min(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "min") or (
        isinstance(f, ast.Attribute) and f.attr == "min"
    )


def _host_use(node: ast.AST) -> bool:
    """``X % B``, ``X // B`` (a name on the right) or a loop over ``range``."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.Mod, ast.FloorDiv)) and isinstance(node.right, ast.Name)
    if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call):
        f = node.iter.func
        return (isinstance(f, ast.Name) and f.id == "range") or (
            isinstance(f, ast.Attribute) and f.attr == "range"
        )
    return False


def _callee(node: ast.AST) -> tuple[str, str] | None:
    """("launch", kernel) for ``K[grid](...)``, ("call", callee) for a call
    with a name among its arguments: what a block may be handed to
    (``self``/``cls`` callees left out, as the rule does)."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    if isinstance(f, ast.Subscript):
        kind, name = "launch", ast_dotted(f.value)
    elif any(isinstance(a, ast.Name) for a in (*node.args, *(k.value for k in node.keywords))):
        kind, name = "call", ast_dotted(f)
    else:
        return None
    if not name or name == "min" or name.split(".", 1)[0] in ("self", "cls"):
        return None
    return kind, name


class _Scope:
    """What one function (with the lambdas and comprehensions in it, not the
    functions and classes nested in it: each its own scope, as the rule
    reads them) or the module-level code holds."""

    __slots__ = ("has_min", "host", "uses")

    def __init__(self) -> None:
        self.has_min = False
        self.host = False
        self.uses: set[tuple[str, str]] = set()

    def add(self, node: ast.AST) -> None:
        if _is_min(node):
            self.has_min = True
        elif _host_use(node):
            self.host = True
        got = _callee(node)
        if got is not None:
            self.uses.add(got)


def _read(roots: list[ast.AST], scopes: list[_Scope]) -> None:
    """Each node of ``roots`` into the scope holding it (a class body's own
    statements into none: the rule analyses no class scope)."""
    stack: list[tuple[ast.AST, _Scope | None]] = [(r, scopes[0]) for r in roots]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, _SCOPES):
            # (its decorators and defaults too: the rule enters the scope first)
            inner = _Scope()
            scopes.append(inner)
            stack.extend((c, inner) for c in ast.iter_child_nodes(node))
            continue
        if isinstance(node, ast.ClassDef):
            stack.extend((st, None) for st in node.body)
            continue
        if scope is not None:
            scope.add(node)
        stack.extend((c, scope) for c in ast.iter_child_nodes(node))


def _candidate_roots(tree: ast.Module, text: str) -> list[ast.AST]:
    """The module-level statements and the definitions -- top-level, or
    members of a top-level class -- whose text holds a site (the rule's
    definition needles: no site, no finding); every statement when lines
    cannot be told apart as CPython counts them."""
    if "\r" in text:
        return list(tree.body)
    starts = line_starts(text)

    def has_site(st: ast.stmt) -> bool:
        first = first_line(st)
        last = st.end_lineno or st.lineno
        end = starts[last] if last < len(starts) else len(text)
        return SITE_NEEDLES.match(text[starts[first - 1] : end])

    roots: list[ast.AST] = []
    for st in tree.body:
        if isinstance(st, ast.ClassDef):
            if has_site(st):
                members = [m for m in st.body if isinstance(m, (*_SCOPES, ast.ClassDef))]
                roots += [m for m in members if has_site(m)]
        elif isinstance(st, _SCOPES):
            if has_site(st):
                roots.append(st)
        else:
            roots.append(st)
    return roots


def _bindings(tree: ast.Module, module: str, path: str) -> dict[str, set[str]]:
    """Every qualified name each local name is imported as, anywhere in the file."""
    pkg = is_package_path(path)
    out: dict[str, set[str]] = {}
    for node in import_nodes(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                out.setdefault(local, set()).add(a.name if a.asname else local)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(module, pkg, node.level, node.module)
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, set()).add(
                        f"{base}.{a.name}" if base else a.name
                    )
    return out


def uses_facts(tree: ast.Module, text: str, module: str, path: str) -> dict[str, Any]:
    """``{"host": True}`` when a scope calling ``min`` has a host use, else
    ``{"host": False, "launches": [...], "calls": [...]}``: the qualified
    names the launched kernels and the called functions of such scopes may
    stand for, through any import of the file or as names of this module
    (a simple name only if the module defines it at its top)."""
    scopes = [_Scope()]
    _read(_candidate_roots(tree, text), scopes)
    uses: set[tuple[str, str]] = set()
    for scope in scopes:
        if scope.has_min:
            if scope.host:
                return {"host": True}
            uses |= scope.uses
    imports = _bindings(tree, module, path) if uses else {}
    defined = (
        {st.name for st in module_statements(tree.body) if isinstance(st, (*_SCOPES, ast.ClassDef))}
        if uses
        else set()
    )
    out: dict[str, set[str]] = {"launch": set(), "call": set()}
    for kind, name in uses:
        head, _, rest = name.partition(".")
        if rest or head in defined:
            out[kind].add(f"{module}.{name}" if module else name)
        for base in imports.get(head, ()):
            out[kind].add(f"{base}.{rest}" if rest else base)
    return {"host": False, "launches": sorted(out["launch"]), "calls": sorted(out["call"])}


class BlockMinUses(FactCollector):
    """What the functions calling ``min(...)`` divide, loop over and call."""

    name = "block_min_uses"
    version = 1
    needles = SITE_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return uses_facts(tree, text, module, path)


def may_reach_kernel(qualname: str, has_facts: Callable[[str], bool]) -> bool:
    """Whether the module holding ``qualname`` (its dotted prefix) has kernel,
    launcher or re-export facts (``has_facts(module)``): where the rule looks
    a kernel, a launcher or the next hop of a re-export up."""
    module = qualname.rpartition(".")[0]
    return bool(module) and has_facts(module)
