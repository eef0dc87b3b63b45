"""The human format: the concise line, the source line with carets, then the
notes (why it breaks) and the fix (what to do)."""

from __future__ import annotations

from collections.abc import Sequence

from linter.fixes import applicable
from linter.report import ReportContext
from linter.types import Diagnostic


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    out: list[str] = []
    for d in diags:
        path = ctx.display_path(d.path)
        out.append(f"{path}:{d.span.line}:{d.span.column + 1}: {d.code} [{d.name}] {d.message}")
        src = ctx.source_line(d.path, d.span.line)
        if src:
            gutter = f"{d.span.line:>5} | "
            out.append(gutter + src)
            end = d.span.end_column if d.span.end_line == d.span.line else len(src)
            width = max(1, end - d.span.column)
            out.append(" " * (len(gutter) - 2) + "| " + " " * d.span.column + "^" * width)
        for note in d.notes:
            where = ""
            if note.path and note.span:
                where = f" ({ctx.display_path(note.path)}:{note.span.line})"
            out.append(f"  = note: {note.message}{where}")
        if d.fix is not None:
            if not d.fix.edits:
                out.append(f"  = help: {d.fix.title}")
            else:
                how = (
                    "apply with --fix"
                    if applicable(d.fix, False)
                    else "apply with --fix --unsafe-fixes"
                    if d.fix.applicability.value == "unsafe"
                    else "shown only"
                )
                out.append(f"  = fix ({d.fix.applicability.value}, {how}): {d.fix.title}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
