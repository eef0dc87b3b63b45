"""What SHD501's analysis tracks of one function (``Tracked``): the widths
a shape is built from (padded or not) and the tensors allocated with them;
and the expressions it reads them from."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from checks.padded_unpadded_width_mismatch.needles import CDIV_NAMES
from linter.syntax import call_name, dotted, int_literal, last_name, positional_args

# allocators copying the width of their argument, and allocating methods
LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like"})
NEW = frozenset({"new_empty", "new_zeros", "new_ones", "new_full"})


@dataclass(frozen=True)
class Width:
    padded: bool
    code: str  # the width as written in the shape
    origin: str  # where it comes from, for the message
    stems: frozenset[str]  # names of the unpadded width it pairs with (last components)
    multiple: int | None = None  # the literal it rounds up to, for a counterexample


@dataclass
class Tensor:
    name: str
    width: Width
    dim: int  # negative: position from the end of the shape
    uninit: bool
    where: str
    ndim: int = 0  # 0 when unknown
    # every named dim (position from the end, width) of an unpadded tensor
    plain_dims: list[tuple[int, Width]] = field(default_factory=list)
    written_partly: bool = False
    written_upto: str | None = None  # `k` in `buf[:, :k] = x`
    tail_zeroed: bool = False


@dataclass
class Tracked:
    """What the analysis knows of one function, in source order."""

    parent: dict[int, cst.CSTNode]  # by the id of each node
    widths: dict[str, Width] = field(default_factory=dict)  # names bound to a padded width
    tensors: dict[str, Tensor] = field(default_factory=dict)
    # name → (tensor, dim) whose shape the name was read from
    shape_src: dict[str, tuple[str, int]] = field(default_factory=dict)
    # a padded buffer's uninitialised tail read: (call, buffer, consumer, result's name)
    pending: list[tuple[cst.Call, Tensor, str, str | None]] = field(default_factory=list)

    def forget(self, key: str) -> None:
        """``key`` is rebound: what was known about it, and the widths read from
        its old shape, no longer hold (`x = F.pad(x, ...)` makes x padded)."""
        self.tensors.pop(key, None)
        self.widths.pop(key, None)
        self.shape_src.pop(key, None)
        for k in [k for k, (owner, _) in self.shape_src.items() if owner == key]:
            del self.shape_src[k]

    def side(self, k: str) -> Tensor | None:
        """The tensor ``k`` names, or one known by the dimensions read off its shape."""
        t = self.tensors.get(k)
        if t is not None:
            return t
        plain = [
            (d, Width(False, name, f"read from `{k}.shape`", leaf_set(name)))
            for name, (owner, d) in self.shape_src.items()
            if owner == k
        ]
        if not plain:
            return None
        return Tensor(k, plain[-1][1], plain[-1][0], False, f"`{k}`", 0, plain)

    def unpack(self, tgt: cst.Tuple | cst.List, value: cst.BaseExpression) -> None:
        """``m, k = x.shape``: each name is the dimension of ``x`` at its position."""
        names = [dotted(e.value) for e in tgt.elements]
        for k in names:
            if k:
                self.forget(k)
        owner = whole_shape_of(value)
        if owner is None or any(isinstance(e.value, cst.StarredElement) for e in tgt.elements):
            return
        for i, k in enumerate(names):
            if k:
                self.shape_src[k] = (owner, i - len(names))

    def consume(self, n: cst.Call, t: Tensor, consumer: str) -> None:
        """``n`` hands ``t`` whole to a GEMM or a reduction: kept when ``t`` is
        a partly written ``empty`` padded buffer and the result is not
        sliced back right here."""
        if not (t.width.padded and t.uninit and t.written_partly):
            return
        p = self.parent.get(id(n))
        if isinstance(p, cst.Subscript):
            return
        result = None
        if isinstance(p, cst.Assign) and len(p.targets) == 1:
            result = dotted(p.targets[0].target)
        self.pending.append((n, t, consumer, result))


def leaf_set(k: str | None) -> frozenset[str]:
    """The last component of the dotted name ``k``, lower case (none for None)."""
    return frozenset({k.rsplit(".", 1)[-1].lower()}) if k else frozenset()


def same_value(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    ia, ib = int_literal(a), int_literal(b)
    if ia is not None or ib is not None:
        return ia == ib
    da, db = dotted(a), dotted(b)
    return da is not None and da == db


def ceil_numerator(e: cst.CSTNode, n: cst.CSTNode) -> cst.BaseExpression | None:
    """X for ``X + n - 1`` (also ``X + (n - 1)``), else None."""
    if not isinstance(e, cst.BinaryOperation):
        return None
    if isinstance(e.operator, cst.Subtract) and int_literal(e.right) == 1:
        inner = e.left
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Add):
            if same_value(inner.right, n):
                return inner.left
    if isinstance(e.operator, cst.Add):
        r = e.right
        if (
            isinstance(r, cst.BinaryOperation)
            and isinstance(r.operator, cst.Subtract)
            and same_value(r.left, n)
            and int_literal(r.right) == 1
        ):
            return e.left
        ni = int_literal(n)
        if ni is not None and int_literal(r) == ni - 1:
            return e.left
    return None


def rounded_base(
    e: cst.CSTNode, rounding: frozenset[str]
) -> tuple[cst.BaseExpression, int | None] | None:
    """(X, n) when ``e`` rounds X up to a multiple of n (n when a literal):
    ``round_up(X, n)`` (a ``rounding`` function), ``cdiv(X, n) * n``,
    ``(X + n - 1) // n * n``, any of them inside ``int(...)``."""
    while isinstance(e, cst.Call) and last_name(call_name(e)) == "int" and e.args:
        e = e.args[0].value
    if isinstance(e, cst.Call):
        args = positional_args(e)
        if last_name(call_name(e)) in rounding and len(args) >= 2:
            return args[0], int_literal(args[1])
        return None
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if isinstance(a, cst.Call) and last_name(call_name(a)) in CDIV_NAMES:
                args = positional_args(a)
                if len(args) == 2 and same_value(args[1], b):
                    return args[0], int_literal(b)
            if isinstance(a, cst.BinaryOperation) and isinstance(a.operator, cst.FloorDivide):
                x = ceil_numerator(a.left, b) if same_value(a.right, b) else None
                if x is not None:
                    return x, int_literal(b)
    return None


def whole_shape_of(e: cst.CSTNode) -> str | None:
    """x for ``x.shape`` or ``x.size()``."""
    if isinstance(e, cst.Attribute) and e.attr.value == "shape":
        return dotted(e.value)
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute):
        if e.func.attr.value == "size" and not e.args:
            return dotted(e.func.value)
    return None


def literal_index(s: cst.Subscript) -> int | None:
    """d for ``x[d]`` with a literal d."""
    if len(s.slice) == 1 and isinstance(s.slice[0].slice, cst.Index):
        return int_literal(s.slice[0].slice.value)
    return None


def shape_read(v: cst.CSTNode) -> tuple[str, int] | None:
    """(tensor, dim) for ``t.shape[d]`` / ``t.size(d)`` with a literal d."""
    if isinstance(v, cst.Subscript) and isinstance(v.value, cst.Attribute):
        if v.value.attr.value != "shape":
            return None
        owner, d = dotted(v.value.value), literal_index(v)
    elif isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and len(v.args) == 1:
        if v.func.attr.value != "size":
            return None
        owner, d = dotted(v.func.value), int_literal(v.args[0].value)
    else:
        return None
    return (owner, d) if owner and d is not None else None


def callee_leaf(call: cst.Call) -> str | None:
    """The last name a call invokes (``empty`` of ``torch.empty(...)``,
    ``new_empty`` of ``f(x).new_empty(...)``), None for another callee."""
    f = call.func
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return f.value if isinstance(f, cst.Name) else None
