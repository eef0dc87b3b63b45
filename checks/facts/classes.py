"""The "classes" fact collector: the class hierarchy of a whole project, so a
rule looking at one class can see what its bases (in other files) declare.

Read lazily per module on CPython's ``ast`` (modules defining classes, and
package ``__init__`` modules for their re-exports)::

    {
      "path": "pkg/models/base.py",          # root-relative, for related locations
      "imports": {"local": "qualified.name"},  # linter.imports.imports_from_ast
      "classes": {
        "Outer": {
          "line": 3, "col": 6, "end_line": 3, "end_col": 11,   # the class name
          "bases": ["pkg.models.base.Base", "torch.nn.Module"],
          "attrs": {"flag": {"value": true, "literal": true,
                             "line": 4, "col": 4, "end_line": 4, "end_col": 8}},
          "methods": ["forward", "__init__"],
        },
        "Outer.Inner": {...},                  # classes nested in classes
      },
    }

Bases are qualified through the module's imports; re-exports are followed
by the index. Attributes are those assigned in the class body (``x = ...``,
``x: T = ...``); ``value`` is the literal (bool, int, float, str, None,
negative numbers) when ``literal`` is true, else the expression's source.
Columns are code points (libcst's convention). Classes defined inside
functions are not collected: nothing outside the function can name them.

The index (:class:`ClassIndex`, ``ProjectFacts.index("classes")``) is the
stable API other rules use:

- ``resolve(module, dotted_name)``: the qualified name ``dotted_name`` stands
  for in ``module``, through re-exports (a best guess for an unknown class).
- ``get(qualname) -> ClassInfo | None``; ``bases(qualname)``: the resolved
  base names, known or not.
- ``mro(qualname)``: ``(qualname, ClassInfo)`` of the class then its bases,
  depth-first left to right, each once, unknown ones skipped;
  ``mro_of_bases(module, base_names)`` for a class the index does not hold
  (defined in a function, or an editor buffer).
- ``attr(qualname, name) -> AttrDef | None``: the first class-level
  definition along the MRO (``value`` a :class:`NonLiteral` for a
  non-literal); ``attr_in(mro, name)`` on an MRO list;
  ``attr_location(owner, name)``: ``(path, line, col, end_line, end_col)``.
- ``defines(qualname, method)``: the first class along the MRO defining it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from checks.facts.common import column, memoised, module_splits, source_lines, span
from linter.astwalk import ast_dotted, module_statements
from linter.facts import FactCollector, RecordedMemo
from linter.imports import follow_reexports, imports_from_ast, is_package_path, qualify
from linter.needles import Needles


@dataclass(frozen=True)
class NonLiteral:
    """An attribute assigned something other than a literal (its source)."""

    source: str


class AttrDef(NamedTuple):
    value: Any
    owner: str
    module: str
    line: int


@dataclass(frozen=True)
class ClassInfo:
    qualname: str
    module: str
    name: str
    line: int
    col: int
    end_line: int
    end_col: int
    bases: tuple[str, ...]
    attrs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    methods: frozenset[str] = frozenset()


def _literal(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant) and (
        node.value is None or isinstance(node.value, (bool, int, float, str))
    ):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        v = node.operand.value
        return True, -v if isinstance(node.op, ast.USub) else v
    return False, None


def _segment(node: ast.expr, lines: list[str]) -> str:
    """Source of an expression, first line only (``ast.get_source_segment``
    re-splits the whole file on every call: quadratic on big modules)."""
    if not 1 <= node.lineno <= len(lines):
        return ""
    src = lines[node.lineno - 1].encode("utf-8")
    one_line = node.end_lineno == node.lineno
    text = src[node.col_offset : node.end_col_offset if one_line else len(src)]
    return text.decode("utf-8", "replace") + ("" if one_line else " ...")


def _class(
    node: ast.ClassDef, module: str, imports: Mapping[str, str], lines: list[str]
) -> dict[str, Any]:
    bases = []
    for b in node.bases:
        # ``Generic[T]``-style subscripts give their head
        name = ast_dotted(b.value if isinstance(b, ast.Subscript) else b)
        if name is not None:
            bases.append(qualify(name, module, imports))
    attrs: dict[str, Any] = {}
    methods: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(stmt.name)
            continue
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        else:
            continue
        lit, v = _literal(stmt.value)
        if not lit:
            v = _segment(stmt.value, lines)
        for t in targets:
            if isinstance(t, ast.Name):
                attrs[t.id] = {"value": v, "literal": lit, **_span_dict(span(t, lines))}
    # the span of the class name (ast only gives the ``class`` keyword's)
    line = node.lineno
    start = column(lines, line, node.col_offset)
    col = lines[line - 1].find(node.name, start) if line <= len(lines) else -1
    if col < 0:
        col = start
    return {
        **_span_dict([line, col, line, col + len(node.name)]),
        "bases": bases,
        "attrs": attrs,
        "methods": sorted(methods),
    }


def _span_dict(where: list[int]) -> dict[str, int]:
    return dict(zip(("line", "col", "end_line", "end_col"), where))


class ClassFacts(FactCollector):
    name = "classes"
    version = 4  # 4: lazy (facts no longer in the cache)
    # ``import`` lets package ``__init__`` modules in: their re-exports are how
    # ``from pkg import Base`` reaches ``pkg/base.py``
    needles = Needles(any_of=(("class ", "import"),))
    # Only a few classes' bases are ever asked for (43 of vLLM 0.33.0's 2,281
    # modules on a whole run): read per module on demand instead of on every
    # file of the scan (~0.7 s of CPU on vLLM).
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        imports = imports_from_ast(tree, module, path)
        lines = source_lines(text)
        classes: dict[str, Any] = {}

        def visit(body: list[ast.stmt], prefix: str) -> None:
            # (classes under ``if TYPE_CHECKING:`` or a try-import fallback
            # are still names of the module or class)
            for node in module_statements(body):
                if isinstance(node, ast.ClassDef):
                    local = f"{prefix}{node.name}"
                    classes[local] = _class(node, module, imports, lines)
                    visit(node.body, f"{local}.")

        visit(tree.body, "")
        if not classes and not (imports and is_package_path(path)):
            return None
        return {"path": path, "imports": imports, "classes": classes}

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> ClassIndex:
        return ClassIndex(per_module)


class ClassIndex:
    """Queries over the project's classes; see the module docstring.

    Classes are looked up module by module, never all at once: the facts are
    lazy (``ClassFacts.lazy``), and a check must record exactly which
    modules it read. Memoised answers keep the (collector, module) pairs
    read to compute them and replay them into the open recordings."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._modules = per_module
        self._memo = RecordedMemo()

    def _imports_of(self, module: str) -> Mapping[str, str] | None:
        data = self._modules.get(module)
        return data.get("imports") if data else None

    @memoised
    def resolve(self, module: str, dotted_name: str) -> str:
        q = qualify(dotted_name, module, self._imports_of(module) or {})
        return follow_reexports(q, self.__contains__, self._imports_of)

    @memoised
    def get(self, qualname: str) -> ClassInfo | None:
        for mod, local in module_splits(qualname):
            data = self._modules.get(mod)
            c = data.get("classes", {}).get(local) if data else None
            if c is not None:
                sets = {"bases": tuple(c["bases"]), "methods": frozenset(c["methods"])}
                return ClassInfo(qualname, mod, local, **{**c, **sets})
        return None

    def bases(self, qualname: str) -> list[str]:
        return list(self._bases(qualname))

    @memoised
    def _bases(self, qualname: str) -> tuple[str, ...]:
        c = self.get(qualname)
        if c is None:
            return ()
        return tuple(follow_reexports(b, self.__contains__, self._imports_of) for b in c.bases)

    def mro(self, qualname: str) -> list[tuple[str, ClassInfo]]:
        return list(self._mro(qualname))

    @memoised
    def _mro(self, qualname: str) -> tuple[tuple[str, ClassInfo], ...]:
        out: list[tuple[str, ClassInfo]] = []
        self._walk(qualname, out, set())
        return tuple(out)

    def mro_of_bases(self, module: str, base_names: Iterable[str]) -> list[tuple[str, ClassInfo]]:
        out: list[tuple[str, ClassInfo]] = []
        seen: set[str] = set()
        for b in base_names:
            self._walk(self.resolve(module, b), out, seen)
        return out

    def _walk(self, qualname: str, out: list[tuple[str, ClassInfo]], seen: set[str]) -> None:
        # ``seen`` stops cycles (a module re-binding a name to its own subclass)
        if qualname in seen:
            return
        seen.add(qualname)
        c = self.get(qualname)
        if c is None:
            return
        out.append((qualname, c))
        for b in self.bases(qualname):
            self._walk(b, out, seen)

    @staticmethod
    def attr_in(mro: Iterable[tuple[str, ClassInfo]], name: str) -> AttrDef | None:
        for q, c in mro:
            a = c.attrs.get(name)
            if a is not None:
                value = a["value"] if a.get("literal") else NonLiteral(a["value"])
                return AttrDef(value, q, c.module, a["line"])
        return None

    def attr(self, qualname: str, name: str) -> AttrDef | None:
        return self.attr_in(self.mro(qualname), name)

    def attr_location(self, owner: str, name: str) -> tuple[str, int, int, int, int] | None:
        c = self.get(owner)
        if c is None or name not in c.attrs:
            return None
        a = c.attrs[name]
        data = self._modules.get(c.module)
        path = (data.get("path") if data else None) or c.module.replace(".", "/") + ".py"
        return (path, a["line"], a["col"], a["end_line"], a["end_col"])

    def defines(self, qualname: str, method: str) -> str | None:
        for q, c in self.mro(qualname):
            if method in c.methods:
                return q
        return None

    def __contains__(self, qualname: object) -> bool:
        return isinstance(qualname, str) and self.get(qualname) is not None
