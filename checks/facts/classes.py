"""The "classes" fact collector: the class hierarchy of a whole project, so a
rule looking at one class can see what its bases (in other files) declare.

Read per module on CPython's ``ast`` (modules defining classes, and package
``__init__`` modules for their re-exports), lazily: the scan does not run this collector, a module's facts
are read when a query first needs them (``ClassFacts.lazy``)::

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

Bases are qualified through the module's imports (relative imports and
aliases included), not yet through re-exports: that needs the whole project
and happens in the index. Class-level attributes are recorded when assigned
in the class body (``x = ...``, ``x: T = ...``); ``value`` is the literal
(bool, int, float, str, None, negative numbers) when ``literal`` is true, else
the source text of the expression. Columns are code points (libcst's
convention), not ast's UTF-8 byte offsets. Classes defined inside functions
are not collected: nothing outside the function can name them.

The index (:class:`ClassIndex`, from ``ProjectFacts.index("classes")``) is the
stable API other rules use:

- ``resolve(module, dotted_name) -> str``: the qualified name ``dotted_name``
  stands for when written in ``module``, following re-exports through package
  ``__init__`` modules. Returns the best guess even when the class is unknown.
- ``get(qualname) -> ClassInfo | None``: the facts of one class.
- ``module_of(qualname) -> str | None``, ``path_of(module) -> str | None``.
- ``bases(qualname) -> list[str]``: the resolved base names (known or not).
- ``mro(qualname) -> list[tuple[str, ClassInfo]]``: the class, then its bases,
  depth-first left to right, each class once; unknown bases are skipped and
  cycles terminate.
- ``mro_of_bases(module, base_names) -> list[tuple[str, ClassInfo]]``: the
  same for a class the index does not hold (defined in a function, or an
  editor buffer), given its base expressions as written in ``module``.
- ``attr(qualname, name) -> AttrDef | None``: the first definition of a
  class-level attribute along the MRO, as ``(value, owner, module, line)``
  (a NamedTuple; ``value`` is a :class:`NonLiteral` when the assignment is not
  a literal). ``attr_in(mro, name)`` does the same on an MRO list.
- ``attr_location(owner, name) -> tuple[str, int, int, int, int] | None``:
  ``(path, line, col, end_line, end_col)`` of that assignment, for a Note.
- ``defines(qualname, method) -> str | None``: the qualified name of the
  first class along the MRO that defines ``method`` (truthy when any does).
- ``defines_attr_anywhere(name) -> bool``: whether any class of the project
  assigns ``name`` at class level (tells whether a project knows a flag;
  reads every module's facts, so not for a rule's hot path).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from linter.astwalk import ast_dotted
from linter.imports import follow_reexports, imports_from_ast, is_package_path, qualify
from linter.facts import FactCollector, RecordedMemo
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

    def attr_value(self, name: str) -> Any:
        a = self.attrs.get(name)
        if a is None:
            return None
        return a["value"] if a.get("literal") else NonLiteral(a["value"])


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


class _Cols:
    """ast byte offsets → code-point columns (only lines with non-ASCII text
    differ)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def col(self, line: int, byte_col: int) -> int:
        if not 1 <= line <= len(self.lines):
            return byte_col
        s = self.lines[line - 1]
        if s.isascii():
            return byte_col
        return len(s.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _span(node: ast.AST, cols: _Cols) -> dict[str, int]:
    line = node.lineno  # type: ignore[attr-defined]
    end_line = node.end_lineno or line  # type: ignore[attr-defined]
    return {
        "line": line,
        "col": cols.col(line, node.col_offset),  # type: ignore[attr-defined]
        "end_line": end_line,
        "end_col": cols.col(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
    }


def _name_span(cls: ast.ClassDef, text_lines: list[str], cols: _Cols) -> dict[str, int]:
    """The span of the class name (ast only gives the ``class`` keyword's)."""
    line = cls.lineno
    src = text_lines[line - 1] if 0 < line <= len(text_lines) else ""
    start = cols.col(line, cls.col_offset)
    idx = src.find(cls.name, start)
    if idx < 0:
        idx = start
    return {"line": line, "col": idx, "end_line": line, "end_col": idx + len(cls.name)}


def _segment(node: ast.expr, lines: list[str]) -> str:
    """Source of an expression, first line only (``ast.get_source_segment``
    re-splits the whole file on every call: quadratic on big modules)."""
    line = node.lineno
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].encode("utf-8")
    end = node.end_col_offset if node.end_lineno == line else len(src)
    text = src[node.col_offset : end].decode("utf-8", "replace")
    return text if node.end_lineno == line else text + " ..."


def _base_name(node: ast.expr) -> str | None:
    """``a.b.C`` for a base written as a dotted name; ``Generic[T]``-style
    subscripts give their head (``Generic``)."""
    return ast_dotted(node.value if isinstance(node, ast.Subscript) else node)


class ClassFacts(FactCollector):
    name = "classes"
    version = 4  # 4: lazy (facts no longer in the cache)
    # ``import`` lets package ``__init__`` modules in: their re-exports are how
    # ``from pkg import Base`` reaches ``pkg/base.py``
    needles = Needles(any_of=(("class ", "import"),))
    # Only SHD301 reads these facts, for the bases of a few classes (43 of
    # vLLM 0.33.0's 2,281 modules on a whole run): read per module on demand
    # instead of on every file of the scan (~0.7 s of CPU on vLLM).
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        imports = imports_from_ast(tree, module, path)
        cols = _Cols(text)
        classes: dict[str, Any] = {}

        def visit(body: Iterable[ast.stmt], prefix: str) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    local = f"{prefix}{node.name}"
                    classes[local] = cls._class(node, module, imports, text, cols)
                    visit(node.body, f"{local}.")
                elif isinstance(node, (ast.If, ast.Try)):
                    # classes defined under ``if TYPE_CHECKING`` / try-import
                    # fallbacks are still module-level names
                    visit(node.body, prefix)
                    visit(node.orelse, prefix)
                    for h in getattr(node, "handlers", ()):
                        visit(h.body, prefix)

        visit(tree.body, "")
        if not classes and not (imports and is_package_path(path)):
            return None
        return {"path": path, "imports": imports, "classes": classes}

    @classmethod
    def _class(
        cls, node: ast.ClassDef, module: str, imports: Mapping[str, str], text: str, cols: _Cols
    ) -> dict[str, Any]:
        bases = []
        for b in node.bases:
            n = _base_name(b)
            if n is not None:
                bases.append(qualify(n, module, imports))
        attrs: dict[str, Any] = {}
        methods: list[str] = []
        for stmt in node.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.append(stmt.name)
                continue
            if value is None:
                continue
            lit, v = _literal(value)
            if not lit:
                v = _segment(value, cols.lines)
            for t in targets:
                if isinstance(t, ast.Name):
                    attrs[t.id] = {"value": v, "literal": lit, **_span(t, cols)}
        return {
            **_name_span(node, cols.lines, cols),
            "bases": bases,
            "attrs": attrs,
            "methods": sorted(set(methods)),
        }

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
        self._cached = RecordedMemo()

    def _data(self, module: str) -> Any:
        return self._modules.get(module)

    # -- names ---------------------------------------------------------------
    def imports_of(self, module: str) -> Mapping[str, str] | None:
        data = self._data(module)
        return data.get("imports") if data else None

    def path_of(self, module: str) -> str | None:
        data = self._data(module)
        return data.get("path") if data else None

    def resolve(self, module: str, dotted_name: str) -> str:
        return self._cached("resolve", f"{module}\0{dotted_name}", lambda: self._resolve(module, dotted_name))

    def _resolve(self, module: str, dotted_name: str) -> str:
        q = qualify(dotted_name, module, self.imports_of(module) or {})
        return follow_reexports(q, self.__contains__, self.imports_of)

    # -- classes -------------------------------------------------------------
    def get(self, qualname: str) -> ClassInfo | None:
        return self._cached("get", qualname, lambda: self._get(qualname))

    def _get(self, qualname: str) -> ClassInfo | None:
        # ``pkg.mod.Outer.Inner``: module ``pkg.mod.Outer``, then ``pkg.mod``...
        parts = qualname.split(".")
        for i in range(len(parts) - 1, -1, -1):
            mod, local = ".".join(parts[:i]), ".".join(parts[i:])
            data = self._data(mod)
            c = data.get("classes", {}).get(local) if data else None
            if c is not None:
                return ClassInfo(
                    qualname=qualname,
                    module=mod,
                    name=local,
                    line=c["line"],
                    col=c["col"],
                    end_line=c["end_line"],
                    end_col=c["end_col"],
                    bases=tuple(c.get("bases", ())),
                    attrs=c.get("attrs", {}),
                    methods=frozenset(c.get("methods", ())),
                )
        return None

    def module_of(self, qualname: str) -> str | None:
        c = self.get(qualname)
        return c.module if c else None

    def bases(self, qualname: str) -> list[str]:
        return list(self._cached("bases", qualname, lambda: self._bases(qualname)))

    def _bases(self, qualname: str) -> tuple[str, ...]:
        c = self.get(qualname)
        if c is None:
            return ()
        return tuple(follow_reexports(b, self.__contains__, self.imports_of) for b in c.bases)

    def mro(self, qualname: str) -> list[tuple[str, ClassInfo]]:
        return list(self._cached("mro", qualname, lambda: self._mro_of(qualname)))

    def _mro_of(self, qualname: str) -> tuple[tuple[str, ClassInfo], ...]:
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
        # iterative would be nicer, but hierarchies are shallow; ``seen``
        # makes cycles (a module re-binding a name to its own subclass) stop
        if qualname in seen:
            return
        seen.add(qualname)
        c = self.get(qualname)
        if c is None:
            return
        out.append((qualname, c))
        for b in self.bases(qualname):
            self._walk(b, out, seen)

    # -- attributes and methods ----------------------------------------------
    @staticmethod
    def attr_in(mro: Iterable[tuple[str, ClassInfo]], name: str) -> AttrDef | None:
        for q, c in mro:
            if name in c.attrs:
                return AttrDef(c.attr_value(name), q, c.module, c.attrs[name]["line"])
        return None

    def attr(self, qualname: str, name: str) -> AttrDef | None:
        return self.attr_in(self.mro(qualname), name)

    def attr_location(self, owner: str, name: str) -> tuple[str, int, int, int, int] | None:
        c = self.get(owner)
        if c is None or name not in c.attrs:
            return None
        a = c.attrs[name]
        path = self.path_of(c.module) or c.module.replace(".", "/") + ".py"
        return (path, a["line"], a["col"], a["end_line"], a["end_col"])

    def defines(self, qualname: str, method: str) -> str | None:
        for q, c in self.mro(qualname):
            if method in c.methods:
                return q
        return None

    def defines_attr_anywhere(self, name: str) -> bool:
        """(Reads every module's facts: not for a rule's hot path.)"""
        return any(
            name in c.get("attrs", {})
            for data in self._modules.values()
            if data
            for c in data.get("classes", {}).values()
        )

    def __contains__(self, qualname: object) -> bool:
        return isinstance(qualname, str) and self.get(qualname) is not None

    def __len__(self) -> int:
        """(Reads every module's facts: not for a rule's hot path.)"""
        return sum(len(data.get("classes", {})) for data in self._modules.values() if data)
