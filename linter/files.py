"""From the paths a user gives to the Python files to check.

Directories are walked (hidden directories, virtualenvs, excluded and
git-ignored paths skipped); a file named explicitly is always taken unless
``force_exclude`` is set (pre-commit passes every staged file explicitly).
Exclude patterns are compiled once into two regular expressions: this runs on
every file of trees the size of vLLM, on the warm path too.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from linter.config import Config, config_table_in

PY_SUFFIXES = (".py", ".pyi")


class SourceFile:
    """A file to read: absolute path, POSIX path relative to the project root
    (when inside it), whether it was named on the command line. The ``Path``
    is built on first use: a warm run over a big tree never needs most."""

    __slots__ = ("_abs", "_path", "explicit", "relpath")

    def __init__(self, path: Path | str, relpath: str, explicit: bool) -> None:
        self._path = path if isinstance(path, Path) else None
        self._abs = str(path)
        self.relpath = relpath
        self.explicit = explicit

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self._abs)
        return self._path

    @property
    def abspath(self) -> str:
        return self._abs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SourceFile) and (self._abs, self.relpath, self.explicit) == (
            other._abs, other.relpath, other.explicit)

    def __hash__(self) -> int:
        return hash((self._abs, self.relpath, self.explicit))

    def __repr__(self) -> str:
        return f"SourceFile({self._abs!r}, {self.relpath!r}, {self.explicit})"


def relpath_of(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.resolve().as_posix()


@functools.lru_cache(maxsize=16384)
def module_name_of(relpath: str) -> str:
    if relpath.endswith(".pyi"):
        relpath = relpath[:-4]
    elif relpath.endswith(".py"):
        relpath = relpath[:-3]
    parts = [p for p in relpath.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class PathMatcher:
    """Glob patterns over root-relative POSIX paths, with the semantics of
    :func:`linter.config.path_matches`: a pattern without ``/`` matches any
    path component; with ``/`` it is anchored at the root and also matches
    everything below a matching directory."""

    def __init__(self, patterns: Sequence[str]) -> None:
        comp, anchored = [], []
        for p in patterns:
            p = p.rstrip("/")
            if not p:
                continue
            if "/" not in p:
                comp.append(fnmatch.translate(p))
            else:
                p = p[2:] if p.startswith("./") else p.lstrip("/")
                body = fnmatch.translate(p)
                # fnmatch.translate ends with \Z; allow a trailing "/anything"
                anchored.append(body[: -len(r"\Z")] + r"(?:/.*)?\Z" if body.endswith(r"\Z") else body)
        self._comp = re.compile("|".join(f"(?:{c})" for c in comp)) if comp else None
        self._anch = re.compile("|".join(f"(?:{a})" for a in anchored), re.S) if anchored else None

    def component(self, name: str) -> bool:
        return self._comp is not None and self._comp.match(name) is not None

    def anchored(self, relpath: str) -> bool:
        return self._anch is not None and self._anch.match(relpath) is not None

    def matches(self, relpath: str) -> bool:
        if self.anchored(relpath):
            return True
        return self._comp is not None and any(self.component(c) for c in relpath.split("/"))


class _GitIgnore:
    """Hierarchical .gitignore matching: each file applies below its folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, object | None] = {}

    def spec(self, d: str) -> object | None:
        if d not in self._specs:
            spec = None
            f = os.path.join(d, ".gitignore")
            if os.path.isfile(f):
                try:
                    import pathspec

                    with open(f, encoding="utf-8", errors="replace") as fh:
                        spec = pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines())
                except (OSError, ValueError):
                    spec = None
            self._specs[d] = spec
        return self._specs[d]

    def chain(self, d: str) -> list[tuple[str, object]]:
        """The specs that apply in folder ``d`` (from the root down)."""
        out = []
        root = str(self.root)
        cur = d
        dirs = []
        while True:
            dirs.append(cur)
            if cur == root or not cur.startswith(root + os.sep):
                break
            cur = os.path.dirname(cur)
        for x in reversed(dirs):
            s = self.spec(x)
            if s is not None:
                out.append((x, s))
        return out

    @staticmethod
    def match(chain: list[tuple[str, object]], path: str, is_dir: bool) -> bool:
        for base, spec in chain:
            rel = os.path.relpath(path, base).replace(os.sep, "/") + ("/" if is_dir else "")
            if spec.match_file(rel):  # type: ignore[attr-defined]
                return True
        return False

    def ignored(self, path: Path, is_dir: bool) -> bool:
        p = str(path)
        return self.match(self.chain(os.path.dirname(p)), p, is_dir)


def discover(
    paths: Sequence[Path], config: Config, project: Sequence[SourceFile] | None = None
) -> list[SourceFile]:
    """The files to check. ``project``: the project's files already walked
    (for facts); a folder inside the root whose own path no exclude matches is
    then taken from it instead of being walked a second time."""
    root = config.root
    matcher = PathMatcher(config.all_excludes)
    gitignore = _GitIgnore(root) if config.respect_gitignore else None
    seen: set[str] = set()
    out: list[SourceFile] = []

    for given in paths:
        if given.is_dir() and project is not None:
            top = given.resolve()
            rel = relpath_of(top, root)
            inside = top == root or not rel.startswith("/")
            if inside and not matcher.matches(rel if top != root else "") and not (
                gitignore is not None and top != root and gitignore.ignored(top, True)
            ):
                prefix = "" if top == root else rel + "/"
                for sf in project:
                    # (``sf.relpath == rel``: the folder itself, unreadable)
                    if (sf.relpath.startswith(prefix) or sf.relpath == rel) and sf.abspath not in seen:
                        seen.add(sf.abspath)
                        out.append(sf if not sf.explicit else SourceFile(sf.abspath, sf.relpath, False))
                continue
        if given.is_dir():
            nested = config.nested_found if config.split_nested else None
            for abs_path, rel in _walk(given.resolve(), root, matcher, gitignore, config.force_exclude, nested):
                if abs_path not in seen:
                    seen.add(abs_path)
                    out.append(SourceFile(abs_path, rel, False))
        elif given.exists():
            rp = given.resolve()
            rel = relpath_of(rp, root)
            if config.force_exclude and (
                matcher.matches(rel) or (gitignore is not None and gitignore.ignored(rp, False))
            ):
                continue
            if str(rp) not in seen:
                seen.add(str(rp))
                out.append(SourceFile(rp, rel, True))
        else:
            raise FileNotFoundError(str(given))
    out.sort(key=lambda s: s.relpath)
    return out


def _walk(
    top: Path,
    root: Path,
    matcher: PathMatcher,
    gitignore: _GitIgnore | None,
    force: bool,
    nested: list[str] | None = None,
) -> Iterator[tuple[str, str]]:
    """``nested``: where to record the folders left out because their
    pyproject.toml has a [tool.shardlint] table (each its own project);
    None: such folders are walked like any other."""
    root_s = str(root)
    prefix = root_s.rstrip(os.sep) + os.sep

    def rel(p: str) -> str:
        return p[len(prefix):].replace(os.sep, "/") if p.startswith(prefix) else p

    # The folder given is walked even when it matches an exclude (as ruff
    # does), unless force_exclude is set.
    if force and matcher.matches(rel(str(top))):
        return
    # a folder that cannot be listed is handed on like a file: reading it
    # fails, and a checked one is reported (SHD000), never skipped silently
    unreadable: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(str(top), onerror=unreadable.append):
        while unreadable:
            folder = unreadable.pop().filename
            if isinstance(folder, str):
                yield folder, rel(folder)
        chain = gitignore.chain(dirpath) if gitignore is not None else []
        keep = []
        for name in sorted(dirnames):
            sub = os.path.join(dirpath, name)
            if name.startswith(".") or matcher.component(name) or matcher.anchored(rel(sub)):
                continue
            if os.path.isfile(os.path.join(sub, "pyvenv.cfg")):
                continue
            if chain and _GitIgnore.match(chain, sub, True):
                continue
            if nested is not None and config_table_in(sub) is not None:
                if sub not in nested:
                    nested.append(sub)
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(PY_SUFFIXES):
                continue
            f = os.path.join(dirpath, name)
            r = rel(f)
            if matcher.component(name) or matcher.anchored(r):
                continue
            if chain and _GitIgnore.match(chain, f, False):
                continue
            yield f, r
    for error in unreadable:
        if isinstance(error.filename, str):
            yield error.filename, rel(error.filename)


def project_files(config: Config) -> list[SourceFile]:
    """Every Python file of the project (for facts), regardless of the paths
    being checked."""
    return discover([config.root], config)
