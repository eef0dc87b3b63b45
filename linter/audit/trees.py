"""The trees an audit compares: folders as given, or git refs of a repository
extracted into a temporary folder with ``git archive`` (the repository's
working tree, index and worktree list are never touched), and the overlay:
the upstream tree with the fork's own changes laid over it."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path


class TreeError(Exception):
    """A tree that cannot be read: no such folder, not a git ref, git failed."""


@dataclass
class Tree:
    """One side of the audit: where its files are and what the user called it."""

    label: str  # fork, base, upstream, overlay
    spec: str  # as given on the command line
    root: Path
    files: dict[str, str] = field(default_factory=dict)  # relpath -> sha256 of the bytes

    def describe(self) -> str:
        return f"{self.label} ({self.spec})"


def python_files(root: Path) -> dict[str, str]:
    """Every ``.py`` file under ``root`` (no hidden folders, no caches), by
    POSIX relative path, with a hash of its bytes."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in filenames:
            if name.endswith(".py"):
                full = Path(dirpath, name)
                rel = full.relative_to(root).as_posix()
                with open(full, "rb", buffering=0) as fh:
                    out[rel] = hashlib.sha256(fh.readall()).hexdigest()
    return dict(sorted(out.items()))


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise TreeError("git is not installed; give folders instead of refs") from None
    if done.returncode != 0:
        msg = done.stderr.decode(errors="replace").strip().splitlines()
        raise TreeError(f"git {' '.join(args[:2])} failed in {repo}: {msg[-1] if msg else done.returncode}")
    return done.stdout


def extract_ref(repo: Path, ref: str, dest: Path) -> None:
    """The Python files of ``ref`` written under ``dest`` with fresh
    modification times (the cache's stat shortcut must never take one
    ref's file for another's)."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    data = _git(repo, "archive", "--format=tar", commit)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".py"):
                continue
            rel = Path(member.name)
            if rel.is_absolute() or ".." in rel.parts:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            if src is not None:
                target.write_bytes(src.read())


def open_tree(label: str, spec: str, repo: Path | None, stack: ExitStack) -> Tree:
    """``spec`` as a folder if one exists by that name, else as a git ref of
    ``repo`` (default: the current folder), extracted into a temporary folder
    removed when ``stack`` closes."""
    path = Path(spec).expanduser()
    if path.is_dir():
        root = path.resolve()
    else:
        where = (repo or Path.cwd()).resolve()
        if not (where / ".git").exists() and not _is_git(where):
            raise TreeError(f"--{label} {spec}: no such folder, and {where} is not a git repository (see --repo)")
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"shardlint-audit-{label}-")))
        try:
            extract_ref(where, spec, tmp)
        except TreeError as exc:
            raise TreeError(f"--{label} {spec}: not a folder, nor a ref git knows ({exc})") from None
        root = tmp
    tree = Tree(label, spec, root, python_files(root))
    if not tree.files:
        raise TreeError(f"--{label} {spec}: no Python files in {root}")
    return tree


def _is_git(where: Path) -> bool:
    try:
        _git(where, "rev-parse", "--git-dir")
    except TreeError:
        return False
    return True


@dataclass
class Overlay:
    tree: Tree
    fork_changed: set[str]  # files the fork added or changed relative to its base
    fork_deleted: set[str]
    manual_merge: list[str]  # changed by the fork and by upstream: the fork's version is used
    removed_upstream: list[str]  # changed by the fork, gone upstream (moved or deleted): port by hand


def fork_changes(fork: Tree, base: Tree) -> tuple[set[str], set[str]]:
    changed = {rel for rel, h in fork.files.items() if base.files.get(rel) != h}
    deleted = {rel for rel in base.files if rel not in fork.files}
    return changed, deleted


def build_overlay(fork: Tree, base: Tree, upstream: Tree, stack: ExitStack) -> Overlay:
    """Upstream with the fork's changes (F - B) laid over it, in a temporary
    folder. A file both sides changed takes the fork's version and is listed
    for a manual merge; a file the fork deleted is left out."""
    changed, deleted = fork_changes(fork, base)
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="shardlint-audit-overlay-")))
    files: dict[str, str] = {}
    manual = []
    for rel, h in upstream.files.items():
        if rel in deleted or rel in changed:
            continue
        _link(upstream.root / rel, tmp / rel)
        files[rel] = h
    removed = []
    for rel in sorted(changed):
        moved = same_module(rel, upstream.files)
        if rel in base.files and rel not in upstream.files:
            removed.append(f"{rel} (now {moved})" if moved else rel)
        if moved:
            # upstream turned the module into a package or back: the fork's
            # file beside it would be shadowed, and name the same module
            continue
        _copy(fork.root / rel, tmp / rel)
        files[rel] = fork.files[rel]
        up = upstream.files.get(rel)
        if rel in base.files and up is not None and up != base.files[rel]:
            manual.append(rel)
    tree = Tree("overlay", f"{upstream.spec} + ({fork.spec} - {base.spec})", tmp, dict(sorted(files.items())))
    return Overlay(tree, changed, deleted, manual, removed)


def same_module(rel: str, files: dict[str, str]) -> str:
    """The other file of ``files`` that is the same module as ``rel``
    (``a/b.py`` and ``a/b/__init__.py``), or ''."""
    if rel.endswith("/__init__.py"):
        other = rel[: -len("/__init__.py")] + ".py"
    else:
        other = rel[:-3] + "/__init__.py"
    return other if other in files and rel not in files else ""


def shared_view(tree: Tree, like: Tree, stack: ExitStack) -> Tree:
    """``tree`` as a temporary folder of hard links in which every file
    byte-identical in ``like`` is ``like``'s own file: the cache, which knows
    a file by its path, size and modification time, answers for those from
    ``like``'s run without reading them again (a fork is mostly its base)."""
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"shardlint-audit-{tree.label}-")))
    for rel, h in tree.files.items():
        _link((like.root if like.files.get(rel) == h else tree.root) / rel, tmp / rel)
    return Tree(tree.label, tree.spec, tmp, dict(tree.files))


def _link(src: Path, dst: Path) -> None:
    """Upstream's own files: a hard link where the file system allows (the
    same bytes and stat data: the cache knows the file from the upstream run
    and does not read it again), else a copy."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)  # (a fresh mtime: see extract_ref)
