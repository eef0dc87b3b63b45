"""The query structure over the ``sentinels`` facts (``checks.facts.sentinels``):
classes by qualified name (following package re-exports), method resolution
order, resolvers by attribute, factory returns by name -- read module by
module from the lazy facts, the outline saying which modules to read -- and
the plain lookups SHD201's facts gate makes in the outline alone."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from linter.facts import RecordedMemo
from linter.imports import follow_reexports


@dataclass(frozen=True)
class ClassRef:
    module: str
    qual: str
    path: str
    data: Mapping[str, Any]

    @property
    def name(self) -> str:
        return f"{self.module}.{self.qual}" if self.module else self.qual


@dataclass(frozen=True)
class Resolver:
    module: str
    path: str
    attr: str
    obj: str
    test: str
    span: tuple[int, int, int, int]
    func: str
    scope: str
    calls: tuple[str, ...]


class SentinelIndex:
    """Query structure over the per-module facts: classes by qualified name
    (following package re-exports), method resolution order, resolvers by
    attribute, factory return values by function name.

    The facts are lazy (``SentinelFacts.lazy``): a module's facts are read
    when a question needs them, the ``outline`` (``SentinelOutline``'s names
    per module) saying which modules can hold the answer. Answers are
    memoised with the (collector, module) pairs read to compute them and
    replay those into the open recordings (a cached check result depends on
    exactly the modules it read). Without an outline (facts at hand, as in
    tests) the facts' own names stand for it."""

    def __init__(self, per_module: Mapping[str, Any], outline: Mapping[str, Any] | None = None) -> None:
        self.per_module = per_module
        if outline is None:
            outline = {mod: outline_of_facts(facts) for mod, facts in per_module.items()}
        self._cached = RecordedMemo()
        # name -> the modules the outline says may hold it
        self._by_c: dict[str, list[str]] = {}
        self._by_r: dict[str, list[str]] = {}
        self._by_f: dict[str, list[str]] = {}
        # module -> the class names the outline says it may define
        self._classes_in: dict[str, frozenset[str]] = {}
        self._outline = outline
        self._holders: dict[Any, frozenset[str]] = {}
        for mod, names in outline.items():
            for key, where in (("c", self._by_c), ("r", self._by_r), ("f", self._by_f)):
                for n in names.get(key, ()):
                    where.setdefault(n, []).append(mod)
            self._classes_in[mod] = frozenset(names.get("c", ()))
        self.classes: Mapping[str, ClassRef] = _LazyClasses(self)
        self.resolvers: Mapping[str, list[Resolver]] = _LazyByName(self, "resolvers")
        self.factories: Mapping[str, set[str]] = _LazyByName(self, "factories")

    def _facts(self, module: str) -> Mapping[str, Any] | None:
        got = self.per_module.get(module)
        return got if isinstance(got, Mapping) else None

    # -- lookups, module by module --------------------------------------------------
    def _class(self, qualname: str) -> ClassRef | None:
        """The class of this qualified name: module ``pkg.mod``, then the
        local name ``Outer.Inner`` in its facts (longest module first)."""
        parts = qualname.split(".")
        leaf = parts[-1]
        for i in range(len(parts) - 1, -1, -1):
            mod = ".".join(parts[:i])
            if leaf not in self._classes_in.get(mod, ()):
                continue  # (the outline: no class of that name there; its facts are not read)
            local = ".".join(parts[i:])
            facts = self._facts(mod)
            data = facts.get("classes", {}).get(local) if facts else None
            if data is not None:
                return ClassRef(mod, local, facts.get("path", ""), data)  # type: ignore[union-attr]
        return None

    def class_ref(self, qualname: str) -> ClassRef | None:
        return self._cached("class", qualname, lambda: self._class(qualname))  # type: ignore[no-any-return]

    def _named(self, leaf: str) -> list[str]:
        """Qualified names of the classes whose own name is ``leaf``."""

        def find() -> list[str]:
            out: list[str] = []
            for mod in self._by_c.get(leaf, ()):
                for ref in _class_refs(mod, self._facts(mod) or {}):
                    if ref.qual.rsplit(".", 1)[-1] == leaf:
                        out.append(ref.name)
            return out

        return list(self._cached("leaf", leaf, find))

    def _by_name(self, kind: str, name: str) -> Any:
        """``resolvers`` of an attribute, or the classes ``factories`` of
        this name return, from the modules the outline names."""

        def find() -> Any:
            if kind == "resolvers":
                out: list[Resolver] = []
                for mod in self._by_r.get(name, ()):
                    out.extend(r for r in _resolvers_of(mod, self._facts(mod) or {}) if r.attr == name)
                return out
            names: set[str] = set()
            for mod in self._by_f.get(name, ()):
                for key, returned in (self._facts(mod) or {}).get("factories", {}).items():
                    if key.rpartition(".")[2] == name:
                        names.update(returned)
            return names

        return self._cached(kind, name, find)

    def classes_named(self, patterns: Iterable[str]) -> list[str]:
        """Qualified names of the classes whose own name matches a pattern
        (case-insensitive globs, as ``name_matches``)."""
        pats = [p.lower() for p in patterns]
        return [q for leaf in self._by_c if _glob_leaf(leaf, pats) for q in self._named(leaf)]

    # -- the rule's facts gate, from the outline alone --------------------------------
    def resolver_attrs(self) -> frozenset[str]:
        """Every attribute some resolver of the project assigns."""
        return frozenset(self._by_r)

    def sentinel_holders(self, held: Callable[[str, str], bool], key: Any) -> frozenset[str]:
        """Names of the classes that leave an attribute ``held(attr, value)``
        accepts at a sentinel, or inherit from one (by name, transitively:
        a name two classes share counts for both). ``key`` memoises the
        answer for one ``held``."""
        got = self._holders.get(key)
        if got is not None:
            return got
        holders: set[str] = set()
        subclasses: dict[str, set[str]] = {}
        for names in self._outline.values():
            for leaf, attrs in names.get("s", {}).items():
                if any(held(a, v) for a, v in attrs.items()):
                    holders.add(leaf)
            for leaf, bases in names.get("b", {}).items():
                for b in bases:
                    subclasses.setdefault(b, set()).add(leaf)
        todo = list(holders)
        while todo:
            for sub in subclasses.get(todo.pop(), ()):
                if sub not in holders:
                    holders.add(sub)
                    todo.append(sub)
        got = self._holders[key] = frozenset(holders)
        return got

    def may_report_in(
        self,
        module: str,
        held: Callable[[str, str], bool],
        own: Callable[[str, str], bool],
        factories: Iterable[str],
        key: Any,
    ) -> bool:
        """Whether SHD201 can report anything in ``module``: it constructs
        through a name of :meth:`sentinel_holders` or one of ``factories``,
        or defines such a class, or a class leaving an attribute ``own``
        accepts at a sentinel (its own ``__init__`` and re-set checks). A
        plain lookup in the outline: no module's facts are read."""
        names = self._outline.get(module)
        if not names:
            return False
        holders = self.sentinel_holders(held, key)
        constructs = names.get("k", ())
        if any(n in holders for n in constructs) or not set(factories).isdisjoint(constructs):
            return True
        if any(c in holders for c in names.get("c", ())):
            return True
        return any(own(a, v) for attrs in names.get("s", {}).values() for a, v in attrs.items())

    # -- queries ------------------------------------------------------------------
    def resolve(self, qualname: str) -> str | None:
        """The defining qualified name of a class named ``qualname`` (an
        import target), or None when the project does not define it."""
        return self._cached("resolve", qualname, lambda: self._resolve(qualname))  # type: ignore[no-any-return]

    def _resolve(self, qualname: str) -> str | None:
        if self.class_ref(qualname) is not None:
            return qualname

        def imports_of(mod: str) -> Mapping[str, str] | None:
            facts = self._facts(mod)
            return facts.get("imports") if facts else None

        cur = follow_reexports(qualname, lambda q: self.class_ref(q) is not None, imports_of)
        if self.class_ref(cur) is not None:
            return cur
        # A package that re-exports without facts of its own: a unique class
        # of that leaf name defined below the package.
        pkg, _, leaf = qualname.rpartition(".")
        below = self._named_below(pkg, leaf) if pkg else []
        return below[0] if len(below) == 1 else None

    def _named_below(self, pkg: str, leaf: str) -> list[str]:
        """The classes named ``leaf`` whose qualified name holds ``.pkg.``
        (the project root may sit above the package: matched as a suffix
        too), reading only the modules where it can: ``.pkg.`` lies in the
        module's own name, or reaches into the names of its classes (then
        the last component of ``pkg`` is one of them, or the leaf)."""
        last = pkg.rpartition(".")[2]
        hosts = self._by_c.get(last, ()) if last != leaf else None
        needle = f".{pkg}."
        out: list[str] = []
        for mod in self._by_c.get(leaf, ()):
            if hosts is not None and mod not in hosts and f".{mod}.".find(needle) < 0:
                continue
            for ref in _class_refs(mod, self._facts(mod) or {}):
                if ref.qual.rsplit(".", 1)[-1] == leaf and ("." + ref.name).find(needle) >= 0:
                    out.append(ref.name)
        return out

    def mro(self, qualname: str) -> tuple[str, ...]:
        """Classes in lookup order (depth-first, left to right, duplicates
        dropped: close enough to C3 for attribute provenance)."""
        start = self.resolve(qualname)
        if start is None:
            return ()
        return self._cached("mro", start, lambda: self._walk_mro(start))  # type: ignore[no-any-return]

    def _walk_mro(self, start: str) -> tuple[str, ...]:
        out: list[str] = []
        stack = [start]
        while stack and len(out) < 64:
            cur = stack.pop(0)
            if cur in out:
                continue
            out.append(cur)
            ref = self.class_ref(cur)
            bases = ref.data.get("bases", ()) if ref is not None else ()
            nxt = [r for r in (self.resolve(b) for b in bases) if r]
            stack = nxt + stack
        return tuple(out)

    def factory_of(self, owner: str, method: str) -> tuple[str, ...]:
        """What ``owner.method()`` returns, looked up along the MRO."""
        for cls in self.mro(owner):
            ref = self.class_ref(cls)
            if ref is None:
                continue
            names = (self._facts(ref.module) or {}).get("factories", {}).get(f"{ref.qual}.{method}")
            if names:
                return tuple(names)
        return ()


def outline_of_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The names ``SentinelIndex`` looks a module up by: ``c`` its class
    names, ``r`` the attributes its resolvers assign, ``f`` its factories'
    names; and what the rule's facts gate asks of every module (see
    :meth:`SentinelIndex.may_report_in`): ``k`` the names it may construct
    through, ``s`` per class name the attributes it leaves at a sentinel
    (with the value), ``b`` per class name its bases' names."""
    classes = facts.get("classes", {})
    out: dict[str, Any] = {
        "c": sorted({q.rsplit(".", 1)[-1] for q in classes}),
        "r": sorted({r["attr"] for r in facts.get("resolvers", ())}),
        "f": sorted({k.rpartition(".")[2] for k in facts.get("factories", {})}),
    }
    if facts.get("constructs"):
        out["k"] = list(facts["constructs"])
    held: dict[str, dict[str, str]] = {}
    bases: dict[str, list[str]] = {}
    for qual, data in classes.items():
        leaf = qual.rsplit(".", 1)[-1]
        for attr, info in data.get("sentinel", {}).items():
            held.setdefault(leaf, {})[attr] = info[0]
        if data.get("bases"):
            bases.setdefault(leaf, []).extend(b.rsplit(".", 1)[-1] for b in data["bases"])
    if held:
        out["s"] = {k: dict(sorted(v.items())) for k, v in sorted(held.items())}
    if bases:
        out["b"] = {k: sorted(set(v)) for k, v in sorted(bases.items())}
    return out


def _glob_leaf(name: str, lowered_patterns: Sequence[str]) -> bool:
    leaf = name.rsplit(".", 1)[-1].lower()
    return any(fnmatch.fnmatchcase(leaf, p) for p in lowered_patterns)


def _class_refs(mod: str, facts: Mapping[str, Any]) -> Iterator[ClassRef]:
    path = facts.get("path", "")
    for qual, data in facts.get("classes", {}).items():
        yield ClassRef(mod, qual, path, data)


def _resolvers_of(mod: str, facts: Mapping[str, Any]) -> Iterator[Resolver]:
    path = facts.get("path", "")
    calls = facts.get("calls", {})
    for r in facts.get("resolvers", ()):
        yield Resolver(
            mod,
            path,
            r["attr"],
            r["obj"],
            r["test"],
            tuple(r["span"]),  # type: ignore[arg-type]
            r["func"],
            r["scope"],
            tuple(calls.get(r["scope"], ())),
        )


class _LazyClasses(Mapping[str, ClassRef]):
    """``SentinelIndex.classes`` of a lazy index: looked up, never listed."""

    def __init__(self, index: SentinelIndex) -> None:
        self._index = index

    def __getitem__(self, qualname: str) -> ClassRef:
        ref = self._index.class_ref(qualname)
        if ref is None:
            raise KeyError(qualname)
        return ref

    def __contains__(self, qualname: object) -> bool:
        return isinstance(qualname, str) and self._index.class_ref(qualname) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a lazy index cannot list its classes: use classes_named()")

    def __len__(self) -> int:
        raise TypeError("a lazy index cannot count its classes")


class _LazyByName(Mapping[str, Any]):
    """``resolvers`` / ``factories`` of a lazy index: ``get(name)`` reads
    the modules the outline names for it."""

    def __init__(self, index: SentinelIndex, kind: str) -> None:
        self._index = index
        self._kind = kind

    def __getitem__(self, name: str) -> Any:
        got = self._index._by_name(self._kind, name)
        if not got:
            raise KeyError(name)
        return got

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        got = self._index._by_name(self._kind, name)
        return got if got else default

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a lazy index cannot list its names")

    def __len__(self) -> int:
        raise TypeError("a lazy index cannot count its names")
