"""The ``pp_receivers`` facts: per class, the keys its receiving side
allocates for the incoming pipeline payload
(``make_empty_intermediate_tensors_factory([...], ...)``), so that a subclass
in another file can be compared with its base's receiver."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from checks.pp_payload_drops_tensors.needles import DEFAULT_RECEIVER_FACTORIES
from linter.api import FactCollector, Needles


def receiver_keys(node: ast.AST, factories: Sequence[str]) -> list[list[str]]:
    """String key lists of every ``factory(["a", "b"], ...)`` under ``node``
    (a class may allocate one layout per mode)."""
    out: list[list[str]] = []
    for n in ast.walk(node):
        if not isinstance(n, ast.Call) or not n.args:
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in factories:
            continue
        first = n.args[0]
        if isinstance(first, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
        ):
            out.append([e.value for e in first.elts])  # type: ignore[attr-defined]
    return out


class PpReceiverFacts(FactCollector):
    """Per top-level class, the layouts the default receiver factory is
    given (the collector cannot see per-project options)."""

    name = "pp_receivers"
    version = 2  # 2: read on ast alone
    needles = Needles(all_of=DEFAULT_RECEIVER_FACTORIES)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        out: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                layouts = receiver_keys(node, DEFAULT_RECEIVER_FACTORIES)
                if layouts:
                    out[node.name] = {"layouts": layouts, "line": node.lineno}
        return out or None
