"""Reading a source file: bytes to text (PEP 263 encodings, BOM, NUL bytes),
the SHD000 finding for a file that cannot be read, and the hashes and message
shape every finding shares. Plain data; no libcst."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import tokenize
import unicodedata
from pathlib import Path

from linter.safeio import DEFAULT_MAX_FILE_SIZE, UnreadableFile, read_bounded
from linter.types import Diagnostic, Severity, Span

def shd000(path: str, line: int, col: int, message: str) -> Diagnostic:
    span = Span(max(line, 1), max(col, 0), max(line, 1), max(col, 0) + 1)
    return Diagnostic(
        code="SHD000",
        name="unparsable-file",
        severity=Severity.ERROR,
        path=path,
        span=span,
        message=message,
        fingerprint=content_hash("SHD000", path, message),
    )


def decode_source(data: bytes, relpath: str) -> tuple[str | None, Diagnostic | None]:
    """Bytes → text as Python would read it (PEP 263 cookie, BOM), or one
    SHD000 diagnostic saying why not."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return None, shd000(relpath, line, 0, "file contains NUL bytes; not Python source")
    # The common case without the tokenize machinery: no BOM and no
    # ``coding`` in the first two lines (where a PEP 263 cookie must be) is
    # UTF-8; anything else, or a file that then fails to decode, takes the
    # full path (and its messages).
    first = data.find(b"\n", data.find(b"\n") + 1) if b"\n" in data else len(data)
    if not data.startswith(b"\xef\xbb\xbf") and b"coding" not in data[: first if first >= 0 else len(data)]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
            return (text if data.isascii() else normalize_identifiers(text, data)), None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, shd000(relpath, 1, 0, f"cannot determine the file's encoding: {exc}")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        return None, shd000(relpath, line, 0, f"cannot decode the file as {encoding}: {exc}")
    if text.startswith("\ufeff"):
        text = text[1:]
    # universal newlines, as Python's own reader does
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return normalize_identifiers(text), None


_ASCII_BYTES = bytes(range(128))


@functools.lru_cache(maxsize=4096)
def _changes_in_a_name(c: str) -> bool:
    return ("a" + c).isidentifier() and unicodedata.normalize("NFKC", c) != c


def normalize_identifiers(text: str, data: bytes | None = None) -> str:
    """``text`` with every identifier NFKC-normalised, as Python's parser
    reads it (``ｍｉｎ(w, 1024)`` calls ``min``, ``𝐁LOCK`` is ``BLOCK``):
    the needles and the rules then see the names Python sees. Strings and
    comments are left alone; an ASCII or already normalised text (nearly
    every file) is returned as it is, without tokenizing. A look-alike is
    one character for one almost always, so positions stay; a text that
    does not tokenize is returned as it is (its syntax error is reported
    elsewhere). ``data``: the UTF-8 bytes ``text`` was decoded from, when at
    hand (saves encoding it again)."""
    if text.isascii():
        return text
    # tokenize only when some character NFKC changes could be part of a
    # name (full-width punctuation and arrows in comments cannot): the
    # non-ASCII characters alone, found at C speed (ASCII bytes are never
    # part of a multi-byte UTF-8 sequence), each judged once per process
    raw = data if data is not None else text.encode("utf-8", "surrogatepass")
    rest = raw.translate(None, _ASCII_BYTES).decode("utf-8", "replace")
    if not any(_changes_in_a_name(c) for c in set(rest)):
        return text
    changes: dict[int, list[tuple[int, int, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii():
                norm = unicodedata.normalize("NFKC", tok.string)
                if norm != tok.string:
                    (row, col), (_, end) = tok.start, tok.end
                    changes.setdefault(row, []).append((col, end, norm))
    except (tokenize.TokenError, SyntaxError):
        return text
    if not changes:
        return text
    lines = text.split("\n")
    for row, edits in changes.items():
        line = lines[row - 1]
        for col, end, norm in sorted(edits, reverse=True):
            line = line[:col] + norm + line[end:]
        lines[row - 1] = line
    return "\n".join(lines)


def read_source(
    path: Path | str, relpath: str, max_bytes: int = DEFAULT_MAX_FILE_SIZE
) -> tuple[str | None, Diagnostic | None]:
    """The text of a regular file of at most ``max_bytes``, or one SHD000:
    a FIFO, a device or a file over the limit is skipped, never read
    (:func:`linter.safeio.read_bounded`: no hang, no read without end)."""
    try:
        data = read_bounded(path, max_bytes)
    except UnreadableFile as exc:
        return None, shd000(relpath, 1, 0, f"not checked: {exc}")
    except OSError as exc:
        what = "folder" if os.path.isdir(path) else "file"
        return None, shd000(relpath, 1, 0, f"cannot read the {what}: {exc.strerror or exc}")
    return decode_source(data, relpath)


_LINE_BREAK_RUN = re.compile(r"[ \t]*(?:\r\n|\r|\n)\s*")


def one_line(message: str) -> str:
    """A finding's message on one line (code quoted from several lines
    keeps one space per line break): one finding per output line, as
    flake8-style consumers and CI annotations expect."""
    return _LINE_BREAK_RUN.sub(" ", message) if "\n" in message or "\r" in message else message


def content_hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
