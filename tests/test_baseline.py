"""Baselines as CI uses them: record today's findings, fail only on new ones,
report and prune the fixed ones (never adding), survive edits and moves, and
refuse a file that is not a baseline with exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_cli import cli, project

from linter.baseline import BaselineError, Entry, match, parse

pytestmark = pytest.mark.usefixtures("toy")

TWO = "def grow(a):\n    return min(a, 1)\n\n\ndef shrink(b):\n    return min(b, 2)\n"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from toy_rules import toy_registry

    import linter.registry as registry

    monkeypatch.setattr(registry, "load_registry_fast", toy_registry)
    monkeypatch.setattr(registry, "load_registry", toy_registry)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def write_baseline(root: Path) -> Path:
    target = root / "shardlint-baseline.jsonl"
    r = cli("check", ".", "--no-cache", "--write-baseline", str(target), cwd=root)
    assert r.exit_code == 0, r.output
    return target


def test_written_baseline_is_sorted_versioned_json_lines(tmp_path: Path) -> None:
    root = project(tmp_path, {"b.py": TWO, "a.py": "x = min(1, 2)\n"})
    lines = write_baseline(root).read_text().splitlines()
    assert json.loads(lines[0]) == {"schema": "shardlint-baseline", "version": 1}
    rows = [json.loads(x) for x in lines[1:]]
    assert [r["path"] for r in rows] == ["a.py", "b.py", "b.py"]
    assert all("line" not in r and r["fingerprint"] and r["code"] == "SHD990" for r in rows)
    assert rows == sorted(rows, key=lambda r: (r["path"], r["code"], r["fingerprint"], r["message"]))


def test_only_new_findings_are_reported_and_fail(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": TWO})
    base = write_baseline(root)
    r = cli("check", ".", "--no-cache", "--baseline", str(base), cwd=root)
    assert r.exit_code == 0 and r.stdout == "", r.output
    (root / "a.py").write_text(TWO + "\n\ndef third(c):\n    return min(c, 3)\n")
    r = cli("check", ".", "--no-cache", "-q", "--baseline", str(base), cwd=root)
    assert r.exit_code == 1
    assert r.stdout.splitlines() == ["a.py:10:12: SHD990 min call in third"]


def test_survives_moved_lines_and_a_renamed_file_on_another_machine(tmp_path: Path) -> None:
    root = project(tmp_path, {"pkg/a.py": TWO})
    base = write_baseline(root)
    # another checkout elsewhere: the file moved and renamed, lines shifted
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(root / "pyproject.toml", other / "pyproject.toml")
    (other / "lib" / "deeper").mkdir(parents=True)
    edited = "import os\n\nLIMIT = 3\n\n\n" + TWO.replace("def shrink(b):\n", "def shrink(b):\n    b = abs(b)\n")
    (other / "lib" / "deeper" / "renamed.py").write_text(edited)
    r = cli("check", ".", "--no-cache", "--baseline", str(base), cwd=other)
    assert r.exit_code == 0 and r.stdout == "", r.output
    assert "no longer found" not in r.output


def test_fixed_entries_are_reported_and_update_only_prunes(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": TWO, "b.py": "y = min(4, 5)\n"})
    base = write_baseline(root)
    before = base.read_text().splitlines()
    # one finding fixed, a new one added
    (root / "a.py").write_text(TWO.replace("min(b, 2)", "max(b, 2)") + "\nz = min(7, 8)\n")
    r = cli("check", ".", "--no-cache", "--baseline", str(base), cwd=root)
    assert r.exit_code == 1
    assert "1 baseline entry no longer found (fixed)" in r.stderr and "min call in shrink" in r.stderr
    assert base.read_text().splitlines() == before  # reporting alone changes nothing

    r = cli("check", ".", "--no-cache", "--baseline", str(base), "--update-baseline", cwd=root)
    assert r.exit_code == 1  # the new finding still fails
    after = base.read_text().splitlines()
    assert after == [line for line in before if "shrink" not in line]
    assert not any("min call in <module>" in line and '"a.py"' in line for line in after)  # never added


def test_checking_a_subfolder_never_prunes_the_rest(tmp_path: Path) -> None:
    root = project(tmp_path, {"one/a.py": TWO, "two/b.py": TWO})
    base = write_baseline(root)
    before = base.read_text()
    r = cli("check", "one", "--no-cache", "--baseline", str(base), "--update-baseline", cwd=root)
    assert r.exit_code == 0 and "no longer found" not in r.stderr
    assert base.read_text() == before


def test_entries_of_a_deleted_file_are_fixed(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": TWO, "b.py": "y = min(4, 5)\n"})
    base = write_baseline(root)
    (root / "b.py").unlink()
    r = cli("check", ".", "--no-cache", "--baseline", str(base), "--update-baseline", cwd=root)
    assert r.exit_code == 0 and "b.py: SHD990" in r.stderr
    assert '"b.py"' not in base.read_text()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "empty file"),
        ("{not json\n", "line 1: not JSON"),
        ('{"version": "2.1.0", "runs": []}\n', "not a shardlint baseline"),
        ('{"schema": "shardlint-baseline", "version": 99}\n', "version 99 is not supported"),
        ('{"schema": "shardlint-baseline", "version": 1}\n{"code": "SHD990", "path": "a.py"}\n',
         "line 2: entry lacks string field(s) fingerprint, message"),
        ('{"schema": "shardlint-baseline", "version": 1}\n[1, 2]\n', "line 2: expected a JSON object"),
        ('{"schema": "shardlint-baseline", "version": 1}\n{"code": "SHD990", "path": "a.py", "fing',
         "line 2: not JSON"),
    ],
)
def test_corrupt_or_foreign_baseline_is_an_error_never_a_pass(tmp_path: Path, content: str, says: str) -> None:
    root = project(tmp_path, {"a.py": TWO})
    bad = root / "baseline.jsonl"
    bad.write_text(content)
    r = cli("check", ".", "--no-cache", "--baseline", str(bad), "--update-baseline", cwd=root)
    assert r.exit_code == 2
    assert str(bad) in r.stderr and says in r.stderr
    assert bad.read_text() == content  # never rewritten


def test_missing_baseline_and_flag_misuse_exit_2(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": TWO})
    r = cli("check", ".", "--no-cache", "--baseline", "nope.jsonl", cwd=root)
    assert r.exit_code == 2 and "no such baseline file" in r.stderr
    r = cli("check", ".", "--no-cache", "--update-baseline", cwd=root)
    assert r.exit_code == 2 and "--update-baseline needs --baseline" in r.stderr
    r = cli("check", ".", "--no-cache", "--baseline", "x", "--write-baseline", "y", cwd=root)
    assert r.exit_code == 2
    r = cli("check", ".", "--no-cache", "--baseline", "x", "--fix", cwd=root)
    assert r.exit_code == 2 and "--fix" in r.stderr


def test_match_prefers_the_same_path_then_follows_moves() -> None:
    recorded = [Entry("old.py", "SHD1", "f1", "m"), Entry("keep.py", "SHD1", "f1", "m")]
    current = [
        Entry("keep.py", "SHD1", "f1", "m"), Entry("new.py", "SHD1", "f1", "m"), Entry("x.py", "SHD1", "f2", "m")
    ]
    pairs, new, gone = match(current, recorded)
    assert [(c.path, r.path) for c, r in pairs] == [("keep.py", "keep.py"), ("new.py", "old.py")]
    assert [c.path for c in new] == ["x.py"] and gone == []


def test_parse_round_trips_rendered_entries() -> None:
    from linter.baseline import render

    entries = [Entry("b.py", "SHD2", "f2", "two \u00e9"), Entry("a.py", "SHD1", "f1", 'one "q"')]
    assert parse(render(entries)) == sorted(entries)
    with pytest.raises(BaselineError):
        parse(render(entries).replace('"version": 1', '"version": 0'))
