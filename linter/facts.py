"""Project facts: small JSON-serialisable summaries collected from every file of
the project (map), merged into one read-only :class:`ProjectFacts` (reduce).

A collector works on CPython's ``ast`` (far cheaper than libcst) and only on
files whose text matches its needles. Facts are keyed by dotted module name so
that a rule can follow an import to the module that defines a base class or a
Triton kernel.

A collector whose consumers only look modules up (``FactCollector.lazy``) is
not run by the scan: :class:`LazyModules` reads a module's facts from its file
on first access, and :meth:`ProjectFacts.recording` tells which modules a
gate or a check read, so that a cached result depends on those alone.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
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
    # True: the scan never runs this collector; a module's facts are read
    # from its file when a rule first asks for them (:class:`LazyModules`).
    # For collectors whose consumers ask local questions (one class's bases,
    # followed module by module) about a few modules of a big project:
    # ``build_index`` must then look modules up, never iterate them all.
    # Check results record which modules' facts they read instead of a
    # digest of the whole collector (see ``ProjectFacts.recording``).
    lazy: ClassVar[bool] = False
    # other collectors whose per-module facts ``build_index`` also takes
    # (positionally, after this one's): a lazy collector's index can learn
    # from an eager one which modules to read for a project-wide question
    index_with: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        """``module`` is the dotted module name, ``path`` the root-relative
        POSIX path (``__init__.py`` tells a package)."""
        raise NotImplementedError

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> Any:
        return per_module


def run_collector(collector: Any, text: str, module: str, path: str) -> Any:
    """One collector's facts of one text, as the scan computes them: None
    when its needles do not match, nor when it needs an ``ast`` and the
    text does not compile, nor when it fails."""
    return run_collectors([collector], text, module, path)[collector.name]


def run_collectors(
    collectors: Sequence[Any], text: str, module: str, path: str, tree: ast.Module | None = None
) -> dict[str, Any]:
    """:func:`run_collector` for each of ``collectors``, by name, the text
    compiled at most once for all of them (the editor runs every lazy
    collector on the buffer at each edit); ``tree``: its ``ast``, when the
    caller has it (then it is not compiled)."""
    out: dict[str, Any] = {}
    compiled = tree is not None
    for collector in collectors:
        out[collector.name] = None
        if not collector.needles.match(text):
            continue
        if collector.needs_ast and not compiled:
            compiled = True
            try:
                tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
        if collector.needs_ast and tree is None:
            continue
        try:
            out[collector.name] = collector.collect(tree if collector.needs_ast else None, text, module, path)
        except Exception:  # a broken collector must not stop the run
            pass
    return out


# the open ``ProjectFacts.recording`` sets: (collector, module) pairs read
_RECORDERS: list[set[tuple[str, str]]] = []


class RecordedMemo:
    """Answers computed from lazy facts, each kept with the (collector,
    module) pairs read to compute it; served again, an answer replays those
    pairs into the open :meth:`ProjectFacts.recording` sets, so that a cached
    check result depends on every module behind the answers it used."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], tuple[Any, frozenset[tuple[str, str]]]] = {}

    def __call__(self, kind: str, key: str, fn: Callable[[], Any]) -> Any:
        hit = self._memo.get((kind, key))
        if hit is not None:
            for rec in _RECORDERS:
                rec |= hit[1]
            return hit[0]
        rec: set[tuple[str, str]] = set()
        _RECORDERS.append(rec)
        try:
            value = fn()
        finally:
            _RECORDERS.pop()  # (the reads also went to the outer recordings)
        self._memo[(kind, key)] = (value, frozenset(rec))
        return value


class FileLoader:
    """A lazy collector's facts of one module, read from the project's files
    (picklable: a worker gets the recipe, not the facts). The collector is
    looked up in ``registry`` on first use (a warm run imports no rule)."""

    def __init__(self, registry: Any, name: str, root: Path, relpaths: Mapping[str, Sequence[str]]) -> None:
        self.registry = registry
        self.name = name
        self.root = root
        # module -> its files (``x.py`` and ``x.pyi`` are one module: the last with facts wins)
        self.relpaths = relpaths

    def __call__(self, module: str) -> Any:
        from linter.source import read_source

        collector = self.registry.real().collectors[self.name]
        value = None
        for rel in self.relpaths.get(module, ()):
            text, _ = read_source(self.root / rel, rel)
            if text is None:
                continue
            got = run_collector(collector, text, module, rel)
            if got is not None:
                value = got
        return value


class LazyModules(Mapping[str, Any]):
    """Per-module facts of a lazy collector, each computed on first access
    and recorded in the open ``ProjectFacts.recording`` sets (a module
    absent from the project is recorded too: a file added there later
    changes what the lookup finds)."""

    def __init__(
        self,
        name: str,
        loader: Callable[[str], Any],
        modules: Sequence[str],
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.loader = loader
        self.modules = tuple(modules)
        self._known = frozenset(self.modules)
        self._done: dict[str, Any] = dict(overrides or {})
        self._hashes: dict[str, str] = {}

    def facts_hash(self, module: str) -> str:
        """A hash of the module's facts (what a cached check result keeps),
        computed once per module."""
        h = self._hashes.get(module)
        if h is None:
            blob = json.dumps(self.value(module), sort_keys=True, separators=(",", ":"), default=str)
            h = self._hashes[module] = hashlib.sha256(blob.encode()).hexdigest()[:20]
        return h

    def value(self, module: str) -> Any:
        """The module's facts (None: no facts, or no such module)."""
        for rec in _RECORDERS:
            rec.add((self.name, module))
        if module in self._done:
            return self._done[module]
        got = self.loader(module) if module in self._known else None
        self._done[module] = got
        return got

    def pending(self, module: str) -> bool:
        """Whether ``module`` is a module of the project whose facts are not
        read yet (what :meth:`preload` may fill in)."""
        return module in self._known and module not in self._done

    def load(self, module: str) -> Any:
        """The module's facts computed now, as :meth:`value` would, without
        recording a read or keeping them (a worker's share of a prefetch)."""
        return self.loader(module) if module in self._known else None

    def preload(self, module: str, value: Any) -> None:
        """Facts computed elsewhere by :meth:`load` for a module not read yet;
        reading them still records the read (:meth:`value`)."""
        if module in self._known:
            self._done.setdefault(module, value)

    def __getitem__(self, module: str) -> Any:
        got = self.value(module)
        if got is None:
            raise KeyError(module)
        return got

    def get(self, module: str, default: Any = None) -> Any:  # type: ignore[override]
        got = self.value(module)
        return default if got is None else got

    def __contains__(self, module: object) -> bool:
        return isinstance(module, str) and self.value(module) is not None

    def __iter__(self) -> Iterator[str]:
        # (reads every module: for tests and tools, not for rules)
        return (m for m in self.modules if self.value(m) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def with_module(self, module: str, value: Any) -> LazyModules:
        """A copy in which ``module``'s facts are ``value`` (the editor's buffer)."""
        done = dict(self._done)
        done[module] = value
        modules = self.modules if module in self._known else (*self.modules, module)
        return LazyModules(self.name, self.loader, modules, done)

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name, "loader": self.loader, "modules": self.modules, "done": self._done}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["loader"], state["modules"], state["done"])  # type: ignore[misc]


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
        lazy: Mapping[str, LazyModules] | None = None,
    ) -> None:
        """``data``: per collector, per module, the facts. ``load``: for the
        collectors in ``names`` not in ``data``, a function that returns a
        collector's per-module facts when a rule first asks (the engine reads
        them from the cache only then). ``hashes``: per-collector digests
        computed by the caller (the engine combines per-file facts hashes
        instead of serialising all the facts). ``lazy``: the lazy collectors'
        facts, per collector (no digest: see :meth:`recording`)."""
        self._lazy: dict[str, LazyModules] = dict(lazy or {})
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
        if collector in self._lazy:
            return self._lazy[collector]
        return self._loaded_one(collector) or {}

    def is_lazy(self, collector: str) -> bool:
        return collector in self._lazy

    @contextmanager
    def recording(self) -> Iterator[set[tuple[str, str]]]:
        """The (collector, module) pairs of lazy facts read inside the block:
        what a check result depends on besides the digests of the eager
        collectors (:meth:`digest`)."""
        rec: set[tuple[str, str]] = set()
        _RECORDERS.append(rec)
        try:
            yield rec
        finally:
            _RECORDERS.pop()  # (strictly nested; ``remove`` would compare sets by value)

    def index(self, collector: str) -> Any:
        if collector not in self._indexes:
            cls = self._collectors().get(collector)
            raw = self.raw(collector)
            if cls is None:
                self._indexes[collector] = raw
            else:
                more = [self.raw(n) for n in getattr(cls, "index_with", ())]
                self._indexes[collector] = cls.build_index(raw, *more)
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
            if name in self._lazy:
                continue
            per = data.setdefault(name, {})
            per.pop(module, None)
            if facts.get(name) is not None:
                per[module] = facts[name]
        lazy = {n: lm.with_module(module, facts.get(n)) for n, lm in self._lazy.items()}
        out = ProjectFacts(data, self._collectors_src, lazy=lazy)
        # an index built on facts the module left as they were is the same
        # index: kept (with the answers it memoised), not built again
        changed = {n for n in set(self._data) | set(self._lazy) | set(facts) if self.raw(n).get(module) != facts.get(n)}
        for name, index in self._indexes.items():
            needs = {name, *getattr(self._collectors().get(name), "index_with", ())}
            if not needs & changed:
                out._indexes[name] = index
        return out

    def collector_digest(self, name: str) -> str:
        if name not in self._hashes:
            blob = json.dumps(self.raw(name), sort_keys=True, separators=(",", ":"))
            self._hashes[name] = hashlib.sha256(blob.encode()).hexdigest()
        return self._hashes[name]

    def set_digest(self, name: str, digest: str) -> None:
        """A digest the caller knows to be this collector's (from the cache)."""
        self._hashes[name] = digest

    def digest(self, collectors: tuple[str, ...]) -> str:
        """Hash of the facts of the given collectors (cache key component);
        lazy collectors are left out (a check records the modules it read)."""
        parts = [f"{name}={self.collector_digest(name)}" for name in sorted(collectors) if name not in self._lazy]
        return hashlib.sha256(";".join(parts).encode()).hexdigest()[:32]

    def __getstate__(self) -> dict[str, Any]:
        return {"data": self._data, "collectors": dict(self._collectors()), "lazy": self._lazy}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["data"], state["collectors"], lazy=state.get("lazy"))  # type: ignore[misc]
