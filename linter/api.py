"""The public API a rule builds on -- the one checks/ uses and a third-party
rule package imports (see docs/writing-rules.md):

- :class:`Rule` (a libcst batchable visitor with its metadata), the
  :class:`RuleContext` it sees, :class:`PendingFix` for the fix it offers;
- :class:`Needles` (what a file, or one top-level definition, must contain
  for the rule to find anything: the engine derives its prefilter from it);
- :class:`Option` (a per-rule option under ``[tool.shardlint.rules.CODE]``);
- :class:`Severity`, :class:`Applicability`, :class:`Fixability`, :class:`Note`;
- :class:`FactCollector` and :class:`ProjectFacts` (facts read across files);
- the libcst helpers of :mod:`linter.syntax`; for fact collectors,
  :mod:`linter.astwalk` (CPython ``ast``) and :mod:`linter.imports` (which
  qualified name a local name stands for).
"""

from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.options import Option
from linter.rule import PendingFix, Rule, RuleContext
from linter.syntax import (
    call_name,
    decorator_names,
    dotted,
    function_params,
    int_literal,
    keyword_args,
    last_name,
    name_matches,
    positional_args,
    walk,
    walk_no_nested,
)
from linter.types import Applicability, Fixability, Note, Severity

__all__ = [
    "Applicability",
    "FactCollector",
    "Fixability",
    "Needles",
    "Note",
    "Option",
    "PendingFix",
    "ProjectFacts",
    "Rule",
    "RuleContext",
    "Severity",
    "call_name",
    "decorator_names",
    "dotted",
    "function_params",
    "int_literal",
    "keyword_args",
    "last_name",
    "name_matches",
    "positional_args",
    "walk",
    "walk_no_nested",
]
