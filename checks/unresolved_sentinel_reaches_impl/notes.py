"""What an SHD201 finding says: the sentinel attributes a construction
leaves unresolved (:class:`SentinelAttr`, :class:`Construction`), and the
message and notes built from them (where each attribute is initialised,
where the normal path resolves it, a suggested fix)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

from checks.facts.sentinels import ClassRef, Resolver
from linter.types import Note, Span

@dataclass(frozen=True)
class SentinelAttr:
    """An attribute a class leaves at a sentinel, with where that happens and
    where the normal path resolves it."""

    attr: str
    value: str
    origin: ClassRef
    init_span: tuple[int, int, int, int]
    init_where: str
    resolvers: tuple[Resolver, ...]
    late_methods: tuple[str, ...]


@dataclass
class Construction:
    call: cst.Call
    target: str
    classes: tuple[str, ...]
    via: str
    func: str
    attrs: dict[str, SentinelAttr] = field(default_factory=dict)
    # the classes are those below a ``cast(type[Base], ...)`` of a factory's
    # result: any of them may arrive, those keeping a sentinel are reported
    cast: bool = False


def ranked(attrs: Mapping[str, SentinelAttr]) -> list[Resolver]:
    """Resolvers of ``attrs``, one per site: exact sentinel tests first
    (the normal path), then assignments after construction, then
    normalisers (``< 1``) written by other direct constructors."""
    seen: dict[tuple[str, tuple[int, ...]], Resolver] = {}
    origin = next(iter(attrs.values())).origin.module.split(".") if attrs else []
    for sa in attrs.values():
        for r in sa.resolvers:
            seen.setdefault((r.path, r.span), r)

    def near(r: Resolver) -> int:
        n = 0
        for a, b in zip(origin, r.module.split(".")):
            if a != b:
                break
            n += 1
        return n

    def rank(r: Resolver) -> tuple[int, int, str, int]:
        kind = 0 if r.test and r.test not in ("<1", "<=0") else 1 if not r.test else 2
        return (kind, -near(r), r.path, r.span[0])

    return sorted(seen.values(), key=rank)


def origins(attrs: Mapping[str, SentinelAttr]) -> list[SentinelAttr]:
    """One initialisation site per class and method."""
    seen: dict[tuple[str, str], SentinelAttr] = {}
    for sa in attrs.values():
        seen.setdefault((sa.origin.name, sa.init_where), sa)
    return list(seen.values())


def notes(target: str, attrs: Mapping[str, SentinelAttr]) -> list[Note]:
    """Where each attribute is initialised, where the normal path resolves
    it (two sites at most), and a suggested fix."""
    out: list[Note] = []
    for sa in attrs.values():
        out.append(
            Note(
                f"`{sa.attr}` is initialised to {sa.value} in {sa.origin.qual} ({sa.init_where})",
                sa.origin.path,
                Span(*sa.init_span),
            )
        )
    for r in ranked(attrs)[:2]:
        what = f"tests `{r.obj}.{r.attr}` against the sentinel" if r.test else f"assigns `{r.obj}.{r.attr}`"
        out.append(Note(f"the normal path {what} in {r.func}", r.path, Span(*r.span)))
    out.append(Note(suggestion(target, attrs)))
    return out


def neutral(attr: str) -> str:
    return "0" if attr.endswith("rank") else "1"


def suggestion(target: str, attrs: Mapping[str, SentinelAttr]) -> str:
    first = next(iter(attrs.values()))
    if first.value == "None":
        test = f"{target}.{first.attr} is None"
    else:
        bound = "0" if first.attr.endswith("rank") else "1"
        test = f'getattr({target}, "{first.attr}", {first.value}) < {bound}'
    body = "; ".join(f"{target}.{a} = {neutral(a)}" for a in attrs)
    return (
        f"fix: resolve or normalise right after construction, e.g. `if {test}: {body}` "
        "(or the real group size/rank), or construct it through the wrapper that resolves it"
    )


def where(attrs: Mapping[str, SentinelAttr]) -> tuple[str, str]:
    """Where the attributes are initialised, and where the normal path
    resolves them ("" when nothing does)."""
    initialised = ", ".join(
        f"{sa.origin.qual}{'' if sa.init_where == 'class body' else '.' + sa.init_where} "
        f"({sa.origin.path}:{sa.init_span[0]})"
        for sa in origins(attrs)
    )
    first = ranked(attrs)[:1]
    resolved = (
        f"; the normal path resolves {'it' if len(attrs) == 1 else 'them'} in {first[0].func} "
        f"({first[0].path}:{first[0].span[0]})"
        if first
        else ""
    )
    return initialised, resolved


def construction_message(c: Construction) -> str:
    """The finding at a direct construction that leaves ``c.attrs`` unresolved."""
    names = ", ".join(f"`{a}`" for a in c.attrs)
    values = "/".join(sorted({sa.value for sa in c.attrs.values()}))
    where_from, resolved = where(c.attrs)
    kind = c.classes[0].rsplit(".", 1)[-1] if len(c.classes) == 1 else f"one of {len(c.classes)} classes"
    one = len(c.attrs) == 1
    return (
        f"`{c.target}` is constructed directly via `{c.via}` ({kind}), so {names} "
        f"{'stays' if one else 'stay'} at the sentinel {values} from {where_from}{resolved}; "
        f"nothing here resolves or checks {'it' if one else 'them'} before `{c.target}` is used"
    )
