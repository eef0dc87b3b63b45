"""The query structure over the ``sentinels`` facts (``checks.facts.sentinels``):
classes by qualified name (following package re-exports), method resolution
order, resolvers by attribute, factory returns by name -- read module by
module from the lazy facts, the outline saying which modules to read -- and
the plain lookups SHD201's facts gate makes in the outline alone."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from checks.facts.common import Lookup, memoised, module_splits
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
    """Query structure over the per-module facts: ``classes[qualname]``,
    ``resolvers.get(attr)``, ``factories.get(function name)``, the MRO.

    The facts are lazy (``SentinelFacts.lazy``): a module's facts are read
    when a question needs them, the ``outline`` (``SentinelOutline``'s names
    per module) saying which modules can hold the answer. Answers are
    memoised with the (collector, module) pairs read to compute them and
    replay those into the open recordings (a cached check result depends on
    exactly the modules it read). Without an outline (facts at hand, as in
    tests) the facts' own names stand for it."""

    def __init__(
        self, per_module: Mapping[str, Any], outline: Mapping[str, Any] | None = None
    ) -> None:
        self.per_module = per_module
        if outline is None:
            outline = {mod: outline_of_facts(facts) for mod, facts in per_module.items()}
        self._outline = outline
        self._memo = RecordedMemo()
        self._holders: dict[Any, frozenset[str]] = {}
        # class name, resolved attribute, factory name -> the modules the
        # outline says may hold it
        self._by_c: dict[str, list[str]] = {}
        self._by_r: dict[str, list[str]] = {}
        self._by_f: dict[str, list[str]] = {}
        for mod, names in outline.items():
            for key, where in (("c", self._by_c), ("r", self._by_r), ("f", self._by_f)):
                for n in names.get(key, ()):
                    where.setdefault(n, []).append(mod)
        # module -> the class names the outline says it may define
        self._classes_in = {mod: frozenset(names.get("c", ())) for mod, names in outline.items()}
        self.classes = Lookup(self.class_ref)
        self.resolvers = Lookup(self._resolvers)
        self.factories = Lookup(self._factories)

    def _facts(self, module: str) -> Mapping[str, Any]:
        got = self.per_module.get(module)
        return got if isinstance(got, Mapping) else {}

    def _refs(self, mod: str, leaf: str) -> list[ClassRef]:
        """The classes of ``mod`` whose own name is ``leaf``."""
        facts = self._facts(mod)
        return [
            ClassRef(mod, qual, facts.get("path", ""), data)
            for qual, data in facts.get("classes", {}).items()
            if qual.rsplit(".", 1)[-1] == leaf
        ]

    # -- lookups, module by module --------------------------------------------------
    @memoised
    def class_ref(self, qualname: str) -> ClassRef | None:
        """The class of this qualified name: module ``pkg.mod``, then the
        local name ``Outer.Inner`` in its facts (longest module first), read
        only where the outline says a class of that name lies."""
        leaf = qualname.rpartition(".")[2]
        for mod, local in module_splits(qualname):
            if leaf not in self._classes_in.get(mod, ()):
                continue
            facts = self._facts(mod)
            data = facts.get("classes", {}).get(local)
            if data is not None:
                return ClassRef(mod, local, facts.get("path", ""), data)
        return None

    @memoised
    def _named(self, leaf: str) -> tuple[str, ...]:
        """Qualified names of the classes whose own name is ``leaf``."""
        return tuple(ref.name for mod in self._by_c.get(leaf, ()) for ref in self._refs(mod, leaf))

    @memoised
    def _resolvers(self, attr: str) -> list[Resolver]:
        out: list[Resolver] = []
        for mod in self._by_r.get(attr, ()):
            facts = self._facts(mod)
            for r in facts.get("resolvers", ()):
                if r["attr"] == attr:
                    calls = tuple(facts.get("calls", {}).get(r["scope"], ()))
                    where = {**r, "span": tuple(r["span"]), "calls": calls}
                    out.append(Resolver(mod, facts.get("path", ""), **where))
        return out

    @memoised
    def _factories(self, name: str) -> set[str]:
        """The classes the factories called ``name`` return (any owner)."""
        out: set[str] = set()
        for mod in self._by_f.get(name, ()):
            for key, returned in self._facts(mod).get("factories", {}).items():
                if key.rpartition(".")[2] == name:
                    out.update(returned)
        return out

    def classes_named(self, patterns: Iterable[str]) -> list[str]:
        """Qualified names of the classes whose own name matches a pattern
        (case-insensitive globs, as ``name_matches``)."""
        pats = [p.lower() for p in patterns]
        return [
            q
            for leaf in self._by_c
            if any(fnmatch.fnmatchcase(leaf.lower(), p) for p in pats)
            for q in self._named(leaf)
        ]

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
    @memoised
    def resolve(self, qualname: str) -> str | None:
        """The defining qualified name of a class named ``qualname`` (an
        import target), or None when the project does not define it."""
        if self.class_ref(qualname) is not None:
            return qualname
        cur = follow_reexports(
            qualname,
            lambda q: self.class_ref(q) is not None,
            lambda mod: self._facts(mod).get("imports"),
        )
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
            out += [ref.name for ref in self._refs(mod, leaf) if needle in "." + ref.name]
        return out

    def mro(self, qualname: str) -> tuple[str, ...]:
        """Classes in lookup order (depth-first, left to right, duplicates
        dropped: close enough to C3 for attribute provenance)."""
        start = self.resolve(qualname)
        return () if start is None else self._mro(start)

    @memoised
    def _mro(self, start: str) -> tuple[str, ...]:
        out: list[str] = []
        stack = [start]
        while stack and len(out) < 64:
            cur = stack.pop(0)
            if cur in out:
                continue
            out.append(cur)
            ref = self.class_ref(cur)
            bases = ref.data.get("bases", ()) if ref is not None else ()
            stack = [r for r in map(self.resolve, bases) if r] + stack
        return tuple(out)

    def factory_of(self, owner: str, method: str) -> tuple[str, ...]:
        """What ``owner.method()`` returns, looked up along the MRO."""
        for cls in self.mro(owner):
            ref = self.class_ref(cls)
            if ref is not None:
                names = self._facts(ref.module).get("factories", {}).get(f"{ref.qual}.{method}")
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
