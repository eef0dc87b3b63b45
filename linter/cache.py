"""The results cache: content-addressed, JSON state per (tool version,
effective configuration), in shards by path.

Per file it keeps the content hash (with the file's size and mtime, so that an
unchanged file is not even read), the scan result (syntax verdict, gated
rules, a hash of its facts per collector) and the check result (diagnostics)
together with the digest of the facts the check depended on. An entry is used
only when its content hash, and for check results the facts digest, still
match: stat data only saves re-hashing.

The facts themselves (most of the bytes) live in their own files, per shard
and collector, read only when a rule needs that collector: a warm run over an
unchanged tree reads the small shards alone. A corrupt, truncated or foreign-version state file is ignored
and rewritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter import __version__

# 3: 8 shards (2: 16)
FORMAT = 3


@dataclass
class Entry:
    mtime: int
    size: int
    digest: str
    scan: dict[str, Any] | None = None  # {"error", "checked", "rules", "noqa", "fh": {collector: hash}}
    check: dict[str, Any] | None = None  # {"fk": facts key, "cols", "diags": [...], "parsed": bool}
    # {collector: data}, filled from the facts files as collectors are needed
    facts: dict[str, Any] = field(default_factory=dict)


# 8 rather than 16: a cold run writes half as many state files (their
# creation, not their bytes, is what costs: 0.06 s less on vLLM), and an edit
# still rewrites an eighth of the state
SHARDS = 8
# State of other (version, configuration) keys kept besides the ones in use:
# a config switched back and forth (pre-commit's subset, CI's full set) stays
# warm, and the folder stops growing with every version or option ever run.
KEEP_OTHER_KEYS = 3
_STATE_FILE = re.compile(r"(v\d+-.+-[0-9a-f]{16})-\d+(?:\.facts\.\w+)?\.json")


def shard_of(relpath: str) -> int:
    return zlib.crc32(relpath.encode("utf-8", "surrogatepass")) % SHARDS


class Cache:
    """State per (tool version, configuration key), split into shards by path
    so that an edit rewrites one shard, not the state of the whole tree."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._loaded: dict[str, dict[str, Entry]] = {}
        self._facts_read: dict[str, set[tuple[int, str]]] = {}
        self._dirty: dict[str, set[int]] = {}
        # shards whose facts files ``save_facts`` wrote and whose facts have
        # not changed since: ``save`` writes only their state files
        self._facts_saved: dict[str, set[int]] = {}
        self._ready = False  # the directory and its tag made during this save

    def _file(self, key: str, shard: int, kind: str = "") -> Path:
        return self.directory / f"v{FORMAT}-{__version__}-{key}-{shard}{kind}.json"

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
        self._loaded[key] = out
        self._facts_read[key] = set()
        return out

    def load_facts(self, key: str, names: set[str] | None = None, shards: set[int] | None = None) -> None:
        """Fill in ``Entry.facts[name]`` from the facts files (default: every
        collector, every shard), each file read at most once. A file's facts
        for a collector are in ``Entry.facts`` afterwards if its facts hash
        (``scan["fh"]``) names the collector, unless the facts file lost them:
        the engine then scans that file again."""
        entries = self.entries(key)
        done = self._facts_read.setdefault(key, set())
        want_shards = range(SHARDS) if shards is None else sorted(shards)
        if names is None:
            names = {n for e in entries.values() for n in (e.scan or {}).get("fh", {})}
        todo = [(sh, n) for sh in want_shards for n in sorted(names) if (sh, n) not in done]
        if not todo:
            return
        by_shard: dict[int, list[tuple[str, Entry]]] = {}
        for rel, e in entries.items():
            by_shard.setdefault(shard_of(rel), []).append((rel, e))
        for sh, name in todo:
            done.add((sh, name))
            raw = self._read(self._facts_file(key, sh, name))
            files = raw.get("files") if isinstance(raw, dict) else None
            if not isinstance(files, dict):
                continue
            for rel, e in by_shard.get(sh, ()):
                if name not in e.facts and name in (e.scan or {}).get("fh", {}):
                    value = files.get(rel)
                    if value is not None:
                        e.facts[name] = value

    def _facts_file(self, key: str, shard: int, name: str) -> Path:
        return self.directory / f"v{FORMAT}-{__version__}-{key}-{shard}.facts.{name}.json"

    def mark_dirty(self, key: str, relpath: str | None = None, facts: bool = True) -> None:
        """``relpath``'s shard (default: every shard) must be written; with
        ``facts`` False only its state changed (a check result), not the
        facts of its files."""
        shards = range(SHARDS) if relpath is None else (shard_of(relpath),)
        self._dirty.setdefault(key, set()).update(shards)
        saved = self._facts_saved.get(key)
        if facts and saved:
            saved.difference_update(shards)

    def save_facts(self) -> None:
        """Write now the facts files of the shards marked dirty so far (a run
        calls this while it waits on its workers, the bulk of what ``save``
        writes); ``save`` rewrites them only if their facts change again."""
        self._ready = False
        for key in sorted(self._dirty):
            shards = self._dirty[key] - self._facts_saved.get(key, set())
            if shards:
                self._write_shards(key, shards, state=False, facts=True)
                self._facts_saved.setdefault(key, set()).update(shards)

    def save(self) -> None:
        self._ready = False
        for key in sorted(self._dirty):
            shards = self._dirty[key]
            saved = self._facts_saved.get(key, set())
            self._write_shards(key, shards & saved, state=True, facts=False)
            self._write_shards(key, shards - saved, state=True, facts=True)
        if self._dirty:
            self.prune({self._file(k, 0).name.rsplit("-", 1)[0] for k in self._loaded} | {
                self._file(k, 0).name.rsplit("-", 1)[0] for k in self._dirty
            })
        self._dirty.clear()
        self._facts_saved.clear()

    def _write_shards(self, key: str, shards: set[int], state: bool, facts: bool) -> None:
        """Write the state files and/or the facts files of ``shards``."""
        if not shards:
            return
        entries = self._loaded.get(key, {})
        if facts:
            # a shard's facts files are rewritten whole: read what they hold first
            self.load_facts(key, None, shards)
        core: dict[int, dict[str, Any]] = {i: {} for i in shards}
        per_name: dict[int, dict[str, dict[str, Any]]] = {i: {} for i in shards}
        for rel, e in entries.items():
            sh = shard_of(rel)
            if sh in core:
                if state:
                    core[sh][rel] = {"m": e.mtime, "s": e.size, "h": e.digest, "scan": e.scan, "check": e.check}
                if facts:
                    for name, value in e.facts.items():
                        per_name[sh].setdefault(name, {})[rel] = value
        for sh in sorted(shards):
            out = [(self._file(key, sh), core[sh])] if state else []
            out += [(self._facts_file(key, sh, n), files) for n, files in sorted(per_name[sh].items())]
            for path, files in out:
                blob = {"format": FORMAT, "version": __version__, "files": dict(sorted(files.items()))}
                try:
                    self._write(path, json.dumps(blob, separators=(",", ":")))
                except OSError:
                    pass  # a read-only tree still lints; it just stays cold

    def prune(self, in_use: set[str]) -> None:
        """Delete the state of keys other than ``in_use`` beyond the
        ``KEEP_OTHER_KEYS`` most recently written, and temporary files a
        killed run left (older than an hour). Only files named as this cache
        names them are touched."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        newest: dict[str, float] = {}
        files: dict[str, list[str]] = {}
        now = time.time()
        for n in names:
            path = self.directory / n
            if n.startswith(".tmp-") and n.endswith(".json"):
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > 3600:
                        path.unlink()
                continue
            m = _STATE_FILE.fullmatch(n)
            if m is None or m.group(1) in in_use:
                continue
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            files.setdefault(m.group(1), []).append(n)
            newest[m.group(1)] = max(newest.get(m.group(1), 0.0), mtime)
        stale = sorted(newest, key=lambda k: newest[k], reverse=True)[KEEP_OTHER_KEYS:]
        for k in stale:
            for n in files[k]:
                with contextlib.suppress(OSError):
                    (self.directory / n).unlink()

    def _write(self, path: Path, text: str) -> None:
        if not self._ready:
            # (once per save, which writes ~90 files)
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# shardlint cache\n")
                (self.directory / ".gitignore").write_text("*\n")
            self._ready = True
        fd, tmp = tempfile.mkstemp(dir=str(self.directory), prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
