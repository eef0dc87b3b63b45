"""The rule base class and the per-file context rules see.

A rule is a libcst batchable visitor: the engine parses a file once and
runs every enabled rule in one batched traversal. :class:`Rule` speaks
libcst's ``BatchableCSTVisitor`` protocol (``get_visitors``, metadata
dependencies) without inheriting from it, so that the rule modules import
without loading libcst until a file is parsed (see ``linter._lazy``). A rule reports nodes; the
engine turns reports into :class:`~linter.types.Diagnostic` after the traversal
(positions are resolved only when something was reported).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

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
    # the outermost definition being visited when it was reported, and the
    # one being visited in its body (where the engine looks for the node's
    # position first: the member alone, then the outermost alone), None
    # where there is none
    top: cst.CSTNode | None = None
    member: cst.CSTNode | None = None


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
    # the text's CPython ``ast``, compiled on first use (see ``ast_tree``)
    _ast: ast.Module | None = None
    _ast_failed: bool = False

    def ast_tree(self) -> ast.Module | None:
        """The file's CPython ``ast``, compiled at most once per file for all
        the rules that read facts of the file under check from it (None when
        it does not compile)."""
        if self._ast is None and not self._ast_failed:
            try:
                self._ast = compile(self.text, self.path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._ast_failed = True
        return self._ast

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


_UNDEFINED = object()


class Rule:
    """Base class of every rule in ``checks/``.

    Class attributes a rule sets: ``code`` (``SHD101``), ``name`` (kebab-case,
    equal to its folder's name with dashes), ``summary`` (one line), the
    docstring (the user documentation: What it finds / Why it breaks / Example /
    Fix / Options), ``severity``, ``fixable``, ``default_enabled``, ``needles``
    and ``definition_needles`` (what its text must hold: the engine derives
    the prefilter from them, see :mod:`linter.scan`), ``options`` and
    ``facts`` (names of the fact collectors it reads). Its analysis is its
    visitor methods, written once.
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    fixable: ClassVar[Fixability] = Fixability.NEVER
    default_enabled: ClassVar[bool] = True
    #: the file gate: what a file's text must hold for the rule to find anything in it
    needles: ClassVar[Needles] = Needles()
    #: co-occurrence within one top-level definition: when set, the engine
    #: hands the libcst check only the top-level ``def``/``class`` statements
    #: whose own text matches, those the kept code names (transitively: a
    #: helper a kept function calls, a base class), and all other top-level
    #: statements -- imports, constants, ``if``/``try`` blocks; it skips the
    #: file when no definition, nor the module-level code, matches. Sound
    #: when every finding lies in a matching definition or in module-level
    #: code, and what the rule reads to make it is there or named from there.
    definition_needles: ClassVar[Needles | None] = None
    #: whether the rule's analysis of a kept definition reads other
    #: definitions of its module by name (a helper it calls, a method called
    #: through ``self``, a base class defined beside it). False: the engine
    #: keeps for the rule only the definitions its ``definition_needles``
    #: match (a method with its class's header and class-level statements)
    #: and the module-level code -- much less for libcst to parse. Sound only
    #: when what the rule reads outside a matching definition comes from the
    #: project facts or the module-level code; ``tests/test_gates.py`` holds
    #: it to that on the corpus and its mutations. ``"top-level"``
    #: (``linter.scan.TOP_LEVEL``): the analysis reads other definitions by
    #: name only at the top level (a module function, a kernel, a base
    #: class), never a class's member: the engine follows names to top-level
    #: definitions only.
    follows_definitions: ClassVar[bool | str] = True
    options: ClassVar[Mapping[str, Option]] = {}
    facts: ClassVar[tuple[str, ...]] = ()
    tags: ClassVar[tuple[str, ...]] = ()
    precision: ClassVar[str] = "high"
    #: where the rule comes from: "shardlint", or the distribution (name and
    #: version) whose ``shardlint.rules`` entry point provides it (set by the
    #: registry)
    origin: ClassVar[str] = "shardlint"
    #: libcst metadata providers the rule reads with :meth:`get_metadata`
    #: (resolved by the engine only for rules that declare some).
    METADATA_DEPENDENCIES: ClassVar[Collection[Any]] = ()

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        self.metadata: Mapping[Any, Mapping[Any, object]] = {}
        self.ctx = ctx
        opts = {k: o.default for k, o in self.options.items()}
        opts.update(options or {})
        self.opts: Mapping[str, Any] = opts

    # -- libcst's BatchableCSTVisitor protocol (the same behaviour) -----------

    def get_visitors(self) -> Mapping[str, Callable[[Any], Any]]:
        """The ``visit_*`` and ``leave_*`` methods, as ``libcst.visit_batched``
        and the engine's traversal expect them."""
        return dict(
            inspect.getmembers(
                self,
                lambda m: (
                    inspect.ismethod(m)
                    and (m.__name__.startswith("visit_") or m.__name__.startswith("leave_"))
                    and not getattr(m, "_is_no_op", False)
                ),
            )
        )

    @classmethod
    def get_inherited_dependencies(cls) -> Collection[Any]:
        """The metadata providers declared by ``cls`` and its bases."""
        deps: set[Any] = set()
        for c in cls.__mro__:
            deps.update(getattr(c, "METADATA_DEPENDENCIES", ()))
        return frozenset(deps)

    @contextmanager
    def resolve(self, wrapper: Any) -> Iterator[None]:
        """Resolve the declared metadata on a ``libcst.MetadataWrapper`` for
        the time of the traversal."""
        self.metadata = wrapper.resolve_many(self.get_inherited_dependencies())
        try:
            yield
        finally:
            self.metadata = {}

    def get_metadata(self, key: Any, node: Any, default: Any = _UNDEFINED) -> Any:
        """The value the provider ``key`` gives ``node`` (as libcst's
        ``MetadataDependent.get_metadata``)."""
        if key not in self.get_inherited_dependencies():
            raise KeyError(
                f"{key.__name__} is not declared as a dependency in {type(self).__name__}.METADATA_DEPENDENCIES."
            )
        if key not in self.metadata:
            raise KeyError(f"{key.__name__} is a dependency, but not set; did you forget a MetadataWrapper?")
        value = self.metadata[key][node] if default is _UNDEFINED else self.metadata[key].get(node, default)
        from libcst.metadata.base_provider import LazyValue

        return value() if isinstance(value, LazyValue) else value

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        """The (file, definition) needles under the rule's effective
        ``options``: ``needles`` and ``definition_needles`` by default. A rule
        whose names are configurable overrides it so that its gates hold the
        configured names too (a glob with no literal part to look for means
        no gate: ``Needles()`` matches everything)."""
        return cls.needles, cls.definition_needles

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        """A gate on the project's facts, asked after they are merged and
        before the file is parsed with libcst: a plain lookup of the facts the
        rule declares (``facts``), e.g. "does any class in this module inherit
        the capability flag?" -- never a replay of the rule's analysis.
        ``options`` are the rule's effective options. Must be sound: False
        only when the rule cannot fire."""
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
                top=self.ctx.scope_nodes[0] if self.ctx.scope_nodes else None,
                member=self.ctx.scope_nodes[1] if len(self.ctx.scope_nodes) > 1 else None,
            )
        )
