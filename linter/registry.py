"""Rule and fact-collector discovery: every ``Rule`` subclass with a code and
every ``FactCollector`` with a name in the modules of the ``checks`` package,
and those of installed packages that declare an entry point in the
``shardlint.rules`` group (see docs/writing-rules.md). Nothing is listed by
hand; two rules with one code are an error naming both origins.

Importing the rules imports libcst (≈ 0.3 s). The warm path (everything
cached) must not pay that, so :func:`load_registry_fast` returns metadata
(:class:`RuleMeta`) from a snapshot keyed by the tool version and the
``checks`` sources' sizes and mtimes, and callers upgrade to the real classes
with :func:`load_registry` only when they must parse something."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass

import hashlib
import importlib.util
import json
import os
from typing import Any

from linter import __version__
from linter.needles import Needles
from linter.options import Option
from linter.types import Fixability, Severity


@dataclass(frozen=True)
class RuleMeta:
    """What configuration, selection and reporting need to know of a rule,
    without importing it."""

    code: str
    name: str
    summary: str
    severity: Severity
    fixable: Fixability
    default_enabled: bool
    options: Mapping[str, Option]
    facts: tuple[str, ...]
    tags: tuple[str, ...]
    precision: str
    builtin: bool
    origin: str = "shardlint"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "summary": self.summary,
            "severity": self.severity.value,
            "fixable": self.fixable.value,
            "default_enabled": self.default_enabled,
            "options": {k: [o.default, o.kind, o.doc, list(o.choices)] for k, o in self.options.items()},
            "facts": list(self.facts),
            "tags": list(self.tags),
            "precision": self.precision,
            "builtin": self.builtin,
            "origin": self.origin,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> RuleMeta:
        return RuleMeta(
            code=d["code"],
            name=d["name"],
            summary=d["summary"],
            severity=Severity(d["severity"]),
            fixable=Fixability(d["fixable"]),
            default_enabled=d["default_enabled"],
            options={
                k: Option(tuple(v[0]) if isinstance(v[0], list) else v[0], v[1], v[2], tuple(v[3]))
                for k, v in d["options"].items()
            },
            facts=tuple(d["facts"]),
            tags=tuple(d["tags"]),
            precision=d["precision"],
            builtin=d["builtin"],
            origin=d.get("origin", "shardlint"),
        )

    @staticmethod
    def of(rule: Any) -> RuleMeta:
        return RuleMeta(
            code=rule.code,
            name=rule.name,
            summary=rule.summary,
            severity=rule.severity,
            fixable=rule.fixable,
            default_enabled=rule.default_enabled,
            options=dict(rule.options),
            facts=tuple(rule.facts),
            tags=tuple(rule.tags),
            precision=rule.precision,
            builtin=bool(getattr(rule, "builtin", False)),
            origin=getattr(rule, "origin", "shardlint"),
        )


@dataclass(frozen=True)
class CollectorMeta:
    name: str
    version: int
    needles: Needles
    lazy: bool = False


@dataclass(frozen=True)
class Registry:
    """Rules by code and fact collectors by name: real classes, or their
    metadata when ``is_meta``."""

    rules: Mapping[str, Any]
    collectors: Mapping[str, Any]
    is_meta: bool = False

    def real(self) -> Registry:
        return load_registry() if self.is_meta else self

    def by_name(self, name: str) -> Any:
        for r in self.rules.values():
            if r.name == name:
                return r
        return None

    def lookup(self, code_or_name: str) -> Any:
        return self.rules.get(code_or_name.upper()) or self.by_name(code_or_name.lower())

    @property
    def checkers(self) -> list[Any]:
        return [r for r in self.rules.values() if not getattr(r, "builtin", False)]


ENTRY_POINT_GROUP = "shardlint.rules"


class RegistryError(RuntimeError):
    """A rule package that cannot be loaded, or two rules with one code."""


def plugin_entry_points() -> list[Any]:
    """The installed ``shardlint.rules`` entry points, in a stable order."""
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))


def _origin(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ep.value


def _defined_in(module: Any) -> list[type]:
    """The classes a module -- and, for a package, each of its modules --
    defines (not those it imports)."""
    mods = [module]
    if hasattr(module, "__path__"):
        mods += [importlib.import_module(i.name) for i in pkgutil.walk_packages(module.__path__, module.__name__ + ".")]
    return [o for m in mods for o in vars(m).values() if isinstance(o, type) and o.__module__ == m.__name__]


@functools.lru_cache(maxsize=1)
def load_registry() -> Registry:
    import checks
    from linter.builtin_rules import UnparsableFile, UnusedNoqa
    from linter.facts import FactCollector
    from linter.rule import Rule

    rules: dict[str, Any] = {UnparsableFile.code: UnparsableFile, UnusedNoqa.code: UnusedNoqa}
    collectors: dict[str, Any] = {}

    def add(obj: Any, origin: str) -> None:
        if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.code:
            if origin != "shardlint":
                obj.origin = origin
            old = rules.get(obj.code)
            if old is not None and old is not obj:
                raise RegistryError(
                    f"rule code {obj.code} is defined twice: {obj.__module__}.{obj.__name__} "
                    f"({origin}) and {old.__module__}.{old.__name__} ({getattr(old, 'origin', 'shardlint')})"
                )
            rules[obj.code] = obj
        elif isinstance(obj, type) and issubclass(obj, FactCollector) and obj.name:
            collectors.setdefault(obj.name, obj)

    # every module under ``checks`` (a rule's folder, its private modules,
    # the shared facts package); a class counts where it is defined
    for obj in _defined_in(checks):
        add(obj, "shardlint")
    for ep in plugin_entry_points():
        origin = _origin(ep)
        try:
            obj = ep.load()
        except Exception as exc:
            raise RegistryError(f"cannot load the shardlint rules of {origin} ({ep.value}): {exc}") from exc
        if isinstance(obj, type):
            members = [obj]
        elif isinstance(obj, (list, tuple)):
            members = list(obj)
        else:  # a module or package
            members = _defined_in(obj)
        found = [m for m in members if isinstance(m, type) and issubclass(m, (Rule, FactCollector))]
        if not found:
            raise RegistryError(f"the shardlint.rules entry point {ep.name} of {origin} ({ep.value}) holds no rule")
        for m in found:
            add(m, origin)
    return Registry(dict(sorted(rules.items())), collectors)


def rules_fingerprint() -> str:
    """A key that changes whenever a rule, a collector or the rule base
    changes (tool version plus the sizes and mtimes of their sources): part of
    every cache key, so editing a rule never serves stale findings."""
    where = _snapshot_path()
    if where is not None:
        return where[1]
    # (no rules package found: the install is the linter package itself)
    stamps = _source_stamps(os.path.dirname(os.path.abspath(__file__)))
    return hashlib.sha256("\n".join([__version__, *stamps]).encode()).hexdigest()[:24]


def snapshot_sum(key: str, rules: Any, collectors: Any) -> str:
    """The checksum a snapshot carries over its key and contents: an edited
    snapshot (a rule switched off by hand) is not read."""
    blob = json.dumps([key, rules, collectors], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _source_stamps(where: str) -> list[str]:
    """Path, size, mtime, inode and change time of the Python sources at
    ``where`` (a file, or a folder and everything below it). The inode and
    change time tie the key to this install: a snapshot or a results cache
    written by another install (committed with a tree, restored on a fresh
    checkout) never matches, whatever its mtimes claim."""
    if os.path.isfile(where):
        found = [where]
    else:
        found = sorted(os.path.join(d, n) for d, _, names in os.walk(where) for n in names if n.endswith(".py"))
    out = []
    for f in found:
        st = os.stat(f)
        out.append(f"{f}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_ctime_ns}")
    return out


def _snapshot_path() -> tuple[str, str] | None:
    """Where the metadata snapshot lives and the key it must carry."""
    spec = importlib.util.find_spec("checks")
    if spec is None or not spec.submodule_search_locations:
        return None
    parts = [__version__]
    try:
        for loc in spec.submodule_search_locations:
            parts += _source_stamps(loc)
        for ep in plugin_entry_points():
            parts.append(f"plugin:{ep.name}={ep.value}:{_origin(ep)}")
            top = importlib.util.find_spec(ep.module.partition(".")[0])
            if top is not None and top.origin and os.path.exists(top.origin):
                package = top.submodule_search_locations
                parts += _source_stamps(package[0]) if package else _source_stamps(top.origin)
    except (OSError, ImportError, ValueError):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    for n in ("registry.py", "builtin_rules.py", "rule.py", "options.py"):
        parts += _source_stamps(os.path.join(here, n))
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "shardlint", f"registry-{key}.json"), key


def load_registry_fast() -> Registry:
    """Rule metadata without importing the rules when a valid snapshot exists;
    otherwise the real registry (and a new snapshot)."""
    where = _snapshot_path()
    if where is not None:
        path, key = where
        try:
            with open(path, encoding="utf-8") as fh:
                raw = json.load(fh)
            if raw["key"] == key and raw["sum"] == snapshot_sum(key, raw["rules"], raw["collectors"]):
                return Registry(
                    {c: RuleMeta.from_json(r) for c, r in raw["rules"].items()},
                    {
                        n: CollectorMeta(
                            n,
                            c["version"],
                            Needles(
                                tuple(c["all_of"]),
                                tuple(tuple(g) for g in c["any_of"]),
                                c["regex"],
                                tuple(c.get("all_regex", ())),
                            ),
                            bool(c.get("lazy", False)),
                        )
                        for n, c in raw["collectors"].items()
                    },
                    is_meta=True,
                )
        except (OSError, ValueError, KeyError, TypeError):
            pass
    reg = load_registry()
    if where is not None:
        path, key = where
        blob = {
            "key": key,
            "rules": {c: RuleMeta.of(r).to_json() for c, r in reg.rules.items()},
            "collectors": {
                n: {
                    "version": c.version,
                    "all_of": list(c.needles.all_of),
                    "any_of": [list(g) for g in c.needles.any_of],
                    "regex": c.needles.regex,
                    "all_regex": list(c.needles.all_regex),
                    "lazy": bool(getattr(c, "lazy", False)),
                }
                for n, c in reg.collectors.items()
            },
        }
        blob["sum"] = snapshot_sum(key, blob["rules"], blob["collectors"])
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(blob, fh)
            os.replace(tmp, path)
        except (OSError, TypeError, ValueError):
            pass
    return reg
