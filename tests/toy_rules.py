"""Test-local rules, registered through a custom Registry: they make engine
behaviour testable independently of the real rules' heuristics."""

from __future__ import annotations

import libcst as cst

from linter.builtin_rules import UnparsableFile, UnusedNoqa
from linter.needles import Needles
from linter.options import Option
from linter.registry import Registry
from linter.rule import PendingFix, Rule
from linter.types import Applicability, Fixability


class FlagMinCalls(Rule):
    """## What it finds
    Every call to ``min``.
    ## Why it breaks
    Test only.
    ## Example
    ``min(a, 1)``
    ## Fix
    ``max``.
    ## Options
    ``label``.
    """

    code = "SHD990"
    name = "flag-min-calls"
    summary = "test rule"
    fixable = Fixability.SOMETIMES
    needles = Needles(all_of=("min(",))
    options = {"label": Option("min", "str", "word used in the message")}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "min":
            fix = PendingFix(
                "use max", Applicability.SAFE, [(node.func, cst.Name("max"))]
            )
            self.report(node, f"{self.opts['label']} call in {self.ctx.qualified_scope or '<module>'}", fix=fix)


class CrashOnLambda(Rule):
    """## What it finds
    Crashes on lambdas (test only).
    ## Why it breaks
    -
    ## Example
    -
    ## Fix
    -
    ## Options
    -
    """

    code = "SHD991"
    name = "crash-on-lambda"
    summary = "test rule that crashes"
    needles = Needles(all_of=("lambda",))

    def visit_Lambda(self, node: cst.Lambda) -> None:
        raise ZeroDivisionError("boom")


class BreakingFix(Rule):
    """## What it finds
    ``pass`` statements, with a fix that produces invalid code (test only).
    ## Why it breaks
    -
    ## Example
    -
    ## Fix
    -
    ## Options
    -
    """

    code = "SHD992"
    name = "breaking-fix"
    summary = "test rule whose fix does not parse"
    default_enabled = False
    needles = Needles(all_of=("pass",))

    def visit_Pass(self, node: cst.Pass) -> None:
        self.report(node, "pass", fix=PendingFix("break it", Applicability.SAFE, [(node, "pass)")]))


def toy_registry() -> Registry:
    rules = {r.code: r for r in (UnparsableFile, UnusedNoqa, FlagMinCalls, CrashOnLambda, BreakingFix)}
    return Registry(dict(sorted(rules.items())), {})
