"""What SHD501 reads of one class to follow an output width across
functions and classes (libcst): an output allocated at its input's width,
the results of the class's components handed to one call with it, and the
component methods each result comes from (through the class's own helper
methods)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from linter.syntax import call_name, child_nodes, dotted, int_literal, keyword_args, last_name, positional_args

_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like"})
_NEW = frozenset({"new_empty", "new_zeros", "new_ones", "new_full"})
_TORCH_ALLOC = frozenset({"empty", "zeros", "ones", "full"})
# in-place methods copying their first argument into the receiver
_INPLACE = frozenset({"copy_", "add_", "sub_", "mul_", "div_"})


@dataclass(frozen=True)
class InputWidthOutput:
    name: str  # the output buffer
    source: str  # the input whose width it copies
    node: cst.Assign


@dataclass(frozen=True)
class Handoff:
    """``call`` receives the output buffer and ``result``, bound from ``producer``."""

    call: cst.Call
    result: str
    producer: cst.Call


def _nodes(body: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order, not entering nested definitions."""
    stack: list[cst.CSTNode] = [body]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and n is not body:
            continue
        stack.extend(reversed(child_nodes(n)))


def _whole_shape_of(e: cst.BaseExpression) -> str | None:
    """x for ``x.shape`` or ``x.size()``."""
    if isinstance(e, cst.Attribute) and e.attr.value == "shape":
        return dotted(e.value)
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "size" and not e.args:
        return dotted(e.func.value)
    return None


def _last_dim_of(e: cst.BaseExpression) -> str | None:
    """x for ``x.shape[-1]`` or ``x.size(-1)``."""
    if (
        isinstance(e, cst.Subscript)
        and len(e.slice) == 1
        and isinstance(e.slice[0].slice, cst.Index)
        and int_literal(e.slice[0].slice.value) == -1
    ):
        return _whole_shape_of(e.value)
    if (
        isinstance(e, cst.Call)
        and isinstance(e.func, cst.Attribute)
        and e.func.attr.value == "size"
        and len(e.args) == 1
        and int_literal(e.args[0].value) == -1
    ):
        return dotted(e.func.value)
    return None


def _width_source(shape: list[cst.BaseExpression]) -> str | None:
    """The tensor whose last dimension is the last one of ``shape``."""
    if len(shape) == 1:
        whole = _whole_shape_of(shape[0])
        if whole is not None:
            return whole
        if isinstance(shape[0], (cst.Tuple, cst.List)):
            return _width_source(_display(shape[0]))
    if not shape:
        return None
    last = shape[-1]
    if isinstance(last, cst.StarredElement):  # (..., *x.shape)
        return _whole_shape_of(last.value)
    return _last_dim_of(last)


def _display(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(e, (cst.Tuple, cst.List)):
        return [el if isinstance(el, cst.StarredElement) else el.value for el in e.elements]  # type: ignore[misc]
    return [e]


def input_width_source(value: cst.BaseExpression, params: set[str]) -> str | None:
    """The parameter whose last dimension ``value`` allocates its last one
    at (``torch.empty_like(x)``, ``x.new_empty(x.shape)``,
    ``torch.empty((*x.shape[:-1], x.size(-1)))``), else None."""
    if not isinstance(value, cst.Call):
        return None
    name = call_name(value) or ""
    leaf = last_name(name) or (value.func.attr.value if isinstance(value.func, cst.Attribute) else "")
    args = positional_args(value)
    kw = keyword_args(value)
    src: str | None = None
    if leaf in _LIKE and name in (leaf, f"torch.{leaf}") and args:
        src = dotted(args[0])
    elif leaf in _NEW and isinstance(value.func, cst.Attribute):
        if "size" in kw:
            src = _width_source(_display(kw["size"]))
        elif args:
            src = _width_source(_display(args[0]) if len(args) == 1 else args)
    elif leaf in _TORCH_ALLOC and name in (leaf, f"torch.{leaf}"):
        if "size" in kw:
            src = _width_source(_display(kw["size"]))
        elif args:
            shape = args[:1] if leaf == "full" else args
            src = _width_source(_display(shape[0]) if len(shape) == 1 else shape)
    return src if src in params else None


def input_width_outputs(func: cst.FunctionDef, params: set[str]) -> list[InputWidthOutput]:
    out = []
    for n in _nodes(func.body):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            src = input_width_source(n.value, params)
            if src is not None:
                out.append(InputWidthOutput(n.targets[0].target.value, src, n))
    return out


def handoffs(func: cst.FunctionDef, buffer: str) -> list[Handoff]:
    """Calls handing ``buffer`` together with a result the class computed
    through ``self`` (``r = self.helper(...)`` or ``r = self.part.m(...)``)
    to one step: ``self.finish(buffer, r)``, ``buffer.copy_(r)``."""
    produced: dict[str, cst.Call] = {}
    calls: list[cst.Call] = []
    for n in _nodes(func.body):
        if (
            isinstance(n, cst.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0].target, cst.Name)
            and isinstance(n.value, cst.Call)
            and (call_name(n.value) or "").startswith("self.")
        ):
            produced[n.targets[0].target.value] = n.value
        elif isinstance(n, cst.Call):
            calls.append(n)
    out = []
    for c in calls:
        names = [dotted(a.value) for a in c.args]
        if isinstance(c.func, cst.Attribute) and c.func.attr.value in _INPLACE and dotted(c.func.value) == buffer:
            names.append(buffer)
        if buffer not in names:
            continue
        for r in names:
            if r is not None and r != buffer and r in produced:
                out.append(Handoff(c, r, produced[r]))
                break
    return out


def component_calls(
    producer: cst.Call, methods: Mapping[str, Sequence[str]], limit: int = 4
) -> list[tuple[str, str]]:
    """The ``(component, method)`` pairs ``self.<component>.<method>(...)``
    a call reaches: itself, or through the class's own methods (``self.helper``;
    ``methods``: the calls of each, ``class_helpers.helpers_of``), up to
    ``limit`` calls deep."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()

    def reach(name: str, depth: int) -> None:
        parts = name.split(".")
        if len(parts) == 3 and parts[0] == "self":
            if (parts[1], parts[2]) not in out:
                out.append((parts[1], parts[2]))
        elif len(parts) == 2 and parts[0] == "self" and parts[1] in methods and depth < limit:
            if parts[1] in seen:
                return
            seen.add(parts[1])
            for call in methods[parts[1]]:
                reach(call, depth + 1)

    reach(call_name(producer) or "", 0)
    return out
