"""Rule and fact-collector discovery: every ``Rule`` subclass with a code and
every ``FactCollector`` with a name in the modules of the ``checks`` package.
Nothing is listed by hand.

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

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "summary": self.summary,
            "severity": self.severity.value,
            "fixable": self.fixable.value,
            "default_enabled": self.default_enabled,
            "options": {k: [o.default, o.kind, o.doc] for k, o in self.options.items()},
            "facts": list(self.facts),
            "tags": list(self.tags),
            "precision": self.precision,
            "builtin": self.builtin,
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
                k: Option(tuple(v[0]) if isinstance(v[0], list) else v[0], v[1], v[2])
                for k, v in d["options"].items()
            },
            facts=tuple(d["facts"]),
            tags=tuple(d["tags"]),
            precision=d["precision"],
            builtin=d["builtin"],
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


@functools.lru_cache(maxsize=1)
def load_registry() -> Registry:
    import checks
    from linter.builtin_rules import UnparsableFile, UnusedNoqa
    from linter.facts import FactCollector
    from linter.rule import Rule

    rules: dict[str, Any] = {UnparsableFile.code: UnparsableFile, UnusedNoqa.code: UnusedNoqa}
    collectors: dict[str, Any] = {}
    # every module under ``checks`` (a rule's folder, its private modules,
    # the shared facts package); a class counts where it is defined
    for info in sorted(pkgutil.walk_packages(checks.__path__, "checks."), key=lambda i: i.name):
        mod = importlib.import_module(info.name)
        for obj in vars(mod).values():
            if not isinstance(obj, type) or obj.__module__ != mod.__name__:
                continue
            if issubclass(obj, Rule) and obj.code:
                if obj.code in rules and rules[obj.code] is not obj:
                    raise RuntimeError(f"duplicate rule code {obj.code}")
                rules[obj.code] = obj
            elif issubclass(obj, FactCollector) and obj.name:
                collectors[obj.name] = obj
    return Registry(dict(sorted(rules.items())), collectors)


def rules_fingerprint() -> str:
    """A key that changes whenever a rule, a collector or the rule base
    changes (tool version plus the sizes and mtimes of their sources): part of
    every cache key, so editing a rule never serves stale findings."""
    where = _snapshot_path()
    return where[1] if where is not None else __version__


def _snapshot_path() -> tuple[str, str] | None:
    """Where the metadata snapshot lives and the key it must carry."""
    spec = importlib.util.find_spec("checks")
    if spec is None or not spec.submodule_search_locations:
        return None
    parts = [__version__]
    for loc in spec.submodule_search_locations:
        try:
            found = sorted(
                os.path.join(d, n)
                for d, _, names in os.walk(loc)
                for n in names
                if n.endswith(".py")
            )
            for f in found:
                st = os.stat(f)
                parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            return None
    here = os.path.dirname(os.path.abspath(__file__))
    for n in ("registry.py", "builtin_rules.py", "rule.py", "options.py"):
        st = os.stat(os.path.join(here, n))
        parts.append(f"{n}:{st.st_size}:{st.st_mtime_ns}")
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
            if raw["key"] == key:
                return Registry(
                    {c: RuleMeta.from_json(r) for c, r in raw["rules"].items()},
                    {
                        n: CollectorMeta(
                            n,
                            c["version"],
                            Needles(tuple(c["all_of"]), tuple(tuple(g) for g in c["any_of"]), c["regex"]),
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
                    "lazy": bool(getattr(c, "lazy", False)),
                }
                for n, c in reg.collectors.items()
            },
        }
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(blob, fh)
            os.replace(tmp, path)
        except (OSError, TypeError, ValueError):
            pass
    return reg
