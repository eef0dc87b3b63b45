"""The command line as users drive it: exit codes, formats, fixes, stdin."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from linter.cli import main


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI over test-local rules (tests/toy_rules.py), so that these tests
    pin the CLI's behaviour, not the real rules' heuristics."""
    from toy_rules import toy_registry

    import linter.registry as registry

    monkeypatch.setattr(registry, "load_registry_fast", toy_registry)
    monkeypatch.setattr(registry, "load_registry", toy_registry)


# SHD000 covers files a rule would analyse: these broken files all hold a
# toy-rule candidate ("min(").
BROKEN = "m = min(a, 1)\ndef f(:\n"


def cli(*args: str, input: str | None = None, cwd: Path | None = None):
    runner = CliRunner()
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


def project(tmp_path: Path, files: dict[str, str | bytes], config: str = "") -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.shardlint]\n" + config)
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    return root


def test_unknown_config_key_exits_2_naming_key_and_file(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": "x = 1\n"}, "colour = 'red'\n")
    r = cli("check", str(root))
    assert r.exit_code == 2
    assert "unknown key 'colour'" in r.output and str(root / "pyproject.toml") in r.output


def test_unparsable_files_exit_1_and_exit_zero(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": BROKEN, "b.py": b"\x00\x00", "c.py": "x = 1\n"})
    r = cli("check", str(root), "--no-cache")
    assert r.exit_code == 1
    lines = [ln for ln in r.stdout.splitlines() if ln]
    assert len(lines) == 2 and all(": SHD000 " in ln for ln in lines)
    assert "Traceback" not in r.output
    assert cli("check", str(root), "--exit-zero", "--no-cache").exit_code == 0


def test_check_syntax_reports_a_broken_file_no_rule_reads(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": "def f(:\n", "c.py": "x = 1\n"})
    assert cli("check", str(root), "--no-cache").exit_code == 0  # never compiled
    r = cli("check", str(root), "--no-cache", "--check-syntax")
    assert r.exit_code == 1 and ": SHD000 " in r.stdout and "a.py:1:" in r.stdout
    (root / "pyproject.toml").write_text("[tool.shardlint]\ncheck-syntax = true\n")
    assert cli("check", str(root), "--no-cache").exit_code == 1
    assert cli("check", str(root), "--no-cache", "--no-check-syntax").exit_code == 0


def test_concise_is_flake8_format(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": "x = 1\nif True:\n    y = min(a, 1)\n"})
    r = cli("check", "a.py", "--no-cache", "-q", cwd=root)
    assert r.stdout == "a.py:3:9: SHD990 min call in <module>\n"


def test_json_fields(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": BROKEN})
    r = cli("check", str(root), "--output-format", "json", "--no-cache")
    (obj,) = json.loads(r.stdout)
    for key in ("code", "name", "path", "line", "column", "end_line", "end_column", "severity",
                "message", "notes", "fix", "fingerprint"):
        assert key in obj
    assert obj["code"] == "SHD000" and obj["column"] >= 1
    # the path the concise format prints (relative to the working directory)
    concise = cli("check", str(root), "--no-cache").stdout
    assert concise.startswith(f"{obj['path']}:{obj['line']}:{obj['column']}: SHD000")


def test_noqa_fix_and_diff(tmp_path: Path) -> None:
    src = "x = 1  # noqa: SHD000\ny = 2\n"
    root = project(tmp_path, {"a.py": src}, "extend-select = ['SHD900']\n")
    r = cli("check", str(root), "--diff", "--no-cache")
    assert r.exit_code == 1
    assert "-x = 1  # noqa: SHD000" in r.stdout and "+x = 1\n" in r.stdout
    assert (root / "a.py").read_text() == src  # --diff writes nothing
    r = cli("check", str(root), "--fix", "--no-cache")
    assert r.exit_code == 0, r.output
    assert (root / "a.py").read_text() == "x = 1\ny = 2\n"
    assert cli("check", str(root), "--no-cache").exit_code == 0


def test_fix_never_writes_code_that_does_not_parse(tmp_path: Path, toy: None) -> None:
    src = "def f():\n    pass\n"
    root = project(tmp_path, {"a.py": src}, "select = ['SHD992']\n")
    r = cli("check", str(root), "--fix", "--no-cache")
    assert (root / "a.py").read_text() == src
    assert r.exit_code == 2 and "does not parse" in r.output


def test_stdin(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {})
    r = cli("check", "-", "--stdin-filename", str(root / "x.py"), input=BROKEN)
    assert r.exit_code == 1 and "x.py:2:" in r.stdout and "SHD000" in r.stdout
    r = cli("check", "-", "--stdin-filename", str(root / "x.py"), "--fix", input="v = min(a, 1)\n")
    assert r.stdout == "v = max(a, 1)\n"


def test_statistics_and_output_file(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": BROKEN, "b.py": "min(\n"})
    r = cli("check", str(root), "--statistics", "--no-cache")
    assert r.stdout.split() == ["2", "SHD000", "unparsable-file"]
    out = tmp_path / "out" / "r.json"
    r = cli("check", str(root), "--output-format", "json", "--output-file", str(out), "--no-cache")
    assert r.exit_code == 1 and len(json.loads(out.read_text())) == 2


def test_missing_path_and_bad_selector_exit_2(tmp_path: Path) -> None:
    r = cli("check", str(tmp_path / "nope"))
    assert r.exit_code == 2 and "no such file" in r.output
    r = cli("check", str(tmp_path), "--select", "SHD7")
    assert r.exit_code == 2 and "SHD7" in r.output


def test_rules_and_explain() -> None:
    r = cli("rules", "--all", "--output-format", "json")
    codes = [x["code"] for x in json.loads(r.stdout)]
    assert "SHD000" in codes and "SHD900" in codes
    r = cli("explain", "SHD900")
    assert r.exit_code == 0
    for heading in ("## What it finds", "## Why it breaks", "## Example", "## Fix", "## Options"):
        assert heading in r.stdout
    r = cli("explain", "unused-noqa")
    assert r.exit_code == 0 and "SHD900" in r.stdout
    r = cli("explain", "SHD9000")
    assert r.exit_code == 2 and "unknown rule" in r.output


def test_cache_and_clean(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": BROKEN})
    assert cli("check", str(root)).exit_code == 1
    assert (root / ".shardlint_cache").is_dir()
    r = cli("check", str(root))
    assert r.exit_code == 1 and "SHD000" in r.stdout
    cli("clean", str(root))
    assert not (root / ".shardlint_cache").exists()


def test_warm_run_reads_the_cache_without_importing_libcst(tmp_path: Path) -> None:
    """A run over unchanged files reports what the first run found from the
    cache, in a process that never imports libcst (its import alone costs
    more than the whole warm run), nor any rule module (the rule metadata
    comes from the registry's snapshot)."""
    import shutil
    import subprocess
    import sys

    corpus = Path(__file__).resolve().parent.parent / "corpus" / "block_size_min_divisibility"
    shutil.copy(corpus / "bad.py", tmp_path / "bad.py")
    script = (
        "import sys\n"
        "from linter.cli import main\n"
        "sys.argv = ['shardlint', 'check', 'bad.py', '-q', '--cache-dir', '.cache']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "from linter._lazy import libcst_loaded\n"
        "rules = any(m == 'checks' or m.startswith('checks.') for m in sys.modules)\n"
        "print('exit', code, 'libcst', libcst_loaded(), 'rules', rules)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    cold, warm = (r.stdout.splitlines() for r in runs)
    assert cold[-1] == "exit 1 libcst True rules True"  # the first run parsed the file
    assert warm[-1] == "exit 1 libcst False rules False"
    assert cold[:-1] == warm[:-1] and any("SHD101" in line for line in warm)


def test_scan_only_runs_never_load_libcst(tmp_path: Path) -> None:
    """Files that no rule can match are read, scanned and gated without
    libcst (its import costs more than such a run): a run over a few of them
    never loads it; over many, the scan workers never load it and the main
    process loads it in the background while it waits on them (for the
    files a rule admits, which are then checked with the same findings as
    without the pool)."""
    import shutil
    import subprocess
    import sys

    for project, n in (("few", 3), ("many", 40)):  # (40: enough files for the worker pool)
        (tmp_path / project).mkdir()
        (tmp_path / project / "pyproject.toml").write_text("[tool.shardlint]\n")
        for i in range(n):
            (tmp_path / project / f"m{i}.py").write_text(
                f"import torch\n\n\nclass Layer{i}(torch.nn.Module):\n"
                "    def forward(self, x):\n        return min(x, 3) // 2\n"
            )
    corpus = Path(__file__).resolve().parent.parent / "corpus" / "block_size_min_divisibility"
    script = (
        "import sys\n"
        "from linter._lazy import libcst_loaded\n"
        "from linter.cli import main\n"
        "import linter.engine as e\n"
        "job = e._scan_job\n"
        "def spy(j):\n"
        "    r = job(j)\n"
        "    if libcst_loaded():\n"
        "        raise RuntimeError('libcst loaded in a scan worker')\n"
        "    return r\n"
        "e._scan_job = spy\n"
        "sys.argv = ['shardlint', 'check', *sys.argv[1:], '-q', '--no-cache']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as x:\n"
        "    code = x.code\n"
        "print('exit', code, 'libcst', libcst_loaded())\n"
    )

    def run(*args: str) -> list[str]:
        r = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, capture_output=True, text=True)
        assert "Traceback" not in r.stderr, r.stderr
        return r.stdout.splitlines()

    assert run("few", "-j", "2") == ["exit 0 libcst False"]
    assert run("many", "-j", "2") == ["exit 0 libcst True"]  # (preloaded by the main process)
    shutil.copy(corpus / "bad.py", tmp_path / "many" / "bad.py")
    findings = []
    for jobs in ("1", "2"):
        out = run("many", "-j", jobs)
        assert out[-1] == "exit 1 libcst True" and any("SHD101" in line for line in out[:-1])
        findings.append(out)
    assert findings[0] == findings[1]


def test_the_summary_counts_files_in_words(tmp_path: Path, toy: None) -> None:
    root = project(tmp_path, {"a.py": "x = 1\n"})
    r = cli("check", str(root / "a.py"))
    assert r.exit_code == 0 and "All checks passed (1 file)." in r.stderr
    (tmp_path / "two").mkdir()
    two = project(tmp_path / "two", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    r = cli("check", str(two))
    assert "All checks passed (2 files)." in r.stderr


def test_the_command_exits_with_its_status_and_flushed_output(tmp_path: Path) -> None:
    """``python -m linter`` (and the ``shardlint`` script, the same
    ``entry``) skips the interpreter's teardown: the exit status and every
    line written before the exit must still come out, through pipes."""
    import shutil
    import subprocess
    import sys

    corpus = Path(__file__).resolve().parent.parent / "corpus" / "block_size_min_divisibility"
    shutil.copy(corpus / "bad.py", tmp_path / "bad.py")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "linter", *args], cwd=tmp_path, capture_output=True, text=True
        )

    found = run("check", "bad.py", "--no-cache")
    assert found.returncode == 1
    lines = found.stdout.splitlines()
    assert lines and all(line.startswith("bad.py:") and "SHD101" in line for line in lines)
    assert "Found" in found.stderr
    assert run("check", "bad.py", "--no-cache", "--exit-zero", "-q").returncode == 0
    version = run("--version")
    assert version.returncode == 0 and "shardlint" in version.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.shardlint]\ncolour = 1\n", encoding="utf-8")
    bad = run("check", "bad.py", "--no-cache")
    assert bad.returncode == 2 and "unknown key 'colour'" in bad.stderr + bad.stdout
