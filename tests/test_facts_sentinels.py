"""The ``sentinels`` facts (``checks.facts.sentinels``) SHD201 reads: what a
module's classes leave at a sentinel, the resolvers, the factories, the
outline of names the lazy index looks modules up by, and the index."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from checks.facts.sentinels import SentinelFacts, SentinelOutline, outline_of_facts, statements_no_nested
from linter.facts import run_collector

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _ast_facts(text: str, module: str, path: str) -> Any:
    """The module's facts as the run computes them (None: none, or the
    text does not compile)."""
    return run_collector(SentinelFacts, text, module, path)


def _full_walk_no_nested(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` (depth first, last child first), nested
    functions, lambdas and classes listed but not entered: the reference
    for ``statements_no_nested``."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))
    return out


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
}


def _src(name: str) -> str:
    return textwrap.dedent(SNIPPETS[name]).lstrip("\n")


def test_the_snippets_exercise_the_facts() -> None:
    """The comparison above is only worth something if the snippets hold facts."""
    facts = _ast_facts(_src("class_level_sentinels"), "pkg.mod", "pkg/mod.py")
    plan = facts["classes"]["Plan"]
    assert plan["sentinel"]["size"] == ["-1", [4, 4, 4, 13], "class body", ""]
    assert plan["sentinel"]["hexed"][0] == "-16" and plan["sentinel"]["underscored"][0] == "-1000"
    assert plan["sentinel"]["parened"][0] == "None" and plan["sentinel"]["negparen"][0] == "-3"
    assert plan["sentinel"]["both"][0] == plan["sentinel"]["again"][0] == "None"
    assert plan["sentinel"]["guarded"] == ["-1", [20, 4, 20, 46], "class body", ""]
    assert plan["sentinel"]["wrapped"] == ["-4", [21, 4, 23, 5], "class body", ""]
    assert {"zero", "floaty", "pair", "other", "counted", "ternary", "called", "star"} <= set(
        plan["real"]
    )
    assert "declared" not in plan["real"] and "declared" not in plan["sentinel"]

    layer = _ast_facts(
        _src("init_family_resolved_or_not"), "pkg.mod", "pkg/mod.py"
    )
    data = layer["classes"]["Layer"]
    # resolved later in __init__, or proven by an assert in __post_init__
    assert {"tp_size", "cp_size", "cp_world", "e", "mode"} <= set(data["real"])
    # set after ``super().__init__()`` (a re-set of anything the base gave it)
    assert data["sentinel"]["frozen"] == ["None", [31, 12, 33, 13], "__init__", "after"]
    assert data["sentinel"]["late"][2:] == ["__post_init__", ""]
    # where the real value is given: a later assignment, or an assert
    assert data["real"]["tp_size"] == "__init__" and data["real"]["cp_size"] == "__post_init__"
    assert data["methods"] == {"late": ["set_world"]}
    assert not {"not_from_here", "items", "sub", "local", "other"} & set(data["real"])

    res = _ast_facts(_src("resolvers_in_functions"), "pkg.mod", "pkg/mod.py")
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

    fac = _ast_facts(_src("factories"), "pkg.mod", "pkg/mod.py")["factories"]
    assert fac["get_impl_cls"] == ["pkg.impl.FlashImpl", "pkg.impl.FlashImpl"]
    assert fac["documented"] == fac["with_comment"] == fac["one_line"] == ["pkg.impl.FlashImpl"]
    assert fac["parenthesised"] == fac["get_qualified"] == ["pkg.impl.Torch.Impl"]
    assert fac["Backend.get_impl_cls"] == ["pkg.impl.FlashImpl"] and fac["inner"] == [
        "pkg.impl.Torch"
    ]
    assert not {"two_statements", "none", "a_call", "lower"} & set(fac)

    imp = _ast_facts(_src("imports_shallow_and_not"), "pkg", "pkg/__init__.py")
    assert imp["classes"]["Uses"]["bases"][:6] == [
        "pkg.mod.Alpha",
        "pkg.mod.Beta",
        "x.y.Delta",
        "pkg.types.Epsilon",
        "pkg.old.Zeta",
        "slow.Eta",
    ]
    assert "Theta" not in imp["imports"] and "Kappa" not in imp["imports"]


def test_resolved_later_in_init_is_not_a_sentinel() -> None:
    text = "class A:\n    def __init__(self):\n        self.tp_rank = -1\n        self.tp_rank = rank()\n"
    facts = SentinelFacts.collect(ast.parse(text), text, "m", "m.py")
    assert "sentinel" not in facts["classes"]["A"]


def test_sentinel_needles_admit_classless_resolvers_and_factories() -> None:
    resolver = "def fix(cfg, impl):\n    if impl.sp_size < 1:\n        impl.sp_size = 1\n"
    factory = "def get_impl_cls():\n    return RingImpl\n"
    plain = "import os\n\ndef f(x):\n    return x + os.sep\n"
    assert SentinelFacts.needles.match(resolver)
    assert SentinelFacts.collect(ast.parse(resolver), resolver, "m", "m.py")["resolvers"]
    assert SentinelFacts.needles.match(factory)
    assert not SentinelFacts.needles.match(plain)
    assert SentinelFacts.collect(ast.parse(plain), plain, "m", "m.py") is None


STATEMENT_SHAPES = '''
def outer(cfg, impl):
    if impl.sp_size == -1:
        impl.sp_size = 1
        fn = lambda x=impl.sp_rank: x
        impl.sp_rank, (impl.a, impl.b) = 0, (1, 2)
    try:
        impl.sp_rank = 0
    except (ValueError, KeyError) as exc:
        impl.sp_rank = -1
    else:
        assert impl.sp_size > 0
    finally:
        impl.done = True
    match cfg.mode:
        case "ring":
            impl.mode = 1
        case _:
            impl.mode += 2
    with open(cfg.path) as fh, ctx() as c:
        for row in fh:
            while impl.sp_size is None:
                impl.sp_size = [v for v in row if v][0]

    def nested(flag, other):
        if other.sp_size < 1:
            other.sp_size = 1

    class Local:
        def __init__(self):
            self.sp_rank = -1
'''


def test_statement_walk_matches_the_full_walk() -> None:
    """The collector's walks skip expressions: they must still meet every
    statement the full walk meets, in the same order (the facts are ordered)."""
    tree = ast.parse(STATEMENT_SHAPES)
    holders = (ast.stmt, ast.excepthandler, ast.match_case)
    for node in [tree.body[0], *ast.walk(tree.body[0])]:
        if not isinstance(node, (ast.stmt, ast.Module)):
            continue
        full = [n for n in _full_walk_no_nested(node) if isinstance(n, holders)]
        fast = list(statements_no_nested(node))
        assert fast == full
    # the walk stops at nested functions and classes, like the full one
    outer = tree.body[0]
    names = {type(n).__name__ for n in statements_no_nested(outer)}
    assert {"If", "Try", "Match", "With", "For", "While", "Assert", "AugAssign"} <= names
    assert not any(
        isinstance(n, ast.Assign) and "other" in ast.unparse(n) for n in statements_no_nested(outer)
    )
    facts = SentinelFacts.collect(tree, STATEMENT_SHAPES, "m", "m.py")
    attrs = {(r["func"], r["attr"]) for r in facts["resolvers"]}
    assert ("outer", "sp_size") in attrs and ("outer.nested", "sp_size") in attrs
    assert facts["classes"]["outer.Local"]["sentinel"]["sp_rank"][0] == "-1"


def test_statement_walk_on_engine_trees() -> None:
    """Same check on real engine source when it is available."""
    roots = [
        Path("/root/.cache/shardlint-corpus/vllm-0.33.0/vllm/attention"),
        Path("/root/.cache/shardlint-corpus/sglang-0.5.23/sglang/srt/layers/attention"),
    ]
    files = [p for r in roots if r.is_dir() for p in sorted(r.rglob("*.py"))][:60]
    if not files:
        pytest.skip("engine corpus not downloaded")
    holders = (ast.stmt, ast.excepthandler, ast.match_case)
    for p in files:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert list(statements_no_nested(fn)) == [
                    n for n in _full_walk_no_nested(fn) if isinstance(n, holders)
                ], f"{p}:{fn.lineno}"


def test_lazy_index_answers_as_the_eager_one_and_reads_only_what_it_needs() -> None:
    """Classes through package re-exports, nested classes, the leaf-name
    fallback, MROs several levels down, resolvers and factories by name:
    the same answers whether every module's facts are at hand or each is
    read when asked, and an answer read once is replayed into each later
    recording (a cached check must list the modules behind it)."""
    from checks.facts.sentinel_index import SentinelIndex
    from linter.facts import LazyModules, ProjectFacts

    def cls(bases: list[str], sentinel: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"bases": bases, "real": [], "methods": {}}
        if sentinel:
            data["sentinel"] = {"tp_rank": ["-1", [3, 8, 3, 20], "__init__"]}
        return data

    resolver = {"attr": "tp_rank", "obj": "impl", "test": "-1", "span": [5, 4, 6, 9], "func": "w.f", "scope": "W"}
    per_module: dict[str, Any] = {
        "pkg": {"path": "pkg/__init__.py", "classes": {}, "imports": {"Impl": "pkg.impl.Impl"}},
        "pkg.impl": {"path": "pkg/impl.py", "classes": {"Root": cls([]), "Impl": cls(["pkg.impl.Root"], True)}},
        "pkg.a": {"path": "pkg/a.py", "classes": {"A": cls(["pkg.Impl"]), "Other": cls(["pkg.impl.Root"])}},
        "pkg.b": {"path": "pkg/b.py", "classes": {"B": cls(["torch.nn.Module", "pkg.a.A"]), "B.Inner": cls([])}},
        "pkg.w": {
            "path": "pkg/w.py",
            "classes": {"W": cls([])},
            "resolvers": [resolver],
            "calls": {"W": ["pkg.a.A"]},
            "factories": {"W.get_impl_cls": ["pkg.Impl"], "make": ["pkg.b.B"]},
        },
    }
    eager = SentinelIndex(per_module)
    reads: list[str] = []

    def load(module: str) -> Any:
        reads.append(module)
        return per_module.get(module)

    lazy_modules = LazyModules("sentinels", load, list(per_module))
    lazy = SentinelIndex(lazy_modules, {m: outline_of_facts(f) for m, f in per_module.items()})
    facts = ProjectFacts({}, lazy={"sentinels": lazy_modules})
    for index in (eager, lazy):
        assert index.resolve("pkg.Impl") == "pkg.impl.Impl"
        assert index.resolve("pkg.B") == "pkg.b.B"  # (leaf-name fallback below the package)
        assert index.resolve("pkg.Missing") is None
        assert index.mro("pkg.b.B") == ("pkg.b.B", "pkg.a.A", "pkg.impl.Impl", "pkg.impl.Root")
        assert index.class_ref("pkg.b.B.Inner") is not None
        assert [r.attr for r in index.resolvers.get("tp_rank", ())] == ["tp_rank"]
        assert index.resolvers.get("cp_rank", ()) == ()
        assert index.factories.get("get_impl_cls") == {"pkg.Impl"}
        assert index.factory_of("pkg.w.W", "get_impl_cls") == ("pkg.Impl",)
        assert sorted(index.classes_named(["*impl", "b"])) == ["pkg.b.B", "pkg.impl.Impl"]
    # only the modules on the way were read, each once
    assert len(reads) == len(set(reads))
    lazy2 = SentinelIndex(LazyModules("sentinels", load, list(per_module)), {m: outline_of_facts(f) for m, f in per_module.items()})
    reads.clear()
    with facts.recording() as first:
        lazy2.mro("pkg.a.A")
    assert reads and "pkg.w" not in reads
    with facts.recording() as again:
        assert lazy2.mro("pkg.a.A") == ("pkg.a.A", "pkg.impl.Impl", "pkg.impl.Root")
    assert again == first and {m for _, m in first} >= {"pkg.a", "pkg.impl"}


def test_line_separators_other_than_newlines_do_not_shift_the_ast_walk() -> None:
    """``str.splitlines`` also breaks at a form feed (and ``\\x1c``-``\\x1e``,
    ``\\x85``, U+2028/U+2029); the compiler does not: the ast walk's lines
    (the spans the notes point at) are
    the compiler's (a note's position)."""
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
    facts = _ast_facts(text, "pkg.mod", "pkg/mod.py")
    assert facts is not None and not facts.get("resolvers")


def test_a_file_that_does_not_compile_has_no_facts() -> None:
    broken = "class A:\n    x = None\n  y = 1\n"
    assert SentinelFacts.needles.match(broken)
    assert run_collector(SentinelFacts, broken, "m", "m.py") is None
    assert run_collector(SentinelOutline, broken, "m", "m.py") is None


def test_the_outline_holds_the_names_of_the_facts() -> None:
    """What the lazy index looks a module up by: its class names, the
    attributes its resolvers assign, its factories' names."""
    text = _src("resolvers_in_functions") + "\n" + _src("factories")
    facts = _ast_facts(text, "pkg.mod", "pkg/mod.py")
    outline = run_collector(SentinelOutline, text, "pkg.mod", "pkg/mod.py")
    assert outline == outline_of_facts(facts)
    assert {"cp_size", "pp_rank"} <= set(outline["r"]) and "get_impl_cls" in outline["f"]
    assert run_collector(SentinelOutline, "import os\n", "m", "m.py") is None


# the needle as first written (every alternative led by ``\b`` or a class),
# and any ``=`` (an assignment may construct a class: ``constructed_names``)
_NEEDLE_SPEC = (
    r"\bclass[ \t]|\b[tT]ype\s*\[|\breturn[\s(\\]*[^\W\d_a-z]"
    r"|(?:==|\bis\b|<=?)[\s\\(]*(?:-[\s\\(]*\d|None\b|[01]\b)"
    r"|(?:-[\s\\]*\d|\bNone|\b[01])[\s\\)]*(?:==|\bis\b|>=?)"
    r"|="
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


def test_constructed_names_are_what_a_function_may_construct_through() -> None:
    """The names the facts gate matches: capitalised callees and method
    calls assigned in any function (nested, under ``if``/``with``), through
    ``cast`` or called at once, with an import alias's original name; not
    module-level assignments, not bare lowercase calls."""
    from checks.facts.sentinels import constructed_names

    text = textwrap.dedent(
        """
        from typing import cast
        from pkg.impl import FlashImpl as Fast
        import pkg.impl as impls

        TOP = Module()

        def build(backend, cfg):
            impl_cls = cast(type, backend.get_impl_cls())
            k = backend.make_cls()(1)
            with ctx():
                if cfg:
                    a = Fast(1)
            b = impls.Other(2)
            c = helper(3)
            def inner():
                d: Deep = Deep()
                return d
            return impl_cls, k, a, b, c

        class Holder:
            def __init__(self):
                self.x = torch.empty(1)
        """
    )
    names = constructed_names(ast.parse(text))
    assert {"get_impl_cls", "make_cls", "Fast", "FlashImpl", "Other", "Deep", "empty"} <= set(names)
    assert not {"Module", "helper", "cast", "ctx"} & set(names)


def test_the_outline_carries_what_the_facts_gate_asks() -> None:
    from checks.facts.sentinel_index import SentinelIndex

    base = textwrap.dedent(
        """
        class CpImpl:
            def __init__(self):
                self.cp_world_size = -1
                self.block_size = None
        class Plain:
            pass
        """
    )
    sub = "from pkg.base import CpImpl\n\nclass FastCp(CpImpl):\n    pass\n\nclass Leaf(FastCp):\n    pass\n"
    user = "def f():\n    k = Leaf()\n    return k\n"
    other = "def g():\n    k = Plain()\n    return k\n"
    outlines = {
        m: run_collector(SentinelOutline, t, m, m.replace(".", "/") + ".py")
        for m, t in (("pkg.base", base), ("pkg.sub", sub), ("pkg.user", user), ("pkg.other", other))
    }
    assert outlines["pkg.base"]["s"] == {"CpImpl": {"block_size": "None", "cp_world_size": "-1"}}
    assert outlines["pkg.sub"]["b"] == {"FastCp": ["CpImpl"], "Leaf": ["FastCp"]}
    assert outlines["pkg.user"]["k"] == ["Leaf"]
    index = SentinelIndex({}, outlines)

    def held(attr: str, value: str) -> bool:
        return attr.endswith("world_size")

    assert index.sentinel_holders(held, "k") == {"CpImpl", "FastCp", "Leaf"}
    admitted = {
        m for m in outlines if index.may_report_in(m, held, held, ("get_impl_cls",), "k")
    }
    assert admitted == {"pkg.base", "pkg.sub", "pkg.user"}


def test_a_membership_test_against_sentinels_is_a_resolver() -> None:
    text = "def f(layer, impl):\n    if impl.sp_rank in (-1, None):\n        impl.sp_rank = 0\n"
    facts = _ast_facts(text, "m", "m.py")
    assert [(r["attr"], r["test"]) for r in facts["resolvers"]] == [("sp_rank", "-1")]
    other = "def f(layer, impl):\n    if impl.sp_rank in (2, 3):\n        impl.sp_rank = 0\n"
    assert not (_ast_facts(other, "m", "m.py") or {}).get("resolvers")
