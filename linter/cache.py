"""The results cache: content-addressed, JSON state per (tool version,
effective configuration), in shards by path.

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
import zlib
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


SHARDS = 16


def shard_of(relpath: str) -> int:
    return zlib.crc32(relpath.encode("utf-8", "surrogatepass")) % SHARDS


class Cache:
    """State per (tool version, configuration key), split into shards by path
    so that an edit rewrites one shard, not the state of the whole tree."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._loaded: dict[str, dict[str, Entry]] = {}
        # per state: small derived values worth keeping (facts digests)
        self.meta: dict[str, dict[str, Any]] = {}
        self._dirty: dict[str, set[int | str]] = {}

    def _file(self, key: str, shard: int | str) -> Path:
        return self.directory / f"v{FORMAT}-{__version__}-{key}-{shard}.json"

    def _read(self, path: Path) -> Any:
        try:
            with path.open("r", encoding="utf-8") as fh:
                raw = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != __version__:
            return None
        return raw

    def entries(self, key: str) -> dict[str, Entry]:
        if key in self._loaded:
            return self._loaded[key]
        out: dict[str, Entry] = {}
        for shard in range(SHARDS):
            raw = self._read(self._file(key, shard))
            if raw is None:
                continue
            try:
                for rel, e in raw["files"].items():
                    out[rel] = Entry(e["m"], e["s"], e["h"], e.get("scan"), e.get("check"))
            except (KeyError, TypeError, AttributeError):
                continue  # a damaged shard is dropped and rewritten
        meta = self._read(self._file(key, "meta"))
        self.meta[key] = dict(meta.get("meta", {})) if isinstance(meta, dict) and isinstance(meta.get("meta"), dict) else {}
        self._loaded[key] = out
        return out

    def mark_dirty(self, key: str, relpath: str | None = None) -> None:
        """``relpath``'s shard (default: every shard) must be written."""
        d = self._dirty.setdefault(key, set())
        if relpath is None:
            d.update(range(SHARDS))
        else:
            d.add(shard_of(relpath))

    def mark_meta_dirty(self, key: str) -> None:
        self._dirty.setdefault(key, set()).add("meta")

    def save(self) -> None:
        for key in sorted(self._dirty):
            entries = self._loaded.get(key, {})
            shards = self._dirty[key]
            by_shard: dict[int, dict[str, Any]] = {i: {} for i in shards if isinstance(i, int)}
            for rel, e in entries.items():
                sh = shard_of(rel)
                if sh in by_shard:
                    by_shard[sh][rel] = {"m": e.mtime, "s": e.size, "h": e.digest, "scan": e.scan, "check": e.check}
            blobs: list[tuple[int | str, dict[str, Any]]] = [
                (sh, {"format": FORMAT, "version": __version__, "files": dict(sorted(files.items()))})
                for sh, files in sorted(by_shard.items())
            ]
            if "meta" in shards:
                blobs.append(("meta", {"format": FORMAT, "version": __version__, "meta": self.meta.get(key, {})}))
            for sh, blob in blobs:
                try:
                    self._write(self._file(key, sh), json.dumps(blob, separators=(",", ":")))
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
