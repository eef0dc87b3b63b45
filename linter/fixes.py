"""Applying fixes: text edits, non-overlapping, all edits of one fix or none;
the result must re-parse before it is accepted."""

from __future__ import annotations

import codecs
import difflib
import io
import os
import re
import tempfile
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from linter.astwalk import line_starts
from linter.types import Applicability, Diagnostic, Fix


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def _offset(starts: Sequence[int], text: str, line: int, col: int) -> int:
    if line - 1 >= len(starts):
        return len(text)
    return min(starts[line - 1] + col, len(text))


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Apply as many fixes as fit without overlapping; return the new text and
    the number of fixes applied. Identical edits from different fixes (two
    findings both adding ``import math``) are applied once."""
    starts = line_starts(text)
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


# -- writing a fixed file as it was written ------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class CannotWrite(Exception):
    """A fix that cannot be written as the file is: the message says why
    (the file is left unchanged)."""


@dataclass(frozen=True)
class Original:
    """A source file's bytes as Python reads them: the text with universal
    newlines (what the engine checks and fixes), and what writing it back
    must keep: the encoding (PEP 263 cookie), the BOM, each line's ending."""

    data: bytes
    text: str
    encoding: str
    bom: bool
    endings: tuple[str, ...]  # of each line of ``text.split("\n")`` but the last

    @staticmethod
    def decode(data: bytes) -> Original:
        """Raises ``SyntaxError`` (a bad cookie) or ``UnicodeDecodeError``
        / ``LookupError``: the engine reports those as SHD000 already."""
        bom = data.startswith(codecs.BOM_UTF8)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        raw = data[len(codecs.BOM_UTF8):] if bom else data
        decoded = raw.decode("utf-8" if encoding == "utf-8-sig" else encoding)
        lines = _LINE.findall(decoded)
        endings = tuple(_ending(x) for x in lines if _ending(x))
        text = decoded.replace("\r\n", "\n").replace("\r", "\n") if "\r" in decoded else decoded
        return Original(data, text, encoding, bom, endings)

    def encode(self, new_text: str) -> bytes:
        """``new_text`` (universal newlines, a fixed ``text``) in this
        file's encoding, BOM and line endings: a line the fix left alone
        keeps its ending, a new one takes the file's commonest. Raises
        :class:`CannotWrite` when the encoding cannot hold the new text."""
        before, after = self.text.split("\n"), new_text.split("\n")
        common = max(set(self.endings), key=self.endings.count) if self.endings else "\n"
        out: list[str] = []
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, _, j1, j2 in matcher.get_opcodes():
            for k in range(j2 - j1):
                j = j1 + k
                if j == len(after) - 1:  # the text after the last line break
                    out.append(after[j])
                    continue
                i = i1 + k
                keep = tag == "equal" and i < len(self.endings)
                out.append(after[j] + (self.endings[i] if keep else common))
        text = "".join(out)
        encoding = "utf-8" if self.encoding == "utf-8-sig" else self.encoding
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start:exc.end]
            raise CannotWrite(f"the fixed code holds {bad!r}, which {self.encoding} (the file's encoding) cannot hold") from None
        return codecs.BOM_UTF8 + data if self.bom else data


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line and line[-1] in "\r\n" else ""


def write_in_place(path: Path, data: bytes, expected: bytes) -> None:
    """Replace the contents of ``path`` with ``data`` through the file
    itself: the same inode, so a symlink keeps pointing at it, hard links
    stay one file, and owner, group, mode and ACLs stay as they are.
    Raises :class:`CannotWrite` when the file is not what was read
    (``expected``: changed meanwhile) or cannot be written."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise CannotWrite(f"cannot open it for writing: {exc.strerror or exc}") from None
    with os.fdopen(fd, "r+b", buffering=0) as fh:
        current = fh.readall()
        if current != expected:
            raise CannotWrite("it changed while being fixed; run again")
        try:
            fh.seek(0)
            fh.write(data)
            fh.truncate(len(data))
            os.fsync(fh.fileno())
        except OSError as exc:
            raise CannotWrite(f"cannot write it: {exc.strerror or exc}") from None
