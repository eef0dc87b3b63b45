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

A CI workspace may hold a cache an attacker committed, or put links in it:

- a folder that exists and is not shardlint's (no ``CACHEDIR.TAG`` of ours,
  not empty: ``--cache-dir .``) or is a symlink is refused
  (:attr:`Cache.refused`): nothing is read from or written to it;
- no file in it is opened through a symlink, for reading or writing (files
  are written to a fresh temporary file, then renamed over the name);
- the key of every file (``Engine.cache_key``) covers the tool's install
  (:func:`linter.registry.rules_fingerprint`: the inode and change time of
  every rule source), so state another install wrote, committed with the
  tree or restored on a fresh checkout, is never read;
- an entry of the wrong shape is dropped, never trusted or crashed on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter import __version__
from linter.safeio import UnreadableFile, open_no_follow
from linter.types import Applicability, Severity

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

    @staticmethod
    def of_scan(stat: tuple[int, int], res: Any, checked: bool, check: dict[str, Any] | None) -> Entry:
        """The entry of a file scanned (``res``, a ``linter.scan.ScanResult``)
        at ``stat`` (mtime, size), with the check result kept, if any."""
        scan = {
            "error": res.error.to_dict() if res.error else None,
            "checked": checked,
            "rules": res.rules,
            "noqa": res.noqa,
            "fh": res.fh,
        }
        return Entry(stat[0], stat[1], res.digest, scan, check, dict(res.facts or {}))


# 8 rather than 16: a cold run writes half as many state files (their
# creation, not their bytes, is what costs: 0.06 s less on vLLM), and an edit
# still rewrites an eighth of the state
SHARDS = 8
# State of other (version, configuration) keys kept besides the ones in use:
# a config switched back and forth (pre-commit's subset, CI's full set) stays
# warm, and the folder stops growing with every version or option ever run.
KEEP_OTHER_KEYS = 3
TAG_NAME = "CACHEDIR.TAG"
TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# shardlint cache\n"
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
        # why this folder is not used (None: it is)
        self.refused: str | None = refusal(self.directory)

    def _file(self, key: str, shard: int, kind: str = "") -> Path:
        return self.directory / f"v{FORMAT}-{__version__}-{key}-{shard}{kind}.json"

    def _read(self, path: Path) -> Any:
        if self.refused:
            return None
        try:
            fd = open_no_follow(path)
            with os.fdopen(fd, "r", encoding="utf-8") as fh:
                raw = json.load(fh)
        except (OSError, ValueError, UnreadableFile, RecursionError):
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
            files = raw.get("files")
            if not isinstance(files, dict):
                continue  # a damaged shard is dropped and rewritten
            for rel, e in files.items():
                entry = entry_of(e)
                if entry is not None:  # (one of the wrong shape is dropped and rebuilt)
                    out[rel] = entry
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
        if self.refused:
            return
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
                    if now - path.lstat().st_mtime > 3600:
                        path.unlink()
                continue
            m = _STATE_FILE.fullmatch(n)
            if m is None or m.group(1) in in_use:
                continue
            try:
                mtime = path.lstat().st_mtime
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
        if self.refused:
            return
        if not self._ready:
            # (once per save, which writes ~90 files)
            self.directory.mkdir(parents=True, exist_ok=True)
            self.refused = refusal(self.directory)  # (it may have changed since)
            if self.refused:
                return
            if not is_tag(self.directory / TAG_NAME):
                self._replace(self.directory / ".gitignore", "*\n")
                self._replace(self.directory / TAG_NAME, TAG_TEXT)
            self._ready = True
        self._replace(path, text)

    def _replace(self, path: Path, text: str) -> None:
        """``path`` holds ``text``: written to a new temporary file in the
        folder, then renamed over ``path`` (a symlink there is replaced, never
        written through)."""
        fd, tmp = tempfile.mkstemp(dir=str(self.directory), prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def is_tag(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a link) holding our tag."""
    try:
        fd = open_no_follow(path)
    except (OSError, UnreadableFile):
        return False
    with os.fdopen(fd, "rb") as fh:
        return fh.read(len(TAG_TEXT) + 1) == TAG_TEXT.encode()


def refusal(directory: Path) -> str | None:
    """Why ``directory`` must not be used as the cache (None: it may): a
    symlink, not a folder, or a folder holding files without shardlint's
    tag (a folder shardlint did not create: ``--cache-dir .`` would have its
    ``.gitignore`` overwritten and every later run check nothing)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cache folder {directory}: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return f"cache folder {directory} is a symlink; shardlint does not follow links in its cache"
    if not stat.S_ISDIR(st.st_mode):
        return f"cache folder {directory} exists and is not a folder"
    if is_tag(directory / TAG_NAME):
        return None
    try:
        names = os.listdir(directory)
    except OSError as exc:
        return f"cache folder {directory}: {exc.strerror or exc}"
    if not names:
        return None
    return (
        f"cache folder {directory} holds files shardlint did not put there (no {TAG_NAME} of its own); "
        "give a new or empty folder, or --no-cache"
    )


_SEVERITIES = frozenset(s.value for s in Severity)
_APPLICABILITIES = frozenset(a.value for a in Applicability)


def _is_str_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(v, str) for v in x)


def _is_span(x: Any) -> bool:
    return isinstance(x, dict) and all(
        isinstance(x.get(k), int) for k in ("line", "column", "end_line", "end_column")
    ) and len(x) == 4


def _is_diagnostic(d: Any) -> bool:
    if not isinstance(d, dict) or not _is_span(d.get("span")):
        return False
    if not all(isinstance(d.get(k), str) for k in ("code", "name", "severity", "path", "message")):
        return False
    if d["severity"] not in _SEVERITIES or not isinstance(d.get("suppressed", False), bool):
        return False
    fix = d.get("fix")
    if fix is not None and not (
        isinstance(fix, dict)
        and isinstance(fix.get("title"), str)
        and fix.get("applicability") in _APPLICABILITIES
        and isinstance(fix.get("edits"), list)
        and all(isinstance(e, dict) and _is_span(e.get("span")) and isinstance(e.get("replacement"), str)
                for e in fix["edits"])
    ):
        return False
    notes = d.get("notes", [])
    return isinstance(notes, list) and all(
        isinstance(n, dict)
        and isinstance(n.get("message"), str)
        and (n.get("path") is None or isinstance(n["path"], str))
        and (not n.get("span") or _is_span(n["span"]))
        for n in notes
    )


def entry_of(e: Any) -> Entry | None:
    """A state file's entry, or None when it is not of the shape this
    version writes (a damaged or edited file: the file is scanned again)."""
    if not isinstance(e, dict):
        return None
    m, size, h, scan, check = e.get("m"), e.get("s"), e.get("h"), e.get("scan"), e.get("check")
    if not (isinstance(m, int) and isinstance(size, int) and isinstance(h, str)):
        return None
    if scan is not None and not (
        isinstance(scan, dict)
        and isinstance(scan.get("fh"), dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in scan["fh"].items())
        and (scan.get("rules") is None or _is_str_list(scan["rules"]))
        and isinstance(scan.get("checked", False), bool)
        and isinstance(scan.get("noqa", False), bool)
        and (scan.get("error") is None or _is_diagnostic(scan["error"]))
    ):
        return None
    if check is not None and not (
        isinstance(check, dict)
        and (check.get("fk") is None or isinstance(check["fk"], str))
        and _is_str_list(check.get("cols", []))
        and isinstance(check.get("diags"), list)
        and all(_is_diagnostic(d) for d in check["diags"])
        and (check.get("ld") is None or (
            isinstance(check["ld"], dict)
            and all(isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
                    for v in check["ld"].values())
        ))
    ):
        check = None  # the scan result stands; the file is checked again
    return Entry(m, size, h, scan, check)
