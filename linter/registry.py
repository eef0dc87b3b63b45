"""Rule and fact-collector discovery: every ``Rule`` subclass with a code and
every ``FactCollector`` with a name in the modules of the ``checks`` package.
Nothing is listed by hand."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass

from linter.facts import FactCollector
from linter.needles import Needles
from linter.rule import Rule
from linter.types import Fixability, Severity


class UnparsableFile(Rule):
    """## What it finds
    A file shardlint could not analyse: a syntax error, bytes that are not
    UTF-8, or NUL bytes.

    ## Why it breaks
    Nothing else can be checked in such a file, so every other rule is blind
    to it; the diagnostic makes that visible instead of silently passing.

    ## Example
    ```python
    def broken(:
    ```

    ## Fix
    Make the file valid Python 3 source in UTF-8.

    ## Options
    None.
    """

    code = "SHD000"
    name = "unparsable-file"
    summary = "File could not be analysed (syntax error, bad encoding, NUL bytes)"
    builtin = True
    tags = ("correctness",)


class UnusedNoqa(Rule):
    """## What it finds
    A `# noqa` comment naming shardlint codes that suppresses nothing on its
    line, or that names a code shardlint does not have.

    ## Why it breaks
    Stale suppressions hide the next real finding on that line; an unknown code
    is usually a typo that suppresses nothing at all.

    ## Example
    ```python
    block = 128  # noqa: SHD101
    ```

    ## Fix
    Remove the comment or the stale code (a safe fix).

    ## Options
    None. Off by default; enable with `--extend-select SHD900`.
    """

    code = "SHD900"
    name = "unused-noqa"
    summary = "A noqa comment suppresses nothing or names an unknown code"
    severity = Severity.WARNING
    fixable = Fixability.ALWAYS
    default_enabled = False
    builtin = True
    needles = Needles(all_of=("noqa",))
    tags = ("maintainability",)


@dataclass(frozen=True)
class Registry:
    rules: Mapping[str, type[Rule]]
    collectors: Mapping[str, type[FactCollector]]

    def by_name(self, name: str) -> type[Rule] | None:
        for r in self.rules.values():
            if r.name == name:
                return r
        return None

    def lookup(self, code_or_name: str) -> type[Rule] | None:
        return self.rules.get(code_or_name.upper()) or self.by_name(code_or_name.lower())

    @property
    def checkers(self) -> list[type[Rule]]:
        return [r for r in self.rules.values() if not getattr(r, "builtin", False)]


@functools.lru_cache(maxsize=1)
def load_registry() -> Registry:
    import checks

    rules: dict[str, type[Rule]] = {UnparsableFile.code: UnparsableFile, UnusedNoqa.code: UnusedNoqa}
    collectors: dict[str, type[FactCollector]] = {}
    for info in sorted(pkgutil.iter_modules(checks.__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"checks.{info.name}")
        for obj in vars(mod).values():
            if not isinstance(obj, type) or obj.__module__ != mod.__name__:
                continue
            if issubclass(obj, Rule) and obj.code:
                if obj.code in rules and rules[obj.code] is not obj:
                    raise RuntimeError(f"duplicate rule code {obj.code}")
                rules[obj.code] = obj
            elif issubclass(obj, FactCollector) and obj.name:
                collectors[obj.name] = obj
    return Registry(dict(sorted(rules.items())), collectors)
