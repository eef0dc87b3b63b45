"""Fact collectors ``triton_kernels`` and ``facade_imports`` (read by SHD101).

``triton_kernels``: per module, the decorated module-level functions whose
parameters a Triton kernel body needs to be a power of two (block shapes:
``tl.arange``, ``tl.zeros``, ``tl.full``, ``tl.reshape``,
``tl.broadcast_to``, ``block_shape=``) or to divide something
(``tl.static_assert(X % P == 0)``), plus the module's top-level
``from``-imports, so that a launch can be followed through a package that
re-exports the kernel. ``facade_imports``: the ``from``-imports of small
import-only modules (package ``__init__`` files) a kernel may be re-exported
through. Both are read from the file's ``ast``.

Which decorators make a kernel is a rule option (``kernel-decorators``), and
collectors do not see rule options, so every decorated function with such a
parameter use is recorded together with its decorator names; the rule
filters.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from linter.astwalk import ast_dotted, module_statements
from linter.imports import is_package_path, resolve_relative
from linter.facts import FactCollector
from linter.needles import Needles

# Calls whose shape arguments Triton requires to be powers of two. ``arange``
# takes (start, end); the others take a shape (first positional or ``shape=``).
_SHAPE_ARG_INDEX = {"zeros": 0, "full": 0, "reshape": 1, "broadcast_to": 1}
_OPS = ("arange", "zeros", "full", "reshape", "broadcast_to", "static_assert", "make_block_ptr")

# Prefilters (both start with a literal, so that ``re`` can skip ahead).
# A kernel fact needs a ``tl.<shape op>(`` call in a module mentioning triton
# (``triton.language`` imported under another alias is not seen).
_KERNEL_NEEDLE = r"tl\.(?:" + "|".join(_OPS) + r")\s*\("
# A re-exporting facade (a package ``__init__``): a top-level relative import,
# no top-level ``def``/``class`` after it, less than 16 kB after it. Larger
# modules that re-export are not followed: a missed finding, never a false
# one. (Possessive loops walk the lines after the import: a keyword test per
# line start, not at every character.)
_TOP_KEYWORD = r"(?:def|class|async)\s"
_FACADE_NEEDLE = (
    r"from(?<=^from)[ \t]+\."
    r"(?![^\n]*+(?:\n(?!" + _TOP_KEYWORD + r")[^\n]*+)*+\n" + _TOP_KEYWORD + r")"
    r"(?![\s\S]{16385})"
)


def _tl_aliases(tree: ast.Module) -> set[str]:
    """Local names standing for ``triton.language`` (``tl`` by convention),
    from module-level imports."""
    out = {"tl", "triton.language"}
    for st in module_statements(tree.body):
        if isinstance(st, ast.Import):
            out |= {a.asname for a in st.names if a.name == "triton.language" and a.asname}
        elif isinstance(st, ast.ImportFrom) and st.module == "triton" and st.level == 0:
            out |= {a.asname or a.name for a in st.names if a.name == "language"}
    return out


def _shape_elements(node: ast.AST | None) -> list[ast.AST]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    return [node] if node is not None else []


def _call_needs(call: ast.Call, op: str) -> list[tuple[str, str]]:
    """(name, kind) pairs a Triton call imposes on bare names among its
    arguments; the caller keeps those that are kernel parameters."""
    out: list[tuple[str, str]] = []
    if op == "arange":
        # tl.arange(0, P) needs P to be a power of two; with a non-zero start
        # only the difference does, which a single name cannot show.
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        start = call.args[0] if call.args else kw.get("start")
        end = call.args[1] if len(call.args) > 1 else kw.get("end")
        if isinstance(start, ast.Constant) and start.value == 0 and isinstance(end, ast.Name):
            out.append((end.id, "pow2"))
    elif op == "static_assert":
        for sub in ast.walk(call.args[0]) if call.args else ():
            if (
                isinstance(sub, ast.BinOp)
                and isinstance(sub.op, ast.Mod)
                and isinstance(sub.right, ast.Name)
            ):
                out.append((sub.right.id, "div"))
    else:
        if op == "make_block_ptr":
            shape = next((k.value for k in call.keywords if k.arg == "block_shape"), None)
        else:
            idx = _SHAPE_ARG_INDEX[op]
            shape = call.args[idx] if len(call.args) > idx else None
            shape = next((k.value for k in call.keywords if k.arg == "shape"), shape)
        out += [(el.id, "pow2") for el in _shape_elements(shape) if isinstance(el, ast.Name)]
    return out


def _op_calls(fn: ast.FunctionDef, tl: set[str]) -> list[tuple[ast.Call, str]]:
    """The ``tl.<op>(...)`` calls in ``fn``'s signature and body (nested
    functions included, decorators not), in source order, with the op."""
    calls: list[tuple[ast.Call, str]] = []
    roots: list[ast.AST] = [fn.args, *fn.body]
    if fn.returns is not None:
        roots.append(fn.returns)
    for root in roots:
        for node in ast.walk(root):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _OPS
                and ast_dotted(node.func.value) in tl
            ):
                calls.append((node, node.func.attr))
    calls.sort(key=lambda c: (c[0].lineno, c[0].col_offset))
    return calls


def _column(lines: list[str], line: int, byte_col: int) -> int:
    """The code-point column of ``ast``'s UTF-8 byte column on ``line``."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]


def _kernel_facts(fn: ast.FunctionDef, tl: set[str], lines: list[str]) -> dict[str, Any] | None:
    """The facts of one decorated function: its parameters' needs (the first
    need of each kind, in source order), None when it has none."""
    params = _params(fn)
    needs: dict[str, list[dict[str, Any]]] = {}
    for call, op in _op_calls(fn, tl):
        for name, kind in _call_needs(call, op):
            if name not in params:
                continue
            lst = needs.setdefault(name, [])
            if any(n["kind"] == kind for n in lst):
                continue
            end_line = call.end_lineno or call.lineno
            span = [
                call.lineno,
                _column(lines, call.lineno, call.col_offset),
                end_line,
                _column(lines, end_line, call.end_col_offset or 0),
            ]
            lst.append({"kind": kind, "op": f"tl.{op}", "span": span})
    if not needs:
        return None
    decorators = [
        name
        for d in fn.decorator_list
        if (name := ast_dotted(d.func if isinstance(d, ast.Call) else d))
    ]
    return {"line": fn.lineno, "decorators": decorators, "params": params, "needs": needs}


def _from_imports(tree: ast.Module, module: str, path: str) -> dict[str, str]:
    """Top-level ``from X import Y [as Z]`` only: re-exports look like that."""
    pkg = is_package_path(path)
    out: dict[str, str] = {}
    for st in tree.body:
        if isinstance(st, ast.ImportFrom):
            base = resolve_relative(module, pkg, st.level, st.module)
            for a in st.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


def collect_facts(tree: ast.Module, text: str, module: str, path: str) -> dict[str, Any] | None:
    """The ``triton_kernels`` facts of one module; None when it has neither
    kernels nor ``from``-imports."""
    imports = _from_imports(tree, module, path)
    tl = _tl_aliases(tree)
    fns = sorted(
        (
            st
            for st in module_statements(tree.body)
            if isinstance(st, ast.FunctionDef) and st.decorator_list
        ),
        key=lambda f: f.lineno,
    )
    lines = text.split("\n") if fns else []
    kernels: dict[str, Any] = {}
    for fn in fns:
        facts = _kernel_facts(fn, tl, lines)
        if facts is not None:
            kernels[fn.name] = facts
    if not kernels and not imports:
        return None
    return {"path": path, "kernels": kernels, "imports": imports}


class TritonKernels(FactCollector):
    """Kernels and their parameter needs, plus the module's ``from``-imports
    (a kernel module may re-export another's kernel)."""

    name = "triton_kernels"
    version = 3  # 3: read from the ast alone
    needles = Needles(all_of=("triton",), regex=_KERNEL_NEEDLE)
    # SHD101 looks kernels up by qualified name (a launch's callee, followed
    # through re-exports): read per module on demand, not by the scan
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return collect_facts(tree, text, module, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> KernelIndex:
        return KernelIndex(_Kernels(per_module), _Imports(per_module))


class FacadeImports(FactCollector):
    """``from``-imports of small import-only modules (package ``__init__``
    files), through which a kernel can be re-exported."""

    name = "facade_imports"
    version = 3  # 3: read from the ast alone
    needles = Needles(regex=_FACADE_NEEDLE)
    lazy = True  # (looked up per module, while following a re-export)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return _from_imports(tree, module, path) or None


@dataclass(frozen=True)
class Need:
    kind: str  # "pow2" or "div"
    op: str  # the Triton call that imposes it
    span: tuple[int, int, int, int]


@dataclass(frozen=True)
class KernelFacts:
    path: str
    line: int
    decorators: tuple[str, ...]
    params: tuple[str, ...]
    needs: Mapping[str, tuple[Need, ...]]

    @staticmethod
    def from_json(d: Mapping[str, Any], path: str) -> KernelFacts:
        return KernelFacts(
            path=path,
            line=int(d.get("line", 1)),
            decorators=tuple(d.get("decorators", ())),
            params=tuple(d.get("params", ())),
            needs={
                p: tuple(Need(n["kind"], n["op"], tuple(n["span"])) for n in lst)  # type: ignore[arg-type]
                for p, lst in d.get("needs", {}).items()
            },
        )


class _Kernels(Mapping[str, KernelFacts]):
    """Kernels by qualified name, looked up in the module that may define
    them (the facts are lazy: nothing iterates every module, and every
    lookup goes through the per-module mapping, which records it)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._m = per_module

    def _find(self, qualname: object) -> KernelFacts | None:
        if not isinstance(qualname, str):
            return None
        parts = qualname.split(".")
        for i in range(len(parts) - 1, -1, -1):
            data = self._m.get(".".join(parts[:i]))
            k = data.get("kernels", {}).get(".".join(parts[i:])) if data else None
            if k is not None:
                return KernelFacts.from_json(k, data.get("path", ""))
        return None

    def get(self, qualname: str, default: Any = None) -> Any:  # type: ignore[override]
        k = self._find(qualname)
        return default if k is None else k

    def __getitem__(self, qualname: str) -> KernelFacts:
        k = self._find(qualname)
        if k is None:
            raise KeyError(qualname)
        return k

    def __contains__(self, qualname: object) -> bool:
        return self._find(qualname) is not None

    def __iter__(self) -> Iterator[str]:
        # (reads every module: for tests and tools, not for rules)
        for mod, data in self._m.items():
            for name in (data or {}).get("kernels", {}):
                yield f"{mod}.{name}" if mod else name

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Imports(Mapping[str, Mapping[str, str]]):
    """A kernel module's ``from``-imports, per module (lazy as ``_Kernels``)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._m = per_module

    def get(self, module: str, default: Any = None) -> Any:  # type: ignore[override]
        data = self._m.get(module)
        return data.get("imports", {}) if data else default

    def __getitem__(self, module: str) -> Mapping[str, str]:
        got = self.get(module)
        if got is None:
            raise KeyError(module)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._m)

    def __len__(self) -> int:
        return len(self._m)


@dataclass
class KernelIndex:
    kernels: Mapping[str, KernelFacts] = field(default_factory=dict)
    imports: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def collect_text(text: str, module: str, path: str) -> dict[str, KernelFacts]:
    """The kernels of one text, outside the project facts (the file under
    check, whose text may not be the one saved): by qualified name."""
    # the needles first: most launching files define no kernel themselves
    if not TritonKernels.needles.match(text):
        return {}
    try:
        tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    data = collect_facts(tree, text, module, path) or {}
    prefix = f"{module}." if module else ""
    return {
        f"{prefix}{n}": KernelFacts.from_json(f, path) for n, f in data.get("kernels", {}).items()
    }
