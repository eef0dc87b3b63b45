"""What SHD501's analysis tracks of one function: the widths a shape is
built from (padded or not) and the tensors allocated with them; and the
pieces of its messages (how a width is described, the slice that fixes an
exchange)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from linter.syntax import dotted, int_literal


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


def pattern_stems(name: str, patterns: Sequence[str]) -> frozenset[str]:
    """Unpadded names a padded name pairs with, read off the pattern it
    matched: `hidden_size_padded` (`*_padded`) → `hidden_size`,
    `hidden_size_unpadded`, `unpadded_hidden_size`."""
    leaf = name.rsplit(".", 1)[-1].lower()
    out: set[str] = set()
    for pat in patterns:
        parts = pat.lower().split("*")
        if not fnmatch.fnmatchcase(leaf, pat.lower()):
            continue
        if len(parts) == 2:
            pre, suf = parts
            stem = leaf[len(pre) : len(leaf) - len(suf)]
        elif len(parts) == 3 and parts[0] == "" and parts[2] == "":
            stem = leaf.replace(parts[1], "_", 1)
        else:
            continue
        stem = stem.strip("_")
        if stem:
            out |= {stem, f"{stem}_unpadded", f"unpadded_{stem}", f"{stem}_non_padded"}
    return frozenset(out)


def forget(
    key: str,
    tensors: dict[str, Tensor],
    widths: dict[str, Width],
    shape_src: dict[str, tuple[str, int]],
) -> None:
    """``key`` is rebound: what was known about it, and the widths read from
    its old shape, no longer hold (`x = F.pad(x, ...)` makes x padded)."""
    tensors.pop(key, None)
    widths.pop(key, None)
    shape_src.pop(key, None)
    for k in [k for k, (owner, _) in shape_src.items() if owner == key]:
        del shape_src[k]


def flat(code: str) -> str:
    out = " ".join(code.split())
    return out.replace("( ", "(").replace(" )", ")")


def describe(w: Width) -> str:
    if w.origin in (f"`{w.code}`", f"the padded name `{w.code}`"):
        return f"`{w.code}`"
    return f"`{w.code}` ({flat(w.origin)})"


def counterexample(pw: Width, uw: Width) -> str:
    m = pw.multiple
    if m is not None and m >= 4:
        x = 11 * m + m // 4
        return (
            f"with `{uw.code}` = {x}, `{pw.code}` = {12 * m}: `The size of tensor a "
            f"({12 * m}) must match the size of tensor b ({x})`"
        )
    return (
        "the widths differ whenever the unpadded width is not already a multiple "
        "(2880 padded to 3072: `The size of tensor a (3072) must match the size of "
        "tensor b (2880)`)"
    )


def along_width(t: Tensor, piece: str, narrow: str) -> str:
    """``t`` indexed by ``piece`` (`:k`, `k:`) along its padded dimension,
    or ``.narrow(dim, <narrow>)`` where its rank is unknown."""
    if t.dim == -1:
        return f"[..., {piece}]"
    if t.ndim:
        return "[" + ":, " * (t.ndim + t.dim) + f"{piece}]"
    return f".narrow({t.dim}, {narrow})"


def plain_origin(k: str, shape_src: dict[str, tuple[str, int]]) -> str:
    src = shape_src.get(k)
    if src is not None:
        return f"read from `{src[0]}.shape`"
    return f"`{k}`"


def leaf_set(k: str) -> frozenset[str]:
    return frozenset({k.rsplit(".", 1)[-1].lower()})


def stem_set(base: cst.CSTNode) -> frozenset[str]:
    k = dotted(base)
    if k is None:
        return frozenset()
    return frozenset({k.rsplit(".", 1)[-1].lower()})


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


def shape_read(v: cst.CSTNode) -> tuple[str, int] | None:
    """(tensor, dim) for ``t.shape[d]`` / ``t.size(d)`` with a literal d."""
    if (
        isinstance(v, cst.Subscript)
        and isinstance(v.value, cst.Attribute)
        and v.value.attr.value == "shape"
    ):
        owner = dotted(v.value.value)
        if owner and len(v.slice) == 1 and isinstance(v.slice[0].slice, cst.Index):
            d = int_literal(v.slice[0].slice.value)
            if d is not None:
                return owner, d
    if (
        isinstance(v, cst.Call)
        and isinstance(v.func, cst.Attribute)
        and v.func.attr.value == "size"
        and len(v.args) == 1
    ):
        owner = dotted(v.func.value)
        d = int_literal(v.args[0].value)
        if owner and d is not None:
            return owner, d
    return None


def is_zero(e: cst.CSTNode) -> bool:
    if int_literal(e) == 0:
        return True
    return isinstance(e, cst.Float) and float(e.value) == 0.0


def slice_has_lower(s: cst.Subscript) -> bool:
    """``buf[..., n:]``: a write that starts past the beginning (the tail)."""
    for el in s.slice:
        sl = el.slice
        if isinstance(sl, cst.Slice) and sl.lower is not None and sl.upper is None:
            return True
    return False
