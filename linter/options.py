"""Per-rule options (no libcst here: configuration is validated on the warm
path, which never imports libcst)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_KINDS = ("str", "int", "bool", "list[str]", "list[int]")


@dataclass(frozen=True)
class Option:
    """A per-rule option, set under ``[tool.shardlint.rules.<CODE>]``."""

    default: Any
    kind: str
    doc: str
    # the values an enum-like option may take (validated at config load)
    choices: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown option kind {self.kind!r}")
        if self.choices and self.default not in self.choices:
            raise ValueError(f"default {self.default!r} is not one of {self.choices!r}")

    def validate(self, value: Any) -> Any:
        """Return the value in canonical form or raise ``ValueError`` saying what
        was expected."""
        k = self.kind
        if k == "bool":
            if isinstance(value, bool):
                return value
        elif k == "int":
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif k == "str":
            if isinstance(value, str):
                return value
        else:
            item = str if k == "list[str]" else int
            if isinstance(value, list) and all(
                isinstance(v, item) and not isinstance(v, bool) for v in value
            ):
                return tuple(value)
        raise ValueError(f"expected {k}, got {type(value).__name__} {value!r}")
