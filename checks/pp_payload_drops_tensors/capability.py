"""The ``capability_reads`` facts: the capability flags the project reads.
An engine that reads a flag somewhere (vLLM's
``verify_supports_aux_hidden_states_over_pp``) refuses, at start-up, a class
that never sets it: it is not run."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from linter.api import FactCollector, Needles
from linter.astwalk import ast_walk


def flag_reads(node: ast.AST, getters: Sequence[str] = ("getattr", "hasattr")) -> list[str]:
    """The ``support``-named flags read, not assigned, under ``node``: an
    attribute read (``inner.supports_x``) or the key of a ``getters`` call
    (``getattr(obj, "supports_x", ...)``)."""
    names: set[str] = set()
    for n in ast_walk(node):
        if isinstance(n, ast.Attribute):
            if "support" in n.attr and not isinstance(n.ctx, ast.Store):
                names.add(n.attr)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in getters
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
            and "support" in n.args[1].value
        ):
            names.add(n.args[1].value)
    return sorted(names)


def capability_reads(tree: ast.Module) -> list[str] | None:
    """The flags the module reads (:func:`flag_reads`, by ``getattr`` only)."""
    return flag_reads(tree, ("getattr",)) or None


# A name holding ``support`` read as an attribute or a string has a ``.`` or
# a quote right before the identifier (led by the literal word, the head
# checked behind it; a head of 32 characters or more is let through). A name
# after a dot and a blank (``model.\\n    supports_x``) is missed: that can
# only add a warning, never hide a finding.
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
