"""The --fix loop: lint, apply what may be applied, re-lint, until nothing
changes (bounded). Every intermediate result must parse, or the file is left
as it was and the failure is reported."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from linter.engine import Engine
from linter.files import discover
from linter.fixes import CannotWrite, Original, apply_fixes, fixable, write_in_place
from linter.safeio import UnreadableFile, read_bounded
from linter.types import Diagnostic, InternalError, RunResult

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    applied: int = 0
    remaining: list[Diagnostic] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)


def parses(text: str) -> bool:
    import libcst as cst

    try:
        compile(text, "<fixed>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
        cst.parse_module(text)
    except Exception:
        return False
    return True


def fix_text(engine: Engine, text: str, path: Path, unsafe: bool) -> FixOutcome:
    current = text
    outcome = FixOutcome(text)
    diags, errors = engine.lint_text(current, path)
    for _ in range(MAX_ROUNDS):
        fixes = fixable(diags, unsafe)
        if not fixes:
            break
        new, n = apply_fixes(current, fixes)
        if n == 0 or new == current:
            break
        if not parses(new):
            errors = list(errors) + [
                InternalError(str(path), None, "a fix produced code that does not parse; file left unchanged by it")
            ]
            break
        current = new
        outcome.applied += n
        diags, errors = engine.lint_text(current, path)
    outcome.text = current
    outcome.remaining = list(diags)
    outcome.errors = list(errors)
    return outcome


def fix_bytes(engine: Engine, data: bytes, path: Path, unsafe: bool) -> tuple[str, bytes, FixOutcome]:
    """``fix_text`` over a file's bytes (standard input): the text as read,
    the fixed bytes in the input's encoding, BOM and line endings (the
    input itself when it cannot be decoded or the fix cannot be held in
    its encoding: the reason is in the outcome's errors), and the outcome."""
    try:
        original = Original.decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        text = data.decode("utf-8", "replace")
        outcome = FixOutcome(text, errors=[InternalError(str(path), None, f"not fixed: cannot decode it: {exc}")])
        return text, data, outcome
    outcome = fix_text(engine, original.text, path, unsafe)
    if outcome.text == original.text:
        return original.text, data, outcome
    try:
        return original.text, original.encode(outcome.text), outcome
    except CannotWrite as exc:
        outcome.errors.append(InternalError(str(path), None, f"fix not written: {exc}"))
        outcome.text = original.text
        return original.text, data, outcome


def fix_paths(
    engine: Engine, paths: Sequence[Path], unsafe: bool, write: bool
) -> tuple[RunResult, list[tuple[str, str, str]]]:
    """Lint ``paths``; fix the files with applicable fixes. Returns the final
    findings and, per changed file, (relpath, before, after)."""
    result = engine.run(paths)
    candidates = sorted({d.path for d in result.diagnostics if d.fix is not None and not d.suppressed})
    if not candidates:
        return result, []
    by_rel = {sf.relpath: sf for sf in discover(paths, engine.config)}
    changes: list[tuple[str, str, str]] = []
    remaining = [d for d in result.diagnostics if d.path not in candidates]
    for rel in candidates:
        sf = by_rel.get(rel)
        if sf is None:
            remaining.extend(d for d in result.diagnostics if d.path == rel)
            continue
        try:
            original = Original.decode(read_bounded(sf.path, engine.config.max_file_size))
        except (OSError, UnreadableFile, SyntaxError, UnicodeDecodeError, LookupError):
            remaining.extend(d for d in result.diagnostics if d.path == rel)
            continue  # (the run reported it: SHD000)
        text = original.text
        out = fix_text(engine, text, sf.path, unsafe)
        remaining.extend(out.remaining)
        result.errors.extend(out.errors)
        if out.text == text:
            continue
        try:
            data = original.encode(out.text)
            if write:
                write_in_place(sf.path, data, original.data)
        except CannotWrite as exc:
            result.errors.append(InternalError(rel, None, f"fix not written: {exc}"))
            continue
        changes.append((rel, text, out.text))
    result.diagnostics = sorted(remaining, key=lambda d: d.sort_key)
    return result, changes
