"""The ``capability_reads`` facts: the capability flags the project reads.
An engine that consults a flag somewhere (vLLM's
``verify_supports_aux_hidden_states_over_pp``) refuses a class that never
sets it at start-up: it is not run."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from linter.astwalk import ast_walk
from linter.api import FactCollector, Needles, ProjectFacts


def capability_reads(tree: ast.Module) -> list[str] | None:
    """The ``support``-named flags the module reads, not assigns: an
    attribute read (``inner.supports_x``) or the key of
    ``getattr(obj, "supports_x", ...)``."""
    names: set[str] = set()
    for n in ast_walk(tree):
        if isinstance(n, ast.Attribute):
            if "support" in n.attr and not isinstance(n.ctx, ast.Store):
                names.add(n.attr)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == "getattr"
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
            and "support" in n.args[1].value
        ):
            names.add(n.args[1].value)
    return sorted(names) or None


# What the text holds where a name holding ``support`` is an attribute or a
# string: a ``.`` or a quote right before the identifier (led by the literal
# word, the identifier's head checked behind it; one of 32 characters or
# more is let through whatever precedes it). A name written after a dot and
# a blank (``model.\\n    supports_x`` in brackets) is missed: a read
# missed can only add a warning, never hide a finding.
_HEAD = 32
_READ = "support(?:" + "|".join(
    [*(rf"(?<=[.'\"]\w{{{k}}}support)" for k in range(_HEAD)), rf"(?<=\w{{{_HEAD}}}support)"]
) + ")"


class CapabilityReads(FactCollector):
    """Per module, the capability flags it reads (:func:`capability_reads`)."""

    name = "capability_reads"
    version = 2  # 2: read on ast
    needles = Needles(all_of=("support",), regex=_READ)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return capability_reads(tree)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> frozenset[str]:
        return frozenset(n for names in per_module.values() if names for n in names)


def engine_checks_flag(facts: ProjectFacts, flags: Sequence[str]) -> bool:
    """Whether some module of the project reads one of ``flags``: the engine
    then refuses, at start-up, a class that never sets it."""
    read = facts.index("capability_reads")
    return isinstance(read, frozenset) and any(f in read for f in flags)
