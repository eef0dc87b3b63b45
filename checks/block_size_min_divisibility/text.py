"""What an SHD101 finding says: the message (what the block need not be,
as which use needs it, a counterexample and what it does) and its notes."""

from __future__ import annotations

from checks.block_size_min_divisibility.sites import (
    Consumer,
    MinSite,
    call_text,
    div_example,
    multiple_example,
    pow2_example,
)
from checks.block_size_min_divisibility.values import code
from linter.types import Note


def finding_text(site: MinSite, live: list[Consumer], origin: str) -> tuple[str, list[Note]]:
    """The message and notes of a finding: what the block need not be, the
    first consumer of each kind with its counterexample and outcome, where
    the width comes from; ``origin``: that last clause."""
    x, c, b = code(site.x), code(site.c), site.name
    div = [k for k in live if k.kind == "div"]
    shape = [k for k in live if k.kind != "div"]
    call = call_text(site.call)
    head = f"`{b}={call}`" if site.inline else f"`{b} = {call}`"
    parts: list[str] = []
    cv = site.c_value if site.c_value is not None else site.c_least
    if div:
        first = div[0]
        example = div_example(x, b, c, cv, assumed=site.c_value is None)
        parts.append(f"need not divide `{x}`, as {first.where}: {example}, and {first.outcome}")
    if shape:
        first = shape[0]
        if first.kind == "multiple":
            example = multiple_example(x, b, site.c_value, first.factor or 2)
            what = f"be a multiple of {first.factor}"
        else:
            example = pow2_example(x, b, c, site.c_value, site.c_pow2)
            what = "be a power of two"
        lead = "nor" if div else "need not"
        parts.append(f"{lead} {what}, as {first.where}: {example}, and {first.outcome}")
    message = f"block size {head} " + "; ".join(parts)
    notes: list[Note] = []
    if div:
        notes.append(
            Note(
                f"{origin}; `{call}` is `{c}` whenever `{x}` >= `{c}`, and divides `{x}` only "
                f"when `{x}` is a multiple of it: the shapes the tests use pass, another "
                f"model's fails."
            )
        )
    if shape:
        notes.append(
            Note(
                (
                    "Triton block shapes must be powers of two; "
                    if any(k.kind == "pow2" for k in shape)
                    else ""
                )
                + f"`{call}` is `{x}` itself whenever `{x}` < `{c}`"
                + ("." if div else f", and {origin}.")
            )
        )
    firsts = {id(div[0]) if div else None, id(shape[0]) if shape else None}
    for k in live:
        if k.note is not None:
            notes.append(k.note)
        elif id(k) not in firsts:
            notes.append(Note(f"also: {k.where}"))
    return message, notes
