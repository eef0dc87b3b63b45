"""The audit's reports: markdown for the upgrade meeting (grouped by class,
then rule, with links), JSON and SARIF for machines (every result tagged
with its class), and the summary table on stderr."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.registry import Registry
from linter.types import Diagnostic, InternalError, Severity, Span

from linter.audit.classify import CLASSES, TITLES, Classified
from linter.audit.contracts import DRIFT_KINDS, Drift
from linter.audit.trees import Tree

DRIFT = "contract-drift"
ALL_CLASSES = (*CLASSES, DRIFT)
SCHEMA_VERSION = 1


@dataclass
class AuditResult:
    fork: Tree
    base: Tree
    upstream: Tree
    items: list[Classified]
    drift: list[Drift]
    manual_merge: list[str]
    fork_changed: set[str]
    removed_upstream: list[str] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    # {"tree label": seconds}, and files identical across trees
    timings: dict[str, float] = field(default_factory=dict)
    identical_files: int = 0  # fork files byte-identical in base and upstream
    runs: dict[str, dict[str, int]] = field(default_factory=dict)  # tree label -> the engine's RunStats
    folders: dict[str, bool] = field(default_factory=dict)  # tree label -> given as a folder

    def counts(self) -> dict[str, int]:
        got = Counter(c.cls for c in self.items)
        out = {k: got.get(k, 0) for k in CLASSES}
        out[DRIFT] = len(self.drift)
        return out

    def tree_of(self, label: str) -> Tree:
        # overlay findings lie in fork files (the fork's version of them)
        return {"fork": self.fork, "base": self.base, "upstream": self.upstream}.get(label, self.fork)


def _link(result: AuditResult, label: str, path: str, line: int) -> str:
    tree = result.tree_of(label)
    text = f"{path}:{line}"
    if result.folders.get(tree.label, False):
        return f"[{text}]({(tree.root / path).as_posix()}#L{line})"
    return f"`{tree.spec}:{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: AuditResult, registry: Registry) -> str:
    counts = result.counts()
    out = [
        "# shardlint audit",
        "",
        f"- fork: `{result.fork.spec}` ({len(result.fork.files)} Python files)",
        f"- base: `{result.base.spec}` ({len(result.base.files)})",
        f"- upstream: `{result.upstream.spec}` ({len(result.upstream.files)})",
        f"- files the fork added or changed: {len(result.fork_changed)}; "
        f"changed on both sides (manual merge): {len(result.manual_merge)}",
        "",
        "| class | findings |",
        "|---|---:|",
        *(f"| {TITLES.get(k, 'Contract drift in fork code')} | {n} |" for k, n in counts.items()),
        "",
    ]
    by_class: dict[str, list[Classified]] = defaultdict(list)
    for c in result.items:
        by_class[c.cls].append(c)
    for cls in CLASSES:
        items = by_class.get(cls, [])
        out += [f"## {TITLES[cls]} ({len(items)})", ""]
        if not items:
            out += ["None.", ""]
            continue
        by_rule: dict[str, list[Classified]] = defaultdict(list)
        for c in items:
            by_rule[c.diagnostic.code].append(c)
        for code in sorted(by_rule):
            rule = registry.rules.get(code)
            name = rule.name if rule is not None else by_rule[code][0].diagnostic.name
            out += [f"### {code} {name} ({len(by_rule[code])})", ""]
            for c in sorted(by_rule[code], key=lambda c: c.diagnostic.sort_key):
                d = c.diagnostic
                line = f"- {_link(result, c.tree, d.path, d.span.line)}: {d.message}"
                if c.upstream_hint:
                    line += f"  \n  upstream: {c.upstream_hint}"
                out.append(line)
            out.append("")
    out += [f"## Contract drift in fork code ({len(result.drift)})", ""]
    if not result.drift:
        out += ["None.", ""]
    else:
        out += ["| fork code | kind | upstream symbol | change |", "|---|---|---|---|"]
        for dr in result.drift:
            where = _link(result, "fork", dr.path, dr.line)
            out.append(f"| {where} `{dr.fork_symbol}` | {dr.kind} | `{dr.upstream_symbol}` | {_cell(dr.detail)} |")
        out.append("")
    out += [f"## Files changed by the fork and upstream: manual merge ({len(result.manual_merge)})", ""]
    out += [f"- {rel}" for rel in result.manual_merge] or ["None."]
    out.append("")
    if result.removed_upstream:
        n = len(result.removed_upstream)
        out += [f"## Files changed by the fork and gone upstream: port by hand ({n})", ""]
        out += [f"- {rel}" for rel in result.removed_upstream] + [""]
    if result.errors:
        out += ["## Internal errors", ""]
        out += [f"- {e.path}: {e.code or ''} {e.message}" for e in result.errors] + [""]
    return "\n".join(out)


def _drift_dict(dr: Drift) -> dict[str, Any]:
    return {"class": DRIFT, "kind": dr.kind, "path": dr.path, "line": dr.line, "fork_symbol": dr.fork_symbol,
            "upstream_symbol": dr.upstream_symbol, "detail": dr.detail}


def render_json(result: AuditResult, registry: Registry) -> str:
    findings = []
    for c in result.items:
        d = c.diagnostic
        findings.append({
            "class": c.cls, "tree": c.tree, "code": d.code, "name": d.name, "path": d.path,
            "line": d.span.line, "column": d.span.column + 1, "message": d.message,
            "fingerprint": d.fingerprint, "upstream": c.upstream_hint or None,
        })
    data = {
        "schema_version": SCHEMA_VERSION,
        "trees": {
            t.label: {"spec": t.spec, "files": len(t.files)} for t in (result.fork, result.base, result.upstream)
        },
        "counts": result.counts(),
        "findings": findings,
        "contract_drift": [_drift_dict(dr) for dr in result.drift],
        "manual_merge": result.manual_merge,
        "removed_upstream": result.removed_upstream,
        "runs": {label: {**stats, "seconds": round(result.timings.get(label, 0.0), 3)}
                 for label, stats in result.runs.items()},
        "identical_files": result.identical_files,
        "errors": [{"path": e.path, "code": e.code, "message": e.message} for e in result.errors],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _drift_diagnostic(dr: Drift) -> Diagnostic:
    return Diagnostic(
        code=f"{DRIFT}/{dr.kind}", name=dr.kind, severity=Severity.WARNING, path=dr.path,
        span=Span(dr.line, 0, dr.line, 1),
        message=f"{dr.fork_symbol}: upstream {dr.upstream_symbol}: {dr.detail}",
    )


def render_sarif(result: AuditResult, registry: Registry) -> str:
    from linter.report import ReportContext
    from linter.report.sarif import to_log

    diags = [c.diagnostic for c in result.items] + [_drift_diagnostic(dr) for dr in result.drift]
    tags = [(c.cls, c.tree) for c in result.items] + [(DRIFT, "fork")] * len(result.drift)
    log = to_log(diags, ReportContext(result.fork.root, registry, errors=result.errors))
    for res, (cls, tree) in zip(log["runs"][0]["results"], tags):
        res.setdefault("properties", {})["shardlint/auditClass"] = cls
        res["properties"]["shardlint/tree"] = tree
    log["runs"][0].setdefault("properties", {})["shardlint/audit"] = {
        t.label: t.spec for t in (result.fork, result.base, result.upstream)
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"markdown": render_markdown, "json": render_json, "sarif": render_sarif}


def summary_table(result: AuditResult, fail_on: Sequence[str]) -> str:
    counts = result.counts()
    w = max(len(k) for k in counts)
    lines = [f"{'class':<{w}}  findings  fails", f"{'-' * w}  --------  -----"]
    for k, n in counts.items():
        lines.append(f"{k:<{w}}  {n:>8}  {'yes' if k in fail_on else ''}")
    if result.manual_merge:
        n = len(result.manual_merge)
        lines.append(f"{n} file(s) changed by both the fork and upstream need a manual merge")
    if result.removed_upstream:
        n = len(result.removed_upstream)
        lines.append(f"{n} file(s) changed by the fork are gone upstream (moved or deleted)")
    return "\n".join(lines) + "\n"


def write_text(path: Path, text: str) -> None:
    from linter.fixes import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


__all__ = ["ALL_CLASSES", "DRIFT_KINDS", "AuditResult", "RENDERERS", "summary_table", "write_text"]
