"""Reporters: the only code that formats diagnostics. One module per format,
each with ``render(diagnostics, ctx) -> str``."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from linter.registry import Registry
from linter.types import Diagnostic, InternalError, RunStats

FORMATS: tuple[str, ...] = ("concise", "full", "json", "sarif", "github", "gitlab", "junit")

# One line per format for the CLI help.
DESCRIPTIONS: dict[str, str] = {
    "concise": "path:line:col: CODE message (flake8 style)",
    "full": "concise line, source with carets, notes and fix",
    "json": "a JSON list of findings",
    "sarif": "SARIF 2.1.0 for code scanning (keeps noqa-suppressed findings, marked)",
    "github": "GitHub Actions workflow commands (annotations on the PR diff)",
    "gitlab": "GitLab Code Quality JSON",
    "junit": "JUnit XML (one test case per finding)",
}

# Formats that always receive noqa-suppressed findings (they mark them
# instead of hiding them); the others get them only with --show-suppressed.
KEEPS_SUPPRESSED: frozenset[str] = frozenset({"sarif"})


@dataclass
class ReportContext:
    root: Path
    registry: Registry
    stats: RunStats = field(default_factory=RunStats)
    errors: Sequence[InternalError] = ()
    unsafe_fixes: bool = False

    def source_line(self, relpath: str, line: int) -> str:
        path = Path(relpath)
        if not path.is_absolute():
            path = self.root / path
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                for i, text in enumerate(fh, 1):
                    if i == line:
                        return text.rstrip("\r\n")
        except OSError:
            pass
        return ""

    def display_path(self, relpath: str) -> str:
        """Paths as the user will click them: relative to the working directory
        when possible, else as stored."""
        p = Path(relpath)
        full = p if p.is_absolute() else self.root / p
        try:
            return full.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return full.as_posix() if p.is_absolute() or not full.exists() else full.as_posix()


Renderer = Callable[[Sequence[Diagnostic], ReportContext], str]


def get_renderer(name: str) -> Renderer:
    if name not in FORMATS:
        raise KeyError(name)
    mod = importlib.import_module(f"linter.report.{name}")
    return mod.render  # type: ignore[no-any-return]


def stable_fingerprint(d: Diagnostic) -> str:
    """The engine's fingerprint, or for a diagnostic made without one a hash of
    what it says (never of its line: that would churn on every edit above)."""
    if d.fingerprint:
        return d.fingerprint
    blob = "\0".join((d.code, d.path, " ".join(d.message.split())))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
