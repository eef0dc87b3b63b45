"""Project facts SHD501 reads to follow an output width across classes.

``unpadded_output_widths`` (eager; few modules mention an unpadded width):
per module, the classes whose methods *declare* an output at an unpadded
width -- a shape display holding an unpadded name
(``output = (M, self.hidden_dim_unpadded)``) or a method returning one
(``return self.hidden_dim_unpadded``)::

    {"TrtLlmExperts": {"workspace_shapes": {"width": "self.hidden_dim_unpadded",
                                            "line": 261, "col": 20, "end_line": 261, "end_col": 44}}}

``component_types`` (lazy: the rule asks for the module it checks): per
class, the declared type of each ``self.<attr>`` it holds -- an
``__init__`` parameter's annotation assigned to the attribute
(``self.fused_experts = fused_experts``), an annotated assignment
(``self.experts: Experts = ...``) or a class-level annotation
(``experts: Experts``) -- as written (``mk.Experts``, the first non-``None``
member of ``X | None`` / ``Optional[X]``, a string annotation's text), for
the rule to resolve through ``classes``::

    {"KernelImpl": {"fused_experts": "FusedMoEExpertsModular"}}
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from checks.facts.classes import ClassIndex
from linter.astwalk import ast_dotted, ast_walk
from linter.facts import FactCollector
from linter.needles import Needles

#: names that say a width is the logical, not padded, one (last component,
#: any case)
UNPADDED_WIDTH_NAMES = ("*unpadded*", "*non_padded*", "*nonpadded*", "*not_padded*")
_UNPADDED_NEEDLE = r"(?i:unpadded|non_?padded|not_padded)"


def is_unpadded_name(name: str | None) -> bool:
    leaf = (name or "").rsplit(".", 1)[-1].lower()
    return any(fnmatch.fnmatchcase(leaf, p) for p in UNPADDED_WIDTH_NAMES)


def _classes(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield f"{prefix}{node.name}", node
            yield from _classes(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.If, ast.Try)):
            yield from _classes(node.body, prefix)
            yield from _classes(node.orelse, prefix)


def _methods(cls: ast.ClassDef) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for st in cls.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield st


def _shape_element(node: ast.expr) -> ast.expr | None:
    """The unpadded name in a shape display (nested displays included:
    ``(ws1, ws2, (M, self.hidden_unpadded))``)."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    for el in node.elts:
        if is_unpadded_name(ast_dotted(el)):
            return el
        inner = _shape_element(el)
        if inner is not None:
            return inner
    return None


def _declared_width(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The unpadded name ``fn`` declares as an output width: returned, or an
    element of a shape display it returns or binds to a name; None when it
    returns nothing."""
    returns = False
    found: ast.expr | None = None
    for n in ast_walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            returns = True
            if is_unpadded_name(ast_dotted(n.value)):
                return n.value
            found = found or _shape_element(n.value)
        elif isinstance(n, ast.Assign) and found is None:
            found = _shape_element(n.value)
    return found if returns else None


class UnpaddedOutputWidths(FactCollector):
    """Per module, per class, the methods declaring an unpadded output width."""

    name = "unpadded_output_widths"
    version = 1
    needles = Needles(regex=_UNPADDED_NEEDLE)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        out: dict[str, dict[str, Any]] = {}
        for local, node in _classes(tree.body):
            for fn in _methods(node):
                if fn.name == "__init__":
                    continue
                w = _declared_width(fn)
                if w is not None:
                    out.setdefault(local, {})[fn.name] = {
                        "width": ast_dotted(w),
                        "path": path,
                        "line": w.lineno,
                        "col": w.col_offset,
                        "end_line": w.end_lineno or w.lineno,
                        "end_col": w.end_col_offset or 0,
                    }
        return out or None

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> UnpaddedOutputs:
        return UnpaddedOutputs(per_module)


@dataclass(frozen=True)
class UnpaddedDeclaration:
    owner: str  # qualified class name
    method: str
    width: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int


class UnpaddedOutputs:
    """The index of ``unpadded_output_widths``: the declarations by method name."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._by_method: dict[str, list[UnpaddedDeclaration]] = {}
        for module, classes in per_module.items():
            for local, methods in (classes or {}).items():
                for method, d in methods.items():
                    declaration = UnpaddedDeclaration(f"{module}.{local}", method, **d)
                    self._by_method.setdefault(method, []).append(declaration)

    def implementations(
        self, interface: str, method: str, classes: ClassIndex
    ) -> list[UnpaddedDeclaration]:
        """Declarations in ``method`` by ``interface`` or a class deriving from it."""
        return [
            d
            for d in self._by_method.get(method, ())
            if any(q == interface for q, _ in classes.mro(d.owner))
        ]


def _annotation_name(node: ast.expr | None) -> str | None:
    """``X`` of ``X``, ``mod.X``, ``"X"``, ``X | None``, ``Optional[X]``."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                return _annotation_name(side)
        return None
    if isinstance(node, ast.Subscript) and ast_dotted(node.value) in ("Optional", "typing.Optional"):
        return _annotation_name(node.slice)
    return ast_dotted(node)


def _component_types(cls: ast.ClassDef) -> dict[str, str]:
    out: dict[str, str] = {}
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            t = _annotation_name(st.annotation)
            if t:
                out[st.target.id] = t
    for fn in _methods(cls):
        args = [*fn.args.args, *fn.args.kwonlyargs] if fn.name == "__init__" else []
        params = {a.arg: _annotation_name(a.annotation) for a in args}
        for n in ast_walk(fn):
            if isinstance(n, ast.AnnAssign):
                target, t = n.target, _annotation_name(n.annotation)
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Name):
                target, t = n.targets[0], params.get(n.value.id)
            else:
                continue
            if (
                t
                and isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                out.setdefault(target.attr, t)
    return out


class ComponentTypes(FactCollector):
    """Per class, the declared types of the components it holds."""

    name = "component_types"
    version = 1
    needles = Needles(all_of=("class ", "self."))
    # the rule asks for the module it checks, only when a method allocates
    # an output from its input and hands it to a call with another result
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        out = {}
        for local, node in _classes(tree.body):
            types = _component_types(node)
            if types:
                out[local] = types
        return out or None
