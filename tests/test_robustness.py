"""Hostile input (issue 22): no hang, no traceback, no finding lost, no
silent pass. Every run goes through the real command in a subprocess with a
timeout, as a CI job would, so that a hang fails the test instead of
stalling the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# SHD401 fires on line 3 of this snippet (a budget divided and stored back)
BAD = (
    "def shrink(cache_cfg, dp_size):\n"
    "    share = cache_cfg.num_blocks // dp_size\n"
    "    cache_cfg.num_blocks = share\n"
)


def shardlint(*args: str, cwd: Path, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(cwd / ".user-cache"))
    return subprocess.run(
        [sys.executable, "-m", "linter", "check", *args],
        cwd=cwd, input=stdin, capture_output=True, timeout=timeout, env=env,
    )


def out(r: subprocess.CompletedProcess) -> str:
    return r.stdout.decode("utf-8", "replace")


def err(r: subprocess.CompletedProcess) -> str:
    return r.stderr.decode("utf-8", "replace")


def no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in err(r), err(r)[-3000:]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


# -- item 2: hangs and memory ----------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_anywhere_under_the_root_hangs_nothing(project: Path) -> None:
    (project / "pkg").mkdir()
    os.mkfifo(project / "pkg" / "y.py")
    # the folder: the FIFO is one SHD000, the real finding is there
    r = shardlint(".", "--no-cache", cwd=project, timeout=60)
    no_traceback(r)
    assert "bad.py:3:5: SHD401" in out(r)
    assert "pkg/y.py:1:1: SHD000 not checked: skipped: a named pipe (FIFO), not a regular file" in out(r) or (
        "pkg/y.py:1:1: SHD000 not checked: a named pipe (FIFO), not a regular file" in out(r)
    )
    # one file, whose facts come from the whole project: the FIFO is read
    # for facts only, silently skipped
    r = shardlint("bad.py", "--no-cache", cwd=project, timeout=60)
    no_traceback(r)
    assert r.returncode == 1 and "SHD000" not in out(r)
    # stdin
    r = shardlint("-", "--stdin-filename", "bad.py", cwd=project, stdin=BAD.encode(), timeout=60)
    no_traceback(r)
    assert r.returncode == 1 and "SHD401" in out(r)


def test_a_symlink_to_dev_zero_is_skipped_not_read(project: Path) -> None:
    os.symlink("/dev/zero", project / "x.py")
    r = shardlint(".", "--no-cache", cwd=project, timeout=60)
    no_traceback(r)
    assert "x.py:1:1: SHD000 not checked: a character device, not a regular file" in out(r)
    assert "bad.py:3:5: SHD401" in out(r)


def test_a_file_over_max_file_size_is_one_shd000_naming_the_setting(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.shardlint]\nmax-file-size = 1000\n")
    (project / "big.py").write_text("x = 1\n" * 400)
    r = shardlint(".", "--no-cache", cwd=project)
    no_traceback(r)
    assert "big.py:1:1: SHD000 not checked: over 1,000 bytes (2,400); raise 'max-file-size'" in out(r)
    assert "bad.py:3:5: SHD401" in out(r)
    (project / "pyproject.toml").write_text("[tool.shardlint]\nmax-file-size = 0\n")
    r = shardlint(".", "--no-cache", cwd=project)
    assert r.returncode == 2 and "'max-file-size' must be a positive number of bytes" in err(r)


def test_the_default_size_limit_is_documented_and_reads_real_files() -> None:
    from linter.safeio import DEFAULT_MAX_FILE_SIZE

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "max-file-size" in readme
    assert DEFAULT_MAX_FILE_SIZE >= 1024 * 1024


def test_list_options_reject_an_empty_name_instead_of_hanging(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nfactory-methods = [""]\n')
    r = shardlint(".", "--no-cache", cwd=project, timeout=60)
    no_traceback(r)
    assert r.returncode == 2
    assert "'rules.SHD201.factory-methods': names must not be empty" in err(r)
    assert str(project / "pyproject.toml") in err(r)


# -- item 5: configuration errors ------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"[tool.shardlint]\nselect = ['SHD\xe9']\n", "not UTF-8 (TOML must be): byte 0xe9 on line 2"),
        (b"[tool.shardlint]\nx = " + b"[" * 5000 + b"]" * 5000 + b"\n", "invalid TOML"),
        (b"[tool.shardlint]\nselect = ['']\n", "empty rule selector ''"),
        (b"[tool.shardlint]\nignore = [' ']\n", "empty rule selector ' '"),
        (b"[tool.shardlint]\ncache-dir = ''\n", "'cache-dir' must be a non-empty string"),
    ],
)
def test_config_errors_exit_2_naming_the_file(project: Path, body: bytes, needle: str) -> None:
    (project / "pyproject.toml").write_bytes(body)
    for args in ((".",), (".", "--config", "pyproject.toml")):
        r = shardlint(*args, "--no-cache", cwd=project)
        no_traceback(r)
        assert r.returncode == 2, err(r)
        assert needle in err(r)
        assert "pyproject.toml" in err(r)


def test_enum_options_are_validated_at_load(tmp_path: Path) -> None:
    from linter.config import ConfigError, parse_table
    from linter.options import Option
    from linter.registry import Registry, RuleMeta
    from linter.types import Fixability, Severity

    meta = RuleMeta(
        "SHD990", "toy", "toy", Severity.ERROR, Fixability.NEVER, True,
        {"scope": Option("paired", "str", "paired | any | none", ("paired", "any", "none"))},
        (), (), "high", False,
    )
    registry = Registry({"SHD990": meta}, {}, is_meta=True)
    ok = parse_table({"rules": {"SHD990": {"scope": "any"}}}, tmp_path / "p.toml", tmp_path, registry)
    assert ok.options_for("SHD990") == {"scope": "any"}
    with pytest.raises(ConfigError) as exc:
        parse_table({"rules": {"SHD990": {"scope": "bogus"}}}, tmp_path / "p.toml", tmp_path, registry)
    assert "'rules.SHD990.scope': expected one of 'paired', 'any', 'none', got 'bogus'" in str(exc.value)
    assert str(tmp_path / "p.toml") in str(exc.value)


@pytest.mark.parametrize(("option", "value"), [("SHD201", "resolver-scope"), ("SHD302", "draft-rank")])
def test_the_real_enum_options_declare_their_choices(option: str, value: str) -> None:
    from linter.registry import load_registry

    opt = load_registry().rules[option].options[value]
    assert opt.choices and opt.default in opt.choices


def test_a_pyproject_toml_that_is_a_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").mkdir()
    (tmp_path / "bad.py").write_text(BAD)
    r = shardlint(".", "--no-cache", cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 2
    assert f"{tmp_path / 'pyproject.toml'}: a folder, not a file" in err(r)


def test_config_dev_null_is_an_empty_configuration(project: Path) -> None:
    r = shardlint(".", "--no-cache", "--config", "/dev/null", cwd=project)
    no_traceback(r)
    assert r.returncode == 1 and "bad.py:3:5: SHD401" in out(r)
    r = shardlint(".", "--no-cache", "--config", "/dev/zero", cwd=project, timeout=60)
    no_traceback(r)
    assert r.returncode == 2 and "/dev/zero: cannot read: over 1,048,576 bytes" in err(r)


# -- item 1: deep nesting -----------------------------------------------------------


def _in_function(code: str) -> str:
    return BAD + "".join(f"    {line}\n" for line in code.splitlines())


DEEP = {
    "elif": "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 499)),
    "calls": "y = a" + ".a()" * 250,
    "plus": "y = " + "+".join(["1"] * 490),
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_deep_nesting_is_analysed_and_the_finding_kept(tmp_path: Path, shape: str) -> None:
    (tmp_path / "deep.py").write_text(_in_function(DEEP[shape]))
    r = shardlint("deep.py", "--no-cache", cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 1, err(r)[-2000:]
    assert "deep.py:3:5: SHD401" in out(r)
    assert "internal error" not in err(r)


def test_nesting_past_the_limit_is_one_shd000_naming_it(tmp_path: Path) -> None:
    from linter.deep import MAX_NESTING

    (tmp_path / "deep.py").write_text(_in_function("y = " + "+".join(["1"] * (MAX_NESTING + 500))))
    r = shardlint("deep.py", "--no-cache", cwd=tmp_path)
    no_traceback(r)
    lines = out(r).splitlines()
    assert len([x for x in lines if "SHD000" in x]) == 1
    assert f"over shardlint's limit of {MAX_NESTING:,}" in out(r)
    assert len(err(r)) < 1000


def test_internal_errors_exit_2_with_one_line_each(tmp_path: Path) -> None:
    """A rule that crashes: exit 2 and one line on stderr per error, whatever
    the exception's message holds."""
    script = (
        "import sys\n"
        "from linter.cli import main\n"
        "import linter.check as c\n"
        "real = c.check_text\n"
        "def broken(*a, **k):\n"
        "    diags, errors = real(*a, **k)\n"
        "    from linter.types import InternalError\n"
        "    return diags, errors + [InternalError(a[1], 'SHD401', 'boom\\nsecond line\\n third')]\n"
        "c.check_text = broken\n"
        "import linter.engine as e\n"
        "e.check_text = broken\n"
        "sys.argv = ['shardlint', 'check', 'bad.py', '--no-cache']\n"
        "main()\n"
    )
    (tmp_path / "bad.py").write_text(BAD)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=120)
    no_traceback(r)
    assert r.returncode == 2
    errors = [x for x in err(r).splitlines() if "internal error" in x]
    assert errors == ["shardlint: internal error in SHD401 on bad.py: boom second line third"]


def test_a_worker_killed_mid_run_is_one_line_and_exit_2(project: Path) -> None:
    """A worker killed (the OOM killer) breaks the pool: one line, exit 2."""
    for i in range(30):
        (project / f"m{i}.py").write_text(BAD)
    script = (
        "import os, signal, sys\n"
        "import linter.engine as e\n"
        "def killed(job):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "e._scan_job = killed\n"
        "from linter.cli import main\n"
        "sys.argv = ['shardlint', 'check', '.', '--no-cache', '-j', '2']\n"
        "main()\n"
    )
    r = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, timeout=120)
    no_traceback(r)
    assert r.returncode == 2
    lines = err(r).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shardlint: error: internal error: BrokenProcessPool")
