"""The raw-text prefilter: what any match of a rule (or a fact collector) needs
to see in a file's text before the file is worth parsing with libcst."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Needles:
    """``all_of``: every substring must occur; ``any_of``: at least one group
    member must occur (each inner tuple is one group); ``regex``: a compiled
    search must succeed. All given conditions must hold. An empty ``Needles``
    matches every file."""

    all_of: tuple[str, ...] = ()
    any_of: tuple[tuple[str, ...], ...] = ()
    regex: str | None = None
    _compiled: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.regex is not None:
            object.__setattr__(self, "_compiled", re.compile(self.regex, re.MULTILINE))

    def match(self, text: str) -> bool:
        for s in self.all_of:
            if s not in text:
                return False
        for group in self.any_of:
            if not any(s in text for s in group):
                return False
        if self._compiled is not None and self._compiled.search(text) is None:
            return False
        return True
