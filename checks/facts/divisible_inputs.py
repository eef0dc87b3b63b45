"""Divisible inputs (read by SHD101 from the file under check): the
tensor parameters of module-level functions whose callers prove a dimension
divisible by a constant.

A function ``f(x)`` whose every call in the module passes, for ``x``,
``None`` or a tensor ``t`` known to satisfy ``t.shape[k] % D == 0`` at that
point records ``{"f": {"x": [[k, D], ...]}}``. Known at a call:

- an argument under a test that says so: ``t if t.shape[-1] % 2048 == 0
  else None``, or a name bound once to such a test (``ok = ... and
  t.shape[-1] % 2048 == 0``, then ``t if ok else None``);
- ``var.get()`` of a module-level ``ContextVar`` (default ``None``) whose
  every ``var.set(v)`` in the module sets such a value.

Read from the file's ``ast``; a function with no call in the module proves
nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from checks.facts.common import param_names
from linter.astwalk import ast_dotted
from linter.needles import Needles

# a test of a remainder by a literal: ``% 2048 == 0``
NEEDLES = Needles(regex=r"%\s*\d+\s*==\s*0")

# (dimension as written, divisor); ALL: a value that is never a tensor (None)
Proof = frozenset[tuple[str, int]]
ALL = frozenset({("*", 0)})


def _dim(e: ast.AST) -> tuple[str, str] | None:
    """(tensor code, dimension) of ``t.shape[k]`` or ``t.size(k)``."""
    if (
        isinstance(e, ast.Subscript)
        and isinstance(e.value, ast.Attribute)
        and e.value.attr == "shape"
    ):
        return ast.unparse(e.value.value), ast.unparse(e.slice)
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "size"
        and len(e.args) == 1
    ):
        return ast.unparse(e.func.value), ast.unparse(e.args[0])
    return None


def _conjuncts(test: ast.AST) -> Iterator[ast.AST]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            yield from _conjuncts(v)
    else:
        yield test


def _facts_of_test(test: ast.AST, bound: dict[str, list[ast.AST]]) -> set[tuple[str, str, int]]:
    """(tensor code, dimension, divisor) that hold when ``test`` is true."""
    if isinstance(test, ast.Name) and len(bound.get(test.id, ())) == 1:
        test = bound[test.id][0]
    out: set[tuple[str, str, int]] = set()
    for c in _conjuncts(test):
        if not (
            isinstance(c, ast.Compare)
            and len(c.ops) == 1
            and isinstance(c.ops[0], ast.Eq)
            and isinstance(c.comparators[0], ast.Constant)
            and c.comparators[0].value == 0
            and isinstance(c.left, ast.BinOp)
            and isinstance(c.left.op, ast.Mod)
            and isinstance(c.left.right, ast.Constant)
            and isinstance(c.left.right.value, int)
        ):
            continue
        dim = _dim(c.left.left)
        if dim is not None and c.left.right.value > 0:
            out.add((*dim, c.left.right.value))
    return out


class _Module:
    def __init__(self, tree: ast.Module) -> None:
        # per scope (its id), the values bound to each name (``x = value``)
        self.bound_in: dict[int, dict[str, list[ast.AST]]] = {}
        self.sets: dict[str, list[tuple[ast.AST, ast.AST]]] = {}
        self.calls: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
        self.module_values: dict[str, list[ast.AST]] = {}
        for st in tree.body:
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.module_values.setdefault(t.id, []).append(st.value)
        self._scan(tree, tree)

    def _scan(self, scope: ast.AST, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            inner = (
                child
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                else scope
            )
            if (
                isinstance(child, ast.Assign)
                and len(child.targets) == 1
                and isinstance(child.targets[0], ast.Name)
            ):
                self.bound_in.setdefault(id(scope), {}).setdefault(child.targets[0].id, []).append(
                    child.value
                )
            elif isinstance(child, ast.Call):
                name = ast_dotted(child.func)
                if name and name.endswith(".set") and len(child.args) == 1:
                    self.sets.setdefault(name[: -len(".set")], []).append((child.args[0], scope))
                elif isinstance(child.func, ast.Name):
                    self.calls.setdefault(child.func.id, []).append((child, scope))
            self._scan(inner, child)

    def proofs(self, e: ast.AST, scope: ast.AST, depth: int = 0) -> Proof:
        """What every value ``e`` may take is known to satisfy."""
        if depth > 6:
            return frozenset()
        bound = self.bound_in.get(id(scope), {})
        if isinstance(e, ast.Constant) and e.value is None:
            return ALL
        if isinstance(e, ast.IfExp):
            known = {
                (d, k) for t, d, k in _facts_of_test(e.test, bound) if t == ast.unparse(e.body)
            }
            body = self.proofs(e.body, scope, depth + 1) | frozenset(known)
            return _meet(body, self.proofs(e.orelse, scope, depth + 1))
        if isinstance(e, ast.Name) and len(bound.get(e.id, ())) == 1:
            return self.proofs(bound[e.id][0], scope, depth + 1)
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr == "get"
            and not e.args
            and isinstance(e.func.value, ast.Name)
        ):
            var = e.func.value.id
            decl = self.module_values.get(var, [])
            if len(decl) != 1 or not _none_default(decl[0]) or var not in self.sets:
                return frozenset()
            out = ALL
            for value, where in self.sets[var]:
                out = _meet(out, self.proofs(value, where, depth + 1))
            return out
        return frozenset()


def _none_default(decl: ast.AST) -> bool:
    """``ContextVar(name)`` or ``ContextVar(name, default=None)``."""
    if not (isinstance(decl, ast.Call) and (ast_dotted(decl.func) or "").endswith("ContextVar")):
        return False
    default = next((k.value for k in decl.keywords if k.arg == "default"), None)
    return default is None or (isinstance(default, ast.Constant) and default.value is None)


def _meet(a: Proof, b: Proof) -> Proof:
    if a == ALL:
        return b
    if b == ALL:
        return a
    return a & b


def divisible_inputs(tree: ast.Module) -> dict[str, Any]:
    mod = _Module(tree)
    out: dict[str, Any] = {}
    for st in tree.body:
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) or st.name not in mod.calls:
            continue
        found: dict[str, list[list[Any]]] = {}
        for i, p in enumerate(param_names(st)):
            proof = ALL
            for call, scope in mod.calls[st.name]:
                arg = (
                    call.args[i]
                    if i < len(call.args)
                    and not any(isinstance(a, ast.Starred) for a in call.args[: i + 1])
                    else next((k.value for k in call.keywords if k.arg == p), None)
                )
                proof = _meet(proof, mod.proofs(arg, scope) if arg is not None else frozenset())
            if proof and proof != ALL:
                found[p] = sorted([d, k] for d, k in proof)
        if found:
            out[st.name] = found
    return out


def collect_text(text: str, tree: Callable[[], ast.Module | None]) -> dict[str, Any]:
    """The facts of the text under check (which may not be the saved one);
    ``tree`` gives its ``ast`` (``RuleContext.ast_tree``)."""
    if not NEEDLES.match(text):
        return {}
    parsed = tree()
    return divisible_inputs(parsed) if parsed is not None else {}
