"""Deeply nested code: analysed on a deep stack, or one SHD000 naming the limit.

libcst (its parser's conversion to Python objects, its code generation, the
visitors) and CPython's ``ast`` readers recurse once or more per level of
nesting: about 250 links of a ``.a()`` chain or 500 ``elif`` branches exceed
Python's default recursion limit, while CPython compiles about 3,000 levels
and generated real code reaches ~570. A file's work is first done as usual;
if it meets the recursion limit (a ``RecursionError`` raised, or one the
engine turned into SHD000 or an internal error), the file is measured:

- nested deeper than :data:`MAX_NESTING` levels of CPython's ``ast``: one
  SHD000 saying so (libcst's time grows with the square of such a chain);
- else the work is done again in a thread with a 512 MiB stack and a
  recursion limit to match (:func:`run_deep`), where it completes.
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from linter.source import shd000
from linter.types import Diagnostic, InternalError

T = TypeVar("T")

# Levels of CPython ast nodes nested in one another (a link of a call chain
# is two: Call and Attribute; an elif branch or a binary operator one).
MAX_NESTING = 2_000
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 60_000
_LOCK = threading.Lock()


def run_deep(fn: Callable[[], T]) -> T:
    """``fn()`` in a thread with a deep stack and a recursion limit to match;
    its result, or its exception raised again here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller
            box["error"] = exc

    with _LOCK:  # the stack size and the limit are per process
        old_stack = threading.stack_size(_STACK_BYTES)
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
        try:
            thread = threading.Thread(target=target, name="shardlint-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(old_stack)
        thread.join()
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def nesting_depth(tree: ast.AST) -> tuple[int, int]:
    """The deepest nesting of ``tree``'s nodes and the line where it is
    (iterative: any depth)."""
    best, line = 0, 1
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > best:
            best, line = depth, getattr(node, "lineno", line)
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1))
    return best, line


def nesting_error(text: str, relpath: str) -> Diagnostic | None:
    """One SHD000 when ``text`` nests deeper than shardlint analyses (or
    than CPython compiles even on a deep stack); None when it may be
    analysed on a deep stack (or does not compile: the usual path reports
    that)."""

    def measure() -> tuple[int, int] | None:
        try:
            tree = compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError:
            return None
        except (RecursionError, MemoryError):
            return (-1, 1)
        return nesting_depth(tree)

    try:
        got = run_deep(measure)
    except (RecursionError, MemoryError):
        got = (-1, 1)
    if got is None:
        return None
    depth, line = got
    if depth < 0:
        return shd000(relpath, 1, 0, "not analysed: the code is nested deeper than CPython compiles")
    if depth <= MAX_NESTING:
        return None
    return shd000(
        relpath, line, 0,
        f"not analysed: the code is nested {depth:,} levels deep, over shardlint's limit of {MAX_NESTING:,}",
    )


# libcst's parser takes time exponential in the nesting of ``case``
# patterns (``case [[[...]]]``, ``case C(C(...))``: ~2x per level, 7 s at
# 20 levels); past this many it is not asked to.
MAX_PATTERN_NESTING = 12
_CASE = re.compile(r"^[ \t]*case\b", re.M)


def pattern_nesting_error(text: str, relpath: str) -> Diagnostic | None:
    """One SHD000 when a ``case`` pattern nests brackets deeper than
    :data:`MAX_PATTERN_NESTING` (read from the text: cheap, and only for
    files with a ``case`` line), else None."""
    if "case" not in text:
        return None
    for m in _CASE.finditer(text):
        depth = deepest = 0
        for i in range(m.end(), min(len(text), m.end() + 20_000)):
            ch = text[i]
            if ch in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif ch in ")]}":
                depth -= 1
            elif ch == ":" and depth <= 0 or ch == "\n" and depth <= 0:
                break
        if deepest > MAX_PATTERN_NESTING:
            line = text.count("\n", 0, m.start()) + 1
            return shd000(
                relpath, line, 0,
                f"not analysed: a case pattern nests {deepest} brackets deep, over shardlint's limit "
                f"of {MAX_PATTERN_NESTING} (libcst's parser takes exponential time in it)",
            )
    return None


def met_recursion_limit(diags: Iterable[Diagnostic], errors: Iterable[InternalError] = ()) -> bool:
    """Whether a file's results show the recursion limit was met."""
    return any(d.code == "SHD000" and "RecursionError" in d.message for d in diags) or any(
        "RecursionError" in e.message for e in errors
    )


def with_deep_retry(
    work: Callable[[], T],
    met_limit: Callable[[T], bool],
    text: str,
    relpath: str,
    too_deep: Callable[[Diagnostic], T],
) -> T:
    """``work()``; when it meets the recursion limit, ``too_deep(SHD000)``
    for code nested beyond :data:`MAX_NESTING`, else ``work()`` again on a
    deep stack."""
    slow = pattern_nesting_error(text, relpath)
    if slow is not None:
        return too_deep(slow)
    try:
        out = work()
        if not met_limit(out):
            return out
    except RecursionError:
        pass
    error = nesting_error(text, relpath)
    if error is not None:
        return too_deep(error)
    try:
        return run_deep(work)
    except RecursionError:  # pragma: no cover - the limit above is below what the deep stack holds
        return too_deep(shd000(relpath, 1, 0, "not analysed: the code is nested too deeply"))
