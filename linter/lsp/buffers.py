"""Linting one editor buffer against facts that hold the other unsaved
buffers, and telling what its findings depend on.

This is :meth:`linter.engine.Engine.lint_text` with two additions the editor
needs, built on the engine's public single-file steps (``scan_one``,
``facts_gate``, ``check_one``): the facts it lints against are passed in
(the project's, with the workspace's unsaved buffers and changed files laid
over), and the result records what a cached check result records -- the
eager collectors read by the rules that passed the text gate, and the lazy
(collector, module) facts the gate and the check read -- so that an edit
elsewhere re-lints exactly the open files it can change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter.engine import Engine
from linter.facts import ProjectFacts, run_collectors
from linter.files import module_name_of, relpath_of
from linter.types import Diagnostic, InternalError


@dataclass
class BufferLint:
    """One buffer linted: its findings, its own facts (None: it does not
    compile, so its last facts should stand) and what the findings depend on."""

    diagnostics: list[Diagnostic]
    errors: list[InternalError]
    module: str
    facts: dict[str, Any] | None
    collectors: frozenset[str] = frozenset()
    lazy: frozenset[tuple[str, str]] = frozenset()

    def depends_on(self, module: str, changed: set[str], lazy_names: set[str]) -> bool:
        """Whether facts of ``changed`` collectors that ``module`` holds can
        change these findings."""
        for name in changed:
            if name in lazy_names:
                if (name, module) in self.lazy:
                    return True
            elif name in self.collectors:
                return True
        return False


def lazy_facts(engine: Engine, text: str, relpath: str, tree: ast.Module | None = None) -> dict[str, Any]:
    module = module_name_of(relpath)
    return run_collectors([c for c in engine.collectors if getattr(c, "lazy", False)], text, module, relpath, tree)


def buffer_facts(engine: Engine, text: str, path: Path) -> dict[str, Any] | None:
    """The facts of a text as the scan records them for a file at ``path``
    (lazy collectors included); None when it does not compile."""
    relpath = relpath_of(path, engine.config.root)
    try:
        tree = compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    scan = engine.scan_one(text, relpath, False)
    return {**(scan.facts or {}), **lazy_facts(engine, text, relpath, tree)}


def lint_buffer(engine: Engine, text: str, path: Path, facts: ProjectFacts) -> BufferLint:
    relpath = relpath_of(path, engine.config.root)
    module = module_name_of(relpath)
    # one buffer: compiling it costs milliseconds, so any syntax error shows
    scan = engine.scan_one(text, relpath, True, syntax=True, keep_tree=True)
    if scan.error is not None:
        # lint_text reports the syntax error (SHD000, unless ignored or
        # suppressed) and nothing else: the code the old findings were about
        # may be gone
        diags, errors = engine.lint_text(text, path)
        return BufferLint(diags, errors, module, None)
    mine = {**(scan.facts or {}), **lazy_facts(engine, text, relpath, scan.tree)}
    if any(facts.raw(c.name).get(module) != mine.get(c.name) for c in engine.collector_meta):
        facts = facts.with_module(module, mine)
    with facts.recording() as read:
        codes = engine.facts_gate(relpath, scan.rules or [], facts)
        out = engine.check_one(text, relpath, facts, codes, scan.cut, scan.tree)
    passed = set(scan.rules or ())
    cols = frozenset(f for r in engine.rule_meta if r.code in passed for f in r.facts)
    diags = sorted(out.diagnostics, key=lambda d: d.sort_key)
    return BufferLint(diags, out.errors, module, mine, cols, frozenset(read))
