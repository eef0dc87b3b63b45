"""flake8's format: ``path:line:col: CODE message`` (1-based column)."""

from __future__ import annotations

from collections.abc import Sequence

from linter.report import ReportContext
from linter.types import Diagnostic


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    return "".join(
        f"{ctx.display_path(d.path)}:{d.span.line}:{d.span.column + 1}: {d.code} {d.message}\n"
        for d in diags
    )
