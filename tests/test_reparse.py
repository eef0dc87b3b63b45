"""An edited buffer parsed from its last parse (``linter.reparse``: one
statement parsed again) gets the findings a whole parse gives, on every
corpus file and edits inside each of its functions; and edits of the shapes
it must refuse are parsed whole."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from corpus_harness import CORPUS, rule_dirs

from linter.check import parse_module_unvalidated
from linter.config import Config
from linter.engine import Engine
from linter.lsp.buffers import lint_buffer
from linter.registry import load_registry
from linter.reparse import ParseMemo


def edits(text: str, most: int = 6) -> list[str]:
    """``text`` with one line added after a statement inside a function
    (the statement's indentation), for up to ``most`` statements spread over
    the file; and with one such statement's line removed."""
    tree = ast.parse(text)
    sites = [
        st
        for fn in ast.walk(tree)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for st in ast.walk(fn)
        if isinstance(st, (ast.Assign, ast.Expr, ast.Return, ast.AugAssign)) and st is not fn
    ]
    step = max(1, len(sites) // most)
    lines = text.split("\n")
    out = []
    for st in sites[::step][:most]:
        end = st.end_lineno or st.lineno
        added = [*lines[:end], " " * st.col_offset + "_edited = 0", *lines[end:]]
        out.append("\n".join(added))
        out.append("\n".join([*lines[:end], "", *lines[end:]]))  # a blank line
        if isinstance(st, (ast.Assign, ast.Expr)) and st.lineno == end and len(fn_body_of(tree, st)) > 1:
            out.append("\n".join([*lines[: st.lineno - 1], *lines[st.lineno :]]))
    out.append(text + "# appended\n")  # the module's last lines
    out.append(text + "\n\n# appended\n\n")
    return out


def fn_body_of(tree: ast.Module, st: ast.stmt) -> list[ast.stmt]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and st in body:
                return body
    return []


def findings(engine: Engine, text: str, path: Path, memo: ParseMemo | None) -> list[dict]:
    got = lint_buffer(engine, text, path, engine.project_facts(), memo)
    assert not got.errors, got.errors
    return [d.to_dict() for d in got.diagnostics]


@pytest.mark.parametrize("folder", rule_dirs(), ids=lambda p: p.name)
def test_an_edit_parsed_from_the_last_parse_finds_what_a_whole_parse_finds(folder: Path) -> None:
    registry = load_registry()
    engine = Engine(Config(root=folder, select=("ALL",)), registry, jobs=1)
    ways: dict[str, int] = {}
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            variants = edits(text)
        except SyntaxError:
            continue
        for edited in variants:
            try:
                ast.parse(edited)
            except SyntaxError:
                continue
            memo = ParseMemo()
            findings(engine, text, path, memo)
            assert findings(engine, edited, path, memo) == findings(engine, edited, path, None), path
            ways[memo.last] = ways.get(memo.last, 0) + 1
            # and back
            assert findings(engine, text, path, memo) == findings(engine, text, path, None), path
    assert ways.get("statement", 0) > 0, ways


def parse_twice(before: str, after: str) -> tuple[ParseMemo, object]:
    memo = ParseMemo()
    memo.parse(before, ast.parse(before), parse_module_unvalidated)
    return memo, memo.parse(after, ast.parse(after), parse_module_unvalidated)


CLASS = """\
import os


class Runner:
    size = 4

    def first(self, x):
        y = x + 1
        return y

    @property
    def second(self):
        return self.size
        # a comment the parser gives to the method's block

    def third(self):
        return 3
"""


def test_an_edit_inside_a_method_parses_that_method_alone() -> None:
    after = CLASS.replace("        y = x + 1\n", "        y = x + 1\n        y *= 2\n")
    memo, module = parse_twice(CLASS, after)
    assert memo.last == "statement"
    assert module.code == after  # the tree is the new text's, positions included


def test_an_edit_next_to_a_comment_a_block_swallowed_is_parsed_whole() -> None:
    after = CLASS.replace("        return self.size\n", "        return self.size * 2\n")
    memo, module = parse_twice(CLASS, after)
    assert memo.last == "whole"
    assert module.code == after


@pytest.mark.parametrize(
    "after",
    [
        CLASS.replace("        return y\n\n", "        return y\n\n\n"),  # between methods
        CLASS.replace("        return y\n\n", "        return y\n"),
        CLASS.replace("        y = x + 1\n", "        y = x + 1\n\n"),  # inside one
        CLASS + "# appended\n",  # the module's last lines
        CLASS + "\n# appended\n\n",
    ],
)
def test_blank_lines_added_or_removed_parse_nothing_again(after: str) -> None:
    memo, module = parse_twice(CLASS, after)
    assert memo.last == "statement"
    assert module.code == after


@pytest.mark.parametrize(
    "after",
    [
        CLASS.replace("    size = 4\n", "    size = 8\n"),  # a class-level statement
        CLASS.replace("import os\n", "import os, sys\n"),  # a module statement's only line
        CLASS.replace("    def third(self):\n", "    def third(self, z):\n"),  # a definition's first line
        CLASS.replace("        return y\n\n", "        return y\n\n    def fourth(self):\n        pass\n\n"),
        CLASS + "    # indented: the last method's block takes it\n",
        CLASS + "x = 1\n",
    ],
)
def test_edits_no_method_holds_parse_the_class_or_the_file(after: str) -> None:
    """A class-level statement, a definition's first line, a new method: the
    class is parsed again (or the file: the module's first statement)."""
    memo, module = parse_twice(CLASS, after)
    assert memo.last in ("statement", "whole")
    assert module.code == after
