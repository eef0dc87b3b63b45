"""The CI outputs as their consumers read them: SARIF (schema-valid, code
points, fixes, suppressions, fingerprints), GitHub workflow commands, GitLab
Code Quality, JUnit XML; ``--report`` from the command line; the pre-commit
hook's ``--force-exclude``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import jsonschema
import libcst as cst
import pytest
import yaml
from click.testing import CliRunner
from junitparser import Error, Failure, JUnitXml, Skipped

from linter.builtin_rules import UnparsableFile, UnusedNoqa
from linter.cli import main
from linter.config import Config
from linter.docs import render_markdown
from linter.engine import Engine
from linter.fixes import apply_fixes
from linter.needles import Needles
from linter.registry import Registry
from linter.report import ReportContext, get_renderer
from linter.report.github import escape_data, escape_property
from linter.rule import PendingFix, Rule
from linter.types import (
    Applicability,
    Diagnostic,
    Fixability,
    InternalError,
    Note,
    RunResult,
    Severity,
    Span,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads(
    (Path(__file__).parent / "data" / "schemas" / "sarif-schema-2.1.0.json").read_text()
)


class FlagBadCall(Rule):
    """## What it finds
    Calls to `bad_call` (test only).

    ## Why it breaks
    Test only.

    ## Example
    ```python
    bad_call(x)
    ```

    ## Fix
    Call `good_call`.

    ## Options
    None.
    """

    code = "SHD950"
    name = "flag-bad-call"
    summary = "Calls to bad_call"
    fixable = Fixability.ALWAYS
    needles = Needles(all_of=("bad_call",))
    tags = ("correctness", "test-only")
    precision = "medium"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "bad_call":
            self.report(
                node,
                "bad_call(...) breaks 100% of the time, always",
                notes=[
                    "it is bad",
                    Note("bad_call is defined here", "pkg/defs.py", Span(1, 4, 1, 12)),
                ],
                fix=PendingFix(
                    "use good_call", Applicability.SAFE, [(node.func, cst.Name("good_call"))]
                ),
            )


class WarnTodo(Rule):
    """## What it finds
    Calls to `todo_call` (test only).

    ## Why it breaks
    Test only.

    ## Example
    `todo_call()`

    ## Fix
    None.

    ## Options
    None.
    """

    code = "SHD951"
    name = "warn-todo"
    summary = "Calls to todo_call"
    severity = Severity.WARNING
    needles = Needles(all_of=("todo_call",))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "todo_call":
            self.report(node, "todo, with a comma: and a colon")


class CrashOnLambda(Rule):
    """## What it finds
    Nothing; crashes on lambdas (test only).
    ## Why it breaks
    -
    ## Example
    -
    ## Fix
    -
    ## Options
    -
    """

    code = "SHD952"
    name = "crash-on-lambda"
    summary = "crashes"
    needles = Needles(all_of=("lambda",))

    def visit_Lambda(self, node: cst.Lambda) -> None:
        raise ZeroDivisionError("boom\x00 <&>")


REGISTRY = Registry({r.code: r for r in (UnparsableFile, FlagBadCall, WarnTodo, UnusedNoqa)}, {})
CRASHING = Registry(
    {r.code: r for r in (UnparsableFile, FlagBadCall, CrashOnLambda, UnusedNoqa)}, {}
)

MOD = '''\
"""A module."""


def handler(x):
    s = "é😀"; bad_call(x)
    todo_call()
    bad_call(x)  # noqa: SHD950
    return s
'''
UNICODE_LINE = 5


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)


def make_project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def run(root: Path, registry: Registry = REGISTRY) -> tuple[RunResult, ReportContext]:
    result = Engine(Config(root=root), registry, jobs=1).run([root])
    return result, ReportContext(root, registry, result.stats, result.errors)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(
        tmp_path,
        {
            "pkg/mod.py": MOD,
            "pkg/defs.py": "def bad_call(x):\n    return x\n",
            "pkg/other.py": "def handler(x):\n    bad_call(x)\n",
        },
    )


def sarif(diags: list[Diagnostic], ctx: ReportContext) -> dict:
    log = json.loads(get_renderer("sarif")(diags, ctx))
    errors = sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return log


# -- SARIF ---------------------------------------------------------------------------


def test_sarif_is_valid_and_describes_the_tool_and_rules(project: Path) -> None:
    result, ctx = run(project)
    run0 = sarif(result.diagnostics, ctx)["runs"][0]
    driver = run0["tool"]["driver"]
    assert (
        driver["name"] == "shardlint"
        and driver["version"]
        and driver["informationUri"].startswith("http")
    )
    assert run0["columnKind"] == "unicodeCodePoints"
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == set(REGISTRY.rules)
    bad = rules["SHD950"]
    assert bad["name"] == "flag-bad-call"
    assert bad["shortDescription"]["text"] == "Calls to bad_call"
    assert bad["fullDescription"]["text"] == "Calls to `bad_call` (test only)."
    assert bad["help"]["markdown"] == render_markdown(FlagBadCall)
    assert "## Why it breaks" in bad["help"]["markdown"] and bad["help"]["text"]
    assert bad["defaultConfiguration"]["level"] == "error"
    assert rules["SHD951"]["defaultConfiguration"]["level"] == "warning"
    assert bad["properties"]["tags"] == ["correctness", "test-only"]
    assert bad["properties"]["precision"] == "medium"
    for res in run0["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    assert {res["level"] for res in run0["results"]} == {"error", "warning"}
    assert run0["invocations"][0]["executionSuccessful"] is True


def test_sarif_columns_are_one_based_code_points_with_exclusive_end(project: Path) -> None:
    result, ctx = run(project)
    res = next(
        r
        for r in sarif(result.diagnostics, ctx)["runs"][0]["results"]
        if r["locations"][0]["physicalLocation"]["region"]["startLine"] == UNICODE_LINE
    )
    region = res["locations"][0]["physicalLocation"]["region"]
    line = MOD.splitlines()[UNICODE_LINE - 1]
    # Python str indices are code points: the call starts after "é😀" (2 code
    # points, 6 UTF-8 bytes, 3 UTF-16 units, so 15 would be 19 or 16)
    assert region["startColumn"] == line.index("bad_call") + 1 == 15
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "bad_call(x)"
    assert region["endLine"] == UNICODE_LINE


def test_sarif_paths_are_relative_to_srcroot(project: Path, tmp_path: Path) -> None:
    (project / "pkg" / "with space.py").write_text("bad_call(1)\n")
    result, ctx = run(project)
    run0 = sarif(result.diagnostics, ctx)["runs"][0]
    base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    seen = set()
    for res in run0["results"]:
        loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert loc["uriBaseId"] == "%SRCROOT%" and not loc["uri"].startswith(("/", "file:"))
        target = Path(unquote(urlparse(urljoin(base, loc["uri"])).path))
        assert target.is_file()
        seen.add(target.relative_to(project).as_posix())
    assert seen == {"pkg/mod.py", "pkg/other.py", "pkg/with space.py"}
    # a file outside the root keeps an absolute file URI, no base
    outside = Diagnostic(
        "SHD950", "flag-bad-call", Severity.ERROR, str(tmp_path / "x.py"), Span(1, 0, 1, 1), "m"
    )
    loc = sarif([outside], ctx)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"
    ]
    assert loc == {"uri": (tmp_path / "x.py").as_uri()}


def test_sarif_related_locations_fixes_and_fingerprints(project: Path) -> None:
    result, ctx = run(project)
    by_line = {(d.path, d.span.line): d for d in result.diagnostics}
    run0 = sarif(result.diagnostics, ctx)["runs"][0]
    res = next(
        r
        for r in run0["results"]
        if r["ruleId"] == "SHD950"
        and r["locations"][0]["physicalLocation"]["region"]["startLine"] == UNICODE_LINE
    )
    d = by_line[("pkg/mod.py", UNICODE_LINE)]
    assert res["partialFingerprints"] == {"shardlint/v1": d.fingerprint}
    assert res["message"]["text"].startswith(d.message) and "it is bad" in res["message"]["text"]
    [rel] = res["relatedLocations"]
    assert rel["message"]["text"] == "bad_call is defined here"
    assert rel["physicalLocation"]["artifactLocation"] == {
        "uri": "pkg/defs.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert rel["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 5,
        "endLine": 1,
        "endColumn": 13,
    }
    # applying the SARIF replacements (1-based code points) gives the engine's fix
    [fix] = res["fixes"]
    assert fix["description"]["text"] == "use good_call"
    [change] = fix["artifactChanges"]
    lines = MOD.splitlines(keepends=True)
    text = MOD
    for rep in sorted(
        change["replacements"],
        key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
        reverse=True,
    ):
        reg = rep["deletedRegion"]
        a = sum(len(x) for x in lines[: reg["startLine"] - 1]) + reg["startColumn"] - 1
        b = sum(len(x) for x in lines[: reg["endLine"] - 1]) + reg["endColumn"] - 1
        text = text[:a] + rep["insertedContent"]["text"] + text[b:]
    assert d.fix is not None
    assert text == apply_fixes(MOD, [d.fix])[0]
    assert 's = "é😀"; good_call(x)' in text
    # a finding without an edit has no "fixes"
    todo = next(r for r in run0["results"] if r["ruleId"] == "SHD951")
    assert "fixes" not in todo


def test_sarif_fingerprint_survives_lines_inserted_above(project: Path) -> None:
    def fps() -> list[str]:
        result, ctx = run(project)
        return [
            r["partialFingerprints"]["shardlint/v1"]
            for r in sarif(result.diagnostics, ctx)["runs"][0]["results"]
            if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/mod.py"
        ]

    before = fps()
    (project / "pkg" / "mod.py").write_text("import os\n\n\n" + MOD, encoding="utf-8")
    assert fps() == before and len(before) == 3


def test_sarif_keeps_suppressed_findings_marked(project: Path) -> None:
    result, ctx = run(project)
    results = sarif(result.diagnostics, ctx)["runs"][0]["results"]
    marked = [r for r in results if "suppressions" in r]
    assert len(marked) == 1
    assert marked[0]["suppressions"] == [{"kind": "inSource"}]
    assert marked[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 7


def test_sarif_internal_errors_are_notifications(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"m.py": "f = lambda: bad_call(1)\n"})
    result, ctx = run(root, CRASHING)
    assert result.errors
    inv = sarif(result.diagnostics, ctx)["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    [note] = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and "ZeroDivisionError" in note["message"]["text"]
    assert note["associatedRule"]["id"] == "SHD952"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"


def test_sarif_of_a_clean_run_is_valid(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"m.py": "x = 1\n"})
    result, ctx = run(root)
    assert sarif(result.diagnostics, ctx)["runs"][0]["results"] == []


# -- GitHub ------------------------------------------------------------------------------

_COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    m = _COMMAND.match(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), props, m.group(3)


def test_github_annotations(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    result, ctx = run(project)
    visible = [d for d in result.diagnostics if not d.suppressed]
    lines = get_renderer("github")(result.diagnostics, ctx).splitlines()
    assert len(lines) == len(visible) == 3  # the suppressed one is not annotated
    kind, props, msg = parse_command(lines[0])
    assert kind == "error"
    assert props == {
        "file": "pkg/mod.py",
        "line": "5",
        "col": "15",
        "endLine": "5",
        "endColumn": "26",
        "title": "shardlint SHD950 (flag-bad-call)",
    }
    assert msg.startswith("bad_call(...) breaks 100%25 of the time, always%0Anote: it is bad")
    kind, props, msg = parse_command(lines[1])
    assert kind == "warning" and msg == "todo, with a comma: and a colon"
    # paths are relative to the working directory
    monkeypatch.chdir(project / "pkg")
    assert (
        parse_command(get_renderer("github")(visible, ctx).splitlines()[0])[1]["file"] == "mod.py"
    )


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    d = Diagnostic(
        "SHD950", "flag-bad-call", Severity.ERROR, "odd,name:x.py", Span(3, 0, 4, 2), "two\nlines"
    )
    ctx = ReportContext(Path("/nonexistent"), REGISTRY)
    _, props, msg = parse_command(get_renderer("github")([d], ctx).rstrip("\n"))
    assert props["file"].endswith("odd%2Cname%3Ax.py")
    assert "endColumn" not in props  # multi-line span: GitHub ignores columns there
    assert msg == "two%0Alines"


# -- GitLab -----------------------------------------------------------------------------


def test_gitlab_code_quality(project: Path) -> None:
    result, ctx = run(project)
    issues = json.loads(get_renderer("gitlab")(result.diagnostics, ctx))
    assert len(issues) == 3  # suppressed findings are left out
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert isinstance(issue["location"]["lines"]["begin"], int)
    first = issues[0]
    assert first["check_name"] == "SHD950" and first["severity"] == "major"
    assert first["location"] == {"path": "pkg/mod.py", "lines": {"begin": 5}}
    assert first["description"].startswith("SHD950 bad_call(...)")
    assert {i["severity"] for i in issues} == {"major", "minor"}


def test_gitlab_fingerprints_are_unique_and_stable(project: Path) -> None:
    result, ctx = run(project)
    # pkg/mod.py and pkg/other.py hold the very same finding in handler()
    same = [d for d in result.diagnostics if d.code == "SHD950" and not d.suppressed]
    assert len(same) == 2 and same[0].fingerprint == same[1].fingerprint
    issues = json.loads(get_renderer("gitlab")(result.diagnostics, ctx))
    fps = [i["fingerprint"] for i in issues]
    assert len(set(fps)) == len(fps) == 3
    (project / "pkg" / "mod.py").write_text("import os\n\n" + MOD, encoding="utf-8")
    result, ctx = run(project)
    assert [
        i["fingerprint"] for i in json.loads(get_renderer("gitlab")(result.diagnostics, ctx))
    ] == fps


def test_gitlab_paths_follow_ci_project_dir(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, ctx = run(project)
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    issues = json.loads(get_renderer("gitlab")(result.diagnostics, ctx))
    assert issues[0]["location"]["path"] == "proj/pkg/mod.py"


# -- JUnit ----------------------------------------------------------------------------------


def junit(text: str) -> JUnitXml:
    xml = JUnitXml.fromstring(text)
    return xml


def test_junit_one_failing_case_per_finding(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    result, ctx = run(project)
    visible = [d for d in result.diagnostics if not d.suppressed]
    out = tmp_path / "junit.xml"
    out.write_text(get_renderer("junit")(visible, ctx), encoding="utf-8")
    xml = JUnitXml.fromfile(str(out))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.name == "shardlint" and suite.tests == 3 and suite.failures == 3
    cases = list(suite)
    assert len(cases) == 3
    first = cases[0]
    assert first.classname == "shardlint.SHD950" and first.name == "pkg/mod.py:5:15"
    [failure] = first.result
    assert isinstance(failure, Failure)
    assert failure.message == "SHD950 bad_call(...) breaks 100% of the time, always"
    assert failure.type == "SHD950"
    assert "pkg/mod.py:5:15" in failure.text and "note: it is bad" in failure.text


def test_junit_clean_run_shows_one_passing_case(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    result, ctx = run(root)
    [suite] = list(junit(get_renderer("junit")(result.diagnostics, ctx)))
    [case] = list(suite)
    assert case.is_passed and suite.failures == 0 and suite.tests == 1
    assert "2 files" in case.name


def test_junit_errors_skips_and_unprintable_characters(tmp_path: Path) -> None:
    d = Diagnostic(
        "SHD950",
        "flag-bad-call",
        Severity.ERROR,
        "a.py",
        Span(1, 0, 1, 1),
        "ctrl \x1b[31m <&> \x00",
    )
    s = Diagnostic(
        "SHD950", "flag-bad-call", Severity.ERROR, "a.py", Span(2, 0, 2, 1), "m", suppressed=True
    )
    ctx = ReportContext(
        tmp_path, REGISTRY, errors=[InternalError("a.py", "SHD952", "ZeroDivisionError: \x00boom")]
    )
    [suite] = list(junit(get_renderer("junit")([d, s], ctx)))
    kinds = [type(c.result[0]) for c in suite]
    assert kinds == [Failure, Skipped, Error]
    assert "<&>" in next(iter(suite)).result[0].message


# -- the command line ----------------------------------------------------------------------


def cli(*args: str, cwd: Path) -> object:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def cli_project(tmp_path: Path) -> Path:
    # Built-in codes only, so the findings do not depend on any rule: SHD000
    # (NUL bytes: not Python source) and SHD900 (a stale noqa, selected in
    # the config).
    return make_project(
        tmp_path,
        {
            "pyproject.toml": (
                '[tool.shardlint]\nextend-select = ["SHD900"]\nextend-exclude = ["generated"]\n'
            ),
            "pkg/broken.py": "x = 1\x00\n",
            "pkg/stale.py": "x = 1  # noqa: SHD999\n",
            "generated/gen.py": "y = 2  # noqa: SHD999\n",
        },
    )


def test_cli_writes_several_reports_and_keeps_human_output(tmp_path: Path) -> None:
    root = cli_project(tmp_path)
    out = tmp_path / "out"
    r = cli(
        "check",
        ".",
        "--no-cache",
        "--report",
        f"sarif={out / 'shardlint.sarif'}",
        "--report",
        f"JUnit={out / 'junit.xml'}",
        "--report",
        f"gitlab={out / 'gl.json'}",
        "--report",
        f"github={out / 'gh.txt'}",
        cwd=root,
    )
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [
        "pkg/broken.py:1:1: SHD000 file contains NUL bytes; not Python source",
        "pkg/stale.py:1:8: SHD900 noqa comment with unknown SHD999",
    ]
    log = json.loads((out / "shardlint.sarif").read_text())
    assert not list(jsonschema.Draft4Validator(SCHEMA).iter_errors(log))
    assert [x["ruleId"] for x in log["runs"][0]["results"]] == ["SHD000", "SHD900"]
    [suite] = list(JUnitXml.fromfile(str(out / "junit.xml")))
    assert suite.failures == 2
    assert [i["check_name"] for i in json.loads((out / "gl.json").read_text())] == [
        "SHD000",
        "SHD900",
    ]
    assert (out / "gh.txt").read_text().startswith("::error file=pkg/broken.py,line=1,col=1,")


def test_cli_output_format_sarif_on_stdout(tmp_path: Path) -> None:
    root = cli_project(tmp_path)
    r = cli("check", ".", "--no-cache", "--output-format", "sarif", cwd=root)
    assert r.exit_code == 1
    log = json.loads(r.stdout)
    assert not list(jsonschema.Draft4Validator(SCHEMA).iter_errors(log))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sarif", "expected FORMAT=PATH"),
        ("xml=out.xml", "expected FORMAT=PATH"),
        ("sarif=", "expected FORMAT=PATH"),
    ],
)
def test_cli_rejects_bad_report_values(tmp_path: Path, value: str, message: str) -> None:
    root = cli_project(tmp_path)
    r = cli("check", ".", "--no-cache", "--report", value, cwd=root)
    assert r.exit_code == 2 and message in r.output


def test_cli_rejects_two_reports_to_one_file(tmp_path: Path) -> None:
    root = cli_project(tmp_path)
    r = cli(
        "check", ".", "--no-cache", "--report", "sarif=x.out", "--report", "junit=x.out", cwd=root
    )
    assert r.exit_code == 2 and "already the target" in r.output
    assert not (root / "x.out").exists()


# -- pre-commit ------------------------------------------------------------------------------


def test_pre_commit_hook_definition() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "shardlint" and hook["language"] == "python"
    assert hook["entry"] == "shardlint check --force-exclude"
    assert hook["types_or"] == ["python", "pyi"] and hook["require_serial"] is False
    assert "--report" not in hook["entry"] and "--output-file" not in hook["entry"]


def test_force_exclude_skips_excluded_files_passed_explicitly(tmp_path: Path) -> None:
    # what pre-commit does: name every file, excluded ones included
    root = cli_project(tmp_path)
    files = ["pkg/stale.py", "generated/gen.py"]
    r = cli("check", "--no-cache", *files, cwd=root)
    assert {ln.split(":")[0] for ln in r.stdout.splitlines()} == {
        "pkg/stale.py",
        "generated/gen.py",
    }
    r = cli("check", "--no-cache", "--force-exclude", *files, cwd=root)
    assert {ln.split(":")[0] for ln in r.stdout.splitlines()} == {"pkg/stale.py"}
    r = cli("check", "--no-cache", "--force-exclude", "generated/gen.py", cwd=root)
    assert r.exit_code == 0 and r.stdout == ""
