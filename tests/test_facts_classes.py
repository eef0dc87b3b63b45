"""The "classes" fact collector and its index: bases resolved across files,
re-exports, attributes along the MRO."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from checks.facts.classes import ClassFacts, ClassIndex, NonLiteral
from linter.config import Config
from linter.engine import Engine
from linter.files import module_name_of
from linter.registry import load_registry


def index_of(files: dict[str, str]) -> ClassIndex:
    per_module = {}
    for path, src in files.items():
        text = textwrap.dedent(src)
        if not ClassFacts.needles.match(text):
            continue
        mod = module_name_of(path)
        data = ClassFacts.collect(ast.parse(text), text, mod, path)
        if data is not None:
            per_module[mod] = data
    return ClassFacts.build_index(per_module)


THREE_FILES = {
    "pkg/__init__.py": "from .base import Root\n",
    "pkg/base.py": """
        class Root:
            enabled = True
            limit = -1
            label = "root"
            unset = None
            computed = make_flag()

            def forward(self):
                pass
    """,
    "pkg/middle.py": """
        from .base import Root as R

        class Middle(R):
            label = "middle"
    """,
    "pkg/sub/leaf.py": """
        from ..middle import Middle

        class Leaf(Middle):
            def extra(self):
                pass
    """,
}


def test_bases_resolve_through_relative_imports_and_aliases() -> None:
    idx = index_of(THREE_FILES)
    assert idx.bases("pkg.middle.Middle") == ["pkg.base.Root"]
    assert idx.bases("pkg.sub.leaf.Leaf") == ["pkg.middle.Middle"]
    assert [q for q, _ in idx.mro("pkg.sub.leaf.Leaf")] == [
        "pkg.sub.leaf.Leaf",
        "pkg.middle.Middle",
        "pkg.base.Root",
    ]


def test_attr_is_the_first_definition_along_the_mro() -> None:
    idx = index_of(THREE_FILES)
    got = idx.attr("pkg.sub.leaf.Leaf", "enabled")
    assert got is not None
    value, owner, module, line = got
    assert (value, owner, module, line) == (True, "pkg.base.Root", "pkg.base", 3)
    assert idx.attr("pkg.sub.leaf.Leaf", "label").value == "middle"
    assert idx.attr("pkg.sub.leaf.Leaf", "limit").value == -1
    unset = idx.attr("pkg.sub.leaf.Leaf", "unset")
    assert unset is not None and unset.value is None
    computed = idx.attr("pkg.sub.leaf.Leaf", "computed")
    assert computed is not None and computed.value == NonLiteral("make_flag()")
    assert idx.attr("pkg.sub.leaf.Leaf", "missing") is None
    assert idx.attr_location("pkg.base.Root", "enabled") == ("pkg/base.py", 3, 4, 3, 11)


def test_defines_finds_inherited_methods() -> None:
    idx = index_of(THREE_FILES)
    assert idx.defines("pkg.sub.leaf.Leaf", "forward") == "pkg.base.Root"
    assert idx.defines("pkg.sub.leaf.Leaf", "extra") == "pkg.sub.leaf.Leaf"
    assert idx.defines("pkg.middle.Middle", "extra") is None


def test_reexport_through_package_init() -> None:
    idx = index_of(
        {
            **THREE_FILES,
            "app/model.py": """
                from pkg import Root
                import pkg.middle as mid

                class Direct(Root):
                    pass

                class ViaModule(mid.Middle):
                    pass
            """,
        }
    )
    assert idx.resolve("app.model", "Root") == "pkg.base.Root"
    assert idx.bases("app.model.Direct") == ["pkg.base.Root"]
    assert idx.attr("app.model.Direct", "enabled").owner == "pkg.base.Root"
    assert idx.attr("app.model.ViaModule", "label").owner == "pkg.middle.Middle"


def test_unknown_bases_are_skipped() -> None:
    idx = index_of(
        {
            "m.py": """
                import torch.nn as nn
                from somewhere import Mixin

                class Local(nn.Module, Mixin):
                    flag = False
            """
        }
    )
    assert idx.bases("m.Local") == ["torch.nn.Module", "somewhere.Mixin"]
    assert [q for q, _ in idx.mro("m.Local")] == ["m.Local"]


def test_cycles_terminate() -> None:
    idx = index_of(
        {
            "a.py": "from b import B\n\nclass A(B):\n    pass\n",
            "b.py": "from a import A\n\nclass B(A):\n    x = 1\n",
            "c.py": "class Self(Self):\n    pass\n",
        }
    )
    assert [q for q, _ in idx.mro("a.A")] == ["a.A", "b.B"]
    assert idx.attr("a.A", "x").value == 1
    assert idx.attr("a.A", "nope") is None
    assert [q for q, _ in idx.mro("c.Self")] == ["c.Self"]
    # a re-export loop in __init__ modules must not hang either
    loop = index_of({"p/__init__.py": "from q import X\n", "q/__init__.py": "from p import X\n"})
    assert loop.resolve("p", "X") in {"p.X", "q.X"}


def test_nested_classes_and_mro_of_bases_for_unindexed_classes() -> None:
    idx = index_of(
        THREE_FILES
        | {
            "pkg/use.py": "from .middle import Middle\n\nclass Outer:\n    class Inner(Middle):\n        pass\n"
        }
    )
    assert "pkg.use.Outer.Inner" in idx
    assert [q for q, _ in idx.mro_of_bases("pkg.use", ["Middle"])] == [
        "pkg.middle.Middle",
        "pkg.base.Root",
    ]


def test_name_span_counts_code_points() -> None:
    idx = index_of({"u.py": "x = 'é'; y = 1\nclass Ünï:\n    z = True\n"})
    info = idx.get("u.Ünï")
    assert info is not None and (info.line, info.col, info.end_col) == (2, 6, 9)


def test_collector_is_discovered_and_feeds_project_facts(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .base import Root\n")
    (tmp_path / "pkg" / "base.py").write_text("class Root:\n    enabled = True\n")
    (tmp_path / "child.py").write_text("from pkg import Root\n\nclass Child(Root):\n    pass\n")
    registry = load_registry()
    assert "classes" in registry.collectors
    engine = Engine(Config(root=tmp_path, select=("SHD301",)), registry, jobs=1)
    idx = engine.project_facts().index("classes")
    assert idx.attr("child.Child", "enabled").owner == "pkg.base.Root"


def test_lazy_index_reads_only_the_modules_a_query_needs_and_records_them_every_time() -> None:
    """The facts are lazy: a query reads the modules along the MRO (and the
    absent ones it probes), nothing else; a memoised answer still records
    them, or a second check asking the same would miss its dependencies."""
    from linter.facts import LazyModules, ProjectFacts

    texts = {module_name_of(p): (p, textwrap.dedent(s)) for p, s in THREE_FILES.items()}
    texts["pkg.unrelated"] = ("pkg/unrelated.py", "class Other:\n    x = 1\n")
    loaded: list[str] = []

    def loader(mod: str):
        loaded.append(mod)
        path, text = texts[mod]
        return ClassFacts.collect(ast.parse(text), text, mod, path)

    lazy = LazyModules("classes", loader, list(texts))
    facts = ProjectFacts({}, {"classes": ClassFacts}, lazy={"classes": lazy})
    idx = facts.index("classes")
    with facts.recording() as first:
        names = [q for q, _ in idx.mro("pkg.sub.leaf.Leaf")]
    assert names == ["pkg.sub.leaf.Leaf", "pkg.middle.Middle", "pkg.base.Root"]
    assert "pkg.unrelated" not in loaded
    assert {m for _, m in first} >= {"pkg.sub.leaf", "pkg.middle", "pkg.base"}
    with facts.recording() as second:
        idx.mro("pkg.sub.leaf.Leaf")
    assert second == first
    # an edited buffer replaces one module's facts, the others stay lazy
    middle = "class Middle:\n    pass\n"
    buffer = ClassFacts.collect(ast.parse(middle), middle, "pkg.middle", "pkg/middle.py")
    edited = facts.with_module("pkg.middle", {"classes": buffer})
    assert [q for q, _ in edited.index("classes").mro("pkg.sub.leaf.Leaf")] == names[:2]
    assert [q for q, _ in idx.mro("pkg.sub.leaf.Leaf")] == names
    assert "pkg.unrelated" not in loaded


def test_an_edit_that_leaves_a_modules_facts_keeps_the_index_built_on_them() -> None:
    """``with_module`` keeps the index of a collector whose facts for the
    module did not change (its memoised answers too), and builds again one
    whose facts did."""
    from linter.facts import LazyModules, ProjectFacts

    texts = {module_name_of(p): (p, textwrap.dedent(s)) for p, s in THREE_FILES.items()}

    def loader(mod: str):
        path, text = texts[mod]
        return ClassFacts.collect(ast.parse(text), text, mod, path)

    facts = ProjectFacts({}, {"classes": ClassFacts}, lazy={"classes": LazyModules("classes", loader, list(texts))})
    idx = facts.index("classes")
    path, text = texts["pkg.middle"]
    same = ClassFacts.collect(ast.parse(text), text, "pkg.middle", path)
    assert facts.with_module("pkg.middle", {"classes": same}).index("classes") is idx
    middle = "class Middle:\n    pass\n"
    other = ClassFacts.collect(ast.parse(middle), middle, "pkg.middle", path)
    rebuilt = facts.with_module("pkg.middle", {"classes": other}).index("classes")
    assert rebuilt is not idx
    assert [q for q, _ in rebuilt.mro("pkg.sub.leaf.Leaf")] == ["pkg.sub.leaf.Leaf", "pkg.middle.Middle"]


def test_classes_in_every_clause_of_a_top_level_try_are_indexed() -> None:
    # a class may be defined under try/except/else/finally (optional
    # dependencies): each clause is read, the later definition of a name wins
    idx = index_of(
        {
            "m.py": """
                try:
                    import fast_ops
                except ImportError:
                    class Ops:
                        where = "except"
                else:
                    class Ops:
                        where = "else"
                finally:
                    class Always:
                        flag = True
            """
        }
    )
    assert idx.attr("m.Always", "flag") is not None
    assert idx.attr("m.Ops", "where").value == "else"
