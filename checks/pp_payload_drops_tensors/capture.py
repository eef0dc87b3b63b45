"""The ``pp_capture_setters`` facts: how a module turns tap capture on, and
whether some module of the project turns it on for the last rank only (a
convention a model file follows when it inherits its capture setter from
another module)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from linter.astwalk import ast_dotted
from checks.pp_payload_drops_tensors.needles import PAYLOAD_NEEDLES
from linter.api import FactCollector, ProjectFacts

# what every default last-rank test holds
LAST_RANK_WORDS = ("is_last_rank", "last_stage", "last_pp_rank")


def _mentions_last_rank(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and any(w in n.attr for w in LAST_RANK_WORDS))
        or (isinstance(n, ast.Name) and any(w in n.id for w in LAST_RANK_WORDS))
        for n in ast.walk(node)
    )


def _mentions_pp(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and ("pp" in n.attr.lower() or "pipeline" in n.attr.lower()))
        or (isinstance(n, ast.Name) and ("pp" in n.id.lower() or "pipeline" in n.id.lower()))
        for n in ast.walk(node)
    )


def _falsy_literal(value: ast.AST | None) -> bool:
    """``False``, ``None``, ``0``, ``[]``, ``()``, ``{}``, ``set()``: capture off."""
    if value is None or (isinstance(value, ast.Constant) and not value.value):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and not value.elts:
        return True
    if isinstance(value, ast.Dict) and not value.keys:
        return True
    return isinstance(value, ast.Call) and ast_dotted(value.func) in ("set", "list", "tuple", "dict") and not value.args


def _module_functions(body: Sequence[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and classes' methods of a module's ``body`` (nested
    classes, and definitions under ``if``/``try`` at those levels, included)."""
    stack: list[ast.stmt] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            stack.extend(node.body)
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend([*node.body, *node.orelse, *getattr(node, "finalbody", ())])
            for h in getattr(node, "handlers", ()):
                stack.extend(h.body)


def _sets_capture(stmts: Sequence[ast.stmt]) -> bool:
    """Whether the statements turn capture on: a capture attribute (a name
    holding ``captur``) assigned something other than an empty or false
    literal (``__init__``'s ``self.capture_aux_hidden_states = False`` turns
    nothing on)."""
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Assign):
                targets, value = n.targets, n.value
            elif isinstance(n, ast.AnnAssign):
                targets, value = [n.target], n.value
            else:
                continue
            if _falsy_literal(value):
                continue
            if any(isinstance(t, ast.Attribute) and "captur" in t.attr.lower() for t in targets):
                return True
    return False


def capture_setters(tree: ast.Module) -> str | None:
    """How the module turns tap capture on: ``"gated"`` when a function that
    turns a capture attribute on (a name holding ``captur``) first returns
    unless on the last pipeline rank (SGLang's ``if not
    self.pp_group.is_last_rank: return`` in ``set_eagle3_layers_to_capture``)
    or raises under a pipeline test (``if pp_group.world_size != 1: raise``):
    other ranks then collect nothing, and their payloads drop nothing (the
    inner model's own setter, called by the gated one, counts with it);
    ``"open"`` when such functions exist and none is gated; None when there
    is none."""
    state: str | None = None
    for node in _module_functions(tree.body):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # (a docstring)
        if not _sets_capture(body):
            continue
        first = body[0]
        gated = isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 and (
            (
                isinstance(first.test, ast.UnaryOp)
                and isinstance(first.test.op, ast.Not)
                and _mentions_last_rank(first.test.operand)
                and isinstance(first.body[0], ast.Return)
                and first.body[0].value is None
            )
            or (isinstance(first.body[0], ast.Raise) and _mentions_pp(first.test))
        )
        if gated:
            return "gated"
        state = "open"
    return state


class CaptureIndex(dict):  # type: ignore[type-arg]
    """The per-module states, and whether some module turns capture on for
    the last rank only."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        super().__init__(per_module)
        self.any_gated = any(state == "gated" for state in per_module.values())


class PpCaptureSetters(FactCollector):
    """Per module that hands a pipeline payload on (SHD301's needles), how it
    turns tap capture on (:func:`capture_setters`; ``"none"`` when it does not)."""

    name = "pp_capture_setters"
    # 2: "none" for a module with no capture setter (every module the
    # needles admit is listed: ``pp_tap_drops`` reads those)
    version = 2
    needles = PAYLOAD_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        if "captur" not in text.lower():
            return "none"  # (nothing can turn capture on: no walk)
        return capture_setters(tree) or "none"

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> CaptureIndex:
        return CaptureIndex(per_module)


def capture_gated(text: str, tree: Callable[[], ast.Module | None], facts: ProjectFacts) -> bool:
    """Whether the other ranks collect no taps: the module's own capture
    setters (read from ``text``, whose ``ast`` ``tree`` gives) are gated, or
    it has none and the project's are."""
    state = None
    if "captur" in text.lower():
        parsed = tree()
        state = capture_setters(parsed) if parsed is not None else None
    if state is not None:
        return state == "gated"
    return bool(getattr(facts.index("pp_capture_setters"), "any_gated", False))
