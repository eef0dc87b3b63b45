"""Plain data shared by every layer: no libcst here, so results pickle across
processes, serialise into the cache and reach reporters, the LSP and flake8.

Positions follow libcst: lines are 1-based, columns 0-based in Unicode code
points, ends exclusive. Reporters convert to whatever their consumer expects.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    """How far a fix can be trusted (ruff's vocabulary).

    safe: applied by ``--fix``; unsafe: applied only with ``--unsafe-fixes``
    (it may change behaviour for some inputs); display-only: shown, never applied.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Fixability(str, enum.Enum):
    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True, order=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Edit:
    span: Span
    replacement: str


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Note:
    """A line of explanation; with ``path``/``span`` it points elsewhere (a base
    class that sets a flag, the resolver of a sentinel) and becomes a SARIF
    related location."""

    message: str
    path: str | None = None
    span: Span | None = None


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    path: str
    span: Span
    message: str
    notes: tuple[Note, ...] = ()
    fix: Fix | None = None
    fingerprint: str = ""
    suppressed: bool = False

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.column, self.code, self.message)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Diagnostic:
        def span(x: dict[str, int] | None) -> Span | None:
            return Span(**x) if x else None

        fix = d.get("fix")
        return Diagnostic(
            code=d["code"],
            name=d["name"],
            severity=Severity(d["severity"]),
            path=d["path"],
            span=Span(**d["span"]),
            message=d["message"],
            notes=tuple(
                Note(n["message"], n.get("path"), span(n.get("span"))) for n in d.get("notes", ())
            ),
            fix=None
            if fix is None
            else Fix(
                fix["title"],
                Applicability(fix["applicability"]),
                tuple(Edit(Span(**e["span"]), e["replacement"]) for e in fix["edits"]),
            ),
            fingerprint=d.get("fingerprint", ""),
            suppressed=d.get("suppressed", False),
        )


@dataclass(frozen=True)
class InternalError:
    """A crash inside one rule (or the engine) on one file. The run goes on."""

    path: str
    code: str | None
    message: str

    def line(self) -> str:
        """How the CLI and flake8 print it, on one line."""
        rule = f" in {self.code}" if self.code else ""
        return f"internal error{rule} on {self.path}: {' '.join(self.message.split())}"


@dataclass
class RunStats:
    files: int = 0
    parsed: int = 0
    skipped: int = 0
    cached: int = 0
    facts_files: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    stats: RunStats = field(default_factory=RunStats)
