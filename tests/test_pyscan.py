"""The text scanner that feeds the "classes" facts must agree with CPython's
ast on what a class is, what it inherits, and its class-level literals."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from checks._classes import ClassFacts
from checks._pyscan import _TOKEN, _FastScan, _multiline_strings, blank, class_facts_from_text

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

    "class_keyword_only_in_strings_and_comments": '''
        """A module about shapes.

        class Square(Shape):
            side = 1
        """
        # class Circle(Shape):
        label = "class Triangle(Shape):"
        def make():
            return 'class Hexagon(Shape): pass'
    ''',
    "class_after_a_docstring_holding_a_class": '''
        """Usage:

        class Custom(Plugin):
            name = "custom"
        from fake import Plugin
        """
        from .plugins import Plugin

        class Builtin(Plugin):
            """Doc.
        class Inner(Plugin):
            """
            name = "builtin"
    ''',
    "triple_quotes_inside_comments_and_strings": """
        from .base import Base
        # a lone \\"\\"\\" in a comment opens nothing
        QUOTE = '\\"\\"\\"'
        OTHER = "'''"
        class Kept(Base):
            mark = '\\"\\"\\"'
            after = 2
    """,
    "comments_in_class_bodies": """
        from .base import Base
        class Commented(Base):
                # a comment deeper than the body
            first = 1
        # a comment at column 0 does not end the body
            second = "two"  # second = 3
            third: int = 3  # : x = (
            def method(self):  # def other(self):
                pass
        class Next(Base):
            pass
    """,
    "string_continued_with_a_backslash": """
        from .base import Base
        class Continued(Base):
            def message(self):
                return "first half \\
        class Fake(Base): second half"
            after = True
        def helper():
            return 'x \\
        import nothing'
    """,
    "imports_with_comments_and_strings": """
        import os, sys  # , json as j
        from .a import (  # (comment with parens)
            A,  # B, C
            D as E,
        )
        from .b import F  # , G
        from .c import (H,
                        I)
        if sys.version_info >= (3, 11):
            import tomllib as toml
        class Uses(A, E, F, H, I, toml.Loader):
            pass
    """,
    "bases_over_lines_with_comments": """
        from .m import A, B
        class Many(  # (
            A,  # ) not the end
            B,
        ):  # :
            x = [
                "(",  # [
            ]
            y = {"k=": "v)"}
            z = '''line
        ) one
        ( two'''
            w = 1
    """,
    "classes_nested_in_functions_and_blocks": """
        from .base import Base
        class Top(Base):
            class Mid(Base):
                class Low(Base):
                    depth = 3
                def build(self):
                    class InMethod(Base):
                        hidden = True
                    return InMethod
            if True:
                class InIf(Base):
                    flag = 1
            else:
                class InElse(Base):
                    flag = 2
        def outer():
            class InFunction(Base):
                pass
        try:
            class InTry(Base):
                class Deeper(Base):
                    ok = 1
        except ImportError:
            class InExcept(Base):
                pass
        for _ in range(1):
            class InLoop(Base):
                pass
    """,
    "one_line_blocks_in_class_bodies": """
        from .base import Base
        FLAG = True
        class OneLiners(Base):
            if FLAG: kind = "a"
            else: kind = "b"
            for_ = 2
            def run(self): return 1
    """,
}

# not read like ast (the scanner assumes space indentation), but the fast
# reading must fall back to the plain one here
PLAIN_ONLY = {
    "tab_indentation": "from .base import Base\nclass Tabbed(Base):\n\tsize = 4\n\tdef run(self):\n\t\tpass\n",
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


def _texts():
    """Every snippet and corpus file, as (name, text, module, path)."""
    for name, src in sorted({**SNIPPETS, **PLAIN_ONLY}.items()):
        yield name, textwrap.dedent(src), "pkg.m", "pkg/m.py"
    for f in sorted(CORPUS.rglob("*.py")):
        rel = f.relative_to(CORPUS.parent).as_posix()
        mod = rel[:-3].replace("/", ".").removesuffix(".__init__")
        yield rel, f.read_text(encoding="utf-8"), mod, rel


def test_fast_reading_gives_the_plain_readings_facts() -> None:
    # the fast path blanks only multi-line strings up front and the lines it
    # reads on demand: its facts must be those of blanking the whole text
    seen = 0
    for name, text, mod, path in _texts():
        fast = class_facts_from_text(text, mod, path)
        assert fast == class_facts_from_text(text, mod, path, fast=False), name
        seen += fast is not None
    assert seen > 20


# the plain form of the token pattern ``_TOKEN`` unrolls
_PLAIN_TOKEN = re.compile(
    r"#[^\n]*|'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^\"\\]|\\.|\"(?!\"\"))*\"\"\""
    r"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"",
    re.DOTALL,
)


def test_multiline_strings_and_windows_agree_with_blank() -> None:
    tricky = "s = 'a\\\nb'  # '''\nt = \"'''\"\nu = '''x\ny''' + \"\"\"\"\"\"\n"
    for name, text, _, _ in [*_texts(), ("tricky", tricky, "", "")]:
        tokens = list(_TOKEN.finditer(text))
        assert [m.span() for m in tokens] == [m.span() for m in _PLAIN_TOKEN.finditer(text)], name
        spans = [m.span() for m in tokens if "\n" in m.group()]
        assert _multiline_strings(text) == spans, name
        if "\t" in text:
            continue
        scan, blanked = _FastScan(text), blank(text)
        ends = [i for i, ch in enumerate(text) if ch == "\n"] + [len(text)]
        for k, a in enumerate([0] + [e + 1 for e in ends[:-1]]):
            if any(s < a < e for s, e in spans):
                continue  # a line inside a string: never read from
            for b in (ends[k], ends[min(k + 3, len(ends) - 1)]):
                assert scan.window(a, b) == blanked[a:b], (name, a, b)
