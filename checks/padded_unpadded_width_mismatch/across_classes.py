"""What SHD501 reads of one class to follow an output width across
functions and classes: an output allocated at its input's width, the
results of the class's components handed to one call with it (libcst), and
the component methods each result comes from through the class's own
helper methods (``self.helper(...)``), whose calls it reads from the file's
CPython ``ast`` (``RuleContext.ast_tree``): the engine hands the rule only
the definitions its needles match (``follows_definitions = False``), and a
helper may match none."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from checks.padded_unpadded_width_mismatch.widths import (
    LIKE,
    NEW,
    callee_leaf,
    literal_index,
    shape_read,
    whole_shape_of,
)
from linter.astwalk import ast_dotted, first_line
from linter.syntax import (
    call_name,
    dotted,
    keyword_args,
    positional_args,
    walk_no_nested,
)

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


def _last_dim_of(e: cst.BaseExpression) -> str | None:
    """x for ``x.shape[-1]``, ``x.size()[-1]`` or ``x.size(-1)``."""
    if isinstance(e, cst.Subscript) and literal_index(e) == -1:
        return whole_shape_of(e.value)
    read = shape_read(e)
    return read[0] if read is not None and read[1] == -1 else None


def _width_source(shape: list[cst.BaseExpression]) -> str | None:
    """The tensor whose last dimension is the last one of ``shape``."""
    if len(shape) == 1:
        whole = whole_shape_of(shape[0])
        if whole is not None:
            return whole
        if isinstance(shape[0], (cst.Tuple, cst.List)):
            inner = [e if isinstance(e, cst.StarredElement) else e.value for e in shape[0].elements]
            return _width_source(inner)
    if not shape:
        return None
    last = shape[-1]
    if isinstance(last, cst.StarredElement):  # (..., *x.shape)
        return whole_shape_of(last.value)
    return _last_dim_of(last)


def input_width_source(value: cst.BaseExpression, params: set[str]) -> str | None:
    """The parameter whose last dimension ``value`` allocates its last one
    at (``torch.empty_like(x)``, ``x.new_empty(x.shape)``,
    ``torch.empty((*x.shape[:-1], x.size(-1)))``), else None."""
    if not isinstance(value, cst.Call):
        return None
    name = call_name(value)
    leaf = callee_leaf(value)
    args = positional_args(value)
    kw = keyword_args(value)
    src: str | None = None
    if leaf in LIKE and name in (leaf, f"torch.{leaf}") and args:
        src = dotted(args[0])
    elif (leaf in NEW and isinstance(value.func, cst.Attribute)) or (
        leaf in _TORCH_ALLOC and name in (leaf, f"torch.{leaf}")
    ):
        src = _width_source([kw["size"]] if "size" in kw else args[:1] if leaf == "full" else args)
    return src if src in params else None


def input_width_outputs(func: cst.FunctionDef, params: set[str]) -> list[InputWidthOutput]:
    out = []
    for n in walk_no_nested(func.body):
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
    for n in walk_no_nested(func.body):
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
        inplace = isinstance(c.func, cst.Attribute) and c.func.attr.value in _INPLACE
        if inplace and dotted(c.func.value) == buffer:  # type: ignore[union-attr]
            names.append(buffer)
        r = next((r for r in names if r != buffer and r in produced), None)
        if buffer in names and r is not None:
            out.append(Handoff(c, r, produced[r]))
    return out


def component_calls(
    producer: cst.Call, methods: Mapping[str, Sequence[str]]
) -> list[tuple[str, str]]:
    """The ``(component, method)`` pairs ``self.<component>.<method>(...)``
    a call reaches: itself, or through the class's own methods (``self.helper``;
    ``methods``: the calls of each, :func:`helpers_of`), up to
    four calls deep."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()

    def reach(name: str, depth: int) -> None:
        parts = name.split(".")
        if len(parts) == 3 and parts[0] == "self":
            if (parts[1], parts[2]) not in out:
                out.append((parts[1], parts[2]))
        elif len(parts) == 2 and parts[0] == "self" and parts[1] in methods and depth < 4:
            if parts[1] in seen:
                return
            seen.add(parts[1])
            for call in methods[parts[1]]:
                reach(call, depth + 1)

    reach(call_name(producer) or "", 0)
    return out


# -- the class's own methods, from the ``ast`` --------------------------------------------
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_METHODS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _classes(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    """Every class not inside a function, by its name qualified with the
    classes holding it (blocks such as ``if`` add nothing)."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _classes(node.body, f"{name}.")
        elif not isinstance(node, _METHODS):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(node, field, None)
                if isinstance(sub, list):
                    yield from _classes(sub, prefix)
            for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                yield from _classes(clause.body, prefix)


def _calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The dotted names of the calls in ``fn``'s body in source order
    (libcst's pre-order), nested definitions and lambdas apart."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Call):
            found.append(n)
        stack.extend(ast.iter_child_nodes(n))
    # a call holding another one starting where it starts comes first
    found.sort(
        key=lambda c: (c.lineno, c.col_offset, -(c.end_lineno or 0), -(c.end_col_offset or 0))
    )
    names = [ast_dotted(c.func) for c in found]
    return [name for name in names if name is not None]


def helpers_of(
    tree: ast.Module | None, text: str, qualified: str, method: str, code: Callable[[], str]
) -> Mapping[str, list[str]]:
    """Per method of the class ``qualified`` holding ``method`` (whose code
    ``code()`` gives), the calls of its body (a later definition of a name
    replacing an earlier one). Several classes of that name (branches of an
    ``if``): the one whose ``method`` is ``code``, blanks aside; else the last
    one, the one Python binds."""
    if tree is None:
        return {}
    classes = [c for name, c in _classes(tree.body) if name == qualified]
    found = [{st.name: _calls(st) for st in c.body if isinstance(st, _METHODS)} for c in classes]
    if len(found) < 2 or all(f == found[0] for f in found):
        return found[0] if found else {}
    lines = text.splitlines(keepends=True)
    bare = "".join(code().split())

    def holds_method(c: ast.ClassDef) -> bool:
        for st in c.body:
            if isinstance(st, _METHODS) and st.name == method:
                source = "".join(lines[first_line(st) - 1 : st.end_lineno or st.lineno])
                if "".join(source.split()) in bare:
                    return True
        return False

    return ([f for c, f in zip(classes, found) if holds_method(c)] or found)[-1]
