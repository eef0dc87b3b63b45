"""What an SHD201 finding says: the sentinel attributes a construction
leaves unresolved (:class:`SentinelAttr`, :class:`Construction`), and the
message and notes built from them (where each attribute is initialised,
where the normal path resolves it, a suggested fix)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

from checks.facts.sentinel_index import ClassRef, Resolver
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
    # (base class, method) whose real value this class's ``__init__``
    # overwrites with the sentinel (a re-set), if any
    overrides: tuple[str, str] | None = None


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
    normalisers (``< 1``) written by other direct constructors; nearer
    packages to the class first."""
    seen: dict[tuple[str, tuple[int, ...]], Resolver] = {}
    origin = next(iter(attrs.values())).origin.module.split(".") if attrs else []
    for sa in attrs.values():
        for r in sa.resolvers:
            seen.setdefault((r.path, r.span), r)

    def rank(r: Resolver) -> tuple[int, int, str, int]:
        kind = 0 if r.test and r.test not in _NORMALISERS else 1 if not r.test else 2
        near = len(os.path.commonprefix([origin, r.module.split(".")]))
        return (kind, -near, r.path, r.span[0])

    return sorted(seen.values(), key=rank)


# The parallel dimension an attribute belongs to (its first ``_`` token that
# names one), for messages and the engine's spelling of the real value.
_DIMENSIONS = {
    "dcp": "decode context parallel",
    "pcp": "prefill context parallel",
    "cp": "context parallel",
    "tp": "tensor parallel",
    "pp": "pipeline parallel",
    "dp": "data parallel",
    "ep": "expert parallel",
    "sp": "sequence parallel",
}
# the tests of a resolver that only normalises (another direct construction's fix)
_NORMALISERS = ("<1", "<=0")


def dimension(attr: str) -> str:
    """``dcp`` for ``dcp_world_size``, ``tp`` for ``attn_tp_rank``, ``""``
    for a plain ``world_size``/``rank``."""
    for token in attr.lower().split("_"):
        if token in _DIMENSIONS:
            return token
    return ""


def is_rank(attr: str) -> bool:
    low = attr.lower()
    return "rank" in low and "world" not in low and not low.endswith("nranks")


def real_value(attr: str, engine: str) -> str:
    """How ``engine`` spells the real value of ``attr`` (the group's size or
    this process's rank in it)."""
    dim = dimension(attr)
    rank = is_rank(attr)
    attn = attr.lower().startswith(("attn_", "attention_"))
    if engine == "sglang":
        if dim == "dcp":
            return "get_dcp_rank()" if rank else "get_dcp_world_size()"
        if dim == "tp" and attn:
            return "get_attention_tp_rank()" if rank else "get_attention_tp_size()"
        if dim == "tp":
            return (
                "get_tensor_model_parallel_rank()"
                if rank
                else "get_tensor_model_parallel_world_size()"
            )
        group = {"cp": "get_attn_cp_group()", "ep": "get_moe_ep_group()"}.get(
            dim, f"get_{dim or 'world'}_group()"
        )
    else:
        group = f"get_{dim}_group()" if dim else "get_world_group()"
    return f"{group}.{'rank_in_group' if rank else 'world_size'}"


def consequence(attrs: Mapping[str, SentinelAttr]) -> str:
    """What the object does with the sentinel, in every configuration."""
    first = next(iter(attrs.values()))
    dim = dimension(first.attr)
    what = f"the {_DIMENSIONS.get(dim, 'process group')} {'rank' if is_rank(first.attr) else 'world size'}"
    off = f", {dim.upper()} disabled included" if dim else ""
    if first.value == "None":
        hit = "the first arithmetic with it raises TypeError"
    else:
        hit = (
            f"a kernel that validates it raises at the first forward, one that does not "
            f"splits or indexes by {first.value} (wrong output)"
        )
    return f"the object keeps {first.value} as {what} in every configuration{off}: {hit}"


def notes(target: str, attrs: Mapping[str, SentinelAttr], engine: str) -> list[Note]:
    """Where each attribute is initialised (and the base value it
    overwrites), where the normal path resolves it (two sites at most), and
    a suggested fix in ``engine``'s spelling."""
    out: list[Note] = []
    for sa in attrs.values():
        reset = (
            f", overwriting the value {sa.overrides[0]}.{sa.overrides[1]} gave it (a re-set)"
            if sa.overrides
            else ""
        )
        out.append(
            Note(
                f"`{sa.attr}` is initialised to {sa.value} in {sa.origin.qual} ({sa.init_where}){reset}",
                sa.origin.path,
                Span(*sa.init_span),
            )
        )
    order = ranked(attrs)
    # normalisers (``< 1``) are other direct constructions' fixes: shown
    # only when no exact test or assignment says where the normal path is
    exact = [r for r in order if r.test not in _NORMALISERS]
    for r in (exact or order)[:2]:
        if r.test in _NORMALISERS:
            what = f"another construction normalises `{r.obj}.{r.attr}` in {r.func}"
        elif r.test:
            what = f"the normal path tests `{r.obj}.{r.attr}` against the sentinel in {r.func}"
        else:
            what = f"the normal path assigns `{r.obj}.{r.attr}` in {r.func}"
        out.append(Note(what, r.path, Span(*r.span)))
    # the suggested fix
    first = next(iter(attrs.values()))
    if first.value == "None":
        test = f"{target}.{first.attr} is None"
    else:
        test = f'getattr({target}, "{first.attr}", {first.value}) < {"0" if is_rank(first.attr) else "1"}'
    body = "; ".join(f"{target}.{a} = {real_value(a, engine)}" for a in attrs)
    neutral = "; ".join(f"{target}.{a} = {'0' if is_rank(a) else '1'}" for a in attrs)
    resets = sorted({f"{sa.origin.qual}.{sa.init_where}" for sa in attrs.values() if sa.overrides})
    drop = (
        f"; or drop the re-set in {', '.join(resets)} (its base already resolved it)"
        if resets
        else ""
    )
    refused = dimension(first.attr).upper() or "the parallel group"
    out.append(
        Note(
            f"fix: resolve right after construction, as the normal path does: `if {test}: {body}` "
            f"(`{neutral}` where this layer refuses {refused}), "
            f"or construct it through the wrapper that resolves it{drop}"
        )
    )
    return out


def construction_message(c: Construction) -> str:
    """The finding at a direct construction that leaves ``c.attrs`` unresolved:
    where the sentinel comes from (one site per class and method), what
    resolves it elsewhere, and what the object then does with it."""
    names = ", ".join(f"`{a}`" for a in c.attrs)
    values = "/".join(sorted({sa.value for sa in c.attrs.values()}))
    origins: dict[tuple[str, str], SentinelAttr] = {}
    for sa in c.attrs.values():
        origins.setdefault((sa.origin.name, sa.init_where), sa)
    where_from = ", ".join(
        f"{sa.origin.qual}{'' if sa.init_where == 'class body' else '.' + sa.init_where} "
        f"({sa.origin.path}:{sa.init_span[0]})"
        for sa in origins.values()
    )
    first = ranked(c.attrs)[:1]
    one = len(c.attrs) == 1
    resolved = (
        f"; the normal path resolves {'it' if one else 'them'} in {first[0].func} "
        f"({first[0].path}:{first[0].span[0]})"
        if first
        else ""
    )
    kind = (
        c.classes[0].rsplit(".", 1)[-1]
        if len(c.classes) == 1
        else f"one of {len(c.classes)} classes"
    )
    return (
        f"`{c.target}` is constructed directly via `{c.via}` ({kind}), so {names} "
        f"{'stays' if one else 'stay'} at the sentinel {values} from {where_from}{resolved}; "
        f"nothing here resolves or checks {'it' if one else 'them'}, so {consequence(c.attrs)}"
    )
