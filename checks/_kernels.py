"""Fact collector ``triton_kernels``: per module, the decorated functions whose
parameters a Triton kernel body needs to be a power of two (block shapes:
``tl.arange``, ``tl.zeros``, ``tl.full``, ``tl.reshape``, ``block_shape=``) or
to divide something (``tl.static_assert(X % P == 0)``), plus the module's
``from``-imports so that a launch can be followed through a package that
re-exports the kernel.

Runs on CPython ``ast``. Which decorators make a kernel is a rule option
(``kernel-decorators``), and collectors do not see rule options, so every
decorated function with such a parameter use is recorded together with its
decorator names; the rule filters.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checks._helpers import ast_dotted
from checks._imports import is_package_path, resolve_relative
from linter.facts import FactCollector
from linter.needles import Needles

# Calls whose shape arguments Triton requires to be powers of two. ``arange``
# takes (start, end); the others take a shape (first positional or ``shape=``).
_SHAPE_CALLS = frozenset({"zeros", "full", "reshape", "broadcast_to"})
_SHAPE_ARG_INDEX = {"zeros": 0, "full": 0, "reshape": 1, "broadcast_to": 1}

# Prefilters. Both regexes start with a literal so that ``re.search`` can
# skip ahead (an alternation or a leading ``\b``/lookahead makes it try every
# offset, 20x slower over a whole tree).
# A kernel fact needs a ``tl.<shape op>(`` call in a module mentioning triton
# (``triton.language`` imported under another alias is not seen).
_OPS = r"arange|zeros|full|reshape|broadcast_to|static_assert|make_block_ptr"
_KERNEL_NEEDLE = r"tl\.(?:" + _OPS + r")\s*\("
# A re-exporting facade (a package ``__init__``): a top-level relative import,
# no top-level ``def``/``class`` after it, less than 16 kB after it. Larger
# modules that re-export are not followed: a missed finding, never a false
# one; parsing every module for them would cost more than it is worth.
_FACADE_NEEDLE = r"from(?<=^from)[ \t]+\.(?![\s\S]*?^(?:def|class|async)\s)(?![\s\S]{16385})"


def _tl_aliases(tree: ast.Module) -> set[str]:
    """Local names standing for ``triton.language`` (``tl`` by convention),
    from module-level imports (a full ``ast.walk`` would cost more than the
    rest of the collector)."""
    out = {"tl", "triton.language"}
    for st in _module_statements(tree.body):
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


# ``tl.arange(`` and friends, with the head captured: walking every kernel's
# AST in Python costs more than the parse; finding the few calls by regex and
# parsing each call's text alone is several times cheaper.
_OP_CALL = re.compile(r"([A-Za-z_][\w.]*)\.(" + _OPS + r")\s*\(")


def _balanced_end(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, min(len(text), open_at + 4000)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _kernel_facts(fns: list[ast.FunctionDef], tl: set[str], text: str) -> dict[str, dict[str, Any]]:
    """Facts of the decorated functions ``fns`` (sorted by line)."""
    line_starts = [0]
    line_starts += itertools.accumulate(len(line) + 1 for line in text.split("\n"))

    def pos(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1]

    starts = [f.lineno for f in fns]
    needs: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for m in _OP_CALL.finditer(text):
        if m.group(1) not in tl:
            continue
        line, col = pos(m.start())
        i = bisect.bisect_right(starts, line) - 1
        if i < 0 or line > (fns[i].end_lineno or fns[i].lineno):
            continue
        line_text = text[line_starts[line - 1] : m.start()]
        if "#" in line_text:
            continue  # most likely a comment
        params = _params(fns[i])
        end = _balanced_end(text, m.end() - 1)
        if end < 0:
            continue
        try:
            call = ast.parse(text[m.start() : end], mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call):
            continue
        for name, kind in _call_needs(call, m.group(2)):
            if name not in params:
                continue
            lst = needs.setdefault(i, {}).setdefault(name, [])
            if not any(n["kind"] == kind for n in lst):
                end_line, end_col = pos(end)
                lst.append(
                    {"kind": kind, "op": f"tl.{m.group(2)}", "span": [line, col, end_line, end_col]}
                )
    out: dict[str, dict[str, Any]] = {}
    for i, fn_needs in needs.items():
        fn = fns[i]
        decorators = []
        for d in fn.decorator_list:
            name = ast_dotted(d.func if isinstance(d, ast.Call) else d)
            if name:
                decorators.append(name)
        out[fn.name] = {
            "line": fn.lineno,
            "decorators": decorators,
            "params": _params(fn),
            "needs": fn_needs,
        }
    return out


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]


def _module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, also under ``if``/``try`` (kernels and
    imports guarded by "is Triton available")."""
    out: list[ast.stmt] = []
    stack = list(body)
    while stack:
        st = stack.pop()
        out.append(st)
        if isinstance(st, ast.If):
            stack.extend(st.body + st.orelse)
        elif isinstance(st, ast.Try):
            stack.extend(st.body + st.orelse + st.finalbody)
            for h in st.handlers:
                stack.extend(h.body)
    return out


def _top_level_functions(body: list[ast.stmt]) -> list[ast.FunctionDef]:
    return [st for st in _module_statements(body) if isinstance(st, ast.FunctionDef)]


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


class TritonKernels(FactCollector):
    """Kernels and their parameter needs, plus the module's ``from``-imports
    (a kernel module may re-export another's kernel)."""

    name = "triton_kernels"
    version = 1
    needles = Needles(all_of=("triton",), regex=_KERNEL_NEEDLE)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        imports = _from_imports(tree, module, path)
        tl = _tl_aliases(tree)
        fns = sorted(
            (f for f in _top_level_functions(tree.body) if f.decorator_list),
            key=lambda f: f.lineno,
        )
        kernels = _kernel_facts(fns, tl, text) if fns else {}
        if not kernels and not imports:
            return None
        return {"path": path, "kernels": kernels, "imports": imports}

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> KernelIndex:
        idx = KernelIndex()
        for mod, data in per_module.items():
            idx.imports[mod] = data.get("imports", {})
            for name, facts in data.get("kernels", {}).items():
                idx.kernels[f"{mod}.{name}" if mod else name] = KernelFacts.from_json(
                    facts, data.get("path", "")
                )
        return idx


class FacadeImports(FactCollector):
    """``from``-imports of small import-only modules (package ``__init__``
    files), through which a kernel can be re-exported."""

    name = "facade_imports"
    version = 1
    needles = Needles(regex=_FACADE_NEEDLE)

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


@dataclass
class KernelIndex:
    kernels: dict[str, KernelFacts] = field(default_factory=dict)
    imports: dict[str, Mapping[str, str]] = field(default_factory=dict)


def collect_text(text: str, module: str, path: str) -> dict[str, KernelFacts]:
    """The kernels of one text, outside the project facts (the file under
    check when facts were not collected for it)."""
    # the needles first: most launching files define no kernel themselves,
    # and the text was already parsed once for this check
    if not TritonKernels.needles.match(text):
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    data = TritonKernels.collect(tree, text, module, path) or {}
    prefix = f"{module}." if module else ""
    return {
        f"{prefix}{n}": KernelFacts.from_json(f, path) for n, f in data.get("kernels", {}).items()
    }
