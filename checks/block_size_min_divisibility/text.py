"""What an SHD101 finding says: the message (what the block need not be,
as which use needs it, a counterexample and what it does) and its notes,
one of which says where the width ``X`` comes from."""

from __future__ import annotations

import libcst as cst

from checks.block_size_min_divisibility.sites import (
    Consumer,
    MinSite,
    call_text,
    div_example,
    multiple_example,
    pow2_example,
)
from checks.block_size_min_divisibility.values import Env, code
from linter.syntax import call_name, dotted, name_matches, walk
from linter.types import Note

# names of parallel sizes (the last component, any case)
PARALLEL_SIZES = (
    "tp",
    "tp_size",
    "*_tp_size",
    "tp_world_size",
    "*world_size",
    "ep_size",
    "*_ep_size",
    "num_ranks",
)
CONFIG_WORDS = ("config", "cfg", "hparams", "args")


def describe(x: cst.BaseExpression, env: Env, function: str | None) -> str:
    """One clause: what ``x`` is and what changes it -- a per-rank width
    only when the code divides by a parallel size, a model configuration
    value, a tensor dimension or a parameter otherwise."""
    chain = [x]  # ``x`` and what it is bound to, through names bound once here
    while len(chain) < 5 and isinstance(chain[-1], cst.Name):
        binds = env.local.get(chain[-1].value)
        if not binds or len(binds) != 1 or not isinstance(binds[0], cst.BaseExpression):
            break
        e = binds[0]
        chain.append(e.args[0].value if call_name(e) == "int" and len(e.args) == 1 else e)
    root = chain[-1]
    shown = f"`{code(x)}` (`{code(root)}`)" if root is not x else f"`{code(x)}`"
    nodes = [n for e in chain for n in walk(e)]
    names = [d for n in nodes if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n))]
    if any(name_matches(n, PARALLEL_SIZES) for n in names):
        return f"{shown} is a per-rank width: it changes with the model and with the TP/EP size"
    if any(
        w in part.lower() for n in names for part in n.split(".")[:-1] for w in CONFIG_WORDS
    ) or any(call_name(n) == "getattr" for n in nodes):
        return f"{shown} comes from the model's configuration: it changes with the checkpoint"
    import libcst.matchers as m

    dimension = m.Attribute(attr=m.Name("shape")) | m.Call(func=m.Attribute(attr=m.Name("size")))
    if any(m.matches(n, dimension) for n in nodes):
        return f"{shown} is a tensor dimension: it takes whatever value the model's shapes give it"
    if isinstance(root, cst.Name) and root.value in env.params:
        where = f" of `{function}`" if function else ""
        return f"{shown} is a parameter{where}: it takes whatever its callers pass"
    return f"{shown} is computed at run time: it takes whatever value the model gives it"


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
        pow2 = any(k.kind == "pow2" for k in shape)
        notes.append(
            Note(
                ("Triton block shapes must be powers of two; " if pow2 else "")
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
