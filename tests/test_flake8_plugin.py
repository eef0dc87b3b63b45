"""The flake8 plugin gives what ``shardlint check`` gives: same findings, same
line:column, same configuration, with flake8's own noqa handling on top."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import libcst as cst
import pytest

import linter.engine
from linter import flake8_plugin
from linter.builtin_rules import UnparsableFile, UnusedNoqa
from linter.config import load_config
from linter.engine import Engine
from linter.facts import FactCollector
from linter.flake8_plugin import Flake8Plugin
from linter.needles import Needles
from linter.options import Option
from linter.registry import Registry
from linter.rule import Rule

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CORPUS = ROOT / "corpus"

Finding = tuple[str, int, int, str]  # (absolute path, line, 1-based column, code)


# -- a test-local rule set: one rule with an option, one reading project facts --


class DangerDefs(FactCollector):
    """Module → names of the functions it defines that start with ``danger_``."""

    name = "danger-defs"
    needles = Needles(all_of=("def danger_",))

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> list[str] | None:
        names = [
            n.name
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("danger_")
        ]
        return names or None

    @classmethod
    def build_index(cls, per_module: Mapping[str, list[str]]) -> set[str]:
        return {name for names in per_module.values() for name in names}


class FlagNamedCall(Rule):
    """## What it finds
    Calls to the function named by the `target` option (test only).
    ## Why it breaks
    Test only.
    ## Example
    `forbidden()`
    ## Fix
    None.
    ## Options
    `target`: the function name.
    """

    code = "SHD950"
    name = "flag-named-call"
    summary = "test rule: calls to a configured name"
    needles = Needles(any_of=(("forbidden", "renamed"),))
    options: ClassVar[Mapping[str, Option]] = {
        "target": Option("forbidden", "str", "function name to flag")
    }

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.opts["target"]:
            self.report(node, f"call to {node.func.value}")


class FlagDangerCall(Rule):
    """## What it finds
    Calls to functions that some module of the project defines as `danger_*`.
    ## Why it breaks
    Test only.
    ## Example
    `danger_x()`
    ## Fix
    None.
    ## Options
    None.
    """

    code = "SHD951"
    name = "flag-danger-call"
    summary = "test rule reading project facts"
    needles = Needles(all_of=("danger_",))
    facts = ("danger-defs",)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in self.ctx.facts.index(
            "danger-defs"
        ):
            self.report(node, f"call to {node.func.value}, defined as dangerous")


def local_registry() -> Registry:
    rules = {r.code: r for r in (UnparsableFile, UnusedNoqa, FlagNamedCall, FlagDangerCall)}
    return Registry(dict(sorted(rules.items())), {DangerDefs.name: DangerDefs})


@pytest.fixture
def local_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    reg = local_registry()
    monkeypatch.setattr(flake8_plugin, "_load_registry", lambda: reg)
    flake8_plugin.clear_cache()
    yield reg
    flake8_plugin.clear_cache()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def plugin_run(path: Path) -> list[tuple[int, int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [(ln, col, msg) for ln, col, msg, _ in Flake8Plugin(None, lines, str(path)).run()]


# -- running flake8 for real ------------------------------------------------------


def _installed() -> bool:
    """Whether flake8 finds the plugin through the installed entry point (the
    editable install CI does); otherwise tests declare it as a local plugin."""
    return any(
        ep.name == "SHD" and ep.value == "linter.flake8_plugin:Flake8Plugin"
        for ep in importlib.metadata.entry_points(group="flake8.extension")
    )


def _plugin_args(tmp: Path) -> list[str]:
    if _installed():
        return []
    cfg = tmp / "flake8-local-plugin.cfg"
    cfg.write_text(
        "[flake8:local-plugins]\n"
        "extension =\n    SHD = linter.flake8_plugin:Flake8Plugin\n"
        f"paths = {ROOT}\n"
    )
    return ["--config", str(cfg)]


FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s"


def _parse(out: str, cwd: Path) -> set[Finding]:
    found = set()
    for line in out.splitlines():
        path, row, col, code = line.split("\t")
        found.add((str((cwd / path).resolve()), int(row), int(col), code))
    return found


def flake8_subprocess(paths: Sequence[Path], tmp: Path, *extra: str) -> set[Finding]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [
        sys.executable,
        "-m",
        "flake8",
        "--select",
        "SHD",
        "--format",
        FORMAT,
        *_plugin_args(tmp),
        *extra,
    ]
    proc = subprocess.run(
        [*cmd, *map(str, paths)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return _parse(proc.stdout, ROOT)


def flake8_inprocess(paths: Sequence[Path], tmp: Path, *extra: str) -> set[Finding]:
    """flake8 in this process (so that a monkeypatched registry applies)."""
    from flake8.main.application import Application

    out = tmp / "flake8.out"
    app = Application()
    app.run(
        [
            "--select",
            "SHD",
            "--format",
            FORMAT,
            "-j",
            "1",
            "--output-file",
            str(out),
            *_plugin_args(tmp),
            *extra,
            *map(str, paths),
        ]
    )
    return _parse(out.read_text(encoding="utf-8") if out.exists() else "", Path.cwd())


def shardlint(path: Path, *extra: str) -> set[Finding]:
    """``shardlint check PATH`` as a user runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "linter",
            "check",
            str(path),
            "--output-format",
            "json",
            "--no-cache",
            "--exit-zero",
            "-q",
            *extra,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # (JSON paths are the concise ones: relative to the working directory)
    return {
        (str((ROOT / d["path"]).resolve()), d["line"], d["column"], d["code"])
        for d in json.loads(proc.stdout)
    }


def shardlint_per_project(top: Path) -> set[Finding]:
    """What ``shardlint check`` reports for every file under ``top`` with the
    configuration of the file's nearest pyproject.toml (what flake8 sees): a
    sub-folder with its own pyproject.toml is checked as its own project."""
    subs = sorted(p.parent for p in top.rglob("pyproject.toml") if p.parent != top)
    out: set[Finding] = set()
    for project in [top, *subs]:
        inner = [s for s in subs if s != project and project in s.parents]
        for f in shardlint(project):
            owner = Path(f[0])
            if not any(s in owner.parents for s in inner):
                out.add(f)
    return out


def _no_syntax_errors(found: set[Finding]) -> set[Finding]:
    # flake8 reports E999 and runs no AST plugin on a file that does not
    # compile, so SHD000 for a syntax error has no flake8 counterpart.
    return {f for f in found if f[3] != "SHD000"}


# -- the equivalence ---------------------------------------------------------------


def test_flake8_and_shardlint_agree_on_the_fixture_project(tmp_path: Path) -> None:
    # a copy: flake8 has no --no-cache, and the fixture should stay as shipped
    top = tmp_path / "flake8_project"
    shutil.copytree(DATA / "flake8_project", top)
    expected = shardlint(top)
    got = flake8_subprocess([top], tmp_path)
    assert got == expected
    # the fixture is built to need the non-ASCII column handling and the
    # per-file-ignores: pin what it holds, so a silently empty run cannot pass
    rel = {(Path(p).relative_to(top).as_posix(), ln, col, code) for p, ln, col, code in got}
    assert rel == {
        ("pkg/unicode_cols.py", 2, 15, "SHD900"),
        ("pkg/unicode_cols.py", 3, 15, "SHD900"),
        ("pkg/stale.py", 2, 17, "SHD900"),
        ("pkg/stale.py", 7, 15, "SHD900"),
    }


def test_flake8_and_shardlint_agree_on_the_corpus(tmp_path: Path) -> None:
    if not any(CORPUS.rglob("*.py")):
        pytest.skip("no corpus yet")
    expected = _no_syntax_errors(shardlint_per_project(CORPUS))
    got = flake8_subprocess([CORPUS], tmp_path)
    assert sorted(got - expected) == [] and sorted(expected - got) == []


# -- configuration, facts, prefilter (test-local rules) ------------------------------


def test_rule_options_and_per_file_ignores_come_from_the_nearest_pyproject(
    tmp_path: Path, local_rules: Registry
) -> None:
    root = write(
        tmp_path / "proj",
        {
            "pyproject.toml": (
                "[tool.shardlint.rules.SHD950]\ntarget = 'renamed'\n"
                '[tool.shardlint.per-file-ignores]\n"legacy/*" = ["SHD950"]\n'
            ),
            "app.py": "forbidden()\nrenamed()\n",
            "legacy/old.py": "renamed()\n",
        },
    )
    assert plugin_run(root / "app.py") == [(2, 0, "SHD950 call to renamed")]
    assert plugin_run(root / "legacy" / "old.py") == []
    # exactly what the engine gives with the same project configuration
    engine = Engine(load_config([root], local_rules), local_rules, jobs=1)
    diags, _ = engine.lint_text((root / "app.py").read_text(), root / "app.py")
    assert [(d.span.line, d.span.column, f"{d.code} {d.message}") for d in diags] == plugin_run(
        root / "app.py"
    )


def test_columns_are_zero_based_code_points(tmp_path: Path, local_rules: Registry) -> None:
    root = write(tmp_path / "proj", {"pyproject.toml": "", "m.py": 'x = "é😀"; forbidden()\n'})
    [(line, col, _)] = plugin_run(root / "m.py")
    # 10 code points precede the call (14 UTF-8 bytes, which ast would count)
    assert (line, col) == (1, 10)


def test_project_facts_are_computed_once_per_process_and_root(
    tmp_path: Path, local_rules: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(
        tmp_path / "proj",
        {
            "pyproject.toml": "",
            "defs.py": "def danger_reset():\n    pass\n",
            "a.py": "from defs import danger_reset\ndanger_reset()\n",
            "b.py": "from defs import danger_reset\n\n\ndanger_reset()\n",
            "sub/pyproject.toml": "",
            "sub/c.py": "danger_reset()\n",
        },
    )
    scans: list[Path] = []
    real = linter.engine.project_files

    def counting(config):  # type: ignore[no-untyped-def]
        scans.append(config.root)
        return real(config)

    monkeypatch.setattr(linter.engine, "project_files", counting)
    # the definition lives in another module: only the project's facts know it
    assert plugin_run(root / "a.py") == [
        (2, 0, "SHD951 call to danger_reset, defined as dangerous")
    ]
    assert plugin_run(root / "b.py") == [
        (4, 0, "SHD951 call to danger_reset, defined as dangerous")
    ]
    assert scans == [root.resolve()]
    # a nested project is another root, with its own facts (no danger_ defs)
    assert plugin_run(root / "sub" / "c.py") == []
    assert scans == [root.resolve(), (root / "sub").resolve()]


def test_prefilter_skips_files_no_rule_can_match(
    tmp_path: Path, local_rules: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(
        tmp_path / "proj", {"pyproject.toml": "", "plain.py": "x = 1\n", "hit.py": "forbidden()\n"}
    )
    linted: list[str] = []
    real = Engine.lint_text

    def spy(self, text, path):  # type: ignore[no-untyped-def]
        linted.append(Path(path).name)
        return real(self, text, path)

    monkeypatch.setattr(Engine, "lint_text", spy)
    assert plugin_run(root / "plain.py") == []
    assert plugin_run(root / "hit.py") != []
    assert linted == ["hit.py"]


# -- noqa: flake8 decides ---------------------------------------------------------------

NOQA_FILE = (
    "forbidden()  # noqa: SHD950\n"  # flake8 and shardlint both suppress
    "forbidden()  # noqa: SHD\n"  # prefix: both suppress
    "forbidden()  #noqa\n"  # shardlint syntax only: dropped by the plugin
    "forbidden()  # noqa: E501\n"  # another code: reported
    "forbidden()\n"  # reported
)


def test_plugin_yields_what_flake8_itself_will_suppress(
    tmp_path: Path, local_rules: Registry
) -> None:
    root = write(tmp_path / "proj", {"pyproject.toml": "", "m.py": NOQA_FILE})
    assert [ln for ln, _, _ in plugin_run(root / "m.py")] == [1, 2, 4, 5]
    file_noqa = write(tmp_path / "proj", {"f.py": "# shardlint: noqa\nforbidden()\n"}) / "f.py"
    assert plugin_run(file_noqa) == []


def test_flake8_noqa_and_disable_noqa(
    tmp_path: Path, local_rules: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(tmp_path / "proj", {"pyproject.toml": "", "m.py": NOQA_FILE})
    monkeypatch.chdir(root)
    target = root / "m.py"
    shown = flake8_inprocess([target], tmp_path)
    assert sorted(ln for _, ln, _, _ in shown) == [4, 5]
    # the same lines shardlint reports, at the same 1-based columns
    engine = Engine(load_config([root], local_rules), local_rules, jobs=1)
    diags, _ = engine.lint_text(target.read_text(), target)
    assert shown == {
        (str(target), d.span.line, d.span.column + 1, d.code) for d in diags if not d.suppressed
    }
    every = flake8_inprocess([target], tmp_path, "--disable-noqa")
    assert sorted(ln for _, ln, _, _ in every) == [1, 2, 4, 5]


def test_bad_configuration_stops_flake8_with_the_message(tmp_path: Path) -> None:
    root = write(
        tmp_path / "proj", {"pyproject.toml": "[tool.shardlint]\ncolour = 1\n", "a.py": "x = 1\n"}
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--select",
            "SHD",
            *_plugin_args(tmp_path),
            str(root / "a.py"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0
    assert "unknown key 'colour'" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
