"""Baselines: today's findings recorded by fingerprint, so that CI fails only
on new ones (``shardlint check --baseline FILE``) and the recorded debt can
only shrink (``--update-baseline`` prunes what no longer matches and never
adds: the ratchet).

The file is JSON lines, reviewed like code: a header line naming the schema
and its version, then one finding a line, sorted by path, code, fingerprint
and message. No line numbers: an edit above a finding would churn the file.
Matching uses the engine's fingerprint (rule, enclosing scope, normalised
flagged code, occurrence index; no path, no line), so an entry survives lines
moving and its file being renamed or moved; entries on the same path are
matched first, so that two files holding the same finding keep theirs.

    {"schema": "shardlint-baseline", "version": 1}
    {"code": "SHD101", "fingerprint": "0f3a…", "message": "…", "path": "pkg/mod.py"}
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from linter.config import Config
from linter.files import discover
from linter.types import Diagnostic, RunResult

SCHEMA = "shardlint-baseline"
VERSION = 1
_KEYS = ("code", "fingerprint", "message", "path")


class BaselineError(Exception):
    """A baseline that cannot be used: unreadable, corrupt or not ours."""


@dataclass(frozen=True, order=True)
class Entry:
    path: str
    code: str
    fingerprint: str
    message: str

    def to_line(self) -> str:
        data = {"code": self.code, "fingerprint": self.fingerprint, "message": self.message, "path": self.path}
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @staticmethod
    def of(d: Diagnostic) -> Entry:
        return Entry(d.path, d.code, d.fingerprint, d.message)


class Finding(Protocol):
    """What matching needs of a finding: a baseline entry or a diagnostic."""

    @property
    def path(self) -> str: ...

    @property
    def code(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...


A = TypeVar("A", bound=Finding)
B = TypeVar("B", bound=Finding)


def match(current: Sequence[A], recorded: Sequence[B]) -> tuple[list[tuple[A, B]], list[A], list[B]]:
    """Pair findings with recorded ones of the same rule and fingerprint, one
    to one: on the same path first, then anywhere (a moved or renamed file).
    Returns the pairs, the current findings left unmatched (new) and the
    recorded ones left unmatched (gone), each in input order."""
    by_path: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    by_print: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(recorded):
        by_path[(r.code, r.fingerprint, r.path)].append(i)
        by_print[(r.code, r.fingerprint)].append(i)
    taken: set[int] = set()
    partner: dict[int, int] = {}

    def take(pool: list[int]) -> int | None:
        while pool:
            j = pool.pop(0)
            if j not in taken:
                taken.add(j)
                return j
        return None

    for i, c in enumerate(current):
        j = take(by_path.get((c.code, c.fingerprint, c.path), []))
        if j is not None:
            partner[i] = j
    for i, c in enumerate(current):
        if i not in partner:
            j = take(by_print.get((c.code, c.fingerprint), []))
            if j is not None:
                partner[i] = j
    pairs = [(current[i], recorded[j]) for i, j in sorted(partner.items())]
    new = [c for i, c in enumerate(current) if i not in partner]
    gone = [r for j, r in enumerate(recorded) if j not in taken]
    return pairs, new, gone


def render(entries: Iterable[Entry]) -> str:
    header = json.dumps({"schema": SCHEMA, "version": VERSION}, sort_keys=True)
    return "\n".join([header, *(e.to_line() for e in sorted(entries))]) + "\n"


def entries_of(diags: Iterable[Diagnostic]) -> list[Entry]:
    """The entries a baseline records: unsuppressed findings with a fingerprint."""
    return sorted(Entry.of(d) for d in diags if not d.suppressed and d.fingerprint)


def parse(text: str, source: str = "<baseline>") -> list[Entry]:
    """The entries of a baseline file's text; :class:`BaselineError` naming
    the file and line when it is not a shardlint baseline of this schema."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise BaselineError(f"{source}: empty file; not a shardlint baseline (write one with --write-baseline)")
    header = _json_object(lines[0], source, 1)
    if header.get("schema") != SCHEMA:
        raise BaselineError(f"{source}: line 1: not a shardlint baseline (expected schema {SCHEMA!r})")
    if header.get("version") != VERSION:
        raise BaselineError(
            f"{source}: line 1: baseline schema version {header.get('version')!r} is not supported "
            f"(this shardlint reads version {VERSION})"
        )
    out: list[Entry] = []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        data = _json_object(line, source, n)
        missing = [k for k in _KEYS if not isinstance(data.get(k), str)]
        if missing:
            raise BaselineError(f"{source}: line {n}: entry lacks string field(s) {', '.join(missing)}")
        if not data["fingerprint"]:
            raise BaselineError(f"{source}: line {n}: empty fingerprint")
        out.append(Entry(data["path"], data["code"], data["fingerprint"], data["message"]))
    return out


def _json_object(line: str, source: str, n: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{source}: line {n}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{source}: line {n}: expected a JSON object")
    return data


def load(path: Path) -> list[Entry]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (write one with --write-baseline)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc}") from None
    return parse(text, str(path))


@dataclass
class Comparison:
    """A run measured against a baseline."""

    new: list[Diagnostic]
    kept: list[Entry]  # entries still matched by a finding
    fixed: list[Entry]  # entries no finding matches any more (in the files checked)
    out_of_scope: list[Entry]  # entries about files this run did not check


def compare(
    diags: Sequence[Diagnostic], entries: Sequence[Entry], in_scope: Callable[[str], bool] | None = None
) -> Comparison:
    """Split a run's unsuppressed findings into new ones and those the
    baseline records. An unmatched entry is fixed when ``in_scope`` says the
    run covered its path (the CLI: the file was checked, or is gone); an
    entry about a file the run left out is neither, so that linting a
    subfolder never prunes the rest."""
    live = [d for d in diags if not d.suppressed]
    pairs, new, gone = match(live, list(entries))
    fixed = [e for e in gone if in_scope is None or in_scope(e.path)]
    out = [e for e in gone if in_scope is not None and not in_scope(e.path)]
    return Comparison(new=new, kept=[e for _, e in pairs], fixed=fixed, out_of_scope=out)


def write(path: Path, entries: Iterable[Entry]) -> None:
    from linter.fixes import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, render(entries))
    except OSError as exc:
        raise BaselineError(f"cannot write {path}: {exc.strerror or exc}") from None


def apply_baseline(
    result: RunResult,
    config: Config,
    targets: Sequence[Path],
    write_to: Path | None,
    baseline_file: Path | None,
    update: bool,
    quiet: bool,
) -> tuple[RunResult, bool]:
    """``shardlint check``'s baseline flags on a finished run. Returns the
    result to report (only new findings under ``--baseline``) and whether
    the command is done (``--write-baseline``: nothing more to print)."""
    import click

    if write_to is not None:
        entries = entries_of(result.diagnostics)
        write(write_to, entries)
        if not quiet:
            click.echo(f"shardlint: wrote {len(entries)} baseline entries to {write_to}", err=True)
        return result, True
    assert baseline_file is not None
    entries = load(baseline_file)
    checked = {sf.relpath for sf in discover(list(targets), config)}
    root = config.root

    def in_scope(rel: str) -> bool:
        return rel in checked or not (root / rel).exists()

    cmp = compare(result.diagnostics, entries, in_scope)
    if cmp.fixed and not quiet:
        n = len(cmp.fixed)
        click.echo(f"shardlint: {n} baseline entr{'ies' if n != 1 else 'y'} no longer found (fixed):", err=True)
        for e in cmp.fixed:
            click.echo(f"  {e.path}: {e.code} {e.message}", err=True)
        if not update:
            click.echo("shardlint: run with --update-baseline to prune them", err=True)
    if update and cmp.fixed:
        # the ratchet: keep what still matches and what this run did not
        # look at, untouched; never add
        write(baseline_file, [*cmp.kept, *cmp.out_of_scope])
        if not quiet:
            click.echo(f"shardlint: pruned {len(cmp.fixed)} entries from {baseline_file}", err=True)
    keep = {id(d) for d in cmp.new}
    shown = [d for d in result.diagnostics if d.suppressed or id(d) in keep]
    if not quiet and len(cmp.kept):
        click.echo(f"shardlint: {len(cmp.kept)} findings recorded in {baseline_file} not shown", err=True)
    return RunResult(diagnostics=shown, errors=result.errors, stats=result.stats), False
