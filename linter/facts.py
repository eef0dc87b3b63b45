"""Project facts: small JSON-serialisable summaries collected from every file of
the project (map), merged into one read-only :class:`ProjectFacts` (reduce).

A collector works on CPython's ``ast`` (far cheaper than libcst) and only on
files whose text matches its needles. Facts are keyed by dotted module name so
that a rule can follow an import to the module that defines a base class or a
Triton kernel.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from linter.needles import Needles


class FactCollector:
    """Subclass in ``checks/`` (modules starting with ``_`` are fine); found by
    discovery like rules. ``collect`` returns JSON-able data or ``None`` when the
    module has nothing to say; ``build_index`` turns the per-module data into
    whatever query structure the rules want (built once, lazily)."""

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    needles: ClassVar[Needles] = Needles()
    # False: ``collect`` reads the text only and gets ``tree=None`` (saves the
    # ast parse, the dominant cost of the facts phase on big trees)
    needs_ast: ClassVar[bool] = True

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        """``module`` is the dotted module name, ``path`` the root-relative
        POSIX path (``__init__.py`` tells a package)."""
        raise NotImplementedError

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> Any:
        return per_module


class ProjectFacts:
    """Merged facts of a whole project. Read-only by convention: rules query it,
    never change it."""

    def __init__(
        self,
        data: Mapping[str, Mapping[str, Any]] | None = None,
        collectors: Mapping[str, type[FactCollector]] | Callable[[], Mapping[str, Any]] | None = None,
        hashes: Mapping[str, str] | None = None,
        load: Callable[[str], Mapping[str, Any]] | None = None,
        names: tuple[str, ...] = (),
    ) -> None:
        """``data``: per collector, per module, the facts. ``load``: for the
        collectors in ``names`` not in ``data``, a function that returns a
        collector's per-module facts when a rule first asks (the engine reads
        them from the cache only then). ``hashes``: per-collector digests
        computed by the caller (the engine combines per-file facts hashes
        instead of serialising all the facts)."""
        self._data_: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (data or {}).items()}
        self._load = load
        self._names = tuple(names)
        # a callable defers importing the collectors (and libcst) until a rule
        # actually queries an index
        self._collectors_src = collectors
        self._indexes: dict[str, Any] = {}
        self._hashes: dict[str, str] = dict(hashes or {})

    def _loaded_one(self, name: str) -> dict[str, Any] | None:
        got = self._data_.get(name)
        if got is None and self._load is not None and name in self._names:
            got = self._data_[name] = dict(self._load(name))
        return got

    @property
    def _data(self) -> dict[str, dict[str, Any]]:
        for name in self._names:
            self._loaded_one(name)
        return self._data_

    def loaded(self, name: str) -> bool:
        return name in self._data_ or name not in self._names

    @property
    def data(self) -> Mapping[str, Mapping[str, Any]]:
        return self._data

    def raw(self, collector: str) -> Mapping[str, Any]:
        return self._loaded_one(collector) or {}

    def index(self, collector: str) -> Any:
        if collector not in self._indexes:
            cls = self._collectors().get(collector)
            raw = self.raw(collector)
            self._indexes[collector] = cls.build_index(raw) if cls else raw
        return self._indexes[collector]

    def _collectors(self) -> Mapping[str, Any]:
        src = self._collectors_src
        if callable(src):
            src = src()
            self._collectors_src = src
        return src or {}

    def with_module(self, module: str, facts: Mapping[str, Any]) -> ProjectFacts:
        """A copy where ``module``'s facts are replaced (the editor's buffer)."""
        data = {k: dict(v) for k, v in self._data.items()}
        for name in set(data) | set(facts):
            per = data.setdefault(name, {})
            per.pop(module, None)
            if facts.get(name) is not None:
                per[module] = facts[name]
        return ProjectFacts(data, self._collectors_src)

    def collector_digest(self, name: str) -> str:
        if name not in self._hashes:
            blob = json.dumps(self.raw(name), sort_keys=True, separators=(",", ":"))
            self._hashes[name] = hashlib.sha256(blob.encode()).hexdigest()
        return self._hashes[name]

    def set_digest(self, name: str, digest: str) -> None:
        """A digest the caller knows to be this collector's (from the cache)."""
        self._hashes[name] = digest

    def digest(self, collectors: tuple[str, ...]) -> str:
        """Hash of the facts of the given collectors (cache key component)."""
        parts = [f"{name}={self.collector_digest(name)}" for name in sorted(collectors)]
        return hashlib.sha256(";".join(parts).encode()).hexdigest()[:32]

    def __getstate__(self) -> dict[str, Any]:
        return {"data": self._data, "collectors": dict(self._collectors())}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["data"], state["collectors"])  # type: ignore[misc]
