"""The text scanner that feeds the "classes" facts must agree with CPython's
ast on what a class is, what it inherits, and its class-level literals."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from checks._classes import ClassFacts
from checks._pyscan import blank, class_facts_from_text

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

SNIPPETS = {
    "strings_and_comments": '''
        """class Fake(Base):  module docstring"""
        from .base import Base as B, Other  # class Nope(B):
        s = "class InString(B):"
        class Real(B, Other):
            """class InDoc(B):"""
            flag = True  # flag = False
            name: str = "x#y"
            def forward(self): ...
    ''',
    "nesting_and_visibility": """
        import typing
        if typing.TYPE_CHECKING:
            from pkg.mod import Base
        else:
            Base = object
        class Outer(Base):
            class Inner(Base):
                size = -1
            async def run(self): ...
        def factory():
            class Hidden(Base):
                x = 1
            return Hidden
        try:
            class Fallback(Base):
                pass
        except ImportError:
            pass
    """,
    "multiline_headers_and_annotations": """
        from pkg import (
            Base,
            Mixin as M,
        )
        class Model(
            Base,
            M,
            metaclass=type,
        ):
            supports_pp: typing.ClassVar[bool] = True
            opt: Annotated[int, Field(ge=-1, le=8)] | None = None
            table = {
                "a": 1,
            }
            doc = '''multi
            line'''
            count: (
                int | None
            ) = 3
            only_annotated: int
            def method(self, x: int = 3) -> None:
                y = 2
    """,
    "generic_and_dotted_bases": """
        import torch.nn as nn
        from typing import Generic, TypeVar
        T = TypeVar("T")
        class Layer(nn.Module, Generic[T]):
            eps = 1e-6
            neg = -1
    """,
}


def _norm(d):
    if d is None:
        return None
    return {
        "imports": d["imports"],
        "classes": {
            k: {**v, "attrs": {a: (x["value"] if x["literal"] else None, x["literal"], x["line"], x["col"]) for a, x in v["attrs"].items()}}
            for k, v in d["classes"].items()
        },
    }


def _both(text: str, module: str = "pkg.m", path: str = "pkg/m.py"):
    tree = ast.parse(text)
    return _norm(ClassFacts.collect_ast(tree, text, module, path)), _norm(class_facts_from_text(text, module, path))


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippets_agree_with_ast(name: str) -> None:
    by_ast, by_text = _both(textwrap.dedent(SNIPPETS[name]))
    assert by_text == by_ast


def test_corpus_files_agree_with_ast() -> None:
    for f in sorted(CORPUS.rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        rel = f.relative_to(CORPUS.parent).as_posix()
        mod = rel[:-3].replace("/", ".").removesuffix(".__init__")
        by_ast, by_text = _both(text, mod, rel)
        assert by_text == by_ast, rel


def test_blank_keeps_positions() -> None:
    text = 'x = "a#b"  # c\ns = \'\'\'doc\nclass X(\n\'\'\'\ny = \'q\\\'s\'\n'
    out = blank(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert "class" not in out and "#" not in out
