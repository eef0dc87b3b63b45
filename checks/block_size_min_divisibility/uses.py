"""Fact collector ``block_min_uses``, read by SHD101's facts gate: per
module, whether a scope (a function, or the module-level code) that calls
``min(...)`` has a host use -- ``X % B`` or ``X // B`` with a name on the
right, a ``for`` loop over ``range(...)`` -- and, where none does, every
qualified name its launches ``K[grid](...)`` and its calls with a name among
their arguments may stand for: a finding needs one of them to reach a
Triton kernel or a launcher."""

from __future__ import annotations

import ast
from typing import Any

from linter.astwalk import ast_dotted, first_line, line_starts, module_statements
from linter.facts import FactCollector
from linter.imports import import_nodes, is_package_path, resolve_relative
from linter.needles import Needles

# SHD101's sites: a ``min(`` call bound by ``=``, ``:=`` or a launch keyword
# (``B = min(``, ``B: int = (min(``, ``(B := min(``, ``BLOCK=min(``), with
# whitespace, brackets, backslashes or comments between the tokens
SITE_NEEDLES = Needles(all_of=("min",), regex=r"=(?:[\s(\\]|#[^\n]*)*min(?:[\s)\\]|#[^\n]*)*\(")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _calls(node: ast.AST, name: str) -> bool:
    """``node`` is a call of ``name`` or of an attribute ``name``."""
    f = node.func if isinstance(node, ast.Call) else None
    return (isinstance(f, ast.Name) and f.id == name) or (
        isinstance(f, ast.Attribute) and f.attr == name
    )


def _host_use(node: ast.AST) -> bool:
    """``X % B``, ``X // B`` (a name on the right) or a loop over ``range``."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.Mod, ast.FloorDiv)) and isinstance(node.right, ast.Name)
    return isinstance(node, (ast.For, ast.AsyncFor)) and _calls(node.iter, "range")


def _callee(node: ast.AST) -> tuple[str, str] | None:
    """("launch", kernel) for ``K[grid](...)``, ("call", callee) for a call
    with a name among its arguments (not through ``self``/``cls``)."""
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


def _scopes(roots: list[ast.AST]) -> list[list[ast.AST]]:
    """The nodes of each scope: the module-level code, and each function
    with the lambdas and comprehensions in it but not the functions and
    classes nested in it (each its own scope, as the rule reads them; a
    class body's own statements are in none, the rule analyses no class)."""
    scopes: list[list[ast.AST]] = [[]]
    stack: list[tuple[ast.AST, list[ast.AST] | None]] = [(r, scopes[0]) for r in roots]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, _SCOPES):
            # (its decorators and defaults too: the rule enters the scope first)
            scope = []
            scopes.append(scope)
        elif isinstance(node, ast.ClassDef):
            stack.extend((st, None) for st in node.body)
            continue
        elif scope is not None:
            scope.append(node)
        stack.extend((c, scope) for c in ast.iter_child_nodes(node))
    return scopes


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
    """``{"host": True}``, or ``{"host": False, "launches": [...], "calls":
    [...]}``: what the names may stand for, through any import of the file or
    as names of this module (a simple name only if defined at its top)."""
    uses: set[tuple[str, str]] = set()
    for nodes in _scopes(_candidate_roots(tree, text)):
        if any(_calls(n, "min") for n in nodes):
            if any(_host_use(n) for n in nodes):
                return {"host": True}
            uses.update(got for n in nodes if (got := _callee(n)) is not None)
    if not uses:
        return {"host": False, "launches": [], "calls": []}
    imports = _bindings(tree, module, path)
    statements = module_statements(tree.body)
    defined = {st.name for st in statements if isinstance(st, (*_SCOPES, ast.ClassDef))}
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
