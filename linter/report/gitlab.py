"""GitLab Code Quality: a JSON list of Code Climate issues, shown in the merge
request widget and on the diff.

Each issue has ``description``, ``check_name`` (the code), ``fingerprint``,
``severity`` and ``location.path`` + ``location.lines.begin``. Paths are
relative to ``$CI_PROJECT_DIR`` when it is set and holds the file (GitLab
resolves them against the checkout), else to the project root.

GitLab keys issues by fingerprint, so it must be unique within the report and
stable across commits: it is the engine's fingerprint (no line number, no
path, so it survives edits above and renames); when two files hold the very
same finding, the later ones (in path order) mix their path in. Suppressed
findings are left out: Code Quality has no notion of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linter.report import ReportContext, stable_fingerprint
from linter.types import Diagnostic, Severity

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def report_path(relpath: str, ctx: ReportContext) -> str:
    p = Path(relpath)
    full = p if p.is_absolute() else Path(ctx.root) / p
    base = os.environ.get("CI_PROJECT_DIR")
    if base:
        try:
            return full.resolve().relative_to(Path(base).resolve()).as_posix()
        except ValueError:
            pass
    try:
        return full.resolve().relative_to(Path(ctx.root).resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _description(d: Diagnostic) -> str:
    # GitLab shows one line; the notes go to the full output and SARIF.
    return f"{d.code} {d.message}"


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    issues: list[dict[str, Any]] = []
    seen: set[str] = set()
    for d in sorted((d for d in diags if not d.suppressed), key=lambda d: d.sort_key):
        path = report_path(d.path, ctx)
        base = fp = stable_fingerprint(d)
        salt = 0
        while fp in seen:
            salt += 1
            blob = f"{base}\0{path}\0{salt}".encode()
            fp = hashlib.sha256(blob).hexdigest()[:32]
        seen.add(fp)
        issues.append(
            {
                "type": "issue",
                "description": _description(d),
                "check_name": d.code,
                "categories": ["Bug Risk"],
                "fingerprint": fp,
                "severity": SEVERITIES[d.severity],
                "location": {"path": path, "lines": {"begin": d.span.line}},
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
