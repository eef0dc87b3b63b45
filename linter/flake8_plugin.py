"""shardlint as a flake8 plugin: ``flake8 --select SHD``.

The entry point (``SHD = "linter.flake8_plugin:Flake8Plugin"`` in group
``flake8.extension``) makes flake8 call :class:`Flake8Plugin` once per file.
The plugin runs the very engine behind ``shardlint check``
(:meth:`Engine.lint_text`), so both give the same findings at the same
line:column on the same file:

- The configuration is ``[tool.shardlint]`` of the file's nearest
  pyproject.toml (flake8 never reads it): select/ignore, per-file-ignores and
  rule options. flake8's own ``--select``/``--ignore`` then filter by prefix on
  top (``--extend-ignore=S`` hides SHD too).
- Project facts (base classes, resolvers, kernels in other modules) come from
  the whole project, computed once per process and project root (through
  shardlint's cache, shared with ``shardlint check``), then reused for every
  file flake8 hands this process.
- The needle prefilter runs first: a file in which no enabled rule can match
  is neither compiled nor parsed by libcst.
- Which files are checked is flake8's business (its ``exclude``,
  ``filename``); shardlint's ``exclude``/``extend-exclude`` are not applied.
- SHD000 cannot come from flake8 for a syntax error: flake8 reports E999 and
  runs no AST plugin on such a file.

Columns handed to flake8 are 0-based code points (flake8 adds 1, as
``shardlint check`` does).

noqa: flake8 applies ``# noqa`` itself (and ``--disable-noqa`` turns that off),
so the plugin also yields findings the engine marked as suppressed whenever
flake8's own noqa regex on that line covers them: flake8 then hides them by
itself, or shows them under ``--disable-noqa`` as users expect. Findings that
only shardlint's syntax suppresses (``#noqa`` without a space,
``# shardlint: noqa`` for a whole file) are dropped, since flake8 would show
them. One difference remains: flake8 applies a noqa comment to every line of a
multi-line statement, shardlint only to the line where the finding starts, so
a ``# noqa`` on the closing line of a call hides a finding on its first line
under flake8 only.

Internal errors (a rule crashing on a file) go to stderr, as with
``shardlint check``; a configuration error stops flake8 with its message
("There was a critical error during execution of Flake8: ... ConfigError").
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter import __version__
from linter.config import Config, load_config
from linter.engine import Engine
from linter.files import relpath_of
from linter.registry import Registry, load_registry
from linter.scan import admits_text
from linter.types import Diagnostic

try:  # flake8's own regex, so that "would flake8 hide it" is decided as flake8 does
    from flake8.defaults import NOQA_INLINE_REGEXP as _FLAKE8_NOQA
except ImportError:  # pragma: no cover - the plugin only runs under flake8
    _FLAKE8_NOQA = re.compile(
        r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE
    )

# What flake8 calls a file read from stdin (before --stdin-display-name).
_STDIN_NAMES = frozenset({"stdin", "-", "<stdin>"})


def _load_registry() -> Registry:
    """The rules the plugin runs (a seam for tests)."""
    return load_registry()


@dataclass
class _Project:
    config: Config
    engine: Engine
    facts_ready: bool = False

    def prepare_facts(self) -> None:
        """Compute the project's facts once, through shardlint's cache (shared
        with ``shardlint check``): a warm cache makes this a stat per file."""
        if self.facts_ready:
            return
        self.facts_ready = True
        if self.engine.collector_meta:
            self.engine.project_facts()


# Per process: folder → its project, and project root → the configured engine
# (which keeps the project's facts once computed).
_DIRS: dict[Path, _Project] = {}
_ROOTS: dict[tuple[Path, Path | None], _Project] = {}
_REPORTED: set[tuple[str, str | None, str]] = set()


def clear_cache() -> None:
    """Forget configurations and facts (tests; long-lived processes)."""
    _DIRS.clear()
    _ROOTS.clear()
    _REPORTED.clear()


def _project_for(path: Path) -> _Project:
    folder = path.parent
    project = _DIRS.get(folder)
    if project is None:
        registry = _load_registry()
        config = load_config([path], registry)
        key = (config.root, config.source)
        project = _ROOTS.get(key)
        if project is None:
            # jobs=1: flake8 runs plugins in daemonic pool workers, which may
            # not start processes of their own.
            project = _Project(config, Engine(config, registry, jobs=1, cache=_open_cache(config)))
            _ROOTS[key] = project
        _DIRS[folder] = project
    return project


def _open_cache(config: Config) -> Any:
    try:
        from linter.cache import Cache
    except ImportError:  # pragma: no cover - a build without the cache
        return None
    where = Path(config.cache_dir) if config.cache_dir else config.root / ".shardlint_cache"
    cache = Cache(where if where.is_absolute() else config.root / where)
    if cache.refused:
        print(f"shardlint: not using the cache: {cache.refused}", file=sys.stderr)
        return None
    return cache


def _path_of(filename: str) -> Path:
    if filename in _STDIN_NAMES:
        return (Path.cwd() / "stdin.py").resolve()
    return Path(filename).resolve()


def flake8_hides(d: Diagnostic, lines: Sequence[str]) -> bool:
    """Whether flake8's noqa handling, on the line where ``d`` starts, covers
    ``d.code`` (a bare ``# noqa`` or a listed code or prefix)."""
    if not 0 < d.span.line <= len(lines):
        return False
    m = _FLAKE8_NOQA.search(lines[d.span.line - 1])
    if m is None:
        return False
    raw = m.group("codes")
    if not raw:
        return True
    codes = tuple(c.upper() for c in re.split(r"[,\s]+", raw.strip()) if c)
    return d.code in codes or d.code.startswith(codes)


class Flake8Plugin:
    """flake8 AST plugin. ``tree`` is requested only because flake8 classifies
    plugins by their parameters; the engine parses ``lines`` itself."""

    name = "shardlint"
    version = __version__

    def __init__(self, tree: ast.AST | None, lines: Sequence[str], filename: str) -> None:
        self.lines = list(lines)
        self.filename = filename
        self.path = _path_of(filename)
        # Here rather than in run(): flake8 turns an exception raised while
        # constructing a plugin (a bad [tool.shardlint] table) into a one-line
        # error naming the plugin and the file, instead of a traceback.
        self.project = _project_for(self.path)

    def diagnostics(self) -> list[Diagnostic]:
        """The findings flake8 should see for this file (see the module doc
        for which suppressed ones are included)."""
        if not self.lines:
            return []
        text = "".join(self.lines)
        path, project = self.path, self.project
        engine = project.engine
        relpath = relpath_of(path, project.config.root)
        # The prefilter: nothing can fire here unless a rule's needles match
        # or there is a noqa comment for SHD900 to judge.
        noqa_rule = "SHD900" in engine.enabled and "noqa" in text.lower()
        if not noqa_rule and not any(admits_text(engine.gate(r), text) for r in engine.rules_for(relpath)):
            return []
        project.prepare_facts()
        diags, errors = engine.lint_text(text, path)
        for e in errors:
            key = (e.path, e.code, e.message)
            if key not in _REPORTED:
                _REPORTED.add(key)
                print(f"shardlint: {e.line()}", file=sys.stderr)
        return [d for d in diags if not d.suppressed or flake8_hides(d, self.lines)]

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        for d in self.diagnostics():
            yield d.span.line, d.span.column, f"{d.code} {d.message}", type(self)
