"""Codes the engine itself reports: SHD000 (file could not be analysed) and
SHD900 (unused noqa). Rule classes only for their metadata and docs."""

from __future__ import annotations

from linter.needles import Needles
from linter.rule import Rule
from linter.types import Fixability, Severity


class UnparsableFile(Rule):
    """## What it finds
    A file shardlint could not analyse: bytes that cannot be decoded (UTF-8 or
    the file's PEP 263 coding), NUL bytes, or a syntax error (CPython's message
    and position; or, rarely, code CPython accepts but libcst cannot parse).

    Syntax errors are reported for the files shardlint parses: those a rule
    or a fact collector reads (the editor integration always parses the
    buffer). A file no rule could match is never compiled, because compiling
    a whole tree the size of vLLM costs more than the rest of a cold run; set
    `check-syntax = true` (or pass `--check-syntax`) to compile every checked
    file and report any syntax error. ruff and flake8 report them too.

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
    None of its own; the top-level setting `check-syntax` (default false)
    decides whether every checked file is compiled.
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
