"""The text scanner that feeds the "classes" facts must agree with CPython's
ast on what a class is, what it inherits, and its class-level literals.

Run as a script to compare the readings over whole trees (the fast reading
against the plain one and against the ast; not tests: the real trees are not
part of the repository), or to time the fast one::

    python tests/test_pyscan.py ~/.cache/shardlint-corpus/vllm-0.33.0/vllm ...
    python tests/test_pyscan.py --bench ~/.cache/shardlint-corpus/vllm-0.33.0/vllm ...
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

if __name__ == "__main__":  # run as a script from anywhere
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks import _pyscan as P
from checks._classes import ClassFacts
from checks._pyscan import _TOKEN, Uncertain, _FastScan, _multiline_strings, blank, class_facts_from_text

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
    # -- shapes a non-black file has (a sweep of the stdlib and site-packages)
    "imports_continued_with_backslashes": """
        from .shapes import Circle, \\
            Square as Sq
        from .solids \\
            import Cube
        import os.path, \\
            json as js
        class Tile(Circle, Sq, Cube, js.JSONDecoder):
            pass
    """,
    "imports_after_semicolons_and_block_colons": """
        import os; import json as js
        try: from .fast import Engine
        except ImportError: from .slow import Engine
        if os.name: import sys
        from .base import(Base)
        class Car(Engine, Base, js.JSONEncoder):
            pass
    """,
    "string_closing_at_column_zero_inside_a_class": '''
        from .base import Base
        class Help(Base):
            usage = """\\
        run it like this
        """
            after = 1
            def show(self):
                return self.usage
    ''',
    "one_line_class_then_its_sibling": """
        from .base import Base
        class Outer(Base):
            class Failed(Exception): pass
            class Retry(Failed): ...
            limit = 3
            def run(self):
                pass
    """,
    "prefixed_strings_and_point_floats": """
        class Patterns:
            word = r"\\w+"
            label = u'name'
            both = R'x' U"y"
            half = .5
            big = 1_000
            hexed = 0x1F
            raw_bytes = rb'no'
    """,
    "brackets_and_strings_back_at_column_zero": '''
        class Table:
            rows = [
        ("it's", 1),
        ("a", 2),
                ]
            text = ("one "
        "two")
            def first(self):
                return self.rows[0]
            def second(self):
                return self.rows[1]
    ''',
    "keyword_arguments_at_the_body_indent": '''
        class Options:
            path = make_option(
            help="""Where to look.

            Any folder.
            """)
            verbose = False
    ''',
    "a_loop_else_and_finally_hide_classes": """
        for _ in range(1):
            pass
        else:
            class FromLoopElse:
                x = 1
        try:
            pass
        finally:
            class FromFinally:
                y = 2
        if True:
            pass
        else:
            class FromIfElse:
                z = 3
    """,
    "conditional_expression_as_a_base": """
        import gzip
        class Reader(gzip.GzipFile if gzip else object):
            pass
    """,
    "keyword_lines_that_end_class_bodies": """
        class First:
            a = 1
        def helper(): pass
        class Second:
            b = 2
        @staticmethod
        def other(): pass
        class Third:
            c = (1,
                 2)
        __all__ = [
            "First",
        ]
    """,
}

# not read like ast (the scanner assumes space indentation), but the fast
# reading must fall back to the plain one here
PLAIN_ONLY = {
    "tab_indentation": "from .base import Base\nclass Tabbed(Base):\n\tsize = 4\n\tdef run(self):\n\t\tpass\n",
}

# shapes the text reader declines (``Uncertain``): ``ClassFacts.collect`` reads
# them from the ast, the text's reading standing for a text that does not
# compile. The value: the reason the reader gives
UNCERTAIN = {
    "chained_assignment": ("class C:\n    a = b = 'x'\n", "a chained assignment"),
    "statements_after_semicolons": ("class C:\n    a = 1; b = 2\n", "statements after a ;"),
    "statements_after_the_header_colon": ("class C: a = 1\n", "statements after a class header"),
    "assignment_continued_with_a_backslash": (
        "class C:\n    text = \\\n        'joined'\n",
        "a statement continued with a backslash",
    ),
    "parenthesized_target": ("class C:\n    (a) = 1\n    b = 2\n", "a parenthesized target"),
    "tab_indentation": ("class C:\n\ta = 1\n\tdef f(self):\n\t\tpass\n", "a tab or form feed in indentation"),
    "form_feed_before_a_class": ("x = 1\n\x0cclass C:\n    a = 1\n", "a tab or form feed in indentation"),
    "name_that_is_not_ascii": ("class C:\n    \u00e9t\u00e9 = 1\n", "a name that is not ASCII"),
    "class_header_continued_with_a_backslash": (
        "class C \\\n        (object):\n    a = 1\n",
        "a class header it cannot read",
    ),
    "except_star_around_a_class": (
        "try:\n    class C:\n        a = 1\nexcept* ValueError:\n    pass\n",
        "except*",
    ),
    "code_after_a_multi_line_string_value": (
        'class C:\n    pattern = """\n    (one)\n    """ % ("x",)\n',
        "code after a multi-line string value",
    ),
    "annotation_longer_than_the_reader_looks": (
        "class C:\n    a: Union[\n" + "        int,\n" * 700 + "    ] = None\n",
        "a statement too long to read",
    ),
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
    """The ast's reading and the text's (``strict``: read, not declined)."""
    tree = ast.parse(text)
    by_text = class_facts_from_text(text, module, path, strict=True)
    return _norm(ClassFacts.collect_ast(tree, text, module, path)), _norm(by_text)


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


def _reason(text: str, fast: bool = True) -> str | None:
    """Why the text reader declines ``text`` (None: it reads it)."""
    try:
        class_facts_from_text(text, "pkg.m", "pkg/m.py", fast=fast, strict=True)
    except Uncertain as u:
        return u.reason
    return None


@pytest.mark.parametrize("name", sorted(UNCERTAIN))
def test_uncertain_shapes_fall_back_to_the_ast(name: str) -> None:
    # the reader says why it declines (fast and plain readings alike), and
    # the collector then reads the ast: the same facts as ``collect_ast``
    text, reason = UNCERTAIN[name]
    assert _reason(text) == reason
    assert _reason(text, fast=False) == reason
    tree = ast.parse(text)
    assert ClassFacts.collect(None, text, "pkg.m", "pkg/m.py") == ClassFacts.collect_ast(tree, text, "pkg.m", "pkg/m.py")


def test_uncertain_text_that_does_not_compile_keeps_the_text_reading() -> None:
    # no ast to fall back to: the text's reading, as without ``strict``
    text = "class C:\n    a = b = 'x'\n    def f(:\n        pass\n"
    with pytest.raises(SyntaxError):
        ast.parse(text)
    assert _reason(text) == "a chained assignment"
    got = ClassFacts.collect(None, text, "pkg.m", "pkg/m.py")
    assert got == class_facts_from_text(text, "pkg.m", "pkg/m.py")
    assert got["classes"]["C"]["methods"] == ["f"]


def test_snippets_are_read_not_declined() -> None:
    # every snippet compared with the ast above is read by the text reader
    # (``_both`` reads strictly); and the fast and plain readings decline the
    # same texts, for the same reason
    for name, text, _, _ in _texts():
        fast = _reason(text)
        assert fast == _reason(text, fast=False), name
        assert (fast is None) == (name not in UNCERTAIN and name not in PLAIN_ONLY), name


def _logical_lines(text: str) -> set[int]:
    """The 0-based lines where Python's tokenizer starts logical lines."""
    import io
    import tokenize

    out, new = set(), True
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
            continue
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            new = True
            continue
        if new:
            out.add(tok.start[0] - 1)
            new = False
    return out


def test_plain_reading_starts_logical_lines_where_python_does() -> None:
    # ``_Lines`` (the plain reading's logical lines) against the tokenizer,
    # on every text that compiles
    for name, text, _, _ in _texts():
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        lines = P._Lines(blank(text), text)
        got = {lines.line_of(ls) for ls in lines.logical}
        assert got == _logical_lines(text), name


def _ref_top_eq(v: str) -> bool:
    depth = 0
    for i, ch in enumerate(v):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth <= 0:
            if v[i + 1 : i + 2] == "=" or (i and v[i - 1] in "=!<>:"):
                continue
            return True
    return False


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab=()[]{}<>!: ", max_size=24))
def test_top_level_eq_agrees_with_a_character_loop(v: str) -> None:
    assert P._top_eq(v) == _ref_top_eq(v)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab([{)]}\n", max_size=30), st.integers(0, 30), st.integers(0, 30))
def test_opens_finds_an_opening_bracket(s: str, a: int, b: int) -> None:
    assert P._opens(s, a, b) == any(ch in "([{" for ch in s[a:b])


def test_blank_keeps_positions() -> None:
    text = 'x = "a#b"  # c\ns = \'\'\'doc\nclass X(\n\'\'\'\ny = \'q\\\'s\'\n'
    out = blank(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert "class" not in out and "#" not in out


def _texts():
    """Every snippet and corpus file, as (name, text, module, path)."""
    for name, src in sorted({**SNIPPETS, **PLAIN_ONLY}.items()):
        yield name, textwrap.dedent(src), "pkg.m", "pkg/m.py"
    for name, (src, _) in sorted(UNCERTAIN.items()):
        yield name, src, "pkg.m", "pkg/m.py"
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
        if "\t" in text or "\f" in text:
            continue
        scan, blanked = _FastScan(text), blank(text)
        ends = [i for i, ch in enumerate(text) if ch == "\n"] + [len(text)]
        for k, a in enumerate([0] + [e + 1 for e in ends[:-1]]):
            if any(s < a < e for s, e in spans):
                continue  # a line inside a string: never read from
            for b in (ends[k], ends[min(k + 3, len(ends) - 1)]):
                assert scan.window(a, b) == blanked[a:b], (name, a, b)


# -- the helpers against the plain loops they replace ---------------------------
# (each visited every character, or compiled every literal; the scanner's
# helpers jump to the characters that matter and must do exactly the same)


def _ref_balanced(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _ref_split_top(s: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def _ref_assignment_eq(blanked: str, start: int, full_len: int | None = None) -> int:
    n = len(blanked)
    full = n if full_len is None else full_len
    if blanked.startswith("==", start):
        return -1
    if blanked[start] == "=":
        return start
    depth = 0
    stop = min(full, start + 5000)
    for i in range(start + 1, min(n, stop)):
        ch = blanked[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n" and depth <= 0:
            return -1
        elif ch == "=" and depth == 0:
            if i + 1 >= n and n < full:
                raise P._Short
            if blanked[i + 1 : i + 2] == "=" or blanked[i - 1] in "=!<>":
                return -1
            return i
    if stop > n:
        raise P._Short
    return -2 if stop < full else -1


def _ref_expr_end(blanked: str, start: int, full_len: int | None = None) -> int:
    n = len(blanked)
    stop = min(n if full_len is None else full_len, start + 20000)
    depth = 0
    for i in range(start, min(n, stop)):
        ch = blanked[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n" and depth <= 0:
            return i
    if stop > n:
        raise P._Short
    return -1 if stop < (n if full_len is None else full_len) else start


def _ref_literal(raw: str) -> tuple[bool, Any]:
    v = raw.strip()
    prefixed = re.match(r"[rRuUbBfF]{1,2}['\"]", v)
    if v and (v[0].isdigit() or v[0] in "-+'\"(." or v in ("True", "False", "None") or prefixed):
        try:
            val = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False, v
        if val is None or isinstance(val, (bool, int, float, str)):
            return True, val
    return False, v


def _outcome(f: Any, *args: Any) -> Any:
    try:
        return f(*args)
    except P._Short:
        return "short"


_CODEISH = st.text(alphabet="([{)]}=,!<> ab\n:", max_size=40)


@settings(max_examples=400, deadline=None)
@given(_CODEISH, st.integers(0, 40), st.integers(0, 60))
def test_bracket_scans_agree_with_character_loops(s: str, at: int, extra: int) -> None:
    assert P._balanced(s, min(at, len(s))) == _ref_balanced(s, min(at, len(s)))
    assert list(P._split_top(s)) == _ref_split_top(s)
    if s:
        start = min(at, len(s) - 1)
        for full in (None, len(s) + extra):
            assert _outcome(P._assignment_eq, s, start, full) == _outcome(_ref_assignment_eq, s, start, full)
            assert _outcome(P._expr_end, s, start, full) == _outcome(_ref_expr_end, s, start, full)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # literal_eval of "\\ "
@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789-+_.exjTrueFalsNn ", max_size=22),
        st.text(alphabet="\"'ab\\\n\r\0 #{}é", max_size=10),
        st.sampled_from(
            ["None", "True", "False", "0", "-0", "00", "007", "1_000", "9" * 30, "-12", "'a'", '"b"', "b'x'", "u'x'"]
        ),
    )
)
def test_literal_fast_paths_read_like_literal_eval(raw: str) -> None:
    got, want = P._literal("", raw), _ref_literal(raw)
    assert got == want and type(got[1]) is type(want[1])


def _ast_literal(raw: str) -> tuple[bool, Any] | None:
    """What ``ClassFacts.collect_ast`` reads for a value written ``raw``
    (None: not an expression)."""
    from checks._classes import _literal as ast_literal

    try:
        node = ast.parse(raw.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return ast_literal(node)


_PREFIXES = ["", "r", "u", "R", "U", "b", "rb", "Br", "f", "rf"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # invalid escapes
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789-+_.exjTrueFalsNn ()", max_size=16),
        st.tuples(
            st.sampled_from(_PREFIXES), st.sampled_from(["'", '"', "'''"]), st.text(alphabet="ab\\ {}'\n", max_size=6)
        ).map(lambda t: t[0] + t[1] + t[2] + t[1]),
    )
)
def test_literals_read_as_the_ast_reads_them(raw: str) -> None:
    # literal or not, and which value, as ``ClassFacts.collect_ast`` decides
    want = _ast_literal(raw)
    assume(want is not None)
    got = P._literal("", raw)
    assert got[0] == want[0]
    if got[0]:
        assert got[1] == want[1] and type(got[1]) is type(want[1])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="'\"\\\nab", max_size=60), st.integers(0, 60))
def test_quote_and_continuation_finds_agree_with_str_find(text: str, pos: int) -> None:
    assert P._find_single_triple(text, pos) == text.find("'''", pos)
    assert P._find_continuation(text, pos) == text.find("\\\n", pos)


_QUOTISH = st.lists(
    st.sampled_from(['"""', "'''", '"', "'", "\\", "\n", " ", "a", "#"]), max_size=24
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(_QUOTISH, st.text(alphabet="\"'\\\n a#", max_size=50)))
def test_multiline_strings_are_the_blanked_tokens_with_a_newline(text: str) -> None:
    # a ``"""`` string with no backslash is ended by a find, not by ``_TOKEN``
    spans = [m.span() for m in _TOKEN.finditer(text) if "\n" in m.group()]
    assert _multiline_strings(text) == spans


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\n\r\té ", max_size=30), st.sampled_from(['"""', "'''", "'", '"']))
def test_blank_str_blanks_every_character_but_newlines(inner: str, q: str) -> None:
    tok = q + inner + q
    assert P._blank_str(tok) == tok[: len(q)] + re.sub(r"[^\n]", " ", inner) + tok[len(tok) - len(q) :]


def test_class_heads_of_the_text_hold_those_of_the_blanked_text() -> None:
    # the fast reading takes the heads of the raw text and keeps those still
    # there once strings are blanked; a file with none stops early
    for name, text, mod, path in _texts():
        raw, blanked = P._class_heads(text), P._class_heads(blank(text))
        assert set(blanked) <= set(raw), name
        if not raw and not path.endswith("__init__.py"):
            assert class_facts_from_text(text, mod, path, fast=False) is None, name


LOOKALIKES = '''
from .a import B as C, D  # , E
from .f import (G,
    H)
from . import I
from .j import K, L as M
from dataclasses import dataclass
@dataclass
class Cfg(C):
    size: int = 4
    @classmethod
    def make(cls): return cls()
# a comment at column 0
    mode = "x#y"
x = Cfg.__class__
class Tail(D, G, H, I, K, M): pass
'''


def test_lookalikes_of_imports_and_class_bodies() -> None:
    # one-line ``from`` imports read in one match, bodies ended along with
    # their statements, heads found past ``@classmethod`` / ``dataclass``
    by_ast, by_text = _both(LOOKALIKES)
    assert by_text == by_ast
    fast = class_facts_from_text(LOOKALIKES, "pkg.m", "pkg/m.py")
    assert fast == class_facts_from_text(LOOKALIKES, "pkg.m", "pkg/m.py", fast=False)
    assert set(fast["classes"]) == {"Cfg", "Tail"}
    # a backslash-continued import: read whole (by the plain reading, which
    # the fast one leaves such a text to)
    cont = LOOKALIKES.replace("L as M\n", "L as M, \\\n    N\n")
    assert "\\\n" in cont
    by_ast, by_text = _both(cont)
    assert by_text == by_ast and by_text["imports"]["N"] == "pkg.j.N"
    assert class_facts_from_text(cont, "pkg.m", "pkg/m.py") == class_facts_from_text(
        cont, "pkg.m", "pkg/m.py", fast=False
    )


# class-level statements of every shape the body scan tells apart: methods
# (``def`` read with the line, ``async def`` and look-alikes with the statement
# pattern), assignments read from their line alone (``=`` at bracket depth 0,
# brackets on the line) and those that need the window (strings, comments,
# brackets left open)
STATEMENT_SHAPES = '''
class Shapes(Base):
    a = 1
    b: int = 2
    c: dict[str, int] = {}
    d: Annotated[int, Meta(k=1)] = 3
    e: list[int]
    f: Callable[
        [int], int
    ] = g
    h = (1 +
         2)
    i = [x for x in range(3)]
    j = m == n
    j2 == 3
    j3 != 4
    k: Tuple[int, int] = (1,
                          2)
    p = call(a)(b)
    q: x[1] = y[2]
    def method(self): ...
    def  spaced (self): ...
    async def run(self): ...
    async  def  run2(self): ...
    define = 5
    def_ = 6
    t = """doc
    more"""
    u = 'x' # c
    v = -1  # ( [
    w=3
    z :int=7
    y: int = f(a=1)  # b = 2
    x2: "Fwd" = None
    x5: int = 1 if a else 2
    if flag:
        hidden = 1
    class Inner:
        deep = 2
    s1 = call(")",
              2)
    s2 = call("(", x)[
        0]
    s3: dict[str, str] = {"a": "(", "b": ")"}  # ) ]
    s4: str = f"{x} = y"
    s5 = x if "a == b" else y
    tail = "end"
'''
# lines CPython would not take, or reads otherwise (the text readings skip
# what follows a ``;`` and the later targets of a chained assignment): read
# alike by the fast and the plain readings
BROKEN_STATEMENTS = """
class Broken(Base):
    r = 1; s = 2
    x3 = x4 = 8
    j: int == 3
    k: a != b
    l: a <= b
    l2: a >= b
    m: int ) = 4
    n: int ] = [
    o =
    p: int =
    q: (int = 3
    r = (1, 2
    def 1x(self): ...
    def
    s: int = 5
"""


def test_class_statement_shapes() -> None:
    text = textwrap.dedent(STATEMENT_SHAPES)
    by_ast, by_text = _both(text)
    assert by_text == by_ast
    fast = class_facts_from_text(text, "pkg.m", "pkg/m.py")
    assert fast == class_facts_from_text(text, "pkg.m", "pkg/m.py", fast=False)
    attrs = fast["classes"]["Shapes"]["attrs"]
    assert attrs["d"]["value"] == 3 and attrs["y"]["value"] == "f(a=1)"
    assert attrs["k"]["value"] == "(1, ..." and "e" not in attrs
    assert attrs["s1"]["value"] == 'call(")", ...' and attrs["s2"]["value"] == 'call("(", x)[ ...'
    assert attrs["s3"]["literal"] is False and attrs["s4"]["value"] == 'f"{x} = y"'
    assert set(fast["classes"]["Shapes"]["methods"]) == {"method", "spaced", "run", "run2"}
    broken = textwrap.dedent(BROKEN_STATEMENTS)
    for cut in range(len(broken.splitlines()) + 1):
        # every prefix too: a statement at the end of the text, without its newline
        part = "\n".join(broken.splitlines()[:cut]) if cut else broken
        assert class_facts_from_text(part, "pkg.m", "pkg/m.py") == class_facts_from_text(
            part, "pkg.m", "pkg/m.py", fast=False
        ), cut


# imports: runs of one-line ``from`` imports (read line after line), the
# parenthesized ones read in one match unless a string or comment comes
# before their ``)``, and the lines a multi-line import spans (not imports)
IMPORT_SHAPES = """\
from a import b
from .c import d as e, f
from importlib import g
import h.i as j, k
from l import (m,
    n as o)
from p import q
from r import (s,  # t)
    u)
from v import (w, "x)",
    y)
from z import (aa, # (
from bb import cc
from b2 import c2
    )
from dd import (ee)  # ff
from .. import (gg,
    hh,
)
from ii import jj  # kk
from ll import mm
class Uses(b, d, e, g, j, k, o, q, u, y, ee, gg, jj, mm):
    pass
"""


def test_import_shapes() -> None:
    # import lines are read once per text (then remembered, up to 200
    # characters): the same facts on first and later readings
    long_line = "from a import " + ", ".join(f"n{i}" for i in range(40)) + "\n"
    text = IMPORT_SHAPES + long_line
    P._FROM_LINES.clear()
    P._IMPORT_LINES.clear()
    fast = class_facts_from_text(text, "pkg.sub.m", "pkg/sub/m.py")
    assert fast == class_facts_from_text(text, "pkg.sub.m", "pkg/sub/m.py")
    assert fast == class_facts_from_text(text, "pkg.sub.m", "pkg/sub/m.py", fast=False)
    assert fast["imports"]["n39"] == "a.n39" and len(long_line) > 200
    imports = fast["imports"]
    assert imports["o"] == "l.n" and imports["u"] == "r.u" and imports["gg"] == "pkg.gg"
    assert "cc" not in imports and "c2" not in imports and imports["mm"] == "ll.mm"
    for cut in range(1, IMPORT_SHAPES.count("\n")):
        part = "".join(IMPORT_SHAPES.splitlines(keepends=True)[:cut]) + "class C(b): pass\n"
        assert class_facts_from_text(part, "pkg.m", "pkg/m.py") == class_facts_from_text(
            part, "pkg.m", "pkg/m.py", fast=False
        ), cut


# class headers whose bases or colon the header line alone does not give
# (the colon read through the window: a comment's or a string's is not it)
HEADER_SHAPES = [
    "class R(B)  # note: y\n    x: int = 1\n    def f(self):\n        pass\n",
    "class R(B)  # c: d\n    :\n    x = 1\n",
    "class R(B) 'a' :\n    x = 1\n",
    "class R(mix(B), C):\n    x = 1\n",
    'class R(B, "x)", C):\n    x = 1\n',
    "class R(B, (C\n    )):\n    x = 1\n",
]


def test_class_header_shapes() -> None:
    for text in HEADER_SHAPES:
        fast = class_facts_from_text(text, "pkg.m", "pkg/m.py")
        assert fast == class_facts_from_text(text, "pkg.m", "pkg/m.py", fast=False), text
    assert fast["classes"]["R"]["bases"] == ["pkg.m.B"]


# lines for random programs: block headers of every kind, classes with and
# without bases (read from the header line, or through the window: strings,
# comments, brackets), class-level statements and look-alikes
_LINES = [
    "class A{i}(B):", "class C{i}:", "class D{i}(m.B, Generic[T]):", "class E{i}(B, C):  # (x)",
    "class F{i}(B, 'C') :", "class H{i}(mix(B), C):",
    'class Q{i}(B, "x)", C):', "def f{i}(self):", "async def g{i}(self):",
    "if x:", "else:", "elif y:", "try:", "except E:", "finally:", "with m:", "for i in r:",
    "while t:", "match v:", "case 1:", "x{i} = {i}", "y{i}: int = 1", "z{i}: list[int] = [1]",
    "pass", "# class Z:", '"""doc\nclass W:"""', "class(", "classy = 1",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, len(_LINES) - 1)), max_size=40))
def test_random_nesting_reads_alike(lines: list[tuple[int, int]]) -> None:
    # which classes are visible, and their dotted names, come from the block
    # headers read before them (only those that can still enclose a later
    # class are looked for): programs indented as blocks are (each header
    # followed by a deeper line) read as the plain reading of the whole
    # blanked text does
    out: list[str] = []
    depth, opens = 0, False
    for i, (want, k) in enumerate(lines):
        depth = depth + 1 if opens else min(want, depth)
        line = _LINES[k].format(i=i)
        out.append(" " * (4 * depth) + line + "\n")
        opens = line.split("#")[0].rstrip().endswith(":")
    if opens:
        out.append(" " * (4 * depth + 4) + "pass\n")
    text = "".join(out)
    fast = class_facts_from_text(text, "pkg.m", "pkg/m.py")
    assert fast == class_facts_from_text(text, "pkg.m", "pkg/m.py", fast=False)

# -- whole trees (script) -------------------------------------------------------


def _tree_texts(roots: list[str]) -> Iterator[tuple[str, str, str]]:
    """(path, text, module) of the files of ``roots`` the collector reads."""
    from linter.files import module_name_of

    for r in roots:
        root = Path(r).resolve()
        for f in sorted(root.rglob("*.py")):
            rel = f.relative_to(root.parent).as_posix()
            text = f.read_bytes().decode("utf-8")
            if ClassFacts.needles.match(text):
                yield rel, text, module_name_of(rel)


def main(roots: list[str]) -> int:
    """Fast reading == plain reading on every file; fast reading == ast on
    every file the ast reads (the differences are listed: known ones are tab
    indentation)."""
    files = plain_diff = ast_diff = 0
    for rel, text, mod in _tree_texts(roots):
        files += 1
        fast = class_facts_from_text(text, mod, rel)
        if fast != class_facts_from_text(text, mod, rel, fast=False):
            plain_diff += 1
            print("fast != plain:", rel)
        try:
            tree = compile(text, rel, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        if _norm(fast) != _norm(ClassFacts.collect_ast(tree, text, mod, rel)):
            ast_diff += 1
            print("fast != ast:", rel, "(tabs)" if "\t" in text else "")
    print(f"{files} files: {plain_diff} differ from the plain reading, {ast_diff} from the ast")
    return 1 if plain_diff else 0


def bench(roots: list[str], reps: int = 5) -> None:
    import time

    items = list(_tree_texts(roots))
    best = min(_timed(items, time.process_time) for _ in range(reps))
    print(f"{len(items)} files: {best:.3f} s CPU (best of {reps})")


def _timed(items: list[tuple[str, str, str]], clock: Any) -> float:
    t0 = clock()
    for rel, text, mod in items:
        class_facts_from_text(text, mod, rel)
    return clock() - t0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bench"]:
        bench(sys.argv[2:])
        raise SystemExit(0)
    raise SystemExit(main(sys.argv[1:]))
