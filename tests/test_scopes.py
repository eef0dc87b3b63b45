"""Reading only some top-level statements or class members by text
(``checks._textfunctions.top_level_regions``/``class_members``): the regions
follow Python's statements, and a text masked to any of them compiles to the
statements ``linter.facts.scoped_tree`` reads from the whole."""

from __future__ import annotations

import ast
import itertools
import textwrap
from typing import Any

import pytest
from corpus_harness import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from checks._textfunctions import top_level_regions
from linter.facts import mask_text, scoped_tree

# Statements Python reads in ways a line-based reader could miss: decorators
# over blank and comment lines, clauses in column 0, brackets and strings
# running over column-0 lines, continuations, semicolons.
TRICKY = textwrap.dedent(
    '''\
    """A module docstring
    class NotAClass:
    def not_a_function():
    """
    import os; import sys
    @decorator

    # a comment between a decorator and its definition
    @other(
    1,
    )
    def decorated():
        x = [
    1,
    ]
        return x
    if os:
        pass
    elif sys:
        pass
    else:
        pass
    try:
        pass
    except (ValueError,
    TypeError):
        pass
    finally:
        pass
    for i in range(3):
        pass
    else:
        pass
    total = 1 + \\
    2
    text = f"""{total}
    def inside_a_string():
    """
    (a, b) = 1, 2
    "a string statement"
    async def coroutine():
        await x
    class Last:
        def method(self):
            return """
    class Inside:
    """
    '''
)


def _corpus_texts() -> list[tuple[str, str]]:
    out = [("tricky.py", TRICKY)]
    for p in sorted(CORPUS.rglob("*.py")):
        out.append((str(p.relative_to(CORPUS)), p.read_text(encoding="utf-8")))
    return out


TEXTS = _corpus_texts()


def _dump(body: list[ast.stmt]) -> list[str]:
    return [ast.dump(s, include_attributes=True) for s in body]


def test_regions_start_where_pythons_statements_start() -> None:
    regions = top_level_regions(TRICKY)
    assert regions is not None
    tree = ast.parse(TRICKY)
    starts = {TRICKY.count("\n", 0, a) + 1 for a, _ in regions}
    # every statement starts in a region; every region but the first starts
    # at a statement (or its first decorator), except a string statement,
    # which goes with the statement above
    firsts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in tree.body]
    strings = {s.lineno for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
    assert starts - {1} == set(firsts) - strings - {1}
    assert [b for _, b in regions][-1] == len(TRICKY)
    assert all(b == a2 for (_, b), (a2, _) in itertools.pairwise(regions))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(TEXTS))), st.randoms(use_true_random=False))
def test_any_regions_masked_compile_to_the_statements_read_from_the_whole(i: int, rnd: Any) -> None:
    name, text = TEXTS[i]
    regions = top_level_regions(text)
    if regions is None:
        return
    kept = [r for r in regions if rnd.random() < 0.5]
    whole = ast.parse(text)
    part = compile(mask_text(text, kept), name, "exec", ast.PyCF_ONLY_AST)
    assert _dump(part.body) == _dump(scoped_tree(whole, text, kept).body)
    # the masked text keeps every position
    assert mask_text(text, kept).count("\n") == text.count("\n")


@pytest.mark.parametrize("text", ["class A:\n\tpass\n", "x = 1\r\ny = 2\r\n", "x = 1\n\f\ny = 2\n"])
def test_tabs_form_feeds_and_carriage_returns_are_read_whole(text: str) -> None:
    assert top_level_regions(text) is None


# A class body a line reader could split wrongly: a docstring and a string
# statement, decorators over comment lines, a clause in the body's column,
# a bracket closing below the body's column, a nested class, an async method.
TRICKY_CLASS = textwrap.dedent(
    '''\
    import os


    @dataclass
    class Holder(
        Base,
        metaclass=Meta,
    ):
        """Doc,
    class NotAMember:
        """

        size: int = -1

        @property
        # a comment between a decorator and its method
        @other(
            1,
        )
        def width(self):
            return (1,
    2)
        "a string statement after a method"
        if os:
            def maybe(self):
                pass
        else:
            pass

        class Inner:
            def method(self):
                pass

        async def later(self):
            await os.x

        def __init__(self):
            self.impl = Impl()
    '''
)


def _class_texts() -> list[tuple[str, str]]:
    return [("tricky_class.py", TRICKY_CLASS), *TEXTS]


def test_class_members_are_the_statements_pythons_class_body_holds() -> None:
    """``class_members``: each statement directly in a class's body starts a
    member at its first line (a decorator's), a string statement going with
    the member before it; ``is_def`` tells a method; the members run to the
    region's end. Classes whose body shares the header's line are read whole."""
    from checks._textfunctions import class_members, skeleton_to

    seen = 0
    for name, text in _class_texts():
        regions = top_level_regions(text)
        if regions is None:
            continue
        sk = skeleton_to(text, len(text))
        tree = ast.parse(text)
        by_line = {min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]): s for s in tree.body}
        for a, b in regions:
            got = class_members(sk, a, b)
            node = by_line.get(text.count("\n", 0, a) + 1)
            while node is None and a < b:  # (a region may start with blank or comment lines)
                a = text.index("\n", a) + 1
                node = by_line.get(text.count("\n", 0, a) + 1)
            if not isinstance(node, ast.ClassDef):
                assert got is None, name
                continue
            if got is None:
                assert node.body[0].lineno == node.lineno, name  # the body on the header's line
                continue
            first, members = got
            seen += 1
            lines = [text.count("\n", 0, s) + 1 for s, _, _ in members]
            expect = [
                min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))])
                for s in node.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            assert lines == expect, name
            kinds = [isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in node.body
                     if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            assert [d for _, _, d in members] == kinds, name
            assert first == members[0][0] and members[-1][1] == b
            assert all(e == s2 for (_, e, _), (s2, _, _) in itertools.pairwise(members))
    assert seen >= 30


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(range(len(TEXTS) + 1)), st.randoms(use_true_random=False))
def test_any_class_members_masked_compile_to_the_class_read_from_the_whole(i: int, rnd: Any) -> None:
    """A scope that keeps some of a class's statements (its header and at
    least one statement of its body): the masked text compiles to the class
    ``scoped_tree`` makes of the whole text's, positions included."""
    from checks._textfunctions import class_members, skeleton_to

    name, text = _class_texts()[i]
    regions = top_level_regions(text)
    if regions is None:
        return
    sk = skeleton_to(text, len(text))
    kept: list[tuple[int, int]] = []
    for a, b in regions:
        got = class_members(sk, a, b) if rnd.random() < 0.8 else None
        if got is None:
            if rnd.random() < 0.5:
                kept.append((a, b))
            continue
        first, members = got
        chosen = [(s, e) for s, e, _ in members if rnd.random() < 0.5] or [members[-1][:2]]
        kept += [(a, first), *chosen]
    whole = ast.parse(text)
    part = compile(mask_text(text, kept), name, "exec", ast.PyCF_ONLY_AST)
    assert _dump(part.body) == _dump(scoped_tree(whole, text, kept).body)
