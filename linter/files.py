"""From the paths a user gives to the Python files to check.

Directories are walked (hidden directories, virtualenvs, excluded and
git-ignored paths skipped); a file named explicitly is always taken unless
``force_exclude`` is set (pre-commit passes every staged file explicitly).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

from linter.config import Config, path_matches

PY_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    relpath: str  # POSIX, relative to the project root when inside it
    explicit: bool


def relpath_of(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def module_name_of(relpath: str) -> str:
    parts = list(Path(relpath).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(p for p in parts if p not in ("", "/"))


class _GitIgnore:
    """Hierarchical .gitignore matching: each file applies below its folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[Path, pathspec.PathSpec | None] = {}

    def _spec(self, d: Path) -> pathspec.PathSpec | None:
        if d not in self._specs:
            f = d / ".gitignore"
            spec = None
            if f.is_file():
                try:
                    lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = pathspec.GitIgnoreSpec.from_lines(lines)
                except (OSError, ValueError):
                    spec = None
            self._specs[d] = spec
        return self._specs[d]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        try:
            path.relative_to(self.root)
        except ValueError:
            return False
        for d in (path.parent, *path.parent.parents):
            spec = self._spec(d)
            if spec is not None:
                rel = path.relative_to(d).as_posix() + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
            if d == self.root:
                break
        return False


def _excluded(relpath: str, patterns: Sequence[str]) -> bool:
    return any(path_matches(relpath, p) for p in patterns)


def _is_venv(d: Path) -> bool:
    return (d / "pyvenv.cfg").is_file()


def discover(paths: Sequence[Path], config: Config) -> list[SourceFile]:
    root = config.root
    excludes = config.all_excludes
    gitignore = _GitIgnore(root) if config.respect_gitignore else None
    seen: set[Path] = set()
    out: list[SourceFile] = []

    def add(p: Path, explicit: bool) -> None:
        rp = p.resolve()
        if rp in seen:
            return
        seen.add(rp)
        out.append(SourceFile(rp, relpath_of(rp, root), explicit))

    for given in paths:
        if given.is_file() or (given.exists() and not given.is_dir()):
            rel = relpath_of(given, root)
            if config.force_exclude and (
                _excluded(rel, excludes) or (gitignore and gitignore.ignored(given.resolve(), False))
            ):
                continue
            add(given, True)
        elif given.is_dir():
            for f in _walk(given.resolve(), root, excludes, gitignore, config.force_exclude):
                add(f, False)
        else:
            raise FileNotFoundError(str(given))
    out.sort(key=lambda s: s.relpath)
    return out


def _walk(
    top: Path, root: Path, excludes: Sequence[str], gitignore: _GitIgnore | None, force: bool
) -> Iterator[Path]:
    # The directory given is walked even when it matches an exclude (as ruff
    # does), unless force_exclude is set.
    if force and _excluded(relpath_of(top, root), excludes):
        return
    for dirpath, dirnames, filenames in os.walk(top):
        d = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            sub = d / name
            rel = relpath_of(sub, root)
            if name.startswith(".") or _excluded(rel, excludes) or _is_venv(sub):
                continue
            if gitignore is not None and gitignore.ignored(sub, True):
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(PY_SUFFIXES):
                continue
            f = d / name
            rel = relpath_of(f, root)
            if _excluded(rel, excludes):
                continue
            if gitignore is not None and gitignore.ignored(f, False):
                continue
            yield f


def project_files(config: Config) -> list[SourceFile]:
    """Every Python file of the project (for facts), regardless of the paths
    being checked."""
    return discover([config.root], config)
