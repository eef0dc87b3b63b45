"""Linting one editor buffer against facts that hold the other unsaved
buffers, and telling what its findings depend on.

This is :meth:`linter.engine.Engine.lint_text` with three differences the
editor needs, built on the engine's public single-file steps (``scan_one``,
``facts_gate``, ``check_one``): the facts it lints against are passed in
(the project's, with the workspace's unsaved buffers and changed files laid
over); the buffer's own facts are not collected before its findings are
published but after (:func:`buffer_facts`, laid over by the caller, which
lints the buffer again when they changed: most edits leave them as they
were, and the findings then come at the cost of the check alone); and the
result records what a cached check result records -- the eager collectors
read by the rules that passed the text gate, and the lazy (collector,
module) facts the gate and the check read -- so that an edit elsewhere
re-lints exactly the open files it can change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter.engine import Engine
from linter.facts import ProjectFacts
from linter.files import module_name_of, relpath_of
from linter.reparse import ParseMemo
from linter.types import Diagnostic, InternalError


@dataclass
class BufferLint:
    """One buffer linted: its findings, its module and what the findings
    depend on."""

    diagnostics: list[Diagnostic]
    errors: list[InternalError]
    module: str
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


def buffer_facts(engine: Engine, text: str, path: Path) -> dict[str, Any] | None:
    """The facts of a text as the scan records them for a file at ``path``
    (lazy collectors included); None when it does not compile."""
    relpath = relpath_of(path, engine.config.root)
    try:
        tree = compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return engine.text_facts(text, relpath, tree)


def lint_buffer(
    engine: Engine, text: str, path: Path, facts: ProjectFacts, memo: ParseMemo | None = None
) -> BufferLint:
    """Lint a buffer against ``facts`` as they stand: the facts of its own
    module are those last laid over (or the disk's), not collected here --
    the caller lays the buffer's facts over after publishing
    (:func:`buffer_facts`) and lints again the few times they changed.
    ``memo``: the document's last parse, which this one starts from
    (``linter.reparse``: an edit inside one statement parses that one)."""
    relpath = relpath_of(path, engine.config.root)
    module = module_name_of(relpath)
    # one buffer: compiling it costs milliseconds, so any syntax error shows
    scan = engine.scan_one(text, relpath, True, syntax=True, keep_tree=True, collect=False)
    if scan.error is not None:
        # lint_text reports the syntax error (SHD000, unless ignored or
        # suppressed) and nothing else: the code the old findings were about
        # may be gone
        diags, errors = engine.lint_text(text, path)
        return BufferLint(diags, errors, module)
    with facts.recording() as read:
        codes = engine.facts_gate(relpath, scan.rules or [], facts)
        out = engine.check_one(text, relpath, facts, codes, scan.cut, scan.tree, memo)
    passed = set(scan.rules or ())
    cols = frozenset(f for r in engine.rule_meta if r.code in passed for f in r.facts)
    diags = sorted(out.diagnostics, key=lambda d: d.sort_key)
    return BufferLint(diags, out.errors, module, cols, frozenset(read))
