"""From shardlint's data to the protocol's: diagnostics, text edits, the
noqa edit, rule documentation. Positions: shardlint's lines are 1-based and
its columns count code points; the client's columns count the units it
negotiated (UTF-16 unless told otherwise), converted through pygls's codec."""

from __future__ import annotations

import io
import os
import re
import tempfile
import tokenize
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from linter import __version__
from linter.suppression import parse_suppressions
from linter.types import Applicability, Diagnostic, Edit, Severity, Span

SOURCE = "shardlint"
SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}
_CODE_WORD = re.compile(r"\b[A-Z]+[0-9]+\b", re.IGNORECASE)


def to_range(codec: PositionCodec, lines: Sequence[str], span: Span) -> lsp.Range:
    def pos(line: int, col: int) -> lsp.Position:
        return codec.position_to_client_units(lines, ServerTextPosition(max(line - 1, 0), max(col, 0)))

    return lsp.Range(pos(span.line, span.column), pos(span.end_line, span.end_column))


def from_position(codec: PositionCodec, lines: Sequence[str], p: lsp.Position) -> tuple[int, int]:
    """A client position as shardlint's (1-based line, code-point column)."""
    sp = codec.position_from_client_units(lines, lsp.Position(p.line, p.character))
    return sp.line + 1, sp.character


def contains(span: Span, line: int, col: int) -> bool:
    return (span.line, span.column) <= (line, col) <= (span.end_line, span.end_column)


def to_diagnostic(
    d: Diagnostic,
    codec: PositionCodec,
    lines: Sequence[str],
    root: Path,
    lines_of: Callable[[Path], Sequence[str]],
) -> lsp.Diagnostic:
    """One finding for the client: severity, code, a link to the rule's
    documentation, the notes as related information (a note that names no
    other place points at the finding itself)."""
    rng = to_range(codec, lines, d.span)
    related = []
    for note in d.notes:
        if note.path:
            where = root / note.path
            span = note.span or Span(1, 0, 1, 0)
            loc = lsp.Location(from_fs_path(str(where)) or "", to_range(codec, lines_of(where), span))
        else:
            loc = lsp.Location("", rng)  # filled with the document's uri by the caller
        related.append(lsp.DiagnosticRelatedInformation(loc, note.message))
    href = docs_uri(d.code)
    tags = [lsp.DiagnosticTag.Unnecessary] if d.code == "SHD900" else None
    return lsp.Diagnostic(
        range=rng,
        message=f"{d.message} [{d.name}]" if d.name else d.message,
        severity=SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=lsp.CodeDescription(href) if href else None,
        source=SOURCE,
        related_information=related or None,
        tags=tags,
        data={"fingerprint": d.fingerprint, "fixable": d.fix is not None and bool(d.fix.edits)},
    )


def text_edit(codec: PositionCodec, lines: Sequence[str], edit: Edit) -> lsp.TextEdit:
    return lsp.TextEdit(to_range(codec, lines, edit.span), edit.replacement)


def fix_title(d: Diagnostic) -> str:
    assert d.fix is not None
    unsafe = d.fix.applicability is Applicability.UNSAFE
    return f"{d.code}: {d.fix.title}" + (" (unsafe fix)" if unsafe else "")


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """The edit that makes ``# noqa`` on 1-based ``line`` suppress ``code``:
    the code added to an existing ``# noqa: ...`` comment, else a new
    comment at the end of the line. None where no comment can go (the line
    ends inside a string or with a backslash) or a bare noqa is already there."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    current = parse_suppressions(text).lines.get(line)
    if current is not None:
        if current.codes is None or code in current.codes:
            return None
        at = current.column + current.match_end
        return Edit(Span(line, at, line, at), f", {code}")
    physical = lines[line - 1].rstrip("\r")
    if physical.rstrip().endswith("\\") or _inside_string_at_end(text, line):
        return None
    end = len(physical.rstrip())
    return Edit(Span(line, end, line, len(physical)), f"  # noqa: {code}")


def _inside_string_at_end(text: str, line: int) -> bool:
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] > line:
                break
            if tok.type == tokenize.STRING and tok.start[0] <= line < tok.end[0]:
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True  # cannot tell: offer nothing rather than break the code
    return False


def noqa_code_at(text: str, line: int, col: int) -> str | None:
    """The code under (1-based line, code-point column) when it lies in a
    ``# noqa`` comment."""
    c = parse_suppressions(text).lines.get(line)
    if c is None or not c.column <= col <= c.end_column:
        return None
    for m in _CODE_WORD.finditer(c.text, c.match_start, c.match_end):
        if c.column + m.start() <= col <= c.column + m.end():
            return m.group(0).upper()
    return None


# -- rule documentation -------------------------------------------------------


@lru_cache(maxsize=None)
def docs_markdown(code: str) -> str | None:
    from linter.docs import render_markdown
    from linter.registry import load_registry

    rule = load_registry().lookup(code)
    if rule is None:
        return None
    return render_markdown(rule)


def docs_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shardlint" / "docs" / __version__


@lru_cache(maxsize=None)
def docs_uri(code: str) -> str | None:
    """A file holding the rule's documentation (markdown), written once per
    version: what ``codeDescription`` links to and the show-docs command opens."""
    md = docs_markdown(code)
    if md is None:
        return None
    target = docs_dir() / f"{code}.md"
    try:
        if not target.is_file() or target.read_text(encoding="utf-8") != md:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(md)
            os.replace(tmp, target)
    except OSError:
        return None
    return from_fs_path(str(target))
