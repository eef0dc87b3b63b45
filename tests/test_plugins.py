"""Rules from other packages: an installed distribution that declares a
``shardlint.rules`` entry point adds its rules with no engine edit, and they
run in the CLI, the flake8 plugin and ``--fix``. The package used here is the
complete example of docs/writing-rules.md."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "data" / "plugin" / "acme_shardlint_rules"
GUIDE = HERE.parent / "docs" / "writing-rules.md"

BUGGY = '''\
def shard_heads(config, tp_size):
    heads = config.num_attention_heads / tp_size
    return heads
'''


def _install(site: Path, package: Path, dist: str, value: str) -> None:
    """What pip leaves for an installed distribution with an entry point:
    the package and a ``.dist-info`` folder naming it."""
    shutil.copytree(package, site / package.name)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[shardlint.rules]\n{dist} = {value}\n")


@pytest.fixture()
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, EXAMPLE, "acme-shardlint-rules", "acme_shardlint_rules")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.shardlint]\n")
    (proj / "heads.py").write_text(BUGGY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(HERE.parent)]),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    return proj, env


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_rule_is_listed_with_its_origin(project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    out = _run(env, proj, "-m", "linter", "rules")
    assert out.returncode == 0, out.stderr
    (line,) = [ln for ln in out.stdout.splitlines() if ln.startswith("ACME001")]
    assert "head-count-true-division" in line and "acme-shardlint-rules 1.0" in line
    assert any(ln.startswith("SHD101") and "shardlint" in ln for ln in out.stdout.splitlines())


def test_the_cli_reports_and_explains_it(project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    out = _run(env, proj, "-m", "linter", "check", ".", "--no-cache")
    assert out.returncode == 1, out.stderr
    assert re.search(r"heads\.py:2:\d+: ACME001 `config\.num_attention_heads / tp_size` is a float", out.stdout)
    doc = _run(env, proj, "-m", "linter", "explain", "ACME001")
    assert doc.returncode == 0 and "## Why it breaks" in doc.stdout


def test_fix_rewrites_the_division(project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    safe = _run(env, proj, "-m", "linter", "check", ".", "--fix", "--no-cache")
    assert safe.returncode == 1 and (proj / "heads.py").read_text() == BUGGY  # unsafe: not applied
    out = _run(env, proj, "-m", "linter", "check", ".", "--fix", "--unsafe-fixes", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (proj / "heads.py").read_text() == BUGGY.replace(" / tp_size", " // tp_size")


def test_flake8_reports_it(project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    out = _run(env, proj, "-m", "flake8", "--select", "ACME", "heads.py")
    assert out.returncode == 1, out.stderr
    assert re.match(r"heads\.py:2:\d+: ACME001 ", out.stdout)


def test_a_code_clash_is_an_error_naming_both(tmp_path: Path, project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    clash = tmp_path / "clash" / "clashing_rules"
    clash.mkdir(parents=True)
    text = (EXAMPLE / "__init__.py").read_text().replace('code = "ACME001"', 'code = "SHD101"')
    (clash / "__init__.py").write_text(text)
    _install(Path(env["PYTHONPATH"].split(os.pathsep)[0]), clash, "clashing-rules", "clashing_rules")
    out = _run(env, proj, "-m", "linter", "check", ".", "--no-cache")
    assert out.returncode == 2
    assert "SHD101" in out.stderr and "clashing-rules 1.0" in out.stderr and "shardlint" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_broken_plugin_is_an_error_naming_it(tmp_path: Path, project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    broken = tmp_path / "broken" / "broken_rules"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('no such thing')\n")
    _install(Path(env["PYTHONPATH"].split(os.pathsep)[0]), broken, "broken-rules", "broken_rules")
    out = _run(env, proj, "-m", "linter", "check", ".", "--no-cache")
    assert out.returncode == 2 and "broken-rules 1.0" in out.stderr and "Traceback" not in out.stderr


def test_the_guide_shows_the_tested_example_whole() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    blocks = [m.group(2) for m in re.finditer(r"(`{3,4})python\n(.*?)\1", guide, re.S)]
    assert (EXAMPLE / "__init__.py").read_text(encoding="utf-8") in blocks
