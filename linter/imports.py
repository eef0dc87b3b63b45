"""Import resolution shared by fact collectors (on CPython ``ast``) and rules
(on libcst): which qualified name a local name stands for."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence

import libcst as cst

from linter.syntax import dotted


def is_package_path(path: str) -> bool:
    return path.endswith("__init__.py") or path.endswith("__init__.pyi")


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module named by ``from <level dots><target> import ...``
    written in ``module``."""
    if level == 0:
        return target or ""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if target:
        parts.append(target)
    return ".".join(parts)


def imports_from_ast(tree: ast.Module, module: str, path: str) -> dict[str, str]:
    """Local name → qualified name for every import in the module (top level
    and nested; a later import of the same name wins)."""
    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for node in import_nodes(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(module, pkg, node.level, node.module)
            for a in node.names:
                if a.name == "*":
                    continue
                out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


def import_nodes(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Import statements in source order, nested in blocks and functions too,
    without visiting expressions (``ast.walk`` over every node was most of the
    facts phase's time on vLLM)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(node, name, None)
            if isinstance(sub, list):
                yield from import_nodes(sub)
        for h in getattr(node, "handlers", ()):
            yield from import_nodes(h.body)
        for case in getattr(node, "cases", ()):
            yield from import_nodes(case.body)


def imports_from_cst(node: cst.Module, module: str, path: str) -> dict[str, str]:
    """Same as :func:`imports_from_ast`, on a libcst module (read from the
    statements alone: a visitor over every node cost a check as much as
    half its parse)."""
    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for n in cst_import_nodes(node.body):
        bind_cst_import(out, n, module, pkg)
    return out


def bind_cst_import(out: dict[str, str], n: cst.Import | cst.ImportFrom, module: str, pkg: bool) -> None:
    """Record in ``out`` the local names one libcst import statement binds
    (``local -> qualified name``) in ``module`` (``pkg``: a package's
    ``__init__``)."""
    if isinstance(n, cst.Import):
        for a in n.names:
            name = dotted(a.name) or ""
            if a.asname is not None and isinstance(a.asname.name, cst.Name):
                out[a.asname.name.value] = name
            else:
                out[name.split(".")[0]] = name.split(".")[0]
        return
    if isinstance(n.names, cst.ImportStar):
        return
    target = dotted(n.module) if n.module is not None else None
    base = resolve_relative(module, pkg, len(n.relative), target)
    for a in n.names:
        name = dotted(a.name) or ""
        local = a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) else name
        out[local] = f"{base}.{name}" if base else name


def cst_import_nodes(body: Sequence[cst.CSTNode]) -> Iterator[cst.Import | cst.ImportFrom]:
    """The ``import`` statements among ``body`` (a module's, a suite's) in
    source order, nested in blocks, classes and functions too (what a
    visitor meets, without walking an expression)."""
    for node in body:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            yield node
        elif isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small
        elif not isinstance(node, cst.BaseSmallStatement):
            # a compound statement, an ``else``/``except``/``finally``/``case``
            # clause: its suite, then its clauses in the order they are written
            suite = getattr(node, "body", None)
            if isinstance(suite, cst.BaseSuite):
                yield from cst_import_nodes(suite.body)
            for field in ("handlers", "cases"):
                clauses = getattr(node, field, ())
                if clauses:
                    yield from cst_import_nodes(clauses)
            for field in ("orelse", "finalbody"):
                clause = getattr(node, field, None)
                if clause is not None:
                    yield from cst_import_nodes((clause,))


def qualify(name: str, module: str, imports: Mapping[str, str]) -> str:
    """The qualified name of a dotted expression ``name`` used in ``module``:
    through an import when its head is imported, else defined in ``module``."""
    head, _, rest = name.partition(".")
    if head in imports:
        base = imports[head]
        return f"{base}.{rest}" if rest else base
    return f"{module}.{name}" if module else name


def follow_reexports(
    qualname: str,
    defined: Callable[[str], bool],
    imports_of: Callable[[str], Mapping[str, str] | None],
    limit: int = 8,
) -> str:
    """Follow ``pkg.Name`` through packages that re-export it (``from .mod
    import Name`` in ``pkg/__init__.py``) until ``defined(qualname)`` holds or
    nothing more is known. Returns the last name reached."""
    seen = set()
    cur = qualname
    for _ in range(limit):
        if defined(cur) or cur in seen:
            return cur
        seen.add(cur)
        mod, _, leaf = cur.rpartition(".")
        imports = imports_of(mod) if mod else None
        if not imports or leaf not in imports:
            return cur
        cur = imports[leaf]
    return cur


def top_level_from_imports(tree: ast.Module, module: str, path: str) -> dict[str, str]:
    """The local names the module's top-level ``from X import Y [as Z]``
    statements bind, each with the qualified name it stands for (relative
    imports resolved): re-exports look like that."""
    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for st in tree.body:
        if isinstance(st, ast.ImportFrom):
            base = resolve_relative(module, pkg, st.level, st.module)
            for a in st.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out
