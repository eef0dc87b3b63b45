"""File discovery: excludes, .gitignore, hidden folders, venvs, explicit files."""

from __future__ import annotations

from pathlib import Path

from linter.config import Config
from linter.files import discover, module_name_of


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")


def rels(root: Path, paths: list[Path] | None = None, **kw) -> list[str]:
    return [s.relpath for s in discover(paths or [root], Config(root=root, **kw))]


def test_skips_hidden_venv_build_gitignored_and_excluded(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "a.py", "b.pyi", "notes.txt", ".hidden/x.py", "build/x.py", "env/lib/x.py",
        "pkg/__pycache__/x.py", "pkg/gen/x.py", "pkg/keep.py", "pkg/ignored.py", "deep/q/r.py",
    )
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / ".gitignore").write_text("pkg/ignored.py\n")
    (tmp_path / "deep" / ".gitignore").write_text("q/\n")
    assert rels(tmp_path, extend_exclude=("pkg/gen",)) == ["a.py", "b.pyi", "pkg/keep.py"]
    assert "pkg/ignored.py" in rels(tmp_path, respect_gitignore=False)


def test_explicit_file_is_taken_unless_force_exclude(tmp_path: Path) -> None:
    touch(tmp_path, "gen/x.py")
    f = tmp_path / "gen" / "x.py"
    assert rels(tmp_path, [f], extend_exclude=("gen",)) == ["gen/x.py"]
    assert rels(tmp_path, [f], extend_exclude=("gen",), force_exclude=True) == []


def test_glob_patterns(tmp_path: Path) -> None:
    touch(tmp_path, "a/test_x.py", "a/x.py", "b/c/test_y.py")
    assert rels(tmp_path, exclude=("test_*.py",)) == ["a/x.py"]
    assert rels(tmp_path, exclude=("b/**",)) == ["a/test_x.py", "a/x.py"]


def test_module_names() -> None:
    assert module_name_of("vllm/model_executor/models/llama.py") == "vllm.model_executor.models.llama"
    assert module_name_of("pkg/__init__.py") == "pkg"
    assert module_name_of("stub.pyi") == "stub"
