"""The fast ``ast`` walker of ``linter.astwalk`` against its plain
definition: ``ast_children`` reads only the fields a node type can hold a
node in (a table of leaf fields per Python 3.11's grammar); a wrong table
entry would drop nodes here. Also the import readers of ``linter.imports``."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from linter.astwalk import ast_children

# one of every node kind, with the fields that hold None or strings set both
# ways (`{**d}`'s None key, a keyword-only argument without a default,
# `global`, `match` patterns with names and rests, a type comment)
_EVERY_KIND = textwrap.dedent(
    '''
    import os, sys as system
    from . import a as b
    from ..x import (y, z)
    g: int = 1
    h: int
    @dec(1, *a, k=2, **kw)
    class C(Base, metaclass=M, **opts):
        x = [i async for i in y if i] if False else {k: v for k, v in w}
        @property
        async def f(self, a, /, b: int = 1, *args, c, d=2, e, **kw) -> "T":  # type: ignore
            global G
            nonlocal_ = lambda q, *r, s=1, **t: (q, r, s, t)
            async with a as (b, c), d:
                async for i in j:
                    await k
                else:
                    pass
            def inner():
                nonlocal nonlocal_
                yield 1
                yield from x
            try:
                raise E from F
            except* (A, B) as e:
                del a[1:2:3], b.c
            try:
                pass
            except A:
                pass
            except:
                pass
            else:
                pass
            finally:
                pass
            match s:
                case {"k": 1, **rest} if rest:
                    pass
                case Point(1, x=2, y=[3, *others]) | None | True:
                    pass
                case [1, 2.0, -3j, "s", b"b", *_] as whole:
                    pass
                case _:
                    pass
            while not x:
                break
            for i, *j in k:  # type: int
                continue
            assert x, f"{a!r:>{w}} {b}"
            x @= y; x += 1; x = y = z = 1  # type: int
            return {**d, 1: 2}, {1, 2}, (a := b), a[b, c], -x, x < y <= z, a and b or c
    '''
)


def _children(node: ast.AST) -> list[ast.AST]:
    return [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]


def _trees() -> Iterator[ast.Module]:
    yield ast.parse(_EVERY_KIND, type_comments=True)
    yield ast.parse(_EVERY_KIND)
    for p in sorted(Path(__file__).resolve().parents[1].joinpath("checks").glob("*.py")):
        yield ast.parse(p.read_text(encoding="utf-8"))


def test_ast_children_is_iter_child_nodes_without_contexts() -> None:
    kinds: set[type] = set()
    for tree in _trees():
        for node in ast.walk(tree):
            kinds.add(type(node))
            want, got = _children(node), ast_children(node)
            assert len(want) == len(got) and all(a is b for a, b in zip(want, got)), ast.dump(node)
    # the snippet reaches the fields the leaf table names
    assert {ast.Global, ast.Nonlocal, ast.MatchMapping, ast.MatchClass, ast.MatchAs, ast.MatchStar,
            ast.MatchSingleton, ast.TryStar, ast.FormattedValue, ast.ImportFrom, ast.Dict} <= kinds






# -- imports read on libcst's statements ---------------------------------------------

_IMPORTS_EVERYWHERE = textwrap.dedent(
    '''
    import os, sys as system
    from . import a as b
    if x: import one
    elif y:
        from .two import t as shadow
    else:
        import three.deep
    try:
        import four
    except ImportError:
        from ..five import f
    else: import six
    finally:
        from seven import *
        import shadow, eighteen
    with ctx() as c:
        for i in r:
            import eight
        else:
            import nine as n9
    while w:
        import ten
    else:
        pass
    class C:
        import eleven
        def m(self):
            import twelve; from .thirteen import th
    async def f():
        async with a:
            import fourteen
    match v:
        case 1:
            import fifteen
        case _:
            from sixteen import s16 as shadow
    try:
        pass
    except* ValueError:
        import seventeen
    x = [lambda: 1 for _ in ()]
    '''
)


def _imports_by_visitor(module: object, name: str, path: str) -> dict[str, str]:
    """The plain definition: the bindings of every ``Import``/``ImportFrom``
    node a libcst visitor meets, in order (a later import of a name wins)."""
    import libcst as cst

    from linter.imports import bind_cst_import, is_package_path

    out: dict[str, str] = {}
    pkg = is_package_path(path)

    class V(cst.CSTVisitor):
        def visit_Import(self, n: cst.Import) -> None:
            bind_cst_import(out, n, name, pkg)

        def visit_ImportFrom(self, n: cst.ImportFrom) -> None:
            bind_cst_import(out, n, name, pkg)

    module.visit(V())  # type: ignore[attr-defined]
    return out


def test_imports_from_cst_reads_every_import_a_visitor_meets() -> None:
    import libcst as cst

    from linter.imports import imports_from_cst

    module = cst.parse_module(_IMPORTS_EVERYWHERE)
    got = imports_from_cst(module, "pkg.mod", "pkg/mod.py")
    assert got == _imports_by_visitor(module, "pkg.mod", "pkg/mod.py")
    for local in ("one", "three", "four", "f", "six", "eight", "n9", "ten", "eleven", "twelve", "th",
                  "fourteen", "fifteen", "seventeen", "eighteen"):
        assert local in got, local
    assert got["shadow"] == "sixteen.s16"  # the last one written wins
    assert got["f"] == "five.f" or got["f"].endswith(".five.f")


def test_imports_from_cst_matches_the_visitor_on_the_corpus() -> None:
    import libcst as cst

    from linter.imports import imports_from_cst

    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "corpus").rglob("*.py")) + sorted((root / "checks").glob("*.py"))
    assert len(files) > 50
    for f in files:
        try:
            module = cst.parse_module(f.read_text(encoding="utf-8"))
        except cst.ParserSyntaxError:
            continue
        for name, path in (("pkg.sub.mod", "pkg/sub/mod.py"), ("pkg.sub", "pkg/sub/__init__.py")):
            assert imports_from_cst(module, name, path) == _imports_by_visitor(module, name, path), f


# -- name_matches: every glob at once ----------------------------------------------

_GLOB_CHARS = st.sampled_from(["*", "?", "[a-c]", "[!x]", "a", "B", "_", "1", ".", "x", "[", "]", "\\\\", "é"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.lists(_GLOB_CHARS, max_size=6).map("".join), max_size=4),
    st.lists(st.sampled_from(["a", "b", "c", "x", "B", "_", "1", "é", "[", "]", "\\\\"]), max_size=6).map("".join),
    st.sampled_from(["", "pkg.", "a.b."]),
)
def test_name_matches_is_fnmatchcase_of_any_glob(patterns: list[str], leaf: str, prefix: str) -> None:
    """``name_matches`` matches the lower-cased last component against all
    the globs in one compiled pattern: the same answer as
    ``fnmatch.fnmatchcase`` asked of each."""
    import fnmatch

    from linter.syntax import name_matches

    name = prefix + leaf
    last = name.rsplit(".", 1)[-1].lower()
    expected = bool(name) and any(fnmatch.fnmatchcase(last, p.lower()) for p in patterns)
    assert name_matches(name, patterns) == expected
    assert name_matches(name, iter(patterns)) == expected  # (any iterable)
