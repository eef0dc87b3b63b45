"""Reading and writing files a hostile tree may hold: never block, never
read without end, never follow a link where the caller said not to.

- :func:`read_bounded` reads source and configuration files: opened
  non-blocking (a FIFO with no writer opens at once instead of hanging the
  run), judged by ``fstat`` of what was opened (a symlink to ``/dev/zero`` is
  a character device, not a file), read up to a byte limit (a file growing
  meanwhile is still bounded).
- :func:`open_no_follow` opens a file for reading without following a
  symlink (the cache's own files).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Source files over this size are skipped with SHD000 (``max-file-size`` in
# [tool.shardlint]): libcst needs ~300 bytes of memory per byte of source, so
# a 50 MB generated file would need ~14 GB. The biggest hand-written files of
# vLLM and SGLang are under 0.3 MB.
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024
# A configuration file is never bigger than this.
MAX_CONFIG_SIZE = 1024 * 1024

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class UnreadableFile(Exception):
    """Not read: not a regular file (a FIFO, a device, a socket, a folder)
    or over the size limit. The message says which."""


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def too_large_message(size: int, max_bytes: int, key: str | None) -> str:
    hint = f"; raise '{key}' in [tool.shardlint] to read it" if key else ""
    return f"over {max_bytes:,} bytes ({size:,}){hint}"


def read_bounded(
    path: Path | str, max_bytes: int, *, devices: bool = False, key: str | None = "max-file-size"
) -> bytes:
    """The bytes of ``path``, at most ``max_bytes`` of them. A regular file
    only, unless ``devices`` (a configuration file given as ``/dev/null`` or
    a pipe): then anything but a folder, still bounded. Raises ``OSError``
    when it cannot be opened or read, :class:`UnreadableFile` for the rest."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _O_CLOEXEC)
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if not regular and (not devices or stat.S_ISDIR(st.st_mode)):
            raise UnreadableFile(f"{kind_of(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes:
            raise UnreadableFile(too_large_message(st.st_size, max_bytes, key))
        chunks: list[bytes] = []
        total = 0
        want = min(st.st_size, max_bytes) + 1 if regular else 1 << 16
        while True:
            try:
                chunk = os.read(fd, want)
            except BlockingIOError:  # a pipe or device with nothing to give now
                break
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnreadableFile(too_large_message(total, max_bytes, key))
            want = min(1 << 20, max_bytes + 1 - total)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def open_no_follow(path: Path | str) -> int:
    """A read-only descriptor of ``path``, refusing a symlink (``OSError``
    ELOOP) and anything but a regular file (``UnreadableFile``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableFile(f"{kind_of(mode)}, not a regular file")
    return fd


def size_of(path: str) -> int:
    """A file's size in bytes; 0 when it cannot be read (a job's weight)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
