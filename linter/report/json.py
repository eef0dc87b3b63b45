"""A JSON list of findings. Columns are 1-based; ``end_column`` is exclusive.
Paths are those the concise and full formats print (relative to the working
directory when below it), so one run's outputs name a file alike."""

from __future__ import annotations

import json as _json
from collections.abc import Sequence
from typing import Any

from linter.report import ReportContext
from linter.types import Diagnostic, Span


def _pos(span: Span | None) -> dict[str, int] | None:
    if span is None:
        return None
    return {
        "line": span.line,
        "column": span.column + 1,
        "end_line": span.end_line,
        "end_column": span.end_column + 1,
    }


def to_obj(d: Diagnostic, ctx: ReportContext) -> dict[str, Any]:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "path": ctx.display_path(d.path),
        **_pos(d.span),  # type: ignore[dict-item]
        "message": d.message,
        "notes": [
            {"message": n.message, "path": ctx.display_path(n.path) if n.path else None, "location": _pos(n.span)}
            for n in d.notes
        ],
        "fix": None
        if d.fix is None
        else {
            "title": d.fix.title,
            "applicability": d.fix.applicability.value,
            "edits": [{"content": e.replacement, **_pos(e.span)} for e in d.fix.edits],  # type: ignore[dict-item]
        },
        "fingerprint": d.fingerprint,
        "suppressed": d.suppressed,
    }


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    return _json.dumps([to_obj(d, ctx) for d in diags], indent=2, ensure_ascii=False) + "\n"
