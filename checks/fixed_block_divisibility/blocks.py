"""What SHD102 and SHD103 know of one function: its bindings in order,
constant folding of a block's value (fallback chains included), whether an
expression is a runtime model dimension, and the traversal both rules share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks.fixed_block_divisibility.dims import NOT_DIMENSIONS
from checks.fixed_block_divisibility.kernel_tiling import KernelFinder, KernelTiling
from linter.syntax import (
    call_name,
    dotted,
    fold_int,
    function_params,
    int_literal,
    name_matches,
    walk,
)

OTHER = object()  # a binding that is not ``name = expr`` (loop target, ``+=``, unpacking)
MAX_DEPTH = 8


def code(node: cst.CSTNode) -> str:
    """The node's code on one line."""
    return " ".join(cst.Module(body=[]).code_for_node(node).split())


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Bindings:
    """Names bound in one scope, each with its values in source order and
    the order of its first binding."""

    values: dict[str, list[object]] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    counter: int = 0

    def bind(self, target: cst.BaseExpression, value: object) -> None:
        if isinstance(target, cst.Name):
            self.counter += 1
            self.values.setdefault(target.value, []).append(value)
            self.first.setdefault(target.value, self.counter)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.bind(el.value, OTHER)


def module_bindings(module: cst.Module) -> Bindings:
    """Module constants: assignments in the module body or under a top-level
    ``if``/``try``."""
    out = Bindings()
    stack: list[cst.CSTNode] = list(reversed(module.body))
    while stack:
        st = stack.pop()
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        out.bind(t.target, small.value)
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    out.bind(small.target, small.value)
                elif isinstance(small, cst.AugAssign):
                    out.bind(small.target, OTHER)
        elif isinstance(st, (cst.If, cst.Try, cst.Else, cst.ExceptHandler, cst.Finally)):
            if isinstance(st.body, cst.IndentedBlock):
                stack.extend(reversed(st.body.body))
            for attr in ("orelse", "handlers", "finalbody"):
                more = getattr(st, attr, None)
                if isinstance(more, (list, tuple)):
                    stack.extend(reversed(more))
                elif more is not None:
                    stack.append(more)
    return out


@dataclass
class Env:
    """A function's bindings and parameters, over the module's constants."""

    local: Bindings
    params: frozenset[str]
    module: Bindings
    is_module: bool = False

    def lookup(self, name: str) -> tuple[list[object] | None, Env]:
        """The bindings of ``name`` and the environment they live in;
        ``None`` for a parameter (any value) or a name bound nowhere here."""
        if name in self.params:
            return None, self
        if name in self.local.values:
            return self.local.values[name], self
        if not self.is_module and name in self.module.values:
            return self.module.values[name], Env(self.module, frozenset(), self.module, True)
        return None, self


def const(e: object, env: Env, depth: int = 0) -> int | None:
    """The integer ``e`` always has, if this file shows one."""
    if depth > MAX_DEPTH or not isinstance(e, cst.BaseExpression):
        return None
    v = int_literal(e)
    if v is not None:
        return v
    if isinstance(e, cst.BinaryOperation):
        a, b = const(e.left, env, depth + 1), const(e.right, env, depth + 1)
        if a is None or b is None:
            return None
        return fold_int(e.operator, a, b)
    if isinstance(e, cst.Call) and call_name(e) == "int" and len(e.args) == 1:
        return const(e.args[0].value, env, depth + 1)
    if isinstance(e, cst.Name):
        binds, sub = env.lookup(e.value)
        if binds and len(binds) == 1:
            return const(binds[0], sub, depth + 1)
    return None


def mod_test(test: cst.BaseExpression) -> tuple[cst.BinaryOperation | None, bool]:
    """``(X % c, True)`` for a test ``X % c == 0`` or ``not X % c``; ``(X %
    c, False)`` for ``X % c != 0``, ``X % c > 0`` or a bare ``X % c``;
    ``(None, True)`` for any other test."""
    mod, when_divisible = test, False
    if isinstance(test, cst.Comparison):
        op, right = test.comparisons[0].operator, test.comparisons[0].comparator
        mod = None
        zero = len(test.comparisons) == 1 and int_literal(right) == 0
        if zero and isinstance(op, (cst.Equal, cst.NotEqual, cst.GreaterThan)):
            mod, when_divisible = test.left, isinstance(op, cst.Equal)
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        mod, when_divisible = test.expression, True
    if isinstance(mod, cst.BinaryOperation) and isinstance(mod.operator, cst.Modulo):
        return mod, when_divisible
    return None, True


@dataclass(frozen=True)
class Leaf:
    """One constant a block can take, with the test that picks it (None:
    the fallback, or a test this rule does not read)."""

    value: int
    node: cst.BaseExpression
    divisor_test: int | None  # ``X % c == 0`` (or ``!= 0``) picks it: the c
    # picked when ``X % c == 0`` (True) or when ``X % c != 0`` (False)
    when_divisible: bool = True


def chain_leaves(e: object, env: Env, depth: int = 0) -> list[Leaf] | None:
    """The constants a block bound to ``e`` can take: one for a constant,
    each branch of a conditional chain (``128 if h % 128 == 0 else 64``);
    None when any branch is not a constant."""
    if depth > MAX_DEPTH or not isinstance(e, cst.BaseExpression):
        return None
    if isinstance(e, cst.IfExp):
        body = chain_leaves(e.body, env, depth + 1)
        orelse = chain_leaves(e.orelse, env, depth + 1)
        if body is None or orelse is None:
            return None
        mod, when_divisible = mod_test(e.test)
        c = const(mod.right, env) if mod is not None else None
        if c is not None and len(body) == 1:
            body = [Leaf(body[0].value, body[0].node, c, when_divisible)]
        return body + orelse
    v = const(e, env)
    if v is None:
        return None
    return [Leaf(v, e, None)]


def picks(leaves: list[Leaf], d: int) -> list[int]:
    """The values a chain can give for a width ``d``: a branch picked by
    ``d % c == 0`` (or ``d % c != 0``) is exact; any other test may go
    either way."""
    out: list[int] = []
    for leaf in leaves:
        if leaf.divisor_test is None:
            out.append(leaf.value)
        elif (d % leaf.divisor_test == 0) == leaf.when_divisible:
            return out + [leaf.value]
    return out


def resolve(e: cst.BaseExpression, env: Env, depth: int = 0) -> cst.BaseExpression:
    """Follow a name bound once here to what it was bound to
    (``h = x.shape[1]``), through ``int(...)``."""
    if isinstance(e, cst.Call) and call_name(e) == "int" and len(e.args) == 1:
        return resolve(e.args[0].value, env, depth)
    if isinstance(e, cst.Name) and depth < 4:
        binds, sub = env.lookup(e.value)
        if binds and len(binds) == 1 and isinstance(binds[0], (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return resolve(binds[0], sub, depth + 1)
    return e


def _shape_index(e: cst.BaseExpression) -> int | None:
    """``i`` for ``t.shape[i]`` or ``t.size(i)``."""
    match e:
        case cst.Subscript(cst.Attribute(attr=cst.Name("shape")), [cst.SubscriptElement(cst.Index(i))]):
            return int_literal(i)
        case cst.Call(cst.Attribute(attr=cst.Name("size")), [cst.Arg(i, keyword=None)]):
            return int_literal(i)
    return None


def dimension_name(e: cst.BaseExpression, env: Env, patterns: Iterable[str]) -> str | None:
    """The name to judge ``e`` by when it is a runtime model dimension (a
    name matching ``patterns``, itself or what it was bound to, or a
    tensor's non-leading dimension); None otherwise."""
    if const(e, env) is not None:
        return None
    for cand in (e, resolve(e, env)):
        name = dotted(cand)
        if name and name_matches(name, NOT_DIMENSIONS):
            return None
        if name and name_matches(name, patterns):
            return name.rsplit(".", 1)[-1]
        idx = _shape_index(cand)
        if idx is not None and idx != 0:
            return code(cand)
    return None


def binds_before(e: cst.BaseExpression, env: Env, order: int) -> bool:
    """Every name in ``e`` is a parameter, a module name (or a builtin), or
    first bound before the binding numbered ``order``."""
    names = {n.value for n in walk(e) if isinstance(n, cst.Name)}
    return all(n in env.params or env.local.first.get(n, 0) < order for n in names)


def modulos(node: cst.CSTNode) -> list[cst.BinaryOperation]:
    """Every ``X % Y`` in ``node``."""
    return [n for n in walk(node) if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)]


def pinned_by(tests: Iterable[cst.Comparison], x: str, env: Env) -> bool:
    """``assert X == c`` / ``X in (c1, c2)``: the width is fixed."""
    for cmp in tests:
        if len(cmp.comparisons) != 1 or code(cmp.left) != x:
            continue
        op, right = cmp.comparisons[0].operator, cmp.comparisons[0].comparator
        if isinstance(op, cst.Equal) and const(right, env) is not None:
            return True
        listed = isinstance(op, cst.In) and isinstance(right, (cst.Tuple, cst.List, cst.Set))
        if listed and right.elements and all(const(el.value, env) is not None for el in right.elements):
            return True
    return False


class ScopeVisitor:
    """The traversal SHD102 and SHD103 share: a stack of scopes (the module,
    each class and function), each recording its bindings in order (the
    module's are read whole on entry, by :func:`module_bindings`); the
    module and each function are handed to ``_analyse`` when left."""

    ctx: Any
    opts: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._module = Bindings()
        self._scopes: list[Any] = []  # a rule's scopes, each with a ``bindings`` field
        self._finder: KernelFinder | None = None

    def _scope(self, node: cst.CSTNode, params: frozenset[str]) -> Any:
        raise NotImplementedError

    def _analyse(self, scope: Any, env: Env) -> None:
        raise NotImplementedError

    def _top(self) -> Any:
        # a method, not a property: libcst's get_visitors() reads every
        # attribute of the visitor, properties included
        return self._scopes[-1]

    def _kernel(self, call: cst.Call) -> KernelTiling | None:
        """The kernel a launch ``kernel[grid](...)`` names, when found."""
        kname = dotted(call.func.value) if isinstance(call.func, cst.Subscript) else None
        if not kname:
            return None
        if self._finder is None:
            self._finder = KernelFinder(self.ctx)
        return self._finder.find(kname, self.opts["kernel-decorators"])

    def visit_Module(self, node: cst.Module) -> None:
        self._module = module_bindings(node)
        scope = self._scope(node, frozenset())
        scope.bindings = self._module
        self._scopes.append(scope)

    def leave_Module(self, node: cst.Module) -> None:
        scope = self._scopes.pop()
        self._analyse(scope, Env(scope.bindings, frozenset(), self._module, True))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(self._scope(node, frozenset(function_params(node))))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self._scopes.pop()
        self._analyse(scope, Env(scope.bindings, scope.params, self._module))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(self._scope(node, frozenset()))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.pop()

    # module-level assignments are in ``module_bindings`` already
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(self._scopes) > 1:
            for t in node.targets:
                self._top().bindings.bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if len(self._scopes) > 1 and node.value is not None:
            self._top().bindings.bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if len(self._scopes) > 1:
            self._top().bindings.bind(node.target, OTHER)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._top().bindings.bind(node.target, OTHER)

    def visit_For(self, node: cst.For) -> None:
        self._top().bindings.bind(node.target, OTHER)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._top().bindings.bind(node.target, OTHER)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._top().bindings.bind(node.asname.name, OTHER)
