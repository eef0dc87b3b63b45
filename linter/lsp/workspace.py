"""One workspace folder as the language server keeps it: its configuration
(pyproject.toml, then the client's settings), its engine, and the project's
facts with the unsaved buffers and the files changed on disk laid over.

Everything here runs on the server's one lint thread (never two at once):
the engine and the facts are not shared with another thread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.config import Config, ConfigError, check_selector, find_config_file, load_config
from linter.engine import Engine
from linter.facts import ProjectFacts
from linter.files import module_name_of, relpath_of
from linter.lsp.buffers import BufferLint, buffer_facts, lint_buffer
from linter.registry import Registry
from linter.reparse import ParseMemo
from linter.workers import bring_back, keep_out_of_sight

# the client settings a user may give (initializationOptions or
# workspace/didChangeConfiguration), in ruff's spelling; camelCase accepted
SETTING_KEYS = ("select", "extend-select", "ignore", "unsafe-fixes", "args")
# the `shardlint check` options `args` may carry here
ARG_OPTIONS = ("--select", "--extend-select", "--ignore", "--config", "--cache-dir")
ARG_FLAGS = ("--unsafe-fixes", "--no-cache", "--check-syntax", "--no-check-syntax")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    config_file: Path | None = None
    cache_dir: Path | None = None
    no_cache: bool = False
    check_syntax: bool | None = None


def _camel_to_kebab(key: str) -> str:
    return re.sub(r"(?<=[a-z])([A-Z])", lambda m: "-" + m.group(1).lower(), key)


def _code_list(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"client settings: '{key}' must be a list of codes, got {value!r}")
    return tuple(v.strip().upper() for v in value if v.strip())


def parse_settings(raw: Any, registry: Registry) -> Settings:
    """The client's settings: ``{"select": [...], "ignore": [...],
    "unsafe-fixes": bool, "args": [...]}``, optionally under a ``shardlint``
    key. An unknown key or a bad value is a :class:`ConfigError`."""
    if raw is None:
        return Settings()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"client settings must be an object, got {raw!r}")
    if "shardlint" in raw and isinstance(raw["shardlint"], Mapping):
        raw = raw["shardlint"]
    out: dict[str, Any] = {}
    for key, value in raw.items():
        k = _camel_to_kebab(key)
        if k not in SETTING_KEYS:
            raise ConfigError(f"client settings: unknown key '{key}' (known: {', '.join(SETTING_KEYS)})")
        if k == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"client settings: 'unsafe-fixes' must be true or false, got {value!r}")
            out["unsafe_fixes"] = value
        elif k == "args":
            out.update(_parse_args(value))
        else:
            out[k.replace("-", "_")] = _code_list(value, k)
    for key in ("select", "extend_select", "ignore"):
        for sel in out.get(key) or ():
            check_selector(sel, registry, f"client settings: '{key.replace('_', '-')}'")
    return Settings(**out)


def _parse_args(args: Any) -> dict[str, Any]:
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"client settings: 'args' must be a list of strings, got {args!r}")
    out: dict[str, Any] = {}
    it = iter(args)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in ARG_FLAGS and not eq:
            if name == "--unsafe-fixes":
                out["unsafe_fixes"] = True
            elif name == "--no-cache":
                out["no_cache"] = True
            else:
                out["check_syntax"] = name == "--check-syntax"
            continue
        if name not in ARG_OPTIONS:
            raise ConfigError(
                f"client settings: 'args' has {arg!r}; the server takes "
                f"{', '.join(ARG_OPTIONS + ARG_FLAGS)}"
            )
        if not eq:
            value = next(it, "")
        if not value:
            raise ConfigError(f"client settings: 'args' {name} needs a value")
        if name == "--config":
            out["config_file"] = Path(value).expanduser()
        elif name == "--cache-dir":
            out["cache_dir"] = Path(value).expanduser()
        else:
            out[name[2:].replace("-", "_")] = _code_list(value, name)
    return out


def open_cache(config: Config, settings: Settings) -> Any:
    """The on-disk cache the CLI would use for this configuration."""
    if settings.no_cache:
        return None
    from linter.cache import Cache

    where = settings.cache_dir or (Path(config.cache_dir) if config.cache_dir else Path(".shardlint_cache"))
    if not where.is_absolute():
        where = config.root / where
    return Cache(where)


@dataclass
class ConfigProblem:
    message: str
    path: Path | None  # the file at fault (pyproject.toml), when one is


def problem_path(message: str) -> Path | None:
    """The file a :class:`ConfigError` message names first, if it exists."""
    head = message.split(": ", 1)[0]
    p = Path(head)
    return p if p.is_absolute() and p.is_file() else None


@dataclass
class FolderState:
    """A workspace folder: its configuration, engine and in-memory facts."""

    folder: Path
    registry: Registry
    settings: Settings = field(default_factory=Settings)
    config: Config | None = None
    engine: Engine | None = None
    problem: ConfigProblem | None = None
    _base: ProjectFacts | None = None
    _composed: ProjectFacts | None = None
    # path -> the text laid over the disk's (an unsaved buffer, or a file
    # changed on disk since the facts were built; None: deleted) and its facts
    _overlays: dict[Path, tuple[str | None, dict[str, Any]]] = field(default_factory=dict)
    # path -> the last parse of its open document (``linter.reparse``)
    _parses: dict[Path, ParseMemo] = field(default_factory=dict)

    # -- configuration ------------------------------------------------------
    def configure(self, settings: Settings | None = None) -> ConfigProblem | None:
        """(Re)load the configuration. On an error the last good one stays
        (defaults on a first load) and the problem is returned."""
        if settings is not None:
            self.settings = settings
        s = self.settings
        try:
            config = load_config([self.folder], self.registry, s.config_file)
            config = config.with_overrides(
                select=s.select,
                extend_select=(config.extend_select + s.extend_select) if s.extend_select else None,
                ignore=(config.ignore + s.ignore) if s.ignore else None,
                check_syntax=s.check_syntax,
            )
        except ConfigError as exc:
            self.problem = ConfigProblem(str(exc), problem_path(str(exc)))
            if self.engine is None:
                self._use(Config(root=self.folder))
            return self.problem
        self.problem = None
        self._use(config)
        return None

    def _use(self, config: Config) -> None:
        self.config = config
        self.engine = Engine(config, self.registry, cache=open_cache(config, self.settings))
        if self._base is not None:
            bring_back()
        self._base = self._composed = None
        # laid-over facts were collected under the old options: again
        self._overlays = {p: (t, self._facts_of(p, t) or {}) for p, (t, _) in self._overlays.items()}

    @property
    def pyproject(self) -> Path:
        assert self.config is not None
        return self.config.source or (self.config.root / "pyproject.toml")

    # -- facts --------------------------------------------------------------
    def facts(self) -> ProjectFacts:
        if self._composed is None:
            assert self.engine is not None
            if self._base is None:
                self._base = self.engine.project_facts()
                keep_out_of_sight()
            facts = self._base
            for path, (_, mine) in self._overlays.items():
                facts = facts.with_module(self.module_of(path), mine)
            self._composed = facts
        return self._composed

    def warm(self) -> None:
        self.facts()

    def module_of(self, path: Path) -> str:
        assert self.config is not None
        return module_name_of(relpath_of(path, self.config.root))

    def _facts_of(self, path: Path, text: str | None) -> dict[str, Any] | None:
        assert self.engine is not None
        return {} if text is None else buffer_facts(self.engine, text, path)

    def lay_over(self, path: Path, text: str | None, mine: dict[str, Any] | None = None) -> set[str]:
        """Lay ``text`` (None: the file is gone) over ``path``'s facts; the
        collectors whose facts for that module changed. ``mine``: its facts,
        when the caller has them. A text that does not compile changes
        nothing (its last facts stand)."""
        if mine is None:
            mine = self._facts_of(path, text)
        if mine is None:
            return set()
        before = self._overlays.get(path)
        if before is not None:
            old = before[1]
        else:
            base = self.facts()
            module = self.module_of(path)
            old = {c.name: base.raw(c.name).get(module) for c in self.engine.collector_meta}  # type: ignore[union-attr]
        self._overlays[path] = (text, mine)
        changed = {n for n in set(old) | set(mine) if old.get(n) != mine.get(n)}
        if changed:
            self._composed = None
        return changed

    def lazy_names(self) -> set[str]:
        assert self.engine is not None
        return {c.name for c in self.engine.collector_meta if getattr(c, "lazy", False)}

    # -- linting ------------------------------------------------------------
    def lint(self, path: Path, text: str) -> BufferLint:
        """Lint a buffer against the facts as they stand (the other buffers
        laid over, and this one's last facts): see :meth:`settle`."""
        assert self.engine is not None
        return lint_buffer(self.engine, text, path, self.facts(), self._parses.setdefault(path, ParseMemo()))

    def closed(self, path: Path) -> None:
        """Forget the parse of a document the editor closed."""
        self._parses.pop(path, None)

    def settle(self, path: Path, text: str) -> set[str]:
        """Lay a linted buffer's facts over: the collectors whose facts for
        its module changed (its own findings, and those of the files that
        depend on them, are then to be linted again). A buffer the same as
        the file the project's facts were read from changes nothing."""
        assert self.engine is not None and self.config is not None
        if path not in self._overlays and self.engine.scanned_as(relpath_of(path, self.config.root), text):
            return set()
        return self.lay_over(path, text)

    def contains(self, path: Path) -> bool:
        return path == self.folder or self.folder in path.parents


def nested_project_root(folder: FolderState, path: Path) -> Path | None:
    """The root of the project ``path`` belongs to when it lies below
    ``folder``'s own root: the closest folder above ``path`` whose
    ``pyproject.toml`` has a ``[tool.shardlint]`` table. None when that is
    the folder's own configuration, when the client's settings name one
    configuration file for everything, or when the lookup fails (the
    folder's configuration then stands)."""
    if folder.settings.config_file is not None or folder.config is None:
        return None
    try:
        found = find_config_file(path)
    except ConfigError:
        return None
    if found is None:
        return None
    root = found[0].parent.resolve()
    own = folder.config.root.resolve()
    return root if root != own and root.is_relative_to(own) else None


def folder_for(folders: Sequence[FolderState], path: Path) -> FolderState | None:
    """The innermost folder holding ``path``."""
    best = None
    for f in folders:
        if f.contains(path) and (best is None or len(f.folder.parts) > len(best.folder.parts)):
            best = f
    return best


def key_line(text: str, message: str) -> int:
    """The 0-based line of pyproject.toml a configuration error is about: the
    key it names (``'key'``) inside ``[tool.shardlint...]``, else that
    table's header, else the first line."""
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines) if ln.strip().startswith("[tool.shardlint")), None)
    keys = re.findall(r"'([^']+)'", message)
    for k in keys:
        name = k.split(".")[0].strip('"')
        for i, ln in enumerate(lines):
            if (header is None or i > header) and re.match(rf"\s*\"?{re.escape(name)}\"?\s*=", ln):
                return i
    return header or 0
