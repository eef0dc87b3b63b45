"""Where a node of the file under check is, for a note that points at it
(a related location of the same finding)."""

from __future__ import annotations

import re

import libcst as cst

from linter.api import Note
from linter.positions import report_positions
from linter.rule import RuleContext
from linter.types import Span


def note_at(ctx: RuleContext, node: cst.CSTNode, message: str) -> Note:
    """A note pointing at ``node`` in this file, placed by generating only
    the definition being visited, as the engine does for a report (a plain
    note when it cannot be placed)."""
    scopes = ctx.scope_nodes
    top = scopes[0] if scopes else None
    member = scopes[1] if len(scopes) > 1 else None
    got = report_positions(ctx.module, ctx.text, [(node, top, member)]).get(node)
    return Note(message, ctx.path, Span(*got)) if got else Note(message)


_IMPORTS_SGLANG = re.compile(r"^\s*(?:from|import)\s+sglang\b", re.MULTILINE)


def is_sglang(ctx: RuleContext) -> bool:
    """Whether the file under check is SGLang's (its fixes are spelled
    with SGLang's names): its module or path says so, or it imports
    ``sglang`` (a tree linted from inside its package)."""
    parts = {*ctx.module_name.split("."), *ctx.path.replace("\\", "/").split("/")}
    return "sglang" in parts or _IMPORTS_SGLANG.search(ctx.text) is not None
