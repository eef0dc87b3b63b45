"""Other holes (issue 22 item 6): workers die with a killed run, an
unreadable folder is reported, any bytes on stdin, Unicode look-alikes read
as Python reads them, JSON paths as the concise ones; and one configuration
per file (item 7): the CLI and flake8 agree on the corpus."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_robustness import BAD, err, no_traceback, out, shardlint

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_run_leaves_no_worker(project: Path) -> None:
    for i in range(40):
        (project / f"m{i}.py").write_text(BAD)
    pids = project / "pids"
    pids.mkdir()
    script = (
        "import os, sys, time\n"
        "import linter.engine as e\n"
        "def stuck(job):\n"
        f"    open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()\n"
        "    while True:\n"
        "        sum(range(10000))\n"
        "e._scan_job = stuck\n"
        "from linter.cli import main\n"
        "sys.argv = ['shardlint', 'check', '.', '--no-cache', '-j', '2']\n"
        "main()\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script], cwd=project)
    try:
        deadline = time.monotonic() + 60
        while len(os.listdir(pids)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(p) for p in os.listdir(pids)]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)
    finally:
        run.kill()
        for p in os.listdir(pids):
            try:
                os.kill(int(p), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_an_unreadable_folder_is_reported_not_passed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from linter.cli import main

    secret = project / "secret"
    secret.mkdir()
    (secret / "hidden.py").write_text(BAD)
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if str(path) == str(secret):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(project)
    r = CliRunner().invoke(main, ["check", "secret", "--no-cache"])
    assert r.exit_code == 1, r.output
    assert "secret:1:1: SHD000" in r.output
    assert "All checks passed" not in r.output


def test_any_bytes_on_stdin(project: Path) -> None:
    r = shardlint("-", cwd=project, stdin=b"x = 'caf\xe9'\n")
    no_traceback(r)
    assert r.returncode == 1 and "SHD000" in out(r) and "encoding" in out(r)
    latin = b"# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n" + BAD.encode()
    r = shardlint("-", "--stdin-filename", "x.py", cwd=project, stdin=latin)
    no_traceback(r)
    assert r.returncode == 1 and "x.py:5:5: SHD401" in out(r)
    r = shardlint("-", "--fix", cwd=project, stdin=latin)
    no_traceback(r)
    assert r.stdout == latin


def test_unicode_look_alikes_are_read_as_python_reads_them(project: Path) -> None:
    look_alike = BAD.replace("cache_cfg", "ｃａｃｈｅ_ｃｆｇ").replace("dp_size", "𝐝𝐩_size")
    assert not look_alike.isascii()
    (project / "bad.py").write_text(look_alike)
    r = shardlint("bad.py", "--no-cache", cwd=project)
    no_traceback(r)
    assert "bad.py:3:5: SHD401" in out(r)
    r = shardlint("-", "--stdin-filename", "x.py", cwd=project, stdin=look_alike.encode())
    assert "x.py:3:5: SHD401" in out(r)


def test_identifiers_are_normalised_and_nothing_else() -> None:
    from linter.source import normalize_identifiers

    text = "ｍｉｎ = 'ｍｉｎ'  # ｍｉｎ\n𝐁LOCK = ｍｉｎ\n"
    assert normalize_identifiers(text) == "min = 'ｍｉｎ'  # ｍｉｎ\nBLOCK = min\n"
    assert normalize_identifiers("x = 'é'\n") == "x = 'é'\n"
    assert normalize_identifiers("def f(:\n  ｍ") == "def f(:\n  ｍ"  # does not tokenize: as it is


def test_json_paths_are_the_concise_paths(project: Path) -> None:
    sub = project / "pkg"
    sub.mkdir()
    (sub / "bad.py").write_text(BAD)
    concise = shardlint("bad.py", "--no-cache", cwd=sub)
    as_json = shardlint("bad.py", "--no-cache", "--output-format", "json", cwd=sub)
    assert out(concise).startswith("bad.py:3:5: SHD401")
    assert [d["path"] for d in json.loads(out(as_json))] == ["bad.py"]


# -- item 7: one configuration per file -------------------------------------------


def _findings(text: str) -> set[tuple[str, int, int, str]]:
    got = set()
    for line in text.splitlines():
        m = re.match(r"(.+?):(\d+):(\d+): (SHD\d+)", line)
        if m:
            got.add((os.path.normpath(m[1]), int(m[2]), int(m[3]), m[4]))
    return got


def test_flake8_and_the_cli_report_the_same_set_on_the_corpus() -> None:
    pytest.importorskip("flake8")
    cli = subprocess.run(
        [sys.executable, "-m", "linter", "check", "corpus/", "--no-cache", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert cli.returncode == 1, cli.stderr
    f8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "SHD", "corpus/"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    got, want = _findings(cli.stdout), _findings(f8.stdout)
    assert got and got == want, (sorted(got - want), sorted(want - got))
    # the nested projects' own configurations are what makes them agree
    assert any(p.startswith("corpus/block_size_min_divisibility/custom_options/") for p, *_ in got)


def test_the_closest_table_configures_extend_inherits_and_config_overrides(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.shardlint]\nignore = ['SHD401']\n")
    (tmp_path / "top.py").write_text(BAD)
    child = tmp_path / "child"
    child.mkdir()
    (child / "inner.py").write_text(BAD)
    # a pyproject.toml without the table is passed over
    (child / "pyproject.toml").write_text("[project]\nname = 'c'\n")
    r = shardlint(".", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, out(r)
    # with its own table it is its own project
    (child / "pyproject.toml").write_text("[tool.shardlint]\nselect = ['SHD4']\n")
    r = shardlint(".", "--no-cache", cwd=tmp_path)
    assert _findings(out(r)) == {("child/inner.py", 3, 5, "SHD401")}
    # extend: the parent's ignore comes back unless the child overrides it
    (child / "pyproject.toml").write_text("[tool.shardlint]\nextend = '../pyproject.toml'\nselect = ['SHD4']\n")
    r = shardlint(".", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, out(r)
    # --config: one file for everything
    (tmp_path / "all.toml").write_text("select = ['SHD401']\n")
    r = shardlint(".", "--no-cache", "--config", "all.toml", cwd=tmp_path)
    assert _findings(out(r)) == {("top.py", 3, 5, "SHD401"), ("child/inner.py", 3, 5, "SHD401")}
    # the flake8 plugin takes the closest table too
    from linter.config import load_config
    from linter.registry import load_registry

    assert load_config([child / "inner.py"], load_registry()).root == child
    # an extend cycle is a config error naming the file
    (tmp_path / "pyproject.toml").write_text("[tool.shardlint]\nextend = 'child/pyproject.toml'\n")
    r = shardlint(".", "--no-cache", cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 2 and "'extend' makes a cycle" in err(r)
