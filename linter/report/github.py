"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice``
line per finding, which the runner turns into annotations on the pull request.

``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=T::message``

Columns are 1-based and ``endColumn`` is exclusive (as ruff writes them);
``endColumn`` is only given for a one-line span because GitHub ignores columns
on a multi-line annotation. Paths are relative to the working directory (the
checkout, where the runner resolves them). Data escapes ``%``, CR and LF;
properties also escape ``:`` and ``,``, which would otherwise end the property.
GitHub shows at most 10 errors and 10 warnings per step in the summary; the
log keeps every line. Suppressed findings are not annotated.
"""

from __future__ import annotations

from collections.abc import Sequence

from linter.report import ReportContext
from linter.types import Diagnostic, Severity

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, props: Sequence[tuple[str, str | int]], message: str) -> str:
    body = ",".join(f"{k}={escape_property(str(v))}" for k, v in props)
    return (
        f"::{kind} {body}::{escape_data(message)}\n"
        if body
        else f"::{kind}::{escape_data(message)}\n"
    )


def _message(d: Diagnostic, ctx: ReportContext) -> str:
    lines = [d.message]
    for n in d.notes:
        where = f" ({ctx.display_path(n.path)}:{n.span.line})" if n.path and n.span else ""
        lines.append(f"note: {n.message}{where}")
    if d.fix is not None:
        lines.append(f"fix ({d.fix.applicability.value}): {d.fix.title}")
    return "\n".join(lines)


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    out: list[str] = []
    for d in diags:
        if d.suppressed:
            continue
        s = d.span
        props: list[tuple[str, str | int]] = [
            ("file", ctx.display_path(d.path)),
            ("line", s.line),
            ("col", s.column + 1),
            ("endLine", s.end_line),
        ]
        if s.end_line == s.line:
            props.append(("endColumn", s.end_column + 1))
        props.append(("title", f"shardlint {d.code} ({d.name})"))
        out.append(_command(COMMANDS[d.severity], props, _message(d, ctx)))
    for e in ctx.errors:
        rule = f" in {e.code}" if e.code else ""
        props = [("file", ctx.display_path(e.path)), ("title", f"shardlint internal error{rule}")]
        out.append(_command("error", props, e.message))
    return "".join(out)
