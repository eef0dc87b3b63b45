"""Helpers the fact collectors share: where an ``ast`` node lies in code
points, a function's parameters, memoised queries and lookups over lazy facts."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from linter.astwalk import ast_dotted

T = TypeVar("T")

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` as the compiler numbers them (``str.splitlines``
    also breaks at form feeds, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028/U+2029)."""
    return _LINE_BREAK.split(text)


def column(lines: list[str], line: int, byte_col: int) -> int:
    """The code-point column of ``ast``'s UTF-8 byte column on ``line``."""
    if not 1 <= line <= len(lines):
        return byte_col
    raw = lines[line - 1].encode("utf-8", "surrogatepass")
    return len(raw[:byte_col].decode("utf-8", "replace"))


def span(node: Any, lines: list[str]) -> list[int]:
    """``[line, col, end_line, end_col]`` of a statement or expression."""
    end_line = node.end_lineno or node.lineno
    return [
        node.lineno,
        column(lines, node.lineno, node.col_offset),
        end_line,
        column(lines, end_line, node.end_col_offset or 0),
    ]


def param_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The names of ``fn``'s parameters, ``*args`` and ``**kwargs`` left out."""
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]


def decorator_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The dotted names of ``fn``'s decorators, called or not (``triton.jit``)."""
    names = (ast_dotted(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list)
    return [n for n in names if n]


def module_splits(qualname: str) -> Iterator[tuple[str, str]]:
    """``(module, local name)`` for each way ``qualname`` can split, the
    longest module first: ``a.b.C.D`` is ``D`` in ``a.b.C``, ``C.D`` in ``a.b``..."""
    parts = qualname.split(".")
    for i in range(len(parts) - 1, -1, -1):
        yield ".".join(parts[:i]), ".".join(parts[i:])


def memoised(query: Callable[..., T]) -> Callable[..., T]:
    """A query method of an index over lazy facts, memoised in the index's
    ``RecordedMemo`` (``self._memo``): served again, an answer replays the
    modules read to compute it into the open recordings."""

    @functools.wraps(query)
    def method(self: Any, *args: str) -> T:
        return self._memo(query.__name__, "\0".join(args), lambda: query(self, *args))

    return method


class Lookup(Generic[T]):
    """A read-only mapping whose values are found one key at a time by
    ``find`` (a falsy answer: no such key). The facts are lazy: nothing lists
    every key, as that would read every module."""

    def __init__(self, find: Callable[[str], T | None]) -> None:
        self._find = find

    def get(self, key: str, default: Any = None) -> Any:
        return self._find(key) or default

    def __getitem__(self, key: str) -> T:
        got = self._find(key)
        if not got:
            raise KeyError(key)
        return got

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._find(key))
