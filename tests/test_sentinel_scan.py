"""The text reader of the ``sentinels`` facts (``checks._sentinel_scan``)
must give exactly the facts of the ast walk (``collect_ast``).

Run as a script to compare the two over whole trees, or to time them (not
tests: the real trees are not part of the repository)::

    python tests/test_sentinel_scan.py ~/.cache/shardlint-corpus/vllm-0.33.0/vllm ...
    python tests/test_sentinel_scan.py --bench ~/.cache/shardlint-corpus/vllm-0.33.0/vllm ...
"""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

if __name__ == "__main__":  # run as a script from anywhere
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks._pyscan import _blank_sub as pyscan_blank
from checks._sentinel_scan import (
    _CMP,
    _FSTRING,
    _FSTRING_QUOTES,
    _TRAILING,
    Fallback,
    _case_line,
    _has_cmp,
    _Reader,
    _rstrip_cont,
    blank,
    collect_text,
)
from checks._sentinels import SentinelFacts, SentinelOutline, collect_ast, outline_of_facts, outline_text

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _ast_facts(text: str, module: str, path: str) -> Any:
    try:
        tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return collect_ast(tree, text, module, path)


def _text_reads(text: str, module: str, path: str) -> bool:
    """Whether the text reader settles the file without compiling it whole."""
    try:
        _Reader(text, module, path).run()
    except Fallback:
        return False
    return True


SNIPPETS = {
    "class_level_sentinels": """
        from typing import Annotated, Optional
        from .fields import Field
        class Plan:
            size = -1
            rank: int = None
            group: Optional["Group"] = None
            spaced = - 2
            hexed = -0x10
            underscored = -1_000
            zero = -0
            floaty = -1.0
            parened = (None)
            negparen = -(3)
            both = again = None
            pair, other = None, -1
            counted = 0
            counted += 1
            declared: int
            ternary = None if Field else 1
            guarded: Annotated[int, Field(ge=-1)] = -1
            wrapped = (
                -4
            )
            called = Field(default=None)
            listed = [None]
            star, *rest = [None, None]
            text = "x = None"  # y = -1
            def __repr__(self): return "Plan"
    """,
    "init_family_resolved_or_not": """
        import torch
        class Layer(torch.nn.Module):
            cp_size: int = -1

            def __init__(self, tp_size: int, cp_rank: int = -1) -> None:
                super().__init__()
                self.tp_size = -1
                self.tp_size = tp_size
                self.cp_rank = cp_rank
                self.cp_world = -1
                self.buffer: torch.Tensor | None = None
                self.a = self.b = None
                self.c, self.d = None, -1
                self.e = -1
                self.e += 1
                self.f: int = -2
                self.g = [None] * 4
                self.h = {"k": -1}
                self.items[0] = -1
                self.sub.attr = None
                local = self.tp_size
                other = Layer(1)
                other.cp_world = -1
                if tp_size > 1:
                    self.mode = None
                else:
                    self.mode = "x"
                for i in range(2):
                    self.last = -1
                with torch.no_grad():
                    self.frozen = (
                        None
                    )
                try:
                    self.maybe = compute(k=1)
                except ValueError:
                    self.maybe = None

                def helper(inner):
                    inner.cp_world = 4
                    self.not_from_here = None

                class Local:
                    def __init__(me):
                        me.size = -1

            def __post_init__(self):
                self.late = -1
                assert self.cp_size > 0
                assert getattr(self, "cp_world", None) != -1
                assert self.mode is not None, "mode"
                assert self.tp_size == 2

            def set_world(self, group):
                self.cp_world = group.size()
                self.late, self.e = 1, 2

            def reset(self):
                self.buffer = None
                self.cp_size: int = 3

            def unrelated(self):
                return self.tp_size
    """,
    "new_and_other_first_arguments": """
        class Singleton:
            def __new__(cls, *args):
                obj = super().__new__(cls)
                obj.rank = -1
                obj.size = 2
                cls.count = None
                return obj

            def __init__(this, world):
                this.world = None
                self.not_this = -1

        class NoArgs:
            def __init__(*args):
                self.x = -1

            @staticmethod
            def build():
                return NoArgs()
    """,
    "one_liners_and_semicolons": """
        class Packed: x = None; y = -1
        class Compact:
            a = 1; b = None
            def __init__(self, n): self.n = -1; self.m = n
            def set(self, v):
                if v: self.n = v
                else: self.m = None
        class Chained:
            def __init__(self, flag):
                if flag: self.p = -1
                self.q = -1; self.r = 0
                first = self.s = None
                (self.t) = -1
                [self.u, self.v] = (1, None)
                self.f = lambda x=1: x
                self.g = lambda: None
    """,
    "resolvers_in_functions": """
        from .impl import AttnImpl, build
        from . import helpers as h

        def init_impl(group):
            impl = AttnImpl()
            if impl.cp_size == -1:
                impl.cp_size = group.size()
                impl.cp_rank = group.rank()
            if impl.pp_size < 1:
                impl.pp_size = 1
            elif impl.pp_rank <= 0:
                impl.pp_rank = 0
            else:
                if impl.dp_size is None:
                    impl.dp_size = h.default()
            if -1 == impl.ep_size:
                impl.ep_size = 4
            if None is impl.sp:
                impl.sp = 2
            if 0 > impl.tp:
                impl.tp = 1
            if getattr(impl, "world", None) is None:
                impl.world = 8
            if (impl.a == -1  # a comment (with a paren
                    and impl.b is None):
                impl.a = impl.b = 0
            if impl.c == (-1): impl.c = 3
            if impl.d.e == -1:
                impl.d.e = 2
            return impl

        class Wrapper:
            @classmethod
            def make(cls, impl):
                if impl.size == -1:
                    impl.size = cls.size
                return build(impl)

            def forward(self, x):
                if self.cache is None:
                    self.cache = x
                if x.meta.size == -1:
                    x.meta.size = 1
                values = [v for v in x if v.size == -1]
                return values

        def not_a_resolver(impl):
            if impl.size == -1:
                raise ValueError(f"unresolved {impl.size!r} {len(impl.items)}")
            if impl.size == 2:
                impl.size = 3
    """,
    "construct_then_assign": """
        from .impl import Impl

        def normal_path(world):
            impl = Impl()
            impl.cp_size = world
            return impl

        class Engine:
            def __init__(self):
                self.impl = Impl()
                self.impl.cp_size = 2

            def step(self):
                if self.impl.cp_size == -1:
                    self.impl.cp_size = 1
    """,
    "factories": """
        import typing
        from typing import Type
        from .impl import FlashImpl, Torch

        def get_impl_cls() -> type[FlashImpl]:
            return FlashImpl

        def get_named() -> Type["FlashImpl"]:
            ...

        def get_qualified() -> typing.Type[Torch.Impl]:
            raise NotImplementedError

        def documented():
            \"\"\"Which class.

            Several lines.
            \"\"\"
            return FlashImpl

        def parenthesised():
            return (
                Torch.Impl
            )

        def with_comment():
            "doc"
            ...
            return FlashImpl  # the fast one

        def two_statements():
            x = 1
            return FlashImpl

        def a_call():
            return FlashImpl()

        def lower():
            return impl_cls

        def none():
            return None

        def not_implemented():
            return NotImplemented

        def one_line(): return FlashImpl

        class Backend:
            @staticmethod
            def get_impl_cls() -> "type[FlashImpl]":
                return FlashImpl

            def builder(self):
                def inner():
                    return Torch
                return inner
    """,
    "nesting_decorators_and_visibility": """
        import functools
        from .base import Base, register

        @register(
            name="outer",
            options={"a": (1, 2)},
        )
        @functools.total_ordering
        class Outer(Base, metaclass=type):
            class Inner(Base):
                size = -1
                class Deepest:
                    rank = None
            if Base:
                hidden = -1
                def hidden_method(self):
                    self.size = 3
            @property
            def size(self):
                return self._size

            @functools.cache
            def __init__(self):
                self._size = None

            async def run(self):
                class InMethod(Base):
                    x = -1
                def helper():
                    return Outer
                return InMethod

        def factory():
            class InFunction(Base):
                y = None
                def __init__(self):
                    self.y = 1
            return InFunction

        if True:
            class InIf(Base):
                z = -1
        try:
            class InTry:
                pass
        except ImportError:
            pass
    """,
    "multi_line_headers": """
        from .base import (
            Base,  # the base (really)
            Mixin as M,
        )
        from .generic import Generic, T

        class Model(
            Base,
            M,  # ) not the end
            Generic[T],
            metaclass=type,
        ):
            def __init__(
                self,
                name: str = "a:b)",
                size: int = -1,
                *args,
                **kwargs,
            ) -> None:
                self.name = name
                self.size = size
                self.default = -1

            def pick(
                self, other: "Model"
            ) -> type[M]:
                return M

        class Spaced (Base) :
            x = None
        class Parened((Base)):
            y = None
        class Subscripted(Generic[T][0]):
            pass
        class Called(Base.with_options(a=1)):
            pass
        class Starred(*[Base]):
            pass
    """,
    "strings_and_comments_hold_code": '''
        """Module doc.

        class Fake:
            size = -1
        def fake(impl):
            if impl.size == -1:
                impl.size = 1
        from os import path
        """
        # class Commented:
        #     x = None
        TEMPLATE = """
class InString:
    rank = -1
"""
        def real(impl):
            text = "if impl.size == -1: impl.size = 2"
            note = 'class X: pass'
            if impl.size == -1:
                impl.size = len("""
    impl.other = 3
""")
            return text, note

        class Holder:
            doc = """
        left at column zero
    """
            after = None
            quoted = '"""'
            also = "\'\'\'"
            joined = "a" "b" 'c' 'd'
            continued = "one \\
two"
            last = -1
    ''',
    "imports_shallow_and_not": """
        import os, sys as system
        import a.b.c
        import a.b as ab
        from . import sibling
        from .. import parent as P
        from .mod import (  # comment (
            Alpha,
            Beta as B,  # , Gamma
        )
        from x.y import \\
            Delta
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .types import Epsilon
        elif system.version_info > (3, 11):
            from .new import Zeta
        else:
            from .old import Zeta
        try:
            from fast import Eta
        except ImportError:
            from slow import Eta
        with open(os.devnull):
            from .hidden import Theta
        for _ in []:
            from .loop import Iota
        def f():
            from .inner import Kappa
            return Kappa
        class Uses(Alpha, B, Delta, Epsilon, Zeta, Eta, ab.Base, sibling.Cls, P.Cls, a.b.c.D):
            x = -1
        def make() -> type[Theta]:
            return Iota
    """,
    "calls_paired_with_resolvers": """
        import functools
        from .impl import Impl, make

        @functools.lru_cache(maxsize=None)
        class Runner:
            def __init__(self):
                self.impl = make(Impl)(size=-1)
                self.fn = (self.build)(1)
                self.items = [Impl][0](2)

            def build(self, n):
                x = n
                (a, b) = self.pair()
                text = f"{len(self.items)!r:>{width(n)}} {{no(call)}}"
                return text, a, b

            def resolve(self, impl):
                if impl.size == -1:
                    impl.size = self.world()
                    impl.rank = impl.group . rank ()

        def free(impl):
            if impl.tp is None:
                impl.tp = compute(
                    impl
                )
            return helper
            (impl)
    """,
    "dedented_continuation_read": """
        class Wide:
            x = foo(
        1)
            y = None
    """,
    "dedented_continuation_in_a_method": """
        class Wide:
            def __init__(self):
                self.x = foo(
            1)
                self.y = None
            z = -1
    """,
    "dedented_continuation_in_a_function": """
        def resolve(group, impl):
            x = foo(
        group)
            if impl.size == -1:
                impl.size = x
    """,
    "statements_after_a_semicolon": """
        class Packed:
            pass; ready = None
            def __init__(self):
                pass; self.rank = -1
                assert self.rank; self.size = None
    """,
    "backslash_before_a_blank_line": """
        class Tail:
            size = -1
            count: int = 2 \\

        def get_impl():
            return Tail \\

        def get_other():
            return Tail;
    """,
    "match_patterns_are_not_calls": """
        from .impl import Done, Failed

        class Runner:
            def step(self, impl, event):
                match event:
                    case Failed(reason=r):
                        impl.state = r
                    case Done():
                        pass
                if impl.size == -1:
                    impl.size = event.size()
    """,
    "import_continued_from_a_compound_header": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING: \\
            from .config import Config
        class Uses(Config):
            pass
    """,
    "line_of_only_a_backslash": "class Odd:\\n    x = 1\\n \\\\\\n    y = None\\n",
    "decorator_continued_at_column_zero": """
        from .registry import REGISTRY
        from .impl import Impl

        @REGISTRY.register(
        Impl,
            name="x",
        )
        class Registered:
            def resolve(self, impl):
                if impl.size == -1:
                    impl.size = 2
    """,
    "tabs": "class Tabbed:\n\tsize = -1\n\tdef __init__(self):\n\t\tself.rank = None\n",
    "crlf": "class Windows:\r\n    size = -1\r\n",
    "non_ascii_names": """
        class Café:
            größe = -1
            def __init__(self):
                self.länge = None
    """,
    # identifiers are read in NFKC by the compiler: ``\u00b5`` (micro sign) is
    # ``\u03bc`` (mu), the ``fi`` ligature is ``fi``, a long s is an ``s``
    "nfkc_class_and_init_names": """
        class Units:
            \u00b5 = -1
            \u03bc2 = None
            def __init__(self):
                self.\ufb01le = None
                self.\u00b5 = 3
    """,
    "nfkc_first_argument_spelled_otherwise": """
        class Holder:
            def __init__(self):
                \u017felf.rank = -1
    """,
    "non_ascii_only_in_strings_and_comments": """
        class Plain:
            \"\"\"Docstring with caf\u00e9.\"\"\"
            size = -1  # gr\u00f6\u00dfe
            label = "\u00b5s"
            def __init__(self):
                self.rank = None  # \u8718
                self.name = f"{self.rank}\u00b5"
    """,
    # a parenthesised run of strings written from column 0 inside a method:
    # the first of those lines is no statement of the class body
    "string_pieces_at_column_zero_in_a_method": """
        class Report(Base):
            \"\"\"Checks on a rendered page.\"\"\"
            title = (
                "a first piece "
                "a second piece\\n")

            def test_wrap(self):
                got = render(self.title)
                want = (
        "a first piece a second piece\\n"
        "and the rest of it\\n")  # wrapped
                self.check(got, want)

            def test_other(self):
                self.rank = -1

            width = None
    """,
    "continuation_at_column_zero_in_a_function": """
        def resolve(group, impl):
            x = join(
        "one",
        "two")
            if impl.size == -1:
                impl.size = x
    """,
    "dict_key_at_class_indent_in_a_method": """
        class Table:
            def __init__(self):
                self.rows = {
            "key":
                    1}
                self.size = -1
            mode = None
    """,
    "one_line_import_after_colon": """
        try: from fast import Impl
        except ImportError: from slow import Impl
        class Uses(Impl):
            x = None
    """,
    "match_statement_and_soft_keywords": """
        class Matcher:
            match = None
            case = -1
            def __init__(self, v):
                match v:
                    case 1:
                        self.kind = -1
                    case _:
                        self.kind = None
        def dispatch(impl):
            match (impl.kind):
                case -1:
                    impl.kind = 0
            if impl.kind == -1:
                impl.kind = 1
    """,
    "resolver_ifs_skipped_before_their_def_is_known": """
        import os
        if os.sep == "/":
            pass
        class Holder:
            if os.sep is None:
                limit = None
            def __init__(self):
                self.limit = -1
        def setup(engine, cfg):
            if engine.flag:
                pass
            def inner(self, impl):
                if impl.world_size == -1:
                    impl.world_size = 2
            if cfg.rank < 0 and (
                cfg.size is None
            ):
                cfg.rank = 0
                cfg.size = 1
            elif cfg.rank is None:
                cfg.rank = 3
            return inner
        def later(holder, obj):
            if obj.limit == -1: obj.limit = 4
    """,
    "return_in_comments_around_a_def": """
        def first():  # return
            # return Impl
            Impl = 1
            return None
        def second():
            return  # ends here
            # return Later
        def third():
            # return Other
            return Other
        def fourth():  # return Cap
            return Cap
    """,
    "init_statements_by_the_bracket_skeleton": """
        class Grid:
            def __init__(this, cfg):
                \"\"\"Sizes.

                this.fake = -1 (in the docstring)
                \"\"\"
                this.rows = compute(
                    cfg,
                    this.cols,
                )
                total = [
                    1, 2,
                ]; this.cells = None
                this.depth = {"a": (1, [2])}[
                    "a"
                ]
                this.width: int = (
                    -1
                )
                label = f\"{this.rows}\" + \"\"\"
                this.inner = None
                \"\"\"
                def helper():
                    this.hidden = -1
                this.width += (1)
                this.rank = -1
    """,
    "no_facts": """
        x = 1
        def f(y):
            return y + 1
    """,
}

# shapes the reader leaves to the whole-file ast on purpose
FALLS_BACK = {
    "dedented_continuation_in_a_method",
    "dedented_continuation_in_a_function",
    "tabs",
    "crlf",
    "non_ascii_names",
    "nfkc_class_and_init_names",
    "nfkc_first_argument_spelled_otherwise",
    "string_pieces_at_column_zero_in_a_method",
    "continuation_at_column_zero_in_a_function",
    "dict_key_at_class_indent_in_a_method",
    "one_line_import_after_colon",
    "import_continued_from_a_compound_header",
    "line_of_only_a_backslash",
    "decorator_continued_at_column_zero",
}


def _src(name: str) -> str:
    raw = SNIPPETS[name]
    return (
        raw
        if name in ("tabs", "crlf", "line_of_only_a_backslash")
        else textwrap.dedent(raw).lstrip("\n")
    )


@pytest.mark.parametrize("name", sorted(SNIPPETS))
@pytest.mark.parametrize("path", ["pkg/mod.py", "pkg/__init__.py"])
def test_snippet_facts_equal_the_ast_walk(name: str, path: str) -> None:
    text = _src(name)
    module = "pkg" if path.endswith("__init__.py") else "pkg.mod"
    expected = _ast_facts(text, module, path)
    got = SentinelFacts.collect(None, text, module, path)
    assert json.dumps(got) == json.dumps(expected)
    assert _text_reads(text, module, path) == (name not in FALLS_BACK)


def test_the_snippets_exercise_the_facts() -> None:
    """The comparison above is only worth something if the snippets hold facts."""
    facts = SentinelFacts.collect(None, _src("class_level_sentinels"), "pkg.mod", "pkg/mod.py")
    plan = facts["classes"]["Plan"]
    assert plan["sentinel"]["size"] == ["-1", [4, 4, 4, 13], "class body"]
    assert plan["sentinel"]["hexed"][0] == "-16" and plan["sentinel"]["underscored"][0] == "-1000"
    assert plan["sentinel"]["parened"][0] == "None" and plan["sentinel"]["negparen"][0] == "-3"
    assert plan["sentinel"]["both"][0] == plan["sentinel"]["again"][0] == "None"
    assert plan["sentinel"]["guarded"] == ["-1", [20, 4, 20, 46], "class body"]
    assert plan["sentinel"]["wrapped"] == ["-4", [21, 4, 23, 5], "class body"]
    assert {"zero", "floaty", "pair", "other", "counted", "ternary", "called", "star"} <= set(
        plan["real"]
    )
    assert "declared" not in plan["real"] and "declared" not in plan["sentinel"]

    layer = SentinelFacts.collect(
        None, _src("init_family_resolved_or_not"), "pkg.mod", "pkg/mod.py"
    )
    data = layer["classes"]["Layer"]
    # resolved later in __init__, or proven by an assert in __post_init__
    assert {"tp_size", "cp_size", "cp_world", "e", "mode"} <= set(data["real"])
    assert data["sentinel"]["frozen"] == ["None", [31, 12, 33, 13], "__init__"]
    assert data["sentinel"]["late"][2] == "__post_init__"
    assert data["methods"] == {"late": ["set_world"]}
    assert not {"not_from_here", "items", "sub", "local", "other"} & set(data["real"])

    res = SentinelFacts.collect(None, _src("resolvers_in_functions"), "pkg.mod", "pkg/mod.py")
    tests = {(r["attr"], r["test"]) for r in res["resolvers"]}
    assert {("cp_size", "-1"), ("cp_rank", "-1"), ("pp_size", "<1"), ("pp_rank", "<=0")} <= tests
    assert {
        ("dp_size", "None"),
        ("ep_size", "-1"),
        ("sp", "None"),
        ("tp", "<0"),
        ("world", "None"),
    } <= tests
    assert {("c", "-1"), ("e", "-1")} <= tests
    assert not any(
        r["attr"] == "cache" for r in res["resolvers"]
    )  # ``self`` is not a resolver's object
    assert "pkg.impl.AttnImpl" in res["calls"]["init_impl"]

    fac = SentinelFacts.collect(None, _src("factories"), "pkg.mod", "pkg/mod.py")["factories"]
    assert fac["get_impl_cls"] == ["pkg.impl.FlashImpl", "pkg.impl.FlashImpl"]
    assert fac["documented"] == fac["with_comment"] == fac["one_line"] == ["pkg.impl.FlashImpl"]
    assert fac["parenthesised"] == fac["get_qualified"] == ["pkg.impl.Torch.Impl"]
    assert fac["Backend.get_impl_cls"] == ["pkg.impl.FlashImpl"] and fac["inner"] == [
        "pkg.impl.Torch"
    ]
    assert not {"two_statements", "none", "a_call", "lower"} & set(fac)

    imp = SentinelFacts.collect(None, _src("imports_shallow_and_not"), "pkg", "pkg/__init__.py")
    assert imp["classes"]["Uses"]["bases"][:6] == [
        "pkg.mod.Alpha",
        "pkg.mod.Beta",
        "x.y.Delta",
        "pkg.types.Epsilon",
        "pkg.old.Zeta",
        "slow.Eta",
    ]
    assert "Theta" not in imp["imports"] and "Kappa" not in imp["imports"]


def test_a_dedented_continuation_that_balances_on_its_own_line() -> None:
    # ``group,`` at column 0 reads as a complete statement; the def does not
    # end there: the line after it closes a bracket it did not open
    text = "def resolve(group, impl):\n    x = foo(\ngroup,\n1)\n    if impl.size == -1:\n        impl.size = x\n"
    assert SentinelFacts.collect(None, text, "m", "m.py") == _ast_facts(text, "m", "m.py")
    assert not _text_reads(text, "m", "m.py")


def test_line_separators_other_than_newlines_do_not_shift_the_ast_walk() -> None:
    """``str.splitlines`` also breaks at a form feed (and ``\\x1c``-``\\x1e``,
    ``\\x85``, U+2028/U+2029); the compiler does not: the ast walk's lines
    (a function's source, which decides whether its ``if``s are read) are
    the compiler's."""
    plain = (
        "import os\n"
        "\n"
        "def resolve(cfg, impl):  # \n"
        "    if impl.cp_size == -1:\n"
        "        impl.cp_size = 2\n"
    )
    expected = _ast_facts(plain, "m", "m.py")
    assert expected["resolvers"]
    texts = [plain.replace("\n\n", "\n\x0c\n")]  # a form feed line
    texts += [plain.replace("# \n", "# " + sep + "\n") for sep in ("\x0c", "\x1c", "\x85", "\u2028")]
    for text in texts:
        assert _ast_facts(text, "m", "m.py") == expected, repr(text)
        assert SentinelFacts.collect(None, text, "m", "m.py") == expected, repr(text)


def test_a_dedented_line_that_starts_a_statement_is_still_read() -> None:
    """The check of a block's end reads on to the next header (or the end of
    the file): plain code between blocks is still read from the text."""
    text = textwrap.dedent(
        """
        class A:
            def __init__(self):
                self.x = (
                    1
                )
            size = -1
        VALUE = {
            "a": 1,
        }
        if VALUE:
            pass
        def late(impl):
            if impl.size == -1:
                impl.size = 2
        print(
            late
        )
        """
    ).lstrip("\n")
    assert _text_reads(text, "m", "m.py")
    assert SentinelFacts.collect(None, text, "m", "m.py") == _ast_facts(text, "m", "m.py")


_SCOPE_TEXT = st.text(alphabet="fFrRbBuxcase_1 \t\n'\"(:)", max_size=60)


@settings(max_examples=500, deadline=None)
@given(text=_SCOPE_TEXT)
def test_literal_led_searches_of_calls_equal_their_patterns(text: str) -> None:
    """``_calls_text`` finds f-string quotes and ``case`` lines from a literal;
    same answers as the patterns they stand for."""
    quotes = sorted(m.start() for rx in _FSTRING_QUOTES for m in rx.finditer(text))
    assert quotes == [m.end() for m in _FSTRING.finditer(text)]
    assert _case_line(text) == bool(re.search(r"(?m)^[ \t]*case\b", text))


@pytest.mark.parametrize(
    "text",
    [
        "f'x'",
        "rf'x'",
        'Rf""',
        "fR'''a'''",
        "if'x'",
        "xf'x'",
        "ff'x'",
        "b'f'",
        '(f"a")',
        "case x:",
        "  case(1)",
        "\tcase",
        "lowercase = 1",
        " x case y",
        "cases = 2",
        "\n case\n",
    ],
)
def test_literal_led_searches_of_calls_on_snippets(text: str) -> None:
    quotes = sorted(m.start() for rx in _FSTRING_QUOTES for m in rx.finditer(text))
    assert quotes == [m.end() for m in _FSTRING.finditer(text)]
    assert _case_line(text) == bool(re.search(r"(?m)^[ \t]*case\b", text))


@settings(max_examples=1000, deadline=None)
@given(text=st.text(alphabet="ab #'\"\\\n", max_size=40))
def test_blank_equals_the_plain_sub(text: str) -> None:
    """The reader's ``blank`` (``_pyscan``'s, which jumps from one possible
    token start to the next) blanks like one ``re.sub`` over the text."""
    assert blank(text) == pyscan_blank(text)


# pieces of sentinel comparisons and what borders them
_CMP_TEXT = st.lists(
    st.sampled_from(
        [
            "==",
            "<",
            "<=",
            ">",
            ">=",
            "is",
            "not",
            "None",
            "-",
            "0",
            "1",
            "7",
            "x",
            "_",
            "\u0663",
            "\u00e9",
            " ",
            "\n",
            "\\",
            "(",
            ")",
            ".",
            "a.b",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(text=_CMP_TEXT)
def test_literal_led_searches_of_comparisons_equal_their_pattern(text: str) -> None:
    """The ``if`` headers' cheap test searches ``_CMP`` in six literal-led parts."""
    assert _has_cmp(text) == bool(_CMP.search(text))


@pytest.mark.parametrize(
    "text",
    [
        "x.y is None",
        "x.y is-1",
        "this None",
        "aNone == 1",
        "None==",
        "x1 == y",
        "1x>=",
        "(-1) == a.b",
        "- \\\n 2 is",
        "a.b <= 0",
        "a.b<x",
        "\u06631 == 2",
        "is(1",
        "xis 1",
        "b'' is None",
        "",
    ],
)
def test_literal_led_searches_of_comparisons_on_snippets(text: str) -> None:
    assert _has_cmp(text) == bool(_CMP.search(text))


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=" \t\n\\\x0b\x0c\x1c\x85\xa0\u2028ab#)", max_size=30))
def test_rstrip_cont_equals_the_trailing_pattern(text: str) -> None:
    assert _rstrip_cont(text) == _TRAILING.sub("", text)


@pytest.mark.parametrize(
    "name", ["init_statements_by_the_bracket_skeleton", "init_family_resolved_or_not"]
)
def test_a_method_that_ends_the_file_without_a_newline(name: str) -> None:
    text = _src(name).rstrip("\n")
    assert json.dumps(collect_text(text, "pkg.mod", "pkg/mod.py")) == json.dumps(
        _ast_facts(text, "pkg.mod", "pkg/mod.py")
    )


def test_collect_uses_a_given_tree() -> None:
    text = _src("init_family_resolved_or_not")
    tree = ast.parse(text)
    assert SentinelFacts.needs_ast is False
    assert SentinelFacts.collect(tree, text, "pkg.mod", "pkg/mod.py") == collect_ast(
        tree, text, "pkg.mod", "pkg/mod.py"
    )


def test_a_file_that_does_not_compile() -> None:
    # a broken class body: both give up
    broken = "class A:\n    x = None\n  y = 1\n"
    assert SentinelFacts.collect(None, broken, "m", "m.py") is None
    # Known difference: an error outside anything the reader reads (here a
    # module-level statement) is not seen, so the reader still reports the
    # class, while the ast walk has no tree. The check phase reports SHD000
    # for such a file anyway.
    odd = "class A:\n    x = None\nx = = 1\n"
    assert _ast_facts(odd, "m", "m.py") is None
    assert (
        SentinelFacts.collect(None, odd, "m", "m.py")["classes"]["A"]["sentinel"]["x"][0] == "None"
    )


# the needle as first written (every alternative led by ``\b`` or a class)
_NEEDLE_SPEC = (
    r"\bclass[ \t]|\b[tT]ype\s*\[|\breturn[\s(\\]*[^\W\d_a-z]"
    r"|(?:==|\bis\b|<=?)[\s\\(]*(?:-[\s\\(]*\d|None\b|[01]\b)"
    r"|(?:-[\s\\]*\d|\bNone|\b[01])[\s\\)]*(?:==|\bis\b|>=?)"
)
_NEEDLE_EDGES = [
    "class A:",
    "subclass A",
    "x = myclass\tB",
    "def f() -> Type [X]: ...",
    "dtype[x]",
    "Type[X]",
    "return Foo",
    "areturn Foo",
    "return (\\\n Bar)",
    "return foo",
    "return _Foo",
    "return Été",
    "if x.a == - 1: pass",
    "if x.a is(None): pass",
    "if this None",
    "xis None",
    "if x.a <= 0:",
    "if x.a < 10:",
    "if x.a < 1:",
    "if 0 > x.a:",
    "if 10 > x.a:",
    "if a0 > x",
    "if -1 == x.a:",
    "if None is x.a:",
    "if NoneType is x:",
    "if aNone == x:",
    "y = 1",
    "x >= 1",
    "",
]


@pytest.mark.parametrize(
    "text",
    _NEEDLE_EDGES
    + [_src(n) for n in sorted(SNIPPETS)]
    + [p.read_text() for p in sorted(CORPUS.rglob("*.py"))],
)
def test_needle_matches_the_files_the_spec_matches(text: str) -> None:

    assert SentinelFacts.needles.match(text) == bool(re.search(_NEEDLE_SPEC, text, re.MULTILINE))


def _corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.py"))


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_facts_equal_the_ast_walk(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    rel = str(path.relative_to(CORPUS))
    module = rel[:-3].replace("/", ".")
    expected = _ast_facts(text, module, rel)
    got = collect_text(text, module, rel)
    assert json.dumps(got) == json.dumps(expected)


# -- the outline: never fewer names than the facts ---------------------------


def outline_misses(text: str, module: str, path: str) -> list[str]:
    """The names the module's ``sentinels`` facts hold that its outline
    lacks (the lazy index would not read the module for them)."""
    facts = _ast_facts(text, module, path)
    if not facts:
        return []
    got = outline_text(text)
    return [f"{k} {n}" for k, names in outline_of_facts(facts).items() for n in names if n not in got[k]]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_outline_names_every_fact(name: str) -> None:
    assert outline_misses(_src(name), "pkg.mod", "pkg/mod.py") == []


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_outline_names_every_fact(path: Path) -> None:
    rel = str(path.relative_to(CORPUS))
    assert outline_misses(path.read_text(encoding="utf-8"), rel[:-3].replace("/", "."), rel) == []


OUTLINE_SHAPES = {
    # resolvers assigning through every kind of target
    "tuple_over_lines": """
        def wire(runner, impl):
            if impl.cp_size == -1:
                (
                    impl.cp_size,
                    impl.cp_rank,
                ) = group_size_and_rank()
        """,
    "tuple_on_one_line": """
        def wire(runner, impl):
            if impl.cp_size is None:
                impl.cp_rank, impl.cp_size = 0, 1
        """,
    "list_target": """
        def wire(runner, impl):
            if impl.cp_size < 1:
                [impl.cp_size, other] = [2, 3]
        """,
    "annotated": """
        def wire(runner, impl):
            if impl.cp_size == -1:
                impl.cp_size: int = 2
        """,
    "augmented": """
        def wire(runner, impl):
            if impl.cp_size <= 0:
                impl.cp_size += 3
        """,
    "chained": """
        def wire(runner, impl, other):
            if getattr(impl, "cp_size", -1) == -1:
                other.cp_size = impl.cp_size = 4
        """,
    "backslash": """
        def wire(runner, impl):
            if impl.cp_size == -1:
                impl.cp_size \\
                    = 4
        """,
    "spaced_dots": """
        def wire(runner, holder):
            if holder . impl . cp_size == -1:
                holder . impl . cp_size = 4
        """,
    "nested_receiver_named_self": """
        class Runner:
            def start(self):
                if self.impl.cp_size == -1:
                    self.impl.cp_size = 4
        """,
    # classes the reader names after a decorator, a keyword-like prefix, or NFKC
    "decorated": """
        @dataclass
        class Meta:
            cp_size: int = -1
        class Impl(Meta):
            pass
        """,
    "nfkc": """
        class \uff26ull:
            rank = -1
        """,
    # factories of both shapes
    "factories": """
        class Backend:
            @staticmethod
            def get_impl_cls() -> "type[FlashImpl]":
                return FlashImpl

            def get_builder_cls(self):
                \"\"\"The builder.\"\"\"
                return (
                    Builder
                )
        """,
}


@pytest.mark.parametrize("name", sorted(OUTLINE_SHAPES))
def test_outline_names_the_facts_of_every_target_shape(name: str) -> None:
    text = textwrap.dedent(OUTLINE_SHAPES[name]).lstrip("\n")
    facts = _ast_facts(text, "pkg.mod", "pkg/mod.py")
    assert facts, "the shape holds facts"
    assert outline_misses(text, "pkg.mod", "pkg/mod.py") == []


def test_outline_leaves_out_what_no_resolver_assigns() -> None:
    """An attribute of ``self``/``cls`` itself is never a resolver's (the
    class settling its own attribute): left out of ``r``, which keeps the
    lazy index from reading every module that assigns ``self.x``."""
    text = "def f(self, cls, impl):\n    self.a = 1\n    cls.b = 2\n    self.impl.c = 3\n    myself.d = 4\n    x == impl.e\n"
    assert outline_text(text)["r"] == ["c", "d"]
    assert SentinelOutline.collect(None, "x = 1\n", "m", "m.py") is None


def test_outline_stays_linear() -> None:
    """Shapes that would make a backtracking search quadratic: every ``=``
    starts at most a bounded look back (to the line's end, the next ``=`` or
    bracket, or 4,000 characters), whatever the line holds."""
    import time

    n = 20000
    texts = [
        "x" + "".join(f" = a{i}.b" for i in range(n)) + "\n",
        "(" + ", ".join(f"o.a{i}" for i in range(n)) + ") = f()\n",
        "o.x: " + "A" * (n * 20) + " = 1\n",
        "f(" + ", ".join(f"k{i}=v{i}" for i in range(n)) + ")\n",
        "".join(f"o.a{i}, p = 1, 2\n" for i in range(n)),
        "(" * n + ") = 1\n",
    ]
    for text in texts:
        t = time.process_time()
        outline_text(text)
        assert time.process_time() - t < 1.5, text[:40]


def test_a_closure_testing_self_is_no_resolver() -> None:
    text = textwrap.dedent(
        """
        class Runner:
            def capture(self):
                def store(out):
                    if self.hidden is None:
                        self.hidden = out
                return store
        """
    )
    facts = collect_text(text, "pkg.mod", "pkg/mod.py")
    assert facts is not None and not facts.get("resolvers")
    assert _ast_facts(text, "pkg.mod", "pkg/mod.py") == facts


def main(roots: list[str]) -> int:
    """Compare the text reader with the ast walk over whole trees."""
    bad = fallbacks = total = 0
    for root in map(Path, roots):
        for p in sorted(root.rglob("*.py")):
            text = p.read_text(encoding="utf-8", errors="surrogateescape")
            if not SentinelFacts.needles.match(text):
                continue
            total += 1
            rel = str(p.relative_to(root.parent))
            parts = list(Path(rel).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join(parts)
            if not _text_reads(text, module, rel):
                fallbacks += 1
                print(f"whole-file ast: {rel}")
            if json.dumps(collect_text(text, module, rel)) != json.dumps(
                _ast_facts(text, module, rel)
            ):
                bad += 1
                print(f"DIFFERENT: {rel}")
    print(
        f"{total} files with the needle, {bad} different, {fallbacks} read from the whole-file ast"
    )
    return 1 if bad else 0


def bench(roots: list[str], reps: int = 3) -> None:
    """CPU (``process_time``, median of ``reps``) per tree: before, the first
    needle, then compile and the ast walk on every file it admits; now, the
    needle and the text reader."""
    import statistics
    import time

    spec = re.compile(_NEEDLE_SPEC, re.MULTILINE)
    for root in map(Path, roots):
        files = [
            (
                str(p.relative_to(root.parent)),
                p.read_text(encoding="utf-8", errors="surrogateescape"),
            )
            for p in sorted(root.rglob("*.py"))
        ]
        runs: dict[str, list[float]] = {
            k: [] for k in ("needle0", "compile", "walk", "needle", "text")
        }
        for _ in range(reps):
            t = time.process_time()
            hits = [(r, x) for r, x in files if spec.search(x)]
            runs["needle0"].append(time.process_time() - t)
            compile_s = walk_s = 0.0
            for r, x in hits:
                t0 = time.process_time()
                try:
                    tree = compile(x, r, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
                except SyntaxError:
                    continue
                t1 = time.process_time()
                collect_ast(tree, x, "m", r)
                walk_s += time.process_time() - t1
                compile_s += t1 - t0
                del tree
            runs["compile"].append(compile_s)
            runs["walk"].append(walk_s)
            t = time.process_time()
            hits = [(r, x) for r, x in files if SentinelFacts.needles.match(x)]
            runs["needle"].append(time.process_time() - t)
            t = time.process_time()
            for r, x in hits:
                collect_text(x, "m", r)
            runs["text"].append(time.process_time() - t)
        m = {k: statistics.median(v) for k, v in runs.items()}
        before = m["needle0"] + m["compile"] + m["walk"]
        now = m["needle"] + m["text"]
        print(
            f"{root.name}: {len(files)} files, {len(hits)} through the needle | before "
            f"{before:.2f} s (needle {m['needle0']:.2f} + compile {m['compile']:.2f} + ast walk "
            f"{m['walk']:.2f}) | now {now:.2f} s (needle {m['needle']:.2f} + text {m['text']:.2f})"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bench"]:
        bench(sys.argv[2:])
        raise SystemExit(0)
    raise SystemExit(main(sys.argv[1:]))
