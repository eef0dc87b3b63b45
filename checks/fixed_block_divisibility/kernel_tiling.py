"""Fact collector ``kernel_tiling`` (read by SHD102 and SHD103): per module,
what each decorated module-level function (a Triton kernel, once the rule's
``kernel-decorators`` option agrees) does with its parameters:

- ``div``: ``tl.static_assert(P % Q == 0)`` (or ``assert``) between two
  parameters: a launch must pass a ``Q`` that divides ``P``;
- ``masked``: parameters a load/store mask depends on (``mask=offs < N``,
  through the kernel's own assignments), or all of them for a block pointer
  with ``boundary_check``;
- ``looped``: parameters a loop's end bound depends on (``for off in
  range(pid * B, N, step)``): the kernel walks that extent itself;
- ``grid_stride``: it reads ``tl.num_programs`` (a program may handle more
  than one block);
- ``aranged``: parameters that are the extent of ``tl.arange(0, P)`` (a
  power of two, or the kernel does not compile).

Read from CPython's ``ast``, lazily (when a launch of one of the module's
kernels is followed); :class:`KernelFinder` resolves a launch's callee,
through imports and re-exporting packages, to these facts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from linter.astwalk import ast_dotted, module_statements
from linter.facts import FactCollector
from linter.imports import follow_reexports, imports_from_ast, qualify, top_level_from_imports
from linter.needles import Needles

if TYPE_CHECKING:
    from linter.rule import RuleContext

_MEMORY_OPS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas")
_LOOPS = ("range", "static_range")


@dataclass(frozen=True)
class KernelTiling:
    name: str
    path: str
    line: int
    decorators: tuple[str, ...]
    params: tuple[str, ...]
    # (dividend param, divisor param, line of the requirement)
    div: tuple[tuple[str, str, int], ...]
    masked: frozenset[str]
    looped: frozenset[str]
    grid_stride: bool
    aranged: frozenset[str] = frozenset()

    @staticmethod
    def from_json(name: str, d: Mapping[str, Any], path: str) -> KernelTiling:
        return KernelTiling(
            name=name,
            path=path,
            line=int(d.get("line", 1)),
            decorators=tuple(d.get("decorators", ())),
            params=tuple(d.get("params", ())),
            div=tuple((str(a), str(b), int(n)) for a, b, n in d.get("div", ())),
            masked=frozenset(d.get("masked", ())),
            looped=frozenset(d.get("looped", ())),
            grid_stride=bool(d.get("grid_stride", False)),
            aranged=frozenset(d.get("aranged", ())),
        )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _closure(seeds: set[str], assigned: Mapping[str, set[str]]) -> set[str]:
    """``seeds`` and every name the kernel's assignments make them depend on."""
    out, todo = set(seeds), list(seeds)
    while todo:
        new = assigned.get(todo.pop(), set()) - out
        out |= new
        todo += new
    return out


def _mod_pair(test: ast.AST) -> tuple[str, str] | None:
    """``P % Q == 0`` (also ``0 == P % Q``) between two names."""
    match test:
        case ast.Compare(ast.BinOp(ast.Name(p), ast.Mod(), ast.Name(q)), [ast.Eq()], [ast.Constant(0)]):
            return p, q
        case ast.Compare(ast.Constant(0), [ast.Eq()], [ast.BinOp(ast.Name(p), ast.Mod(), ast.Name(q))]):
            return p, q
    return None


def _kernel(fn: ast.FunctionDef) -> dict[str, Any]:
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    pset = set(params)
    assigned: dict[str, set[str]] = {}
    mask_seeds: set[str] = set()
    loop_seeds: set[str] = set()
    aranged: set[str] = set()
    requirements: list[tuple[ast.AST, int]] = []  # asserted tests, with their line
    grid_stride = boundary = False
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            deps = _names(node.value)
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in _names(t):
                    assigned.setdefault(n, set()).update(deps)
        elif isinstance(node, ast.Assert):
            requirements.append((node.test, node.lineno))
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            callee = ast_dotted(node.iter.func) or ""
            if callee.rsplit(".", 1)[-1] in _LOOPS and len(node.iter.args) >= 2:
                # the end bound (``range(start, end[, step])``): a loop to a
                # fixed count (``range(N_BLOCKS)``) covers nothing by itself
                loop_seeds |= _names(node.iter.args[1])
        elif isinstance(node, ast.Call):
            leaf = (ast_dotted(node.func) or "").rsplit(".", 1)[-1]
            if leaf == "num_programs":
                grid_stride = True
            elif leaf == "arange":
                match node.args:
                    case [ast.Constant(0), ast.Name(extent)]:  # ``tl.arange(0, P)``
                        aranged.add(extent)
            elif leaf == "static_assert" and node.args:
                requirements.append((node.args[0], node.lineno))
            elif leaf in _MEMORY_OPS:
                for kw in node.keywords:
                    if kw.arg == "mask":
                        mask_seeds |= _names(kw.value)
                    elif kw.arg == "boundary_check":
                        boundary = True
    div = [[*pair, line] for test, line in requirements if (pair := _mod_pair(test)) and set(pair) <= pset]
    masked = pset if boundary else _closure(mask_seeds, assigned) & pset
    decorators = [
        name for d in fn.decorator_list if (name := ast_dotted(d.func if isinstance(d, ast.Call) else d))
    ]
    return {
        "line": fn.lineno,
        "decorators": decorators,
        "params": params,
        "div": div,
        "masked": sorted(masked),
        "looped": sorted(_closure(loop_seeds, assigned) & pset),
        "grid_stride": grid_stride,
        "aranged": sorted(aranged & pset),
    }


def collect_tiling(tree: ast.Module, module: str, path: str) -> dict[str, Any] | None:
    kernels = {
        st.name: _kernel(st)
        for st in module_statements(tree.body)
        if isinstance(st, ast.FunctionDef) and st.decorator_list
    }
    imports = top_level_from_imports(tree, module, path)
    if not kernels and not imports:
        return None
    return {"path": path, "kernels": kernels, "imports": imports}


class KernelTilingFacts(FactCollector):
    """Decorated functions' divisibility requirements, masks, loops and
    grid-stride use, plus the module's ``from``-imports (re-exports)."""

    name = "kernel_tiling"
    version = 2
    needles = Needles(all_of=("jit",))
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return collect_tiling(tree, module, path)


def decorated(names: Iterable[str], patterns: Iterable[str]) -> bool:
    """One of the decorator ``names`` is (or ends with ``.`` and) one of ``patterns``."""
    return any(n == p or n.endswith("." + p) for n in names for p in patterns)


class KernelFinder:
    """Resolves a launch's callee (``_kernel[grid](...)``) to its facts: in
    the file under check or, through imports and re-exporting packages, in
    another module of the project. What it reads of the file under check --
    its imports and its own kernels -- comes from the whole text
    (``RuleContext.ast_tree``), never from the regions the check parses: a
    rule that follows no definitions finds the same kernel whichever
    definitions are kept (an import inside another function included)."""

    def __init__(self, ctx: RuleContext) -> None:
        self._ctx = ctx
        self._module = ctx.module_name
        self._imports: dict[str, str] | None = None
        self._local: dict[str, KernelTiling] | None = None

    def _local_kernels(self) -> dict[str, KernelTiling]:
        """This module's kernels, as its ``kernel_tiling`` facts hold them,
        from the file's ``ast`` that the rules of this file share."""
        if self._local is None:
            tree = self._ctx.ast_tree() if KernelTilingFacts.needles.match(self._ctx.text) else None
            data = collect_tiling(tree, self._module, self._ctx.path) if tree is not None else None
            prefix = f"{self._module}." if self._module else ""
            self._local = {
                prefix + n: KernelTiling.from_json(n, f, self._ctx.path)
                for n, f in (data or {}).get("kernels", {}).items()
            }
        return self._local

    def _lookup(self, qual: str) -> KernelTiling | None:
        hit = self._local_kernels().get(qual)
        if hit is not None:
            return hit
        per_module = self._ctx.facts.raw("kernel_tiling")
        parts = qual.split(".")
        for i in range(len(parts) - 1, 0, -1):
            data = per_module.get(".".join(parts[:i]))
            k = data.get("kernels", {}).get(".".join(parts[i:])) if data else None
            if k is not None:
                return KernelTiling.from_json(".".join(parts[i:]), k, data.get("path", ""))
        return None

    def find(self, callee: str, decorators: Iterable[str]) -> KernelTiling | None:
        if callee.split(".", 1)[0] in ("self", "cls"):
            return None
        if self._imports is None:
            tree = self._ctx.ast_tree()
            self._imports = imports_from_ast(tree, self._module, self._ctx.path) if tree is not None else {}
        per_module = self._ctx.facts.raw("kernel_tiling")
        facades = self._ctx.facts.raw("facade_imports")

        def imports(m: str) -> Mapping[str, str] | None:
            data = per_module.get(m)
            return (data.get("imports") if data else None) or facades.get(m)

        qual = follow_reexports(
            qualify(callee, self._module, self._imports),
            lambda q: self._lookup(q) is not None,
            imports,
        )
        facts = self._lookup(qual)
        return facts if facts is not None and decorated(facts.decorators, decorators) else None


def launch_args(call: cst.Call, params: Sequence[str]) -> dict[str, cst.BaseExpression]:
    """What a launch ``kernel[grid](...)`` passes to each kernel parameter
    (positional arguments up to the first ``*args``, and keywords)."""
    out: dict[str, cst.BaseExpression] = {}
    i, positional = 0, True
    for a in call.args:
        if a.keyword is not None:
            out[a.keyword.value] = a.value
        elif a.star:
            positional = False
        elif positional:
            if i < len(params):
                out[params[i]] = a.value
            i += 1
    return out
