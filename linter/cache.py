"""The results cache: content-addressed, one JSON state file per (tool version,
effective configuration).

Per file it keeps the content hash (with the file's size and mtime, so that an
unchanged file is not even read), the scan result (syntax verdict and facts)
and the check result (diagnostics) together with the digest of the facts the
check depended on. An entry is used only when its content hash, and for check
results the facts digest, still match: stat data only saves re-hashing.
A corrupt, truncated or foreign-version state file is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter import __version__

FORMAT = 1


@dataclass
class Entry:
    mtime: int
    size: int
    digest: str
    scan: dict[str, Any] | None = None  # {"error": diag|None, "facts": {...}, "syntax": bool}
    check: dict[str, Any] | None = None  # {"fk": facts key, "diags": [...], "parsed": bool}


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._loaded: dict[str, dict[str, Entry]] = {}
        # per state file: small derived values worth keeping (facts digests)
        self.meta: dict[str, dict[str, Any]] = {}
        self._dirty: set[str] = set()

    def _file(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}-{__version__}-{key}.json"

    def entries(self, key: str) -> dict[str, Entry]:
        if key in self._loaded:
            return self._loaded[key]
        out: dict[str, Entry] = {}
        try:
            with self._file(key).open("r", encoding="utf-8") as fh:
                raw = json.load(fh)
            if raw.get("format") == FORMAT and raw.get("version") == __version__:
                for rel, e in raw["files"].items():
                    out[rel] = Entry(e["m"], e["s"], e["h"], e.get("scan"), e.get("check"))
                meta = raw.get("meta")
                self.meta[key] = dict(meta) if isinstance(meta, dict) else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            out = {}
        self._loaded[key] = out
        return out

    def mark_dirty(self, key: str) -> None:
        self._dirty.add(key)

    def save(self) -> None:
        for key in sorted(self._dirty):
            entries = self._loaded.get(key, {})
            blob = {
                "format": FORMAT,
                "version": __version__,
                "meta": self.meta.get(key, {}),
                "files": {
                    rel: {"m": e.mtime, "s": e.size, "h": e.digest, "scan": e.scan, "check": e.check}
                    for rel, e in sorted(entries.items())
                },
            }
            try:
                self._write(self._file(key), json.dumps(blob, separators=(",", ":")))
            except OSError:
                pass  # a read-only tree still lints; it just stays cold
        self._dirty.clear()

    def _write(self, path: Path, text: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# shardlint cache\n")
            (self.directory / ".gitignore").write_text("*\n")
        fd, tmp = tempfile.mkstemp(dir=str(self.directory), prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
