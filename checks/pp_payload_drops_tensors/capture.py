"""The ``pp_capture_setters`` facts: how a module turns tap capture on, and
whether some module of the project turns it on for the last rank only (a
convention a model file follows when it inherits its capture setter from
another module)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from checks.pp_payload_drops_tensors.needles import PAYLOAD_NEEDLES
from checks.pp_payload_drops_tensors.paths import functions
from linter.api import FactCollector, ProjectFacts
from linter.astwalk import ast_dotted

# what every default last-rank test holds
LAST_RANK_WORDS = ("is_last_rank", "last_stage", "last_pp_rank")


def _identifiers(node: ast.AST) -> Iterator[str]:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            yield n.attr
        elif isinstance(n, ast.Name):
            yield n.id


def _falsy_literal(value: ast.AST | None) -> bool:
    """``False``, ``None``, ``0``, ``[]``, ``()``, ``{}``, ``set()``: capture off."""
    if value is None or (isinstance(value, ast.Constant) and not value.value):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and not value.elts:
        return True
    if isinstance(value, ast.Dict) and not value.keys:
        return True
    empty = ("set", "list", "tuple", "dict")
    return isinstance(value, ast.Call) and ast_dotted(value.func) in empty and not value.args


def _sets_capture(stmts: Sequence[ast.stmt]) -> bool:
    """Whether the statements assign a capture attribute (a name holding
    ``captur``) other than an empty or false literal (``__init__``'s
    ``self.capture_aux_hidden_states = False`` turns nothing on)."""
    for n in (n for st in stmts for n in ast.walk(st)):
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
    turns a capture attribute on first returns unless on the last rank
    (SGLang's ``if not self.pp_group.is_last_rank: return``) or raises under a
    pipeline test (``if pp_group.world_size != 1: raise``), so other ranks
    collect nothing to drop (an inner model's setter, called by the gated one,
    counts with it); ``"open"`` when none such is gated; None when none."""
    state: str | None = None
    for _qual, node in functions(tree.body):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # (a docstring)
        if not _sets_capture(body):
            continue
        first = body[0]
        guarded = isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 and (
            (
                isinstance(first.test, ast.UnaryOp)
                and isinstance(first.test.op, ast.Not)
                and any(w in i for i in _identifiers(first.test.operand) for w in LAST_RANK_WORDS)
                and isinstance(first.body[0], ast.Return)
                and first.body[0].value is None
            )
            or (
                isinstance(first.body[0], ast.Raise)
                and any(w in i.lower() for i in _identifiers(first.test) for w in ("pp", "pipeline"))
            )
        )
        if guarded:
            return "gated"
        state = "open"
    return state


def gated(state: str | None, states: Mapping[str, Any]) -> bool:
    """Whether a module whose own capture setters are in ``state`` collects no
    taps on the other ranks: they are gated, or it has none and some module's
    (``states``, the project's) are."""
    return state == "gated" if state in ("gated", "open") else "gated" in states.values()


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


def capture_gated(text: str, tree: Callable[[], ast.Module | None], facts: ProjectFacts) -> bool:
    """Whether the other ranks collect no taps, by the module's own capture
    setters (read from ``text``, whose ``ast`` ``tree`` gives) or the project's."""
    state = None
    if "captur" in text.lower() and (parsed := tree()) is not None:
        state = capture_setters(parsed)
    return gated(state, facts.index("pp_capture_setters"))
