"""``shardlint audit`` on small synthetic fork / base / upstream trees: one
finding per class (an upgrade-induced one included), one case per kind of
contract drift, git refs through a real temporary repository, the reports
and the exit status. Test-local rules (``min`` calls, and a capability flag
a subclass's ``forward`` must honour, read from the project's facts) pin
the audit's behaviour, not the real rules' heuristics."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from test_cli import cli
from toy_rules import FlagMinCalls

from linter.audit.classify import ARRIVES, CARRIED, FIXED_UPSTREAM, INTRODUCED, UPGRADE_INDUCED
from linter.audit.contracts import module_facts
from linter.audit.run import run_audit
from linter.audit.trees import open_tree
from linter.builtin_rules import UnparsableFile, UnusedNoqa
from linter.cache import Cache
from linter.config import Config
from linter.facts import FactCollector
from linter.needles import Needles
from linter.registry import Registry
from linter.rule import Rule


class ToyFlags(FactCollector):
    """Per module: each class's base names and its boolean class attributes."""

    name = "toy-flags"
    needles = Needles(all_of=("class ",))

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        out = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                flags = {
                    t.id: s.value.value
                    for s in node.body
                    if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)
                    for t in s.targets
                    if isinstance(t, ast.Name) and isinstance(s.value.value, bool)
                }
                out[node.name] = {"bases": [b.id for b in node.bases if isinstance(b, ast.Name)], "flags": flags}
        return out or None


class UnhonouredAux(Rule):
    """## What it finds
    A subclass whose base claims ``supports_aux`` while its ``forward`` never mentions aux (test only).
    ## Why it breaks
    Test only.
    ## Example
    -
    ## Fix
    -
    ## Options
    -
    """

    code = "SHD980"
    name = "unhonoured-aux"
    summary = "test rule reading facts of other modules"
    needles = Needles(all_of=("def forward",))
    facts = ("toy-flags",)

    def flag(self, name: str, depth: int = 0) -> bool:
        for classes in self.ctx.facts.index("toy-flags").values():
            info = (classes or {}).get(name)
            if info is None:
                continue
            if "supports_aux" in info["flags"]:
                return bool(info["flags"]["supports_aux"])
            return depth < 5 and any(self.flag(b, depth + 1) for b in info["bases"])
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [a.value.value for a in node.bases if isinstance(a.value, cst.Name)]
        if not bases or not any(self.flag(b) for b in bases):
            return
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "forward":
                if "aux" not in cst.Module([]).code_for_node(stmt):
                    self.report(stmt, f"{node.name.value}.forward ignores the aux capability its base claims")


REGISTRY = Registry(
    {r.code: r for r in (UnparsableFile, FlagMinCalls, UnhonouredAux, UnusedNoqa)}, {"toy-flags": ToyFlags}
)

BASE = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def carried(a):\n    return min(a, 1)\n\n\ndef fixed_later(a):\n    return min(a, 2)\n",
    "pkg/model.py": (
        "class BaseModel:\n"
        "    supports_aux = False\n"
        "    max_batch = 8\n\n"
        "    def __init__(self, config):\n        self.config = config\n\n"
        "    def forward(self, x, positions):\n        return x\n\n"
        "    def load(self, path):\n        return path\n\n"
        "    def helper(self, x, scale):\n        return x * scale + 1\n"
    ),
    "pkg/engine.py": "def start(config):\n    return config\n",
    "pkg/legacy.py": "OLD = 1\n",
}

FORK_ONLY = {
    "pkg/legacy.py": "OLD = 2\n",  # patched by the fork, deleted upstream
    # the fork's own code: an added function with a finding (introduced) and a
    # model that subclasses upstream's BaseModel
    "pkg/core.py": BASE["pkg/core.py"] + "\n\ndef fork_tweak(a):\n    return min(a, 9)\n",
    "pkg/fork_model.py": (
        "from pkg.model import BaseModel\n"
        "from pkg.engine import start\n\n\n"
        "class ForkModel(BaseModel):\n"
        "    max_batch = 8\n\n"
        "    def forward(self, x, positions):\n        return x + 1\n\n"
        "    def load(self, path):\n        return super().load(path)\n\n"
        "    def run(self):\n        return self.helper(1, 2)\n\n\n"
        "def build():\n    start(None)\n    return BaseModel(None)\n"
    ),
}

UPSTREAM_CHANGES = {
    # fixed_later fixed; a new finding arrives; carried() moved to another file
    "pkg/core.py": "def fixed_later(a):\n    return max(a, 2)\n\n\ndef brand_new(a):\n    return min(a, 3)\n",
    "pkg/util/moved.py": "def carried(a):\n    return min(a, 1)\n",
    "pkg/util/__init__.py": "",
    "pkg/model.py": (
        "from abc import abstractmethod\n\n\n"
        "class BaseModel:\n"
        "    supports_aux = True\n"
        "    max_batch = 16\n\n"
        "    def __init__(self, config, device):\n        self.config = config\n\n"
        "    def forward(self, x, positions, aux=None):\n        return x\n\n"
        "    @abstractmethod\n    def load(self, path):\n        ...\n\n"
        "    def assist(self, x, scale):\n        return x * scale + 1\n"
    ),
    "pkg/engine.py": "def launch(config):\n    return config\n",
    # upstream's own subclass honours the flag: no finding in U
    "pkg/up_model.py": (
        "from pkg.model import BaseModel\n\n\n"
        "class UpModel(BaseModel):\n    def forward(self, x, positions, aux=None):\n        return x, aux\n"
    ),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def make_trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    base = write_tree(tmp_path / "base", BASE)
    fork = write_tree(tmp_path / "fork", {**BASE, **FORK_ONLY})
    upstream_files = {k: v for k, v in BASE.items() if k not in ("pkg/core.py", "pkg/legacy.py")}
    upstream = write_tree(tmp_path / "upstream", {**upstream_files, **UPSTREAM_CHANGES})
    return fork, base, upstream


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("audit")
    fork, base, upstream = make_trees(tmp)
    with ExitStack() as stack:
        trees = [open_tree(label, str(p), None, stack) for label, p in
                 (("fork", fork), ("base", base), ("upstream", upstream))]
        config = Config(root=fork, extend_select=("SHD980",))
        cache = Cache(tmp / "cache")
        result = run_audit(*trees, config=config, registry=REGISTRY, stack=stack, cache=cache, jobs=1)
        yield result


def by_class(result: Any) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in result.items:
        out.setdefault(c.cls, []).append((c.diagnostic.path, c.diagnostic.message))
    return {k: sorted(v) for k, v in out.items()}


def test_every_class(audited: Any) -> None:
    got = by_class(audited)
    assert got[INTRODUCED] == [("pkg/core.py", "min call in fork_tweak")]
    # carried although upstream moved the function to another file
    assert got[CARRIED] == [("pkg/core.py", "min call in carried")]
    assert got[FIXED_UPSTREAM] == [("pkg/core.py", "min call in fixed_later")]
    assert got[ARRIVES] == [("pkg/core.py", "min call in brand_new")]
    assert got[UPGRADE_INDUCED] == [
        ("pkg/fork_model.py", "ForkModel.forward ignores the aux capability its base claims")
    ]


def test_fixed_upstream_names_the_upstream_file_and_function(audited: Any) -> None:
    (fixed,) = [c for c in audited.items if c.cls == FIXED_UPSTREAM]
    assert fixed.upstream_hint == "pkg/core.py:1 fixed_later"


def test_files_both_sides_changed_need_a_manual_merge(audited: Any) -> None:
    assert audited.manual_merge == ["pkg/core.py"]
    assert audited.fork_changed == {"pkg/core.py", "pkg/fork_model.py", "pkg/legacy.py"}
    assert audited.removed_upstream == ["pkg/legacy.py"]


def test_a_module_upstream_turned_into_a_package_is_ported_by_hand(tmp_path: Path) -> None:
    from linter.audit.trees import build_overlay

    base = write_tree(tmp_path / "b", {"pkg/__init__.py": "", "pkg/config.py": "A = 1\n"})
    fork = write_tree(tmp_path / "f", {"pkg/__init__.py": "", "pkg/config.py": "A = 2\n"})
    upstream = write_tree(tmp_path / "u", {"pkg/__init__.py": "", "pkg/config/__init__.py": "A = 3\n"})
    with ExitStack() as stack:
        trees = [open_tree(label, str(p), None, stack)
                 for label, p in (("fork", fork), ("base", base), ("upstream", upstream))]
        overlay = build_overlay(*trees, stack)
        assert overlay.removed_upstream == ["pkg/config.py (now pkg/config/__init__.py)"]
        # upstream's package stands in the overlay, unshadowed
        assert sorted(overlay.tree.files) == ["pkg/__init__.py", "pkg/config/__init__.py"]


def test_repeated_calls_of_one_removed_function_are_one_drift_item(tmp_path: Path) -> None:
    from linter.audit.contracts import contract_drift

    util = "def warn_once(msg):\n    return msg\n"
    base = write_tree(tmp_path / "b", {"pkg/__init__.py": "", "pkg/util.py": util})
    upstream = write_tree(tmp_path / "u", {"pkg/__init__.py": "", "pkg/util.py": "X = 1\n"})
    fork = write_tree(tmp_path / "f", {
        "pkg/__init__.py": "", "pkg/util.py": "def warn_once(msg):\n    return msg\n",
        "pkg/mine.py": "from pkg.util import warn_once\n\n\ndef f():\n    warn_once(1)\n    warn_once(2)\n",
    })
    with ExitStack() as stack:
        trees = [open_tree(label, str(p), None, stack)
                 for label, p in (("fork", fork), ("base", base), ("upstream", upstream))]
        (drift,) = contract_drift(*trees, {"pkg/mine.py"})
    assert (drift.kind, drift.line, drift.upstream_symbol) == ("removed-or-renamed", 5, "pkg.util.warn_once")


def drift_of(result: Any, kind: str) -> list[tuple[str, str, str]]:
    return sorted((d.fork_symbol, d.upstream_symbol, d.detail) for d in result.drift if d.kind == kind)


def test_drift_attribute_changed(audited: Any) -> None:
    assert drift_of(audited, "attribute-changed") == [
        ("ForkModel", "pkg.model.BaseModel.max_batch", "`8` -> `16` (the fork class sets it itself)"),
        ("ForkModel", "pkg.model.BaseModel.supports_aux", "`False` -> `True`"),
    ]


def test_drift_overridden_signature_changed(audited: Any) -> None:
    assert drift_of(audited, "signature-changed") == [
        ("ForkModel.forward", "pkg.model.BaseModel.forward",
         "(self, x, positions) -> (self, x, positions, aux=None); the override keeps (self, x, positions)"),
    ]


def test_drift_became_abstract(audited: Any) -> None:
    (got,) = drift_of(audited, "became-abstract")
    assert got[:2] == ("ForkModel.load", "pkg.model.BaseModel.load") and "abstract" in got[2]


def test_drift_called_method_or_function_removed_or_renamed(audited: Any) -> None:
    assert drift_of(audited, "removed-or-renamed") == [
        ("ForkModel.run", "pkg.model.BaseModel.helper", "called helper is gone upstream; renamed to assist?"),
        ("build", "pkg.engine.start", "called start is gone upstream; renamed to launch?"),
    ]


def test_drift_constructor_argument_without_default(audited: Any) -> None:
    assert drift_of(audited, "constructor-arg-added") == [
        ("ForkModel", "pkg.model.BaseModel.__init__", "new parameter(s) without a default: device"),
        ("build", "pkg.model.BaseModel.__init__", "new parameter(s) without a default: device"),
    ]


def test_capability_flags_vs_wiring() -> None:
    facts = module_facts("class A:\n    x: int = 3\n    y = other.y\n    f = True\n", "m", "m.py")
    assert facts.classes["A"].attrs == {"x": "3", "y": "other.y", "f": "True"}


# -- the command -----------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import linter.registry as registry

    monkeypatch.setattr(registry, "load_registry", lambda: REGISTRY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def test_cli_reports_and_fail_on(tmp_path: Path, registry: None) -> None:
    fork, base, upstream = make_trees(tmp_path)
    (fork / "pyproject.toml").write_text("[tool.shardlint]\nextend-select = ['SHD980']\n")
    out = tmp_path / "out"

    def audit(*args: str) -> Any:
        trees = ("--fork", str(fork), "--base", str(base), "--upstream", str(upstream))
        return cli("audit", *trees, "-j", "1", *args)

    r = audit("--report", f"json={out / 'a.json'}", "--report", f"sarif={out / 'a.sarif'}")
    assert r.exit_code == 1  # introduced and upgrade-induced fail by default
    md = r.stdout
    assert md.index("## Upgrade-induced") < md.index("## Introduced") < md.index("## Carried")
    assert "### SHD980 unhonoured-aux (1)" in md and "upstream: pkg/core.py:1 fixed_later" in md
    assert f"]({(fork / 'pkg/core.py').as_posix()}#L" in md  # links to files
    assert "upgrade-induced" in r.stderr and "fails" in r.stderr and "[4/4]" in r.stderr  # summary and progress
    data = json.loads((out / "a.json").read_text())
    assert data["counts"] == {"upgrade-induced": 1, "introduced": 1, "fixed-upstream": 1,
                              "arrives-with-upgrade": 1, "carried": 1, "contract-drift": 8}
    sarif = json.loads((out / "a.sarif").read_text())
    classes = [res["properties"]["shardlint/auditClass"] for res in sarif["runs"][0]["results"]]
    assert sorted(set(classes)) == ["arrives-with-upgrade", "carried", "contract-drift", "fixed-upstream",
                                    "introduced", "upgrade-induced"]
    r = audit("-q", "--fail-on", "carried", "--output-format", "json")
    assert r.exit_code == 1 and json.loads(r.stdout)["counts"]["carried"] == 1
    assert audit("-q", "--fail-on", "none").exit_code == 0
    r = audit("--fail-on", "bogus")
    assert r.exit_code == 2 and "bogus" in r.output


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(repo)}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def test_git_refs_from_a_real_repository_leave_the_working_tree_alone(tmp_path: Path, registry: None) -> None:
    fork, base, upstream = make_trees(tmp_path / "src")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, tree in (("v-base", base), ("v-upstream", upstream), ("fork", fork)):
        for old in [p for p in repo.iterdir() if p.name != ".git"]:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
        shutil.copytree(tree, repo, dirs_exist_ok=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", name)
        git(repo, "tag", name)
    (repo / "pkg" / "core.py").write_text("# uncommitted edit\n")
    status = git(repo, "status", "--porcelain")
    worktrees = git(repo, "worktree", "list")
    r = cli("audit", "--repo", str(repo), "--fork", "fork", "--base", "v-base", "--upstream", "v-upstream",
            "-j", "1", "-q", "--output-format", "json", "--fail-on", "none")
    assert r.exit_code == 0, r.output
    counts = json.loads(r.stdout)["counts"]
    assert counts["introduced"] == 1 and counts["fixed-upstream"] == 1 and counts["carried"] == 1
    assert git(repo, "status", "--porcelain") == status and git(repo, "worktree", "list") == worktrees
    assert (repo / "pkg" / "core.py").read_text() == "# uncommitted edit\n"
    r = cli("audit", "--repo", str(repo), "--fork", "no-such-ref", "--base", "v-base", "--upstream", "v-upstream")
    assert r.exit_code == 2 and "no-such-ref" in r.stderr


def test_a_missing_tree_is_a_clear_error(tmp_path: Path, registry: None) -> None:
    r = cli("audit", "--fork", str(tmp_path / "nope"), "--base", str(tmp_path), "--upstream", str(tmp_path),
            cwd=tmp_path)
    assert r.exit_code == 2 and "--fork" in r.stderr and "not a git repository" in r.stderr
