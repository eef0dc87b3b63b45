"""One configuration per file, as ruff does: a run over paths that span
several projects (folders whose pyproject.toml has a ``[tool.shardlint]``
table) lints each project with its own configuration, root and facts, and
hands back one result whose paths are relative to the first project's root.

Without ``--config``, each path given is linted under its closest
configuration (:func:`linter.config.load_config`); a walk meeting a folder
below a project's root with its own table leaves that folder out
(``Config.split_nested``) and it is linted as a project of its own. With
``--config``, that one file configures everything and nothing is split.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from linter.config import Config, load_config
from linter.registry import Registry
from linter.types import Diagnostic, InternalError, Note, RunResult

Run = Callable[[Config, list[Path]], tuple[RunResult, list[tuple[str, str, str]]]]


def run_projects(
    first: Config,
    targets: Sequence[Path],
    registry: Registry,
    configure: Callable[[Config], Config],
    run: Run,
    split: bool,
) -> tuple[RunResult, list[tuple[str, str, str]]]:
    """``run(config, paths)`` per project: ``first`` (already configured)
    for the paths it governs, each other closest configuration for its
    paths, then each nested project the walks met. ``configure`` applies the
    command line's overrides to a configuration loaded here. Returns the
    merged result and changes (relpath, before, after), relative to
    ``first.root``."""
    if not split:
        return run(first, list(targets))
    first = replace(first, split_nested=True, nested_found=[])
    groups: dict[tuple[Path, Path | None], tuple[Config, list[Path]]] = {}
    order: list[tuple[Path, Path | None]] = []

    def add(config: Config, path: Path) -> None:
        key = (config.root, config.source)
        if key not in groups:
            groups[key] = (config, [])
            order.append(key)
        groups[key][1].append(path)

    for t in targets:
        own = load_config([t], registry)
        add(first if (own.root, own.source) == (first.root, first.source) else _split(configure(own)), t)
    result = RunResult()
    changes: list[tuple[str, str, str]] = []
    done: set[str] = set()
    i = 0
    while i < len(order):
        config, paths = groups[order[i]]
        i += 1
        got, changed = run(config, paths)
        _merge(result, got, config.root, first.root)
        changes += [(_rebase(rel, config.root, first.root), a, b) for rel, a, b in changed]
        given = [p.resolve() for p in paths]
        for folder in config.nested_found:
            # (the walk for facts covers the whole root: only the folders
            # below a path given are linted)
            if folder in done or not any(Path(folder).is_relative_to(g) for g in given):
                continue
            done.add(folder)
            add(_split(configure(load_config([Path(folder)], registry))), Path(folder))
    result.diagnostics.sort(key=lambda d: d.sort_key)
    return result, changes


def _split(config: Config) -> Config:
    return replace(config, split_nested=True, nested_found=[])


def _rebase(relpath: str, root: Path, onto: Path) -> str:
    """A path relative to ``root`` made relative to ``onto`` (absolute when
    outside it)."""
    if root == onto or relpath.startswith("/"):
        return relpath
    full = root / relpath
    return full.relative_to(onto).as_posix() if full.is_relative_to(onto) else full.as_posix()


def _merge(into: RunResult, got: RunResult, root: Path, onto: Path) -> None:
    if root == onto:
        into.diagnostics.extend(got.diagnostics)
        into.errors.extend(got.errors)
    else:
        into.diagnostics.extend(_rebased(d, root, onto) for d in got.diagnostics)
        into.errors.extend(InternalError(_rebase(e.path, root, onto), e.code, e.message) for e in got.errors)
    for f in fields(got.stats):
        setattr(into.stats, f.name, getattr(into.stats, f.name) + getattr(got.stats, f.name))


def _rebased(d: Diagnostic, root: Path, onto: Path) -> Diagnostic:
    notes: Any = tuple(
        replace(n, path=_rebase(n.path, root, onto)) if isinstance(n, Note) and n.path else n for n in d.notes
    )
    return replace(d, path=_rebase(d.path, root, onto), notes=notes)
