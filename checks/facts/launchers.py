"""Fact collector ``kernel_launchers`` (read by SHD101): per module, the
module-level functions that hand one of their own parameters to a kernel
launch, ``K[grid](..., BLOCK=block)``, directly or through a local name
bound only to it. A block computed in one function and passed to such a
launcher, in the same module or another, reaches the kernel's needs
(``checks.facts.kernels``). Read from the file's ``ast``; which callee is a
kernel is decided when the rule looks the kernel up.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checks.facts.common import decorator_names, param_names
from linter.astwalk import ast_dotted
from linter.facts import FactCollector
from linter.imports import imports_from_ast, qualify
from linter.needles import Needles


@dataclass(frozen=True)
class Forward:
    """A launcher's parameter handed to a kernel by keyword (``arg``)."""

    param: str
    kernel: str  # the kernel's qualified name, through the module's imports
    arg: str
    line: int


@dataclass(frozen=True)
class Launcher:
    path: str
    params: tuple[str, ...]
    forwards: tuple[Forward, ...]

    @staticmethod
    def from_json(d: Mapping[str, Any], path: str) -> Launcher:
        return Launcher(
            path,
            tuple(d.get("params", ())),
            tuple(Forward(**f) for f in d.get("forwards", ())),
        )


def _aliases(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> dict[str, str]:
    """Local names bound exactly once, to a parameter (``blk = block``)."""
    binds: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        binds.setdefault(n.id, []).append(node.value if t is n else node)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    binds.setdefault(n.id, []).append(node)
    out = {p: p for p in params if p not in binds}
    for name, values in binds.items():
        if name not in params and len(values) == 1:
            v = values[0]
            if isinstance(v, ast.Name) and v.id in out:
                out[name] = out[v.id]
    return out


def launcher_facts(tree: ast.Module, module: str, path: str) -> dict[str, Any] | None:
    imports = imports_from_ast(tree, module, path)
    functions: dict[str, Any] = {}
    for st in tree.body:
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
            d.endswith("jit") for d in decorator_names(st)
        ):
            continue
        params = param_names(st)
        alias = _aliases(st, set(params))
        forwards = []
        for node in ast.walk(st):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
                continue
            kname = ast_dotted(node.func.value)
            if not kname or kname.split(".", 1)[0] in ("self", "cls"):
                continue
            kernel = qualify(kname, module, imports)
            # keywords only: blocks are constexprs passed by name; positional
            # arguments are mostly tensors and strides (a missed finding at
            # worst, never a false one)
            for k in node.keywords:
                if k.arg and isinstance(k.value, ast.Name) and k.value.id in alias:
                    forwards.append(
                        {
                            "param": alias[k.value.id],
                            "kernel": kernel,
                            "arg": k.arg,
                            "line": node.lineno,
                        }
                    )
        if forwards:
            functions[st.name] = {"params": params, "forwards": forwards}
    return {"path": path, "functions": functions} if functions else None


class KernelLaunchers(FactCollector):
    """Functions that pass a parameter of theirs to a kernel launch."""

    name = "kernel_launchers"
    version = 1
    # a launch is a call of a subscript: ``K[grid](``
    needles = Needles(regex=r"\]\s*\(")
    lazy = True  # (looked up per module, from a call of the launcher)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return launcher_facts(tree, module, path)


def find_launcher(per_module: Mapping[str, Any], qualname: str) -> tuple[str, Launcher] | None:
    """(module, launcher) of the function ``qualname`` names, if it is one."""
    module, _, name = qualname.rpartition(".")
    data = per_module.get(module) if module else None
    fn = (data or {}).get("functions", {}).get(name)
    return (module, Launcher.from_json(fn, data.get("path", ""))) if fn else None
