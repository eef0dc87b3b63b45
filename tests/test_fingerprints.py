"""Fingerprints identify a finding across commits (SARIF ``partialFingerprints``,
GitLab ``fingerprint``): they must survive edits above the finding and moving
its file, and must tell apart two identical findings in one function."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst

from linter.builtin_rules import UnparsableFile, UnusedNoqa
from linter.config import Config
from linter.engine import Engine
from linter.needles import Needles
from linter.registry import Registry
from linter.rule import Rule
from linter.types import Diagnostic


class FlagLeakyCall(Rule):
    """## What it finds
    Calls to `leaky` (test only).
    ## Why it breaks
    Test only.
    ## Example
    `leaky(x)`
    ## Fix
    None.
    ## Options
    None.
    """

    code = "SHD950"
    name = "flag-leaky-call"
    summary = "test rule"
    needles = Needles(all_of=("leaky",))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "leaky":
            self.report(node, "leaky call")


REGISTRY = Registry({r.code: r for r in (UnparsableFile, FlagLeakyCall, UnusedNoqa)}, {})

SOURCE = """\
import os


class Pool:
    def grow(self, n):
        if n > 0:
            leaky(n)
        return n


def drain(buf):
    leaky(buf)
    leaky(buf)
    return len(buf)
"""


def lint(
    text: str, rel: str = "pkg/mod.py", root: Path = Path("/nonexistent-root"), **cfg: object
) -> list[Diagnostic]:
    engine = Engine(Config(root=root, **cfg), REGISTRY, jobs=1)  # type: ignore[arg-type]
    diags, errors = engine.lint_text(text, root / rel)
    assert not errors
    return diags


def test_every_finding_has_its_own_fingerprint() -> None:
    diags = lint(SOURCE)
    assert len(diags) == 3
    assert all(d.fingerprint for d in diags) and len({d.fingerprint for d in diags}) == 3


def test_lines_inserted_above_keep_fingerprints() -> None:
    before = lint(SOURCE)
    # above the file's first finding, and inside the function above the others
    edited = SOURCE.replace("import os\n", "import os\nimport sys\n\nLIMIT = 3\n").replace(
        "def drain(buf):\n", "def drain(buf):\n    # a comment\n    buf = list(buf)\n\n"
    )
    after = lint(edited)
    assert [d.span.line for d in after] != [d.span.line for d in before]  # the edit moved them
    assert [d.fingerprint for d in after] == [d.fingerprint for d in before]


def test_reindenting_a_multiline_finding_keeps_its_fingerprint() -> None:
    flat = "def f(a):\n    leaky(\n        a,\n    )\n"
    nested = "def f(a):\n    if a:\n        leaky(\n            a,\n        )\n"
    assert [d.fingerprint for d in lint(flat)] == [d.fingerprint for d in lint(nested)]


def test_rename_and_move_keep_fingerprints(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text(SOURCE)
    engine = Engine(Config(root=src), REGISTRY, jobs=1)
    first = engine.run([src]).diagnostics

    moved = tmp_path / "proj2"
    (moved / "elsewhere" / "deeper").mkdir(parents=True)
    shutil.copy(src / "pkg" / "mod.py", moved / "elsewhere" / "deeper" / "renamed.py")
    second = Engine(Config(root=moved), REGISTRY, jobs=1).run([moved]).diagnostics

    assert {d.path for d in first} == {"pkg/mod.py"}
    assert {d.path for d in second} == {"elsewhere/deeper/renamed.py"}
    assert [d.fingerprint for d in second] == [d.fingerprint for d in first]


def test_identical_findings_in_one_function_are_distinct_and_keep_their_order() -> None:
    diags = [d for d in lint(SOURCE) if d.span.line in (12, 13)]
    assert len(diags) == 2
    a, b = (d.fingerprint for d in diags)
    assert a != b
    # still the same two after an edit above them
    edited = SOURCE.replace("def drain(buf):\n", "def drain(buf):\n    buf = bytes(buf)\n")
    again = [d.fingerprint for d in lint(edited) if d.span.line in (13, 14)]
    assert again == [a, b]


def test_same_code_in_another_scope_is_another_finding() -> None:
    text = (
        "def one(x):\n    leaky(x)\n\n\n"
        "def two(x):\n    leaky(x)\n\n\n"
        "class C:\n    def one(self, x):\n        leaky(x)\n"
    )
    fps = [d.fingerprint for d in lint(text)]
    assert len(fps) == 3 and len(set(fps)) == 3


def test_changing_the_flagged_code_changes_the_fingerprint() -> None:
    a = lint("def f(x):\n    leaky(x)\n")
    b = lint("def f(x):\n    leaky(x + 1)\n")
    assert a[0].fingerprint != b[0].fingerprint


def test_stale_noqa_findings_have_stable_fingerprints() -> None:
    text = "x = 1  # noqa: SHD950\ny = 2  # noqa: SHD950\nz = 3\n"
    before = lint(text, extend_select=("SHD900",))
    after = lint("import os\n\n" + text, extend_select=("SHD900",))
    assert [d.code for d in before] == ["SHD900", "SHD900"]
    fps = [d.fingerprint for d in before]
    assert all(fps) and len(set(fps)) == 2
    assert [d.fingerprint for d in after] == fps
