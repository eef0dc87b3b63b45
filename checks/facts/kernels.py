"""Fact collectors ``triton_kernels`` and ``facade_imports`` (read by SHD101).

``triton_kernels``: per module, the decorated module-level functions whose
parameters a Triton kernel body needs

- to be a power of two (block shapes: ``tl.arange``, ``tl.zeros``,
  ``tl.full``, ``tl.reshape``, ``tl.broadcast_to``, ``block_shape=``): the
  kernel fails to compile otherwise;
- to divide something: ``tl.static_assert(X % P == 0)`` (a compile error),
  an ``assert X % P == 0`` in the kernel (a ``device_assert``, checked only
  in Triton's debug mode), or a program's group index computed as
  ``pid // tl.cdiv(G, P)`` (a tile of ``P`` rows assumed to lie in one group
  of ``G``: one that straddles two groups computes the second group's rows
  with the first group's data, silently);
- to be a multiple of a literal: ``tl.static_assert(P % 8 == 0)``;

each also when the kernel hands the parameter to another decorated function
of the module that needs it. Plus the module's top-level ``from``-imports,
so that a launch can be followed through a package that re-exports the
kernel. ``facade_imports``: the ``from``-imports of small import-only
modules (package ``__init__`` files) a kernel may be re-exported through.

Which decorators make a kernel is a rule option (``kernel-decorators``), and
collectors do not see rule options, so every decorated function with such a
parameter use is recorded with its decorator names; the rule filters.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from checks.facts.common import (
    Lookup,
    decorator_names,
    module_splits,
    param_names,
    source_lines,
    span,
)
from linter.astwalk import ast_dotted, module_statements
from linter.facts import FactCollector
from linter.imports import top_level_from_imports
from linter.needles import Needles

# Calls whose shape arguments Triton requires to be powers of two. ``arange``
# takes (start, end); the others take a shape (first positional or ``shape=``).
_SHAPE_ARG_INDEX = {"zeros": 0, "full": 0, "reshape": 1, "broadcast_to": 1}
_OPS = ("arange", "zeros", "full", "reshape", "broadcast_to", "static_assert", "make_block_ptr")
# ceiling-division spellings of "tiles per group" (``tl.cdiv(G, P)``)
_CDIV = ("cdiv", "ceil_div", "ceildiv", "div_up")

# Prefilters (both start with a literal, so that ``re`` can skip ahead).
# A kernel fact needs a ``tl.<shape op>(`` call or a ``tl.program_id(`` (a
# group index, an assert) in a module mentioning triton (``triton.language``
# imported under another alias is not seen).
_KERNEL_NEEDLE = r"tl\.(?:" + "|".join((*_OPS, "program_id")) + r")\s*\("
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


def _need(kind: str, text: str, **extra: Any) -> dict[str, Any]:
    """One need, before its place is known (``_direct_needs`` adds op and span)."""
    return {"kind": kind, "text": text, **{k: v for k, v in extra.items() if v is not None}}


def _mod_terms(test: ast.AST) -> Iterator[ast.BinOp]:
    """The ``A % B`` terms of a condition."""
    for sub in ast.walk(test):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mod):
            yield sub


def _call_needs(call: ast.Call, op: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, need) pairs a Triton call imposes on bare names among its
    arguments; the caller keeps those that are kernel parameters."""
    out: list[tuple[str, dict[str, Any]]] = []
    if op == "arange":
        # tl.arange(0, P) needs P to be a power of two; with a non-zero start
        # only the difference does, which a single name cannot show.
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        start = call.args[0] if call.args else kw.get("start")
        end = call.args[1] if len(call.args) > 1 else kw.get("end")
        if isinstance(start, ast.Constant) and start.value == 0 and isinstance(end, ast.Name):
            out.append((end.id, _need("pow2", ast.unparse(call), effect="compile")))
    elif op == "static_assert":
        cond = call.args[0] if call.args else None
        for sub in _mod_terms(cond) if cond is not None else ():
            text = ast.unparse(cond) if cond is not None else ""
            if isinstance(sub.right, ast.Name):
                dividend = sub.left.id if isinstance(sub.left, ast.Name) else None
                need = _need("div", text, other=dividend, effect="compile")
                out.append((sub.right.id, need))
            elif (
                isinstance(sub.left, ast.Name)
                and isinstance(sub.right, ast.Constant)
                and isinstance(sub.right.value, int)
                and sub.right.value > 1
            ):
                need = _need("multiple", text, factor=sub.right.value, effect="compile")
                out.append((sub.left.id, need))
    else:
        if op == "make_block_ptr":
            shape = next((k.value for k in call.keywords if k.arg == "block_shape"), None)
        else:
            idx = _SHAPE_ARG_INDEX[op]
            shape = call.args[idx] if len(call.args) > idx else None
            shape = next((k.value for k in call.keywords if k.arg == "shape"), shape)
        elements = shape.elts if isinstance(shape, (ast.List, ast.Tuple)) else [shape]
        out += [
            (el.id, _need("pow2", ast.unparse(call), effect="compile"))
            for el in elements
            if isinstance(el, ast.Name)
        ]
    return out


def _op_calls(fn: ast.FunctionDef, tl: set[str]) -> list[tuple[ast.Call, str]]:
    """The ``tl.<op>(...)`` calls in ``fn``'s signature and body (nested
    functions included, decorators not), with the op."""
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
    return calls


def _body_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    return [n for st in fn.body for n in ast.walk(st)]


def _assert_needs(fn: ast.FunctionDef) -> Iterator[tuple[ast.AST, str, dict[str, Any]]]:
    """``assert A % P == 0`` in a kernel: Triton compiles it to a
    ``device_assert``, checked only in debug mode."""
    for node in _body_nodes(fn):
        if isinstance(node, ast.Assert):
            for sub in _mod_terms(node.test):
                if isinstance(sub.right, ast.Name):
                    dividend = sub.left.id if isinstance(sub.left, ast.Name) else None
                    need = _need(
                        "div", "assert " + ast.unparse(node.test), other=dividend, effect="debug"
                    )
                    yield node, sub.right.id, need


def _cdiv_of(e: ast.AST, params: set[str]) -> tuple[str, str] | None:
    """(G, P) of ``cdiv(G, P)`` (any spelling, ``tl.``/``triton.`` or not),
    ``(G + P - 1) // P`` or ``G // P``, G and P kernel parameters."""
    if (
        isinstance(e, ast.Call)
        and len(e.args) == 2
        and (ast_dotted(e.func) or "").rsplit(".", 1)[-1] in _CDIV
    ):
        g, p = e.args
    elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv):
        g, p = e.left, e.right
        if isinstance(g, ast.BinOp):  # (G + P - 1) // P
            g = next(
                (
                    n
                    for n in ast.walk(g)
                    if isinstance(n, ast.Name) and n.id in params and n.id != getattr(p, "id", None)
                ),
                None,
            )
    else:
        return None
    if isinstance(g, ast.Name) and isinstance(p, ast.Name) and g.id in params and p.id in params:
        return g.id, p.id
    return None


def _group_needs(
    fn: ast.FunctionDef, params: set[str]
) -> Iterator[tuple[ast.AST, str, dict[str, Any]]]:
    """A program's group index ``pid // tl.cdiv(G, P)`` (the divisor spelled
    there or bound to a name first): the program's tile of ``P`` rows is
    taken to lie in one group of ``G`` rows, true only when ``P`` divides
    ``G`` (or ``P >= G`` where the kernel clips the tile to the group)."""
    nodes = _body_nodes(fn)
    pid: set[str] = set()
    tiles: dict[str, tuple[str, str, str]] = {}
    assigns = [
        n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
    ]

    def from_pid(e: ast.AST) -> bool:
        return any(
            (isinstance(n, ast.Name) and n.id in pid)
            or (isinstance(n, ast.Call) and (ast_dotted(n.func) or "").endswith("program_id"))
            for n in ast.walk(e)
        )

    for _ in range(3):  # names derived from a program id, through a few hops
        for a in assigns:
            targets = a.targets if isinstance(a, ast.Assign) else [a.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id not in params:
                    if from_pid(a.value):
                        pid.add(t.id)
                    got = _cdiv_of(a.value, params)
                    if got is not None:
                        tiles[t.id] = (*got, ast.unparse(a.value))
    for node in nodes:
        if not (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.FloorDiv)
            and from_pid(node.left)
        ):
            continue
        right = node.right
        if isinstance(right, ast.Name) and right.id in tiles:
            g, p, value = tiles[right.id]
            text = f"{ast.unparse(node.left)} // {value}"
        else:
            got = _cdiv_of(right, params)
            if got is None:
                continue
            g, p = got
            text = ast.unparse(node)
        yield node, p, _need("div", text, other=g, effect="silent", group=True)


def _add_need(found: list[dict[str, Any]], need: dict[str, Any]) -> bool:
    """Add ``need`` unless one of its kind and effect is there already."""
    if any(n["kind"] == need["kind"] and n.get("effect") == need.get("effect") for n in found):
        return False
    found.append(need)
    return True


def _direct_needs(
    fn: ast.FunctionDef, tl: set[str], lines: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """A decorated function's own needs per parameter: the first of each
    kind and effect, in source order."""
    pset = set(param_names(fn))
    found: list[tuple[ast.AST, str, str, dict[str, Any]]] = []
    for call, op in _op_calls(fn, tl):
        found += [(call, name, f"tl.{op}", need) for name, need in _call_needs(call, op)]
    found += [(node, name, "assert", need) for node, name, need in _assert_needs(fn)]
    found += [(node, name, "group index", need) for node, name, need in _group_needs(fn, pset)]
    found.sort(key=lambda f: (getattr(f[0], "lineno", 0), getattr(f[0], "col_offset", 0)))
    needs: dict[str, list[dict[str, Any]]] = {}
    for node, name, op, need in found:
        if name in pset:
            _add_need(needs.setdefault(name, []), {**need, "op": op, "span": span(node, lines)})
    return needs


def _inherit(
    fns: Mapping[str, ast.FunctionDef], needs: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    """A kernel that hands its parameter to another decorated function of
    the module (``_tile(x, BLOCK)``) takes on that function's needs for it
    (to a fixed point: helpers of helpers)."""
    changed = True
    while changed:
        changed = False
        for name, fn in fns.items():
            mine = needs.setdefault(name, {})
            pset = set(param_names(fn))
            for node in _body_nodes(fn):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                callee = node.func.id
                if callee == name or callee not in fns or not needs.get(callee):
                    continue
                cparams = param_names(fns[callee])
                pairs = [
                    (cparams[i], a)
                    for i, a in enumerate(node.args)
                    if i < len(cparams) and not isinstance(a, ast.Starred)
                ]
                pairs += [(k.arg, k.value) for k in node.keywords if k.arg]
                for cparam, arg in pairs:
                    if not (isinstance(arg, ast.Name) and arg.id in pset):
                        continue
                    for need in needs[callee].get(cparam, ()):
                        other = need.get("other")
                        # the dividend named in the helper is the helper's parameter
                        renamed = {**need, "via": need.get("via") or callee}
                        if other is not None:
                            back = next(
                                (a.id for p, a in pairs if p == other and isinstance(a, ast.Name)),
                                None,
                            )
                            renamed["other"] = back if back in pset else None
                        if _add_need(mine.setdefault(arg.id, []), renamed):
                            changed = True


def collect_facts(tree: ast.Module, text: str, module: str, path: str) -> dict[str, Any] | None:
    """The ``triton_kernels`` facts of one module; None when it has neither
    kernels nor ``from``-imports."""
    imports = top_level_from_imports(tree, module, path)
    tl = _tl_aliases(tree)
    fns = {
        st.name: st
        for st in module_statements(tree.body)
        if isinstance(st, ast.FunctionDef) and st.decorator_list
    }
    lines = source_lines(text)
    needs = {name: _direct_needs(fn, tl, lines) for name, fn in fns.items()}
    _inherit(fns, needs)
    kernels: dict[str, Any] = {}
    for name, fn in fns.items():
        if not needs.get(name):
            continue
        kernels[name] = {
            "line": fn.lineno,
            "decorators": decorator_names(fn),
            "params": param_names(fn),
            "needs": needs[name],
        }
    if not kernels and not imports:
        return None
    return {"path": path, "kernels": kernels, "imports": imports}


class TritonKernels(FactCollector):
    """Kernels and their parameter needs, plus the module's ``from``-imports
    (a kernel module may re-export another's kernel)."""

    name = "triton_kernels"
    version = 4  # 4: asserts, group indices, multiples, needs of helpers
    needles = Needles(all_of=("triton",), regex=_KERNEL_NEEDLE)
    # SHD101 looks kernels up by qualified name (a launch's callee, followed
    # through re-exports): read per module on demand, not by the scan
    lazy = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return collect_facts(tree, text, module, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> KernelIndex:
        return KernelIndex(per_module)


class FacadeImports(FactCollector):
    """``from``-imports of small import-only modules (package ``__init__``
    files), through which a kernel can be re-exported."""

    name = "facade_imports"
    version = 3  # 3: read from the ast alone
    needles = Needles(regex=_FACADE_NEEDLE)
    lazy = True  # (looked up per module, while following a re-export)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return top_level_from_imports(tree, module, path) or None


@dataclass(frozen=True)
class Need:
    """What a kernel needs of one parameter ``P``."""

    # "pow2": a power of two; "div": ``P`` divides something (``other``, the
    # parameter holding the dividend, when it is a plain one); "multiple":
    # ``P`` is a multiple of ``factor``
    kind: str
    op: str  # what imposes it: "tl.arange", "tl.static_assert", "assert", "group index"
    span: tuple[int, int, int, int]
    text: str = ""  # the code that imposes it, on one line
    # what a value that fails it does: "compile" (the kernel does not
    # compile), "debug" (an assert checked only in Triton's debug mode),
    # "silent" (a wrong result)
    effect: str = "compile"
    other: str | None = None
    factor: int | None = None
    group: bool = False  # a group index (``pid // tl.cdiv(G, P)``)
    via: str | None = None  # the helper the kernel hands the parameter to


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
                p: tuple(Need(**{**n, "span": tuple(n["span"])}) for n in lst)
                for p, lst in d.get("needs", {}).items()
            },
        )


class KernelIndex:
    """Kernels by qualified name (``kernels.get``, ``in``) and the kernel
    modules' ``from``-imports (``imports.get``), each looked up in the module
    that may hold it (the facts are lazy: every lookup goes through the
    per-module mapping, which records it)."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._modules = per_module
        self.kernels = Lookup(self._kernel)
        self.imports = Lookup(self._imports)

    def _kernel(self, qualname: str) -> KernelFacts | None:
        for mod, local in module_splits(qualname):
            data = self._modules.get(mod)
            k = data.get("kernels", {}).get(local) if data else None
            if k is not None:
                return KernelFacts.from_json(k, data.get("path", ""))
        return None

    def _imports(self, module: str) -> Mapping[str, str] | None:
        data = self._modules.get(module)
        return data.get("imports") if data else None


def collect_text(
    text: str, module: str, path: str, tree: Callable[[], ast.Module | None]
) -> dict[str, KernelFacts]:
    """The kernels of one text, outside the project facts (the file under
    check, whose text may not be the one saved): by qualified name.
    ``tree`` gives the text's ``ast`` (``RuleContext.ast_tree``)."""
    # the needles first: most launching files define no kernel themselves
    if not TritonKernels.needles.match(text):
        return {}
    parsed = tree()
    if parsed is None:
        return {}
    data = collect_facts(parsed, text, module, path) or {}
    prefix = f"{module}." if module else ""
    return {
        f"{prefix}{n}": KernelFacts.from_json(f, path) for n, f in data.get("kernels", {}).items()
    }
