"""JUnit XML for CI test-report views (GitLab, Jenkins, Azure, CircleCI).

One ``<testsuite name="shardlint">``; one ``<testcase>`` per finding with a
``<failure>`` carrying the message (attribute) and the details (location,
notes, fix) as text. ``classname`` is ``shardlint.<CODE>`` so that views which
group by class group by rule; ``name`` is the clickable ``path:line:col``; the
non-standard ``file``/``line`` attributes are read by GitLab and others. A clean
run still has one passing test case, so the CI view shows that shardlint ran.
Internal errors are ``<error>`` test cases (they fail the run with exit 2);
suppressed findings, when passed (``--show-suppressed``), are ``<skipped>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from linter.report import ReportContext
from linter.types import Diagnostic

# Characters XML 1.0 cannot hold at all, even escaped.
_INVALID_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(s: str) -> str:
    return _INVALID_XML.sub("\ufffd", s)


def _details(d: Diagnostic, path: str) -> str:
    lines = [f"{path}:{d.span.line}:{d.span.column + 1}: {d.code} [{d.name}] {d.message}"]
    for n in d.notes:
        where = f" ({n.path}:{n.span.line})" if n.path and n.span else ""
        lines.append(f"note: {n.message}{where}")
    if d.fix is not None:
        lines.append(f"fix ({d.fix.applicability.value}): {d.fix.title}")
    return "\n".join(lines)


def render(diags: Sequence[Diagnostic], ctx: ReportContext) -> str:
    failures = sum(1 for d in diags if not d.suppressed)
    skipped = len(diags) - failures
    errors = len(ctx.errors)
    tests = max(1, len(diags) + errors)
    counts = {
        "tests": str(tests),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
    }
    suites = ET.Element("testsuites", {"name": "shardlint", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "shardlint", **counts, "time": "0"})
    for d in diags:
        path = ctx.display_path(d.path)
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": f"shardlint.{d.code}",
                "name": _clean(f"{path}:{d.span.line}:{d.span.column + 1}"),
                "file": _clean(path),
                "line": str(d.span.line),
                "time": "0",
            },
        )
        if d.suppressed:
            ET.SubElement(case, "skipped", {"message": f"{d.code} suppressed by noqa"})
            continue
        failure = ET.SubElement(
            case, "failure", {"message": _clean(f"{d.code} {d.message}"), "type": d.code}
        )
        failure.text = _clean(_details(d, path))
    for e in ctx.errors:
        path = ctx.display_path(e.path)
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "shardlint.internal-error",
                "name": _clean(path),
                "file": _clean(path),
                "time": "0",
            },
        )
        rule = f" in {e.code}" if e.code else ""
        err = ET.SubElement(
            case,
            "error",
            {"message": _clean(f"internal error{rule}: {e.message}"), "type": "InternalError"},
        )
        err.text = _clean(e.message)
    if not diags and not ctx.errors:
        n = ctx.stats.files
        ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "shardlint",
                "name": f"no findings ({n} file{'s' * (n != 1)} checked)",
                "time": "0",
            },
        )
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
