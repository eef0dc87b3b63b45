"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps, VS Code's SARIF viewer).

Conventions, each one something a consumer relies on:

- Paths are relative to the project root with ``uriBaseId: "%SRCROOT%"``, and
  ``run.originalUriBaseIds`` gives the root as a ``file:`` URI ending in ``/``;
  a file outside the root keeps an absolute ``file:`` URI.
- ``run.columnKind`` is ``unicodeCodePoints`` (libcst's unit), columns are
  1-based and ``endColumn`` is exclusive, so both are libcst's column + 1.
- ``partialFingerprints["shardlint/v1"]`` is the engine's fingerprint (rule +
  enclosing qualified name + normalised code + occurrence index). It holds no
  line number, so an alert survives edits above it; GitHub computes its own
  ``primaryLocationLineHash`` beside it.
- Findings suppressed by ``# noqa`` stay in the log with
  ``suppressions: [{"kind": "inSource"}]`` (code scanning closes them instead
  of forgetting them).
- Internal errors (a rule crashing on a file) are tool execution
  notifications, and ``executionSuccessful`` is false.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from linter import __version__
from linter.report import ReportContext, stable_fingerprint
from linter.types import Diagnostic, Fix, InternalError, Severity, Span

if TYPE_CHECKING:
    from linter.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "shardlint/v1"
SRCROOT = "%SRCROOT%"
# Replaced by the distribution's Home-page / Project-URL when it declares one.
DEFAULT_INFORMATION_URI = "https://pypi.org/project/shardlint/"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub's code-quality severity (shown for alerts without a security tag).
PROBLEM_SEVERITY = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
}


def information_uri() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return DEFAULT_INFORMATION_URI
    try:
        meta = metadata("shardlint")
    except PackageNotFoundError:
        return DEFAULT_INFORMATION_URI
    home = meta.get("Home-page")
    if home and home != "UNKNOWN":
        return str(home)
    for entry in meta.get_all("Project-URL") or ():
        _, _, url = str(entry).partition(",")
        if url.strip().startswith(("http://", "https://")):
            return url.strip()
    return DEFAULT_INFORMATION_URI


def region(span: Span) -> dict[str, int]:
    return {
        "startLine": span.line,
        "startColumn": span.column + 1,
        "endLine": span.end_line,
        "endColumn": span.end_column + 1,
    }


def artifact_location(relpath: str) -> dict[str, str]:
    p = Path(relpath)
    if p.is_absolute():
        return {"uri": p.as_uri()}
    return {"uri": quote(p.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _dir_uri(root: Path) -> str:
    uri = root.as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    from linter.docs import render_markdown, render_text, sections

    what = sections(rule).get("What it finds", "") or rule.summary
    props: dict[str, Any] = {
        "tags": list(dict.fromkeys(rule.tags)),  # the schema wants them unique
        "precision": rule.precision,
        "problem.severity": PROBLEM_SEVERITY[rule.severity],
    }
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": " ".join(what.split())},
        "help": {"text": render_text(rule), "markdown": render_markdown(rule)},
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.default_enabled},
        "properties": props,
    }


def _unknown_descriptor(d: Diagnostic) -> dict[str, Any]:
    # A finding whose rule is not in the registry (e.g. from a stale cache):
    # still a valid descriptor, so ruleIndex stays meaningful.
    return {
        "id": d.code,
        "name": d.name or d.code,
        "shortDescription": {"text": d.name or d.code},
        "defaultConfiguration": {"level": LEVELS[d.severity]},
    }


def _message(d: Diagnostic) -> str:
    lines = [d.message]
    lines += [f"Note: {n.message}" for n in d.notes if not (n.path and n.span)]
    if d.fix is not None and not d.fix.edits:
        lines.append(f"Help: {d.fix.title}")
    return "\n".join(lines)


def _fix(d: Diagnostic, fix: Fix) -> dict[str, Any]:
    return {
        "description": {"text": fix.title},
        "artifactChanges": [
            {
                "artifactLocation": artifact_location(d.path),
                "replacements": [
                    {"deletedRegion": region(e.span), "insertedContent": {"text": e.replacement}}
                    for e in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def _result(d: Diagnostic, index: int) -> dict[str, Any]:
    res: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": index,
        "level": LEVELS[d.severity],
        "message": {"text": _message(d)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(d.path),
                    "region": region(d.span),
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: stable_fingerprint(d)},
    }
    related: list[dict[str, Any]] = []
    for n in d.notes:
        if n.path and n.span is not None:
            related.append(
                {
                    "id": len(related) + 1,
                    "message": {"text": n.message},
                    "physicalLocation": {
                        "artifactLocation": artifact_location(n.path),
                        "region": region(n.span),
                    },
                }
            )
    if related:
        res["relatedLocations"] = related
    if d.fix is not None and d.fix.edits:
        res["fixes"] = [_fix(d, d.fix)]
    if d.suppressed:
        res["suppressions"] = [{"kind": "inSource"}]
    return res


def _notification(e: InternalError, rule_index: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "level": "error",
        "message": {"text": e.message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact_location(e.path)}}],
    }
    if e.code:
        ref: dict[str, Any] = {"id": e.code}
        if e.code in rule_index:
            ref["index"] = rule_index[e.code]
        out["associatedRule"] = ref
    return out


def to_log(diags: Sequence[Diagnostic], ctx: ReportContext) -> dict[str, Any]:
    """The SARIF log as a JSON-able dict (one run)."""
    # The CLI's warm path carries rule metadata only; the help text needs the
    # rule classes' docstrings.
    registry = ctx.registry.real() if getattr(ctx.registry, "is_meta", False) else ctx.registry
    descriptors = [_rule_descriptor(r) for r in registry.rules.values()]
    rule_index = {r["id"]: i for i, r in enumerate(descriptors)}
    for d in diags:
        if d.code not in rule_index:
            rule_index[d.code] = len(descriptors)
            descriptors.append(_unknown_descriptor(d))
    root = Path(ctx.root).resolve()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "shardlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": information_uri(),
                "rules": descriptors,
            }
        },
        "invocations": [
            {
                "executionSuccessful": not ctx.errors,
                "toolExecutionNotifications": [_notification(e, rule_index) for e in ctx.errors],
            }
        ],
        "originalUriBaseIds": {SRCROOT: {"uri": _dir_uri(root)}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, rule_index[d.code]) for d in diags],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    return json.dumps(to_log(diags, ctx), indent=2, ensure_ascii=False) + "\n"
