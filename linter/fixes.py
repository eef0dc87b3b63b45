"""Applying fixes: text edits, non-overlapping, all edits of one fix or none;
the result must re-parse before it is accepted."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from linter.types import Applicability, Diagnostic, Fix


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def _offsets(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(starts: Sequence[int], text: str, line: int, col: int) -> int:
    if line - 1 >= len(starts):
        return len(text)
    return min(starts[line - 1] + col, len(text))


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Apply as many fixes as fit without overlapping; return the new text and
    the number of fixes applied. Identical edits from different fixes (two
    findings both adding ``import math``) are applied once."""
    starts = _offsets(text)
    accepted: list[tuple[int, int, str]] = []
    count = 0
    for fix in sorted(fixes, key=lambda f: min((e.span.line, e.span.column) for e in f.edits)):
        ranges = []
        for e in fix.edits:
            a = _offset(starts, text, e.span.line, e.span.column)
            b = _offset(starts, text, e.span.end_line, e.span.end_column)
            ranges.append((a, b, e.replacement))
        fresh = [r for r in ranges if r not in accepted]
        if any(_overlaps(r, acc) for r in fresh for acc in accepted):
            continue
        accepted.extend(fresh)
        count += 1
    out = text
    for a, b, rep in sorted(accepted, key=lambda r: (r[0], r[1]), reverse=True):
        out = out[:a] + rep + out[b:]
    return out, count


def _overlaps(x: tuple[int, int, str], y: tuple[int, int, str]) -> bool:
    (a1, b1, _), (a2, b2, _) = x, y
    if a1 == b1 and a2 == b2:
        return a1 == a2  # two insertions at one point: order would be ambiguous
    return a1 < b2 and a2 < b1 or (a1 == b1 and a2 < a1 < b2) or (a2 == b2 and a1 < a2 < b1)


def fixable(diags: Iterable[Diagnostic], unsafe: bool) -> list[Fix]:
    return [d.fix for d in diags if not d.suppressed and applicable(d.fix, unsafe) and d.fix]


def write_atomic(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write through a temporary file in the same folder, then rename, keeping
    the file's permission bits."""
    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
