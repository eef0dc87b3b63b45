"""The CI workspace turned against the run (issue 22 item 4): the cache
refuses a folder it did not create, never follows a link, never reads state
another install wrote, drops entries of the wrong shape; the rule-metadata
snapshot cannot switch a rule off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_robustness import BAD, err, no_traceback, out, shardlint


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "bad.py").write_text(BAD)
    (root / ".gitignore").write_text("build/\n")
    return root


def state_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.glob("v*-*.json") if ".facts." not in p.name)


@pytest.mark.parametrize("how", ["flag", "config"])
def test_a_cache_dir_holding_other_files_is_refused(project: Path, how: str) -> None:
    if how == "config":
        (project / "pyproject.toml").write_text("[tool.shardlint]\ncache-dir = '.'\n")
        args: tuple[str, ...] = (".",)
    else:
        args = (".", "--cache-dir", ".")
    r = shardlint(*args, cwd=project)
    no_traceback(r)
    assert r.returncode == 2
    assert "holds files shardlint did not put there" in err(r)
    assert (project / ".gitignore").read_text() == "build/\n"
    assert not (project / "CACHEDIR.TAG").exists()
    # an empty or new folder is fine, and the next run uses it
    r = shardlint(".", "--cache-dir", "fresh", cwd=project)
    assert r.returncode == 1 and (project / "fresh" / "CACHEDIR.TAG").is_file()
    r = shardlint(".", "--cache-dir", "fresh", cwd=project)
    assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r)


def test_committed_links_in_the_cache_folder_write_nothing_outside(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file").write_text("precious\n")
    cache = project / ".shardlint_cache"
    cache.mkdir()
    os.symlink(elsewhere / "file", cache / ".gitignore")
    os.symlink(elsewhere / "created", cache / "CACHEDIR.TAG")
    r = shardlint(".", cwd=project)
    no_traceback(r)
    assert (elsewhere / "file").read_text() == "precious\n"
    assert not os.path.lexists(elsewhere / "created")
    assert r.returncode == 2 and "holds files shardlint did not put there" in err(r)


def test_links_to_state_files_are_neither_read_nor_written_through(project: Path, tmp_path: Path) -> None:
    r = shardlint(".", cwd=project)
    assert r.returncode == 1
    cache = project / ".shardlint_cache"
    target = tmp_path / "outside.json"
    first = state_files(cache)[0]
    target.write_bytes(first.read_bytes())
    first.unlink()
    os.symlink(target, first)
    os.symlink(tmp_path / "dangling", cache / "CACHEDIR.TAG.new")
    before = target.read_bytes()
    (project / "bad.py").write_text(BAD + "\n")  # a change: the state is written again
    r = shardlint(".", cwd=project)
    no_traceback(r)
    assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r)
    assert target.read_bytes() == before
    assert not os.path.lexists(tmp_path / "dangling")


def test_a_cache_another_install_wrote_is_not_trusted(project: Path) -> None:
    """A committed cache whose check result was edited to [] (all clear):
    written by another install of the same version (same sources, same
    mtimes), it is never read on this one."""
    other_install = (
        "import sys, linter.registry as r\n"
        "real = r._source_stamps\n"
        "r._source_stamps = lambda where: [s + ':other-install' for s in real(where)]\n"
        "from linter.cli import main\n"
        "sys.argv = ['shardlint', 'check', '.']\n"
        "main()\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(project / ".user-cache-other"))
    r = subprocess.run([sys.executable, "-c", other_install], cwd=project, capture_output=True, env=env, timeout=120)
    assert r.returncode == 1
    poisoned = 0
    for f in state_files(project / ".shardlint_cache"):
        blob = json.loads(f.read_text())
        for entry in blob["files"].values():
            if entry.get("check"):
                entry["check"]["diags"] = []
                poisoned += 1
        f.write_text(json.dumps(blob))
    assert poisoned
    r = shardlint(".", cwd=project)
    no_traceback(r)
    assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r)


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: e.update(m="yesterday"),
        lambda e: e.update(scan="oops"),
        lambda e: e.update(scan={**e["scan"], "rules": "SHD401"}),
        lambda e: e.update(scan={**e["scan"], "fh": []}),
        lambda e: e["check"] and e.update(check={**e["check"], "diags": [{"code": 1}]}),
        lambda e: e["check"] and e.update(check={**e["check"], "diags": [{**e["check"]["diags"][0], "severity": "x"}]}),
        lambda e: e["check"] and e.update(check={**e["check"], "ld": {"k": 3}}),
        lambda e: e["check"] and e.update(check={**e["check"], "cols": "abc"}),
    ],
)
def test_entries_of_the_wrong_shape_are_dropped_not_crashed_on(project: Path, damage) -> None:  # type: ignore[no-untyped-def]
    assert shardlint(".", cwd=project).returncode == 1
    for f in state_files(project / ".shardlint_cache"):
        blob = json.loads(f.read_text())
        for entry in blob["files"].values():
            damage(entry)
        f.write_text(json.dumps(blob))
    for _ in range(2):  # the damaged entry, then the state written again
        r = shardlint(".", cwd=project)
        no_traceback(r)
        assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r), err(r)


def test_the_metadata_snapshot_cannot_switch_a_rule_off(project: Path) -> None:
    assert shardlint(".", "--no-cache", cwd=project).returncode == 1
    snapshots = list((project / ".user-cache" / "shardlint").glob("registry-*.json"))
    assert len(snapshots) == 1
    blob = json.loads(snapshots[0].read_text())
    blob["rules"]["SHD401"]["default_enabled"] = False
    snapshots[0].write_text(json.dumps(blob))
    r = shardlint(".", "--no-cache", cwd=project)
    no_traceback(r)
    assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r)


def test_the_cache_key_covers_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same version, sizes and mtimes but another inode or change time (a
    fresh install): another key."""
    import linter.registry as registry

    before = registry.rules_fingerprint()
    real = registry._source_stamps
    monkeypatch.setattr(registry, "_source_stamps", lambda where: [s + "0" for s in real(where)])
    assert registry.rules_fingerprint() != before
    stamps = real(os.path.dirname(registry.__file__))
    st = os.stat(stamps[0].split(":")[0])
    assert stamps[0].endswith(f":{st.st_ino}:{st.st_ctime_ns}")
