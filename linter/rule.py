"""The rule base class and the per-file context rules see.

A rule is a libcst ``BatchableCSTVisitor``: the engine parses a file once and
runs every enabled rule in one batched traversal. A rule reports nodes; the
engine turns reports into :class:`~linter.types.Diagnostic` after the traversal
(positions are resolved only when something was reported).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from linter.facts import ProjectFacts
from linter.needles import Needles
from linter.options import Option
from linter.types import Applicability, Fixability, Note, Severity

@dataclass
class PendingFix:
    """A fix as a rule builds it: node replacements (by new node or by code)
    and modules to import. The engine turns it into text edits."""

    title: str
    applicability: Applicability
    replacements: Sequence[tuple[cst.CSTNode, cst.CSTNode | str]] = ()
    add_imports: Sequence[str] = ()


@dataclass
class PendingReport:
    code: str
    node: cst.CSTNode
    message: str
    notes: tuple[Note, ...]
    fix: PendingFix | None
    scope: str
    severity: Severity | None = None


@dataclass
class RuleContext:
    """What a rule may know about the file under check."""

    path: str
    module_name: str
    text: str
    module: cst.Module
    facts: ProjectFacts
    scope_names: list[str] = field(default_factory=list)
    scope_nodes: list[cst.CSTNode] = field(default_factory=list)
    reports: list[PendingReport] = field(default_factory=list)
    _ast: ast.Module | None = None

    @property
    def qualified_scope(self) -> str:
        return ".".join(self.scope_names)

    @property
    def current_function(self) -> cst.FunctionDef | None:
        for node in reversed(self.scope_nodes):
            if isinstance(node, cst.FunctionDef):
                return node
        return None

    @property
    def current_class(self) -> cst.ClassDef | None:
        for node in reversed(self.scope_nodes):
            if isinstance(node, cst.ClassDef):
                return node
        return None

    def code_for(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


class Rule(cst.BatchableCSTVisitor):
    """Base class of every rule in ``checks/``.

    Class attributes a rule sets: ``code`` (``SHD101``), ``name`` (kebab-case,
    equal to the module name with dashes), ``summary`` (one line), the
    docstring (the user documentation: What it finds / Why it breaks / Example /
    Fix / Options), ``severity``, ``fixable``, ``default_enabled``, ``needles``
    (the raw-text prefilter), ``options`` and ``facts`` (names of the fact
    collectors it reads). Override :meth:`candidate` for a sharper prefilter.
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    fixable: ClassVar[Fixability] = Fixability.NEVER
    default_enabled: ClassVar[bool] = True
    needles: ClassVar[Needles] = Needles()
    options: ClassVar[Mapping[str, Option]] = {}
    facts: ClassVar[tuple[str, ...]] = ()
    tags: ClassVar[tuple[str, ...]] = ()
    precision: ClassVar[str] = "high"

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.ctx = ctx
        opts = {k: o.default for k, o in self.options.items()}
        opts.update(options or {})
        self.opts: Mapping[str, Any] = opts

    @classmethod
    def candidate(cls, text: str) -> bool:
        """Whether ``text`` can hold a match at all (cheap; no libcst)."""
        return cls.needles.match(text)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        """A second, sharper gate on CPython's ``ast`` (several times cheaper
        than libcst), asked only when :meth:`candidate` passed. The ``ast`` is
        built once per file and shared by every rule and fact collector that
        needs it. Must be sound: False only when the rule cannot fire."""
        return True

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        """A third gate, asked after the project's facts are merged and before
        the file is parsed with libcst: e.g. "does any class in this module
        inherit the capability flag?". ``options`` are the rule's effective
        options. Must be sound: False only when the rule cannot fire."""
        return True

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        notes: Sequence[Note | str] = (),
        fix: PendingFix | None = None,
        severity: Severity | None = None,
    ) -> None:
        """Report ``node``. ``severity`` overrides the rule's default for this
        finding (e.g. a warning where the runtime may refuse the configuration)."""
        self.ctx.reports.append(
            PendingReport(
                code=self.code,
                node=node,
                message=message,
                notes=tuple(n if isinstance(n, Note) else Note(n) for n in notes),
                fix=fix,
                scope=self.ctx.qualified_scope,
                severity=severity,
            )
        )
