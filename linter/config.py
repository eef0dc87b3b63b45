"""Configuration: ``[tool.shardlint]`` in the nearest pyproject.toml (or a file
given with ``--config``), validated strictly: an unknown key, a wrong type or an
unknown code is a :class:`ConfigError` naming the file and the key."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

import tomli as toml_reader

from linter.registry import Registry
from linter.safeio import DEFAULT_MAX_FILE_SIZE, MAX_CONFIG_SIZE, UnreadableFile, read_bounded

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ruff_cache",
    ".shardlint_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "_build",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

_LIST_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "exclude", "extend-exclude")
_KNOWN_KEYS = frozenset(
    _LIST_KEYS
    + ("per-file-ignores", "force-exclude", "respect-gitignore", "check-syntax", "cache-dir", "rules",
       "max-file-size", "extend")
)


class ConfigError(Exception):
    """Bad configuration; the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Config:
    root: Path
    source: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    respect_gitignore: bool = True
    # compile every checked file so that any syntax error is one SHD000; off:
    # only files shardlint parses anyway (ast for a gate or fact, libcst for
    # a rule) report one (CPython's compile of a whole vLLM tree costs more
    # than the rest of a cold run)
    check_syntax: bool = False
    cache_dir: str | None = None
    # files over this many bytes are skipped with one SHD000 (safeio)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    # one configuration per file (the CLI without --config): a folder below
    # the root whose pyproject.toml has a [tool.shardlint] table is its own
    # project, left out of this one's walks and recorded in ``nested_found``
    split_nested: bool = False
    nested_found: list[str] = field(default_factory=list, compare=False, repr=False)
    _enabled: frozenset[str] | None = field(default=None, compare=False, repr=False)

    # -- selection ---------------------------------------------------------
    def enabled_codes(self, registry: Registry) -> frozenset[str]:
        if self._enabled is not None:
            return self._enabled
        out = set()
        for code, rule in registry.rules.items():
            if _is_selected(code, rule.default_enabled, self.select, self.extend_select, self.ignore):
                out.add(code)
        enabled = frozenset(out)
        object.__setattr__(self, "_enabled", enabled)
        return enabled

    def ignored_for(self, relpath: str) -> tuple[str, ...]:
        """Code prefixes that per-file-ignores switch off for ``relpath``."""
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if path_matches(relpath, pattern):
                out.extend(codes)
        return tuple(out)

    def options_for(self, code: str) -> Mapping[str, Any]:
        for c, items in self.rule_options:
            if c == code:
                return dict(items)
        return {}

    def effective_options(self, rule: Any) -> dict[str, Any]:
        """A rule's (or its metadata's) options: the defaults, then what this
        configuration sets."""
        opts = {k: o.default for k, o in rule.options.items()}
        opts.update(self.options_for(rule.code))
        return opts

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def digest(self) -> str:
        """Hash of everything that changes findings (cache key component)."""
        blob = json.dumps(
            {
                "select": self.select,
                "extend_select": self.extend_select,
                "ignore": self.ignore,
                "per_file_ignores": self.per_file_ignores,
                "rule_options": self.rule_options,
                "check_syntax": self.check_syntax,
                "max_file_size": self.max_file_size,
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def with_overrides(self, **changes: Any) -> Config:
        changes = {k: v for k, v in changes.items() if v is not None}
        return replace(self, _enabled=None, **changes)


def _specificity(code: str, selectors: Iterable[str]) -> int:
    best = -1
    for sel in selectors:
        if sel == "ALL":
            best = max(best, 0)
        elif code.startswith(sel):
            best = max(best, len(sel))
    return best


def _is_selected(
    code: str,
    default_enabled: bool,
    select: Sequence[str] | None,
    extend_select: Sequence[str],
    ignore: Sequence[str],
) -> bool:
    # The most specific selector wins; on a tie, ignore wins (ruff's rule).
    if select is None:
        pos = 0 if default_enabled else -1
    else:
        pos = _specificity(code, select)
    pos = max(pos, _specificity(code, extend_select))
    neg = _specificity(code, ignore)
    return pos >= 0 and pos > neg


def path_matches(relpath: str, pattern: str) -> bool:
    """Glob match of a root-relative POSIX path: a pattern without ``/`` matches
    any path component (``build`` excludes ``a/build/x.py``); with ``/`` it is
    anchored at the root; ``**`` spans directories."""
    p = PurePosixPath(relpath)
    pat = pattern.rstrip("/")
    if "/" not in pat:
        return any(fnmatch.fnmatchcase(part, pat) for part in p.parts)
    pat = pat.lstrip("./") if pat.startswith("./") else pat.lstrip("/")
    if fnmatch.fnmatchcase(relpath, pat) or fnmatch.fnmatchcase(relpath, pat + "/*"):
        return True
    # a directory pattern excludes what is under it
    return any(fnmatch.fnmatchcase(str(parent), pat) for parent in p.parents)


# -- discovery --------------------------------------------------------------


def find_project_root(start: Path) -> Path:
    """Nearest directory holding a pyproject.toml, else the directory above
    the top package containing ``start``, else ``start``'s directory."""
    start = start.resolve()
    base = start if start.is_dir() else start.parent
    for d in (base, *base.parents):
        if (d / "pyproject.toml").is_file():
            return d
    top = base
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    return top


def load_config(
    paths: Sequence[Path], registry: Registry, config_file: Path | None = None
) -> Config:
    """The configuration of ``paths[0]`` (default: the current folder).

    With ``config_file`` (``--config``): that file, for every file checked;
    ``/dev/null`` or an empty file is the default configuration. Else, as
    ruff does, the closest ``pyproject.toml`` holding a ``[tool.shardlint]``
    table, from the path's folder up (one without the table is passed
    over), its folder the project root; its ``extend`` names a file whose
    settings it inherits and overrides. None found: the defaults, rooted at
    :func:`find_project_root`."""
    start = paths[0] if paths else Path.cwd()
    if config_file is not None:
        if not os.path.lexists(config_file):
            raise ConfigError(f"{config_file}: configuration file not found")
        if config_file.is_dir():
            raise ConfigError(f"{config_file}: a folder, not a file")
        is_pyproject = config_file.name == "pyproject.toml"
        table = _read_table(config_file, require_tool=is_pyproject)
        root = config_file.resolve().parent if is_pyproject else find_project_root(start)
        table = _with_extends(table or {}, config_file, root)
        return parse_table(table, config_file, root, registry)
    found = find_config_file(start)
    if found is None:
        return Config(root=find_project_root(start))
    path, table = found
    root = path.parent
    return parse_table(_with_extends(table, path, root), path, root, registry)


def find_config_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The closest ``pyproject.toml`` with a ``[tool.shardlint]`` table at or
    above ``start`` (a file: its folder), and the table. A
    ``pyproject.toml`` that is a folder is a :class:`ConfigError`."""
    start = start.resolve()
    base = start if start.is_dir() else start.parent
    for d in (base, *base.parents):
        table = config_table_in(d)
        if table is not None:
            return d / "pyproject.toml", table
    return None


def config_table_in(folder: Path | str) -> dict[str, Any] | None:
    """``[tool.shardlint]`` of ``folder``'s pyproject.toml, or None (no such
    file, or no such table)."""
    path = Path(folder) / "pyproject.toml"
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{path}: a folder, not a file")
    key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    if key not in _TABLES:
        _TABLES[key] = _read_table(path, require_tool=True)
    got = _TABLES[key]
    return dict(got) if isinstance(got, Mapping) else got


_TABLES: dict[tuple[str, int, int, int], dict[str, Any] | None] = {}
# how many files one chain of ``extend`` may name
MAX_EXTENDS = 16
_PATH_KEYS = ("exclude", "extend-exclude")


def _with_extends(table: Mapping[str, Any], source: Path, root: Path) -> dict[str, Any]:
    """``table`` over the settings of the files its ``extend`` names, in
    chain (ruff's rule: the extending file's settings win; ``rules`` merge
    per option; a path pattern of an extended file is relative to that
    file's folder, rebased here onto ``root``)."""
    if not isinstance(table, Mapping):
        return table  # type: ignore[return-value]  (parse_table says what is wrong)
    out = {k: v for k, v in table.items() if k != "extend"}
    seen = {source.resolve()}
    current, here = table, source
    while "extend" in current:
        ref = current["extend"]
        if not isinstance(ref, str) or not ref.strip():
            raise ConfigError(f"{here}: [tool.shardlint]: 'extend' must be a path, got {ref!r}")
        target = (here.resolve().parent / os.path.expanduser(ref)).resolve()
        if target in seen:
            raise ConfigError(f"{here}: [tool.shardlint]: 'extend' makes a cycle through {target}")
        if len(seen) > MAX_EXTENDS:
            raise ConfigError(f"{here}: [tool.shardlint]: more than {MAX_EXTENDS} files extended in a chain")
        if not target.exists():
            raise ConfigError(f"{here}: [tool.shardlint]: 'extend' names {target}, which does not exist")
        seen.add(target)
        base = _read_table(target, require_tool=target.name == "pyproject.toml") or {}
        if not isinstance(base, Mapping):
            raise ConfigError(f"{target}: [tool.shardlint] must be a table")
        base = _rebase_paths(dict(base), target.parent, root)
        for key, value in base.items():
            if key == "extend":
                continue
            if key == "rules" and isinstance(value, Mapping) and isinstance(out.get("rules"), Mapping):
                merged = {code: dict(opts) for code, opts in value.items() if isinstance(opts, Mapping)}
                for code, opts in out["rules"].items():
                    merged[code] = {**merged.get(code, {}), **(opts if isinstance(opts, Mapping) else {})}
                out["rules"] = merged
            elif key not in out:
                out[key] = value
        current, here = base, target
    return out


def _rebase_paths(table: dict[str, Any], folder: Path, root: Path) -> dict[str, Any]:
    """Anchored patterns (with a ``/``) of a file in ``folder``, made
    relative to ``root``; one that cannot match below ``root`` is dropped."""

    def rebase(pattern: Any) -> Any:
        if not isinstance(pattern, str) or "/" not in pattern.rstrip("/"):
            return pattern
        body = pattern[2:] if pattern.startswith("./") else pattern.lstrip("/")
        if folder == root:
            return body
        if root.is_relative_to(folder):
            below = root.relative_to(folder).as_posix() + "/"
            if body.startswith("**"):
                return body
            return body[len(below):] if body.startswith(below) else None
        if folder.is_relative_to(root):
            return f"{folder.relative_to(root).as_posix()}/{body}"
        return None

    for key in _PATH_KEYS:
        if isinstance(table.get(key), list):
            table[key] = [p for p in (rebase(x) for x in table[key]) if p is not None]
    pfi = table.get("per-file-ignores")
    if isinstance(pfi, Mapping):
        table["per-file-ignores"] = {
            new: codes for pat, codes in pfi.items() if (new := rebase(pat)) is not None
        }
    return table


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict, or a :class:`ConfigError` naming the file:
    unreadable, a folder, a device that gives no end of bytes, not UTF-8,
    invalid or nested too deeply to parse. An empty file or ``/dev/null``
    is an empty table."""
    try:
        data = read_bounded(path, MAX_CONFIG_SIZE, devices=True, key=None)
    except UnreadableFile as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}: not UTF-8 (TOML must be): byte 0x{data[exc.start]:02x} on line {line}"
        ) from None
    try:
        return toml_reader.loads(text)
    except toml_reader.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None


def _read_table(path: Path, *, require_tool: bool) -> dict[str, Any] | None:
    data = read_toml(path)
    if require_tool:
        tool = data.get("tool", {})
        return tool.get("shardlint") if isinstance(tool, dict) else None
    # a dedicated file holds the table at top level or under [tool.shardlint]
    if "tool" in data and isinstance(data["tool"], dict) and "shardlint" in data["tool"]:
        return data["tool"]["shardlint"]
    return data


def parse_table(table: Mapping[str, Any], source: Path, root: Path, registry: Registry) -> Config:
    where = f"{source}: [tool.shardlint]"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in _KNOWN_KEYS:
            hint = _close(key, _KNOWN_KEYS)
            raise ConfigError(f"{where}: unknown key '{key}'" + (f" (did you mean '{hint}'?)" if hint else ""))

    def strlist(key: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        v = table[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"{where}: '{key}' must be a list of strings, got {v!r}")
        return tuple(v)

    def boolean(key: str, default: bool) -> bool:
        v = table.get(key, default)
        if not isinstance(v, bool):
            raise ConfigError(f"{where}: '{key}' must be true or false, got {v!r}")
        return v

    select = strlist("select")
    extend_select = strlist("extend-select") or ()
    ignore = (strlist("ignore") or ()) + (strlist("extend-ignore") or ())
    for key, sels in (("select", select or ()), ("extend-select", extend_select), ("ignore", ignore)):
        for sel in sels:
            check_selector(sel, registry, f"{where}: '{key}'")

    pfi: list[tuple[str, tuple[str, ...]]] = []
    raw_pfi = table.get("per-file-ignores", {})
    if not isinstance(raw_pfi, Mapping):
        raise ConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [codes]")
    for pattern, codes in raw_pfi.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{where}: 'per-file-ignores.\"{pattern}\"' must be a list of codes")
        for c in codes:
            check_selector(c, registry, f"{where}: 'per-file-ignores.\"{pattern}\"'")
        pfi.append((pattern, tuple(codes)))

    cache_dir = table.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir.strip()):
        raise ConfigError(f"{where}: 'cache-dir' must be a non-empty string, got {cache_dir!r}")
    max_file_size = table.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
    if not isinstance(max_file_size, int) or isinstance(max_file_size, bool) or max_file_size < 1:
        raise ConfigError(f"{where}: 'max-file-size' must be a positive number of bytes, got {max_file_size!r}")

    rule_options = parse_rule_options(table.get("rules", {}), where, registry)
    exclude = strlist("exclude")
    return Config(
        root=root,
        source=source,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        per_file_ignores=tuple(pfi),
        exclude=DEFAULT_EXCLUDE if exclude is None else exclude,
        extend_exclude=strlist("extend-exclude") or (),
        force_exclude=boolean("force-exclude", False),
        respect_gitignore=boolean("respect-gitignore", True),
        check_syntax=boolean("check-syntax", False),
        cache_dir=cache_dir,
        max_file_size=max_file_size,
        rule_options=rule_options,
    )


def parse_rule_options(
    raw: Any, where: str, registry: Registry
) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'rules' must be a table of [tool.shardlint.rules.<CODE>] tables")
    out = []
    for key, opts in raw.items():
        rule = registry.lookup(key)
        if rule is None:
            raise ConfigError(f"{where}: unknown rule '{key}' in 'rules'")
        if not isinstance(opts, Mapping):
            raise ConfigError(f"{where}: 'rules.{key}' must be a table")
        items = []
        for name, value in opts.items():
            option = rule.options.get(name)
            if option is None:
                known = ", ".join(sorted(rule.options)) or "none"
                raise ConfigError(
                    f"{where}: unknown option 'rules.{key}.{name}' for {rule.code} (known: {known})"
                )
            try:
                items.append((name, validate_option(option, value)))
            except ValueError as exc:
                raise ConfigError(f"{where}: 'rules.{key}.{name}': {exc}") from None
        out.append((rule.code, tuple(sorted(items))))
    return tuple(sorted(out))


def validate_option(option: Any, value: Any) -> Any:
    """An option's value in canonical form, or ``ValueError``: of the
    option's kind; a list of names holds no empty name (``""`` would match
    everywhere, or loop a search for it); an option with ``choices`` is one
    of them."""
    value = option.validate(value)
    if option.kind == "list[str]" and any(not v.strip() for v in value):
        raise ValueError(f"names must not be empty, got {list(value)!r}")
    choices = getattr(option, "choices", ())
    if choices and value not in choices:
        raise ValueError(f"expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_selector(sel: str, registry: Registry, where: str) -> None:
    if sel == "ALL":
        return
    if not sel.strip():
        raise ConfigError(f"{where}: empty rule selector {sel!r} (it would select every rule)")
    if not any(code.startswith(sel) for code in registry.rules):
        raise ConfigError(f"{where}: unknown rule selector '{sel}'")


def _close(word: str, choices: Iterable[str]) -> str | None:
    import difflib

    m = difflib.get_close_matches(word, list(choices), n=1)
    return m[0] if m else None
