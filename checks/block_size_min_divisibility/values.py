"""What SHD101 knows of a name's value: the bindings of one function (or of
the module) and the module's constants, integer folding, and proofs that an
expression is a power of two."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from linter.syntax import call_name, dotted, fold_int, function_params, int_literal, walk_no_nested

MAX_DEPTH = 12
OTHER = object()  # a binding that is not a plain ``name = expr`` (loop target, ``+=``, unpacking)
KNOB = object()  # the incoming value of a knob parameter: taken to be a power of two


def is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def matches(name: str | None, patterns: Iterable[str]) -> bool:
    """``name`` is one of ``patterns`` or ends with ``.pattern``: ``jit``
    matches ``triton.jit``; ``triton.jit`` does not match ``jax.jit``."""
    return bool(name) and any(name == p or name.endswith("." + p) for p in patterns)


def code(node: cst.CSTNode) -> str:
    """The node's code on one line."""
    return " ".join(cst.Module(body=[]).code_for_node(node).split())


@dataclass
class Env:
    """Names bound in one function (or at module level) and in the module."""

    local: dict[str, list[object]]
    params: frozenset[str]
    module: dict[str, list[object]]
    is_module: bool = False
    # parameters defaulting to a power-of-two literal or an UPPER_CASE
    # constant (``chunk_size: int = CHUNK``): tuning knobs, not model shapes
    knobs: frozenset[str] = frozenset()

    def bindings(self, name: str) -> tuple[list[object] | None, Env]:
        """The bindings of ``name`` (``None`` when bound nowhere in this file;
        a parameter's incoming value is one unknown binding) and the
        environment to read them in."""
        incoming = [KNOB if name in self.knobs else OTHER] if name in self.params else []
        if name in self.local:
            return [*incoming, *self.local[name]], self.at_module() if self.is_module else self
        if incoming:
            return incoming, self
        if name in self.module:
            return self.module[name], self.at_module()
        return None, self

    def at_module(self) -> Env:
        return Env(self.module, frozenset(), self.module, True)


def bind(out: dict[str, list[object]], target: cst.BaseExpression, value: object) -> None:
    """Record that ``target`` is bound to ``value`` (``OTHER`` for each name
    an unpacking binds)."""
    if isinstance(target, cst.Name):
        out.setdefault(target.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            bind(out, el.value, OTHER)
    elif isinstance(target, cst.StarredElement):
        bind(out, target.value, OTHER)


def bind_assignment(out: dict[str, list[object]], small: cst.CSTNode) -> bool:
    """Record what an assignment binds; False for anything else."""
    if isinstance(small, cst.Assign):
        for t in small.targets:
            bind(out, t.target, small.value)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        bind(out, small.target, small.value)
    elif isinstance(small, cst.AugAssign):
        bind(out, small.target, OTHER)
    else:
        return False
    return True


def top_level_bindings(module: cst.Module) -> dict[str, list[object]]:
    """Module constants: assignments directly in the module body or under a
    top-level ``if``/``try`` (enough for ``BLOCK = 1024``; cheap, no walk)."""
    out: dict[str, list[object]] = {}
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        st = stack.pop()
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                bind_assignment(out, small)
        elif isinstance(st, (cst.If, cst.Try, cst.Else, cst.ExceptHandler, cst.Finally)):
            if isinstance(st.body, cst.IndentedBlock):
                stack.extend(st.body.body)
            for attr in ("orelse", "handlers", "finalbody"):
                more = getattr(st, attr, None)
                if more is not None:
                    stack.extend(more if isinstance(more, Sequence) else [more])
    return out


def module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The functions defined directly in the module body (a name defined
    twice is left out: which one a call reaches depends on the order)."""
    defs = [st for st in module.body if isinstance(st, cst.FunctionDef)]
    count = Counter(d.name.value for d in defs)
    return {d.name.value: d for d in defs if count[d.name.value] == 1}


def function_env(fn: cst.FunctionDef, module: dict[str, list[object]]) -> tuple[Env, list[object]]:
    """The environment of a helper function's body and what it returns
    (``OTHER`` for a bare ``return``, a ``yield`` or a fall off the end)."""
    local: dict[str, list[object]] = {}
    returns: list[object] = []
    for n in walk_no_nested(fn.body):
        if bind_assignment(local, n):
            continue
        if isinstance(n, (cst.For, cst.CompFor, cst.NamedExpr)):
            bind(local, n.target, OTHER)
        elif isinstance(n, (cst.AsName, cst.FunctionDef, cst.ClassDef)) or (
            isinstance(n, cst.ImportAlias) and n.asname is None
        ):
            bind(local, n.name, OTHER)  # ``with``, ``except``, ``import``, nested definitions
        elif isinstance(n, (cst.Global, cst.Nonlocal)):
            for item in n.names:
                bind(local, item.name, OTHER)
        elif isinstance(n, cst.Return):
            returns.append(n.value if n.value is not None else OTHER)
        elif isinstance(n, (cst.Yield, cst.Await)):
            returns.append(OTHER)
    last = fn.body.body[-1] if isinstance(fn.body, cst.IndentedBlock) and fn.body.body else None
    if not (
        isinstance(last, cst.SimpleStatementLine)
        and any(isinstance(x, (cst.Return, cst.Raise)) for x in last.body)
    ):
        returns.append(OTHER)
    return Env(local, frozenset(function_params(fn)), module), returns


class Values:
    """Constant folding and power-of-two proofs over one environment;
    ``functions``: the module's own, whose returns are read."""

    def __init__(
        self, env: Env, pow2_functions: Sequence[str], functions: Mapping[str, cst.FunctionDef]
    ) -> None:
        self.env = env
        self.pow2_functions = pow2_functions
        self.functions = functions
        self._fn_pow2: dict[str, bool] = {}
        # names under evaluation: a self-referential binding such as
        # ``T = min(512, T)`` keeps the other bindings' power-of-two-ness
        self._assumed: set[tuple[str, bool]] = set()

    def const(self, e: object, env: Env | None = None, depth: int = 0) -> int | None:
        env = env or self.env
        if depth > MAX_DEPTH or not isinstance(e, cst.BaseExpression):
            return None
        if isinstance(e, cst.Integer):
            return int_literal(e)
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
            v = self.const(e.expression, env, depth + 1)
            return -v if v is not None else None
        if isinstance(e, cst.BinaryOperation):
            a = self.const(e.left, env, depth + 1)
            b = self.const(e.right, env, depth + 1)
            return fold_int(e.operator, a, b) if a is not None and b is not None else None
        name = call_name(e)
        if name in ("int", "min", "max") and e.args:  # (e is a call)
            vals = [self.const(a.value, env, depth + 1) for a in e.args]
            if None in vals or any(a.keyword or a.star for a in e.args):
                return None
            if name == "int":
                return vals[0] if len(vals) == 1 else None
            return min(vals) if name == "min" else max(vals)
        if isinstance(e, cst.Name):
            binds, sub = env.bindings(e.value)
            vals = {self.const(b, sub, depth + 1) for b in binds or ()}
            if len(vals) == 1:
                return vals.pop()
        return None

    def least(self, e: object, env: Env | None = None, depth: int = 0) -> int | None:
        """The least constant ``e`` can be, when every value it can take is
        one: a literal, a name bound only to such values, a conditional of
        them, a call of this file's function whose every ``return`` is one."""
        env = env or self.env
        if depth > MAX_DEPTH or not isinstance(e, cst.BaseExpression):
            return None
        v = self.const(e, env, depth + 1)
        if v is not None:
            return v
        options: list[object] = []
        sub = env
        if isinstance(e, cst.IfExp):
            options = [e.body, e.orelse]
        elif isinstance(e, cst.Name):
            binds, sub = env.bindings(e.value)
            if not binds or any(b is OTHER or b is KNOB for b in binds):
                return None
            options = binds
        elif isinstance(e, cst.Call) and isinstance(e.func, cst.Name):
            fn = self.functions.get(e.func.value)
            if fn is None:
                return None
            sub, options = function_env(fn, env.module)
        vals = [self.least(o, sub, depth + 1) if o is not OTHER else None for o in options]
        if not vals or None in vals:
            return None
        return min(v for v in vals if v is not None)

    def pow2(self, e: object, env: Env | None = None, depth: int = 0) -> bool:
        """Provably a power of two (the rule's documentation lists how)."""
        env = env or self.env
        if depth > MAX_DEPTH or not isinstance(e, cst.BaseExpression):
            return False
        v = self.const(e, env, depth + 1)
        if v is not None:
            return is_pow2(v)
        if isinstance(e, cst.Call):
            return self._call_pow2(e, env, depth)
        if isinstance(e, cst.BinaryOperation):
            op, left, right = e.operator, e.left, e.right
            if isinstance(op, (cst.LeftShift, cst.Power)):
                return self.pow2(left, env, depth + 1)
            if isinstance(op, cst.BitAnd):  # ``x & -x``
                return any(
                    isinstance(b, cst.UnaryOperation)
                    and isinstance(b.operator, cst.Minus)
                    and code(b.expression) == code(a)
                    for a, b in ((left, right), (right, left))
                )
            # 65536 // x.element_size(): a quotient of powers of two
            return isinstance(op, (cst.Multiply, cst.FloorDivide)) and (
                self.pow2(left, env, depth + 1) and self.pow2(right, env, depth + 1)
            )
        if isinstance(e, cst.Attribute):
            return e.attr.value == "itemsize"
        if isinstance(e, cst.IfExp):
            return self.pow2(e.body, env, depth + 1) and self.pow2(e.orelse, env, depth + 1)
        if isinstance(e, cst.Name):
            key = (e.value, env.is_module)
            if key in self._assumed:
                return True
            binds, sub = env.bindings(e.value)
            if not binds or any(b is OTHER for b in binds):
                return False
            self._assumed.add(key)
            try:
                return all(b is KNOB or self.pow2(b, sub, depth + 1) for b in binds)
            finally:
                self._assumed.discard(key)
        return False

    def _call_pow2(self, e: cst.Call, env: Env, depth: int) -> bool:
        name = call_name(e)
        if matches(name, self.pow2_functions):
            return True
        if isinstance(e.func, cst.Attribute) and e.func.attr.value == "element_size":
            return True  # dtype widths are 1, 2, 4 or 8 bytes
        args = [a.value for a in e.args if not a.keyword and not a.star]
        if name == "int" and len(args) == 1:
            return self.pow2(args[0], env, depth + 1)
        if name in ("min", "max") and len(args) == len(e.args) and args:
            return all(self.pow2(a, env, depth + 1) for a in args)
        if not isinstance(e.func, cst.Name):
            return False
        # the module's own function, not shadowed where it is called
        name = e.func.value
        fn = self.functions.get(name)
        if fn is None or name in env.local or name in env.params or name in env.module:
            return False
        if name not in self._fn_pow2:
            self._fn_pow2[name] = False  # (recursion: not proved)
            fenv, returns = function_env(fn, env.module)
            self._fn_pow2[name] = bool(returns) and all(
                r is not OTHER and self.pow2(r, fenv, depth + 1) for r in returns
            )
        return self._fn_pow2[name]


def upper_name(e: cst.BaseExpression) -> bool:
    """An UPPER_CASE name or attribute (``BLOCK``, ``cfg.MAX_SIZE``)."""
    leaf = (dotted(e) or "").rsplit(".", 1)[-1]
    return leaf.isupper() and any(ch.isalpha() for ch in leaf)


def constant_like(e: cst.BaseExpression, env: Env) -> bool:
    """An imported or module-level UPPER_CASE name: a cap chosen by the
    author, though its value is not visible here."""
    head = (dotted(e) or "").split(".", 1)[0]
    return upper_name(e) and head not in env.params and (head not in env.local or env.is_module)


def knobs(fn: cst.FunctionDef) -> frozenset[str]:
    """Parameters defaulting to a power-of-two literal or an UPPER_CASE name."""
    out = set()
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        d = param.default
        v = int_literal(d)
        if d is not None and (is_pow2(v) if v is not None else upper_name(d)):
            out.add(param.name.value)
    return frozenset(out)
