"""Where SHD101's width ``X`` comes from, in the words a finding uses: a
per-rank width only when the code divides by a parallel size, a model
configuration value, a tensor dimension or a parameter otherwise."""

from __future__ import annotations

import fnmatch

import libcst as cst

from linter.syntax import call_name, dotted, walk
from checks.block_size_min_divisibility.values import Env, code

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


def _chain(x: cst.BaseExpression, env: Env) -> list[cst.BaseExpression]:
    """``x`` and what it is bound to, through names bound once here."""
    out = [x]
    e = x
    for _ in range(4):
        if not isinstance(e, cst.Name):
            break
        binds = env.local.get(e.value)
        if not binds or len(binds) != 1 or not isinstance(binds[0], cst.BaseExpression):
            break
        e = binds[0]
        if isinstance(e, cst.Call) and call_name(e) == "int" and len(e.args) == 1:
            e = e.args[0].value
        out.append(e)
    return out


def _names(e: cst.CSTNode) -> list[str]:
    return [d for n in walk(e) if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n))]


def describe(x: cst.BaseExpression, env: Env, function: str | None) -> str:
    """One clause: what ``x`` is and what changes it."""
    chain = _chain(x, env)
    root = chain[-1]
    name = code(x)
    shown = f"`{name}` (`{code(root)}`)" if root is not x else f"`{name}`"
    names = [n for e in chain for n in _names(e)]
    leaves = [n.rsplit(".", 1)[-1].lower() for n in names]
    if any(fnmatch.fnmatchcase(leaf, p) for leaf in leaves for p in PARALLEL_SIZES):
        return f"{shown} is a per-rank width: it changes with the model and with the TP/EP size"
    if any(
        w in part.lower() for n in names for part in n.split(".")[:-1] for w in CONFIG_WORDS
    ) or any(isinstance(n, cst.Call) and call_name(n) == "getattr" for e in chain for n in walk(e)):
        return f"{shown} comes from the model's configuration: it changes with the checkpoint"
    if any(
        (isinstance(n, cst.Attribute) and n.attr.value == "shape")
        or (
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "size"
        )
        for e in chain
        for n in walk(e)
    ):
        return f"{shown} is a tensor dimension: it takes whatever value the model's shapes give it"
    if isinstance(root, cst.Name) and root.value in env.params:
        where = f" of `{function}`" if function else ""
        return f"{shown} is a parameter{where}: it takes whatever its callers pass"
    return f"{shown} is computed at run time: it takes whatever value the model gives it"
