"""SHD201 unresolved-sentinel-reaches-impl: facts, messages, options and
cross-file inheritance."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks._sentinels import SentinelFacts
from linter.config import Config, load_config
from linter.engine import Engine
from linter.registry import load_registry
from linter.types import Diagnostic

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"

BASE = '''
from engine.parallel import get_cp_group


class ContextImplBase:
    cp_rank: int = -1

    def __init__(self, heads: int) -> None:
        self.heads = heads
        self.cp_world_size = -1
        self.block_size = 16


class SelfResolving(ContextImplBase):
    def __init__(self, heads: int) -> None:
        super().__init__(heads)
        self.cp_world_size = get_cp_group().world_size
        self.cp_rank = get_cp_group().rank_in_group
'''

WRAPPER = '''
from engine.parallel import get_cp_group


class ContextLayer:
    def __init__(self, backend, heads: int) -> None:
        impl_cls = backend.get_impl_cls()
        self.impl = impl_cls(heads)
        if self.impl.cp_world_size == -1:
            self.impl.cp_world_size = get_cp_group().world_size
            self.impl.cp_rank = get_cp_group().rank_in_group
'''

SUB = '''
from pkg.base import ContextImplBase


class FastContextImpl(ContextImplBase):
    def decode(self, q):
        return q
'''

MODEL = '''
from pkg.sub import FastContextImpl
from pkg.base import SelfResolving


class ToyAttention:
    def __init__(self, heads: int) -> None:
        self.impl = FastContextImpl(heads)
        self.ok = SelfResolving(heads)
'''


def write_project(root: Path, files: dict[str, str], pyproject: str | None = None) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")


def run(root: Path) -> list[Diagnostic]:
    registry = load_registry()
    if (root / "pyproject.toml").is_file():
        config = load_config([root], registry)
    else:
        config = Config(root=root)
    config = config.with_overrides(select=("SHD201",))
    result = Engine(config, registry, jobs=1).run([root])
    assert not result.errors, result.errors
    return [d for d in result.diagnostics if d.code == "SHD201"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": BASE,
            "pkg/wrapper.py": WRAPPER,
            "pkg/sub.py": SUB,
            "pkg/model.py": MODEL,
        },
    )
    return tmp_path


def test_facts_record_unresolved_sentinels_bases_and_resolvers() -> None:
    text = textwrap.dedent(BASE)
    facts = SentinelFacts.collect(ast.parse(text), text, "pkg.base", "pkg/base.py")
    base = facts["classes"]["ContextImplBase"]
    assert base["sentinel"]["cp_world_size"][0] == "-1"
    assert base["sentinel"]["cp_world_size"][2] == "__init__"
    assert base["sentinel"]["cp_rank"][2] == "class body"
    # 16 is a real value, not a sentinel
    assert "block_size" not in base["sentinel"] and "block_size" in base["real"]
    sub = facts["classes"]["SelfResolving"]
    assert sub["bases"] == ["pkg.base.ContextImplBase"]
    assert "sentinel" not in sub and {"cp_world_size", "cp_rank"} <= set(sub["real"])

    text = textwrap.dedent(WRAPPER)
    facts = SentinelFacts.collect(ast.parse(text), text, "pkg.wrapper", "pkg/wrapper.py")
    got = {(r["attr"], r["obj"], r["test"], r["func"], r["span"][0]) for r in facts["resolvers"]}
    assert got == {
        ("cp_world_size", "self.impl", "-1", "ContextLayer.__init__", 9),
        ("cp_rank", "self.impl", "-1", "ContextLayer.__init__", 9),
    }
    assert ".get_impl_cls" in facts["calls"]["ContextLayer"]


def test_resolved_later_in_init_is_not_a_sentinel() -> None:
    text = "class A:\n    def __init__(self):\n        self.tp_rank = -1\n        self.tp_rank = rank()\n"
    facts = SentinelFacts.collect(ast.parse(text), text, "m", "m.py")
    assert "sentinel" not in facts["classes"]["A"]


def test_subclass_in_another_file_inherits_sentinel_and_message_names_resolver(project: Path) -> None:
    diags = run(project)
    assert [(d.path, d.span.line) for d in diags] == [("pkg/model.py", 8)]
    d = diags[0]
    assert "`self.impl`" in d.message and "FastContextImpl" in d.message
    assert "`cp_rank`" in d.message and "`cp_world_size`" in d.message
    assert "ContextLayer.__init__ (pkg/wrapper.py:9)" in d.message
    related = {(n.path, n.span.line) for n in d.notes if n.path is not None and n.span is not None}
    assert ("pkg/base.py", 10) in related  # self.cp_world_size = -1
    assert ("pkg/base.py", 6) in related  # cp_rank: int = -1
    assert ("pkg/wrapper.py", 9) in related  # the resolver
    assert any("self.impl.cp_world_size = 1" in n.message for n in d.notes)


def test_checking_one_file_still_sees_facts_of_the_project(project: Path) -> None:
    registry = load_registry()
    engine = Engine(Config(root=project, select=("SHD201",)), registry, jobs=1)
    diags, _ = engine.lint_text((project / "pkg/model.py").read_text(), project / "pkg/model.py")
    assert [d.span.line for d in diags if d.code == "SHD201"] == [8]


def test_normalising_after_construction_silences(project: Path) -> None:
    (project / "pkg/model.py").write_text(
        textwrap.dedent(MODEL)
        + "        if getattr(self.impl, 'cp_world_size', -1) < 1:\n"
        + "            self.impl.cp_world_size = 1\n"
        + "            self.impl.cp_rank = 0\n"
    )
    assert run(project) == []


def test_without_a_paired_resolver_nothing_fires(project: Path) -> None:
    (project / "pkg/wrapper.py").unlink()
    assert run(project) == []


def test_option_resolver_scope_none_fires_without_resolver(project: Path) -> None:
    (project / "pkg/wrapper.py").unlink()
    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nresolver-scope = "none"\n')
    diags = run(project)
    assert [(d.path, d.span.line) for d in diags] == [("pkg/model.py", 8)]
    assert "normal path" not in diags[0].message


def test_option_attribute_patterns_and_sentinel_values(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD201]\nattribute-patterns = ["cp_rank"]\n'
    )
    diags = run(project)
    assert len(diags) == 1 and "`cp_rank`" in diags[0].message and "cp_world_size" not in diags[0].message
    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nsentinel-values = ["None"]\n')
    assert run(project) == []


def test_option_factory_methods(tmp_path: Path) -> None:
    files = {
        "impl.py": """
            class KernelImpl:
                def __init__(self):
                    self.sp_world_size = -1

            class Backend:
                @staticmethod
                def build_cls() -> type[KernelImpl]:
                    return KernelImpl

            class Wrapper:
                def __init__(self, b: Backend):
                    self.k = b.build_cls()()
                    if self.k.sp_world_size == -1:
                        self.k.sp_world_size = 2

            class Direct:
                def __init__(self, b: Backend):
                    cls_ = b.build_cls()
                    self.k = cls_()
            """,
    }
    write_project(tmp_path, files)
    assert run(tmp_path) == []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD201]\nfactory-methods = ["build_cls"]\n'
    )
    diags = run(tmp_path)
    assert [d.span.line for d in diags] == [20]
    assert "via `build_cls()`" in diags[0].message


def test_bad_resolver_scope_value_is_reported(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nresolver-scope = "sometimes"\n')
    registry = load_registry()
    config = load_config([project], registry).with_overrides(select=("SHD201",))
    result = Engine(config, registry, jobs=1).run([project])
    assert any("resolver-scope" in e.message for e in result.errors)


# -- prefilter ---------------------------------------------------------------------


def run_stats(root: Path) -> tuple[int, list[Diagnostic]]:
    registry = load_registry()
    config = load_config([root], registry) if (root / "pyproject.toml").is_file() else Config(root=root)
    result = Engine(config.with_overrides(select=("SHD201",)), registry, jobs=1).run([root])
    assert not result.errors, result.errors
    return result.stats.parsed, [d for d in result.diagnostics if d.code == "SHD201"]


def test_facts_gate_parses_only_constructions_of_sentinel_classes(project: Path) -> None:
    # every module of the project passes the text gate (``Impl``, ``= -``);
    # only the model, which constructs a class keeping a resolved sentinel,
    # and the base, whose class keeps it itself, can hold a finding
    _, diags = run_stats(project)
    assert [d.path for d in diags] == ["pkg/model.py"]
    (project / "pkg/wrapper.py").unlink()  # no normal path: nothing can fire
    assert run_stats(project) == (0, [])


def test_facts_gate_follows_the_configured_factory(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "impl.py": """
                class KernelImpl:
                    def __init__(self):
                        self.sp_world_size = -1

                class Wrapper:
                    def __init__(self, b):
                        self.k = b.build_cls()()
                        if self.k.sp_world_size == -1:
                            self.k.sp_world_size = 2

                class Direct:
                    def __init__(self, b):
                        cls_ = b.build_cls()
                        self.k = cls_()
            """,
        },
    )
    # ``build_cls`` is not a factory by default: nothing can fire, the file
    # is not parsed
    assert run_stats(tmp_path) == (0, [])
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD201]\nfactory-methods = ["build_cls"]\n'
    )
    parsed, diags = run_stats(tmp_path)
    assert parsed == 1 and [d.span.line for d in diags] == [15]


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
    from checks._sentinels import _stmts_no_nested, _walk_no_nested

    tree = ast.parse(STATEMENT_SHAPES)
    holders = (ast.stmt, ast.excepthandler, ast.match_case)
    for node in [tree.body[0], *ast.walk(tree.body[0])]:
        if not isinstance(node, (ast.stmt, ast.Module)):
            continue
        full = [n for n in _walk_no_nested(node) if isinstance(n, holders)]
        fast = list(_stmts_no_nested(node))
        assert fast == full
    # the walk stops at nested functions and classes, like the full one
    outer = tree.body[0]
    names = {type(n).__name__ for n in _stmts_no_nested(outer)}
    assert {"If", "Try", "Match", "With", "For", "While", "Assert", "AugAssign"} <= names
    assert not any(
        isinstance(n, ast.Assign) and "other" in ast.unparse(n) for n in _stmts_no_nested(outer)
    )
    facts = SentinelFacts.collect(tree, STATEMENT_SHAPES, "m", "m.py")
    attrs = {(r["func"], r["attr"]) for r in facts["resolvers"]}
    assert ("outer", "sp_size") in attrs and ("outer.nested", "sp_size") in attrs
    assert facts["classes"]["outer.Local"]["sentinel"]["sp_rank"][0] == "-1"


def test_statement_walk_on_engine_trees() -> None:
    """Same check on real engine source when it is available."""
    from checks._sentinels import _stmts_no_nested, _walk_no_nested

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
                assert list(_stmts_no_nested(fn)) == [
                    n for n in _walk_no_nested(fn) if isinstance(n, holders)
                ], f"{p}:{fn.lineno}"


# -- the site needle: every sentinel the facts record passes it ---------------------
# The own-init check needs a size/rank attribute the ``sentinels`` facts record
# as a sentinel (``-N``, or ``None`` set in the init family); the raw-text gate
# looks for the assignment in any layout. The reference is the ast walk.

_SITE_TARGETS = [
    "self.cp_world_size",
    "self.CP_RANK",
    "self.num_kv_splits",
    "this.tp_rank",  # the first parameter, whatever its name
    "cp_world_size",  # a class attribute
    "scan_rank: int",
    "num_slots: Annotated[int, Field(ge=0)]",
    "slot_size: Optional[\n        int\n    ]",
    "self.other = self.sp_rank",
]
_SITE_VALUES = ["-1", "- 2", "-(1)", "(-1)", "(\n        -1\n    )", "\\\n        -1", "None", "(None)"]
_SITE_PLACES = ["init", "init_if", "post_init", "class", "class_if", "semicolon"]


def _site_snippet(target: str, value: str, place: str) -> str:
    first = "this" if target.startswith("this.") else "self"
    stmt = f"{target} = {value}"
    if place == "class":
        body = [f"    {stmt}", "    def __init__(self):", "        pass"]
    elif place == "class_if":
        body = ["    if HAVE_CP:", f"        {stmt}", "    def __init__(self):", "        pass"]
    elif place == "semicolon":
        body = [f"    def __init__({first}, n):", f"        {first}.n = n; {stmt}"]
    else:
        name = "__post_init__" if place == "post_init" else "__init__"
        body = [f"    def {name}({first}, n):", '        """Set up."""']
        body += [f"        if n:\n            {stmt}"] if place == "init_if" else [f"        {stmt}"]
    return "\n".join(["class Impl:", *body]) + "\n"


def _records_a_sentinel(text: str) -> bool:
    """Whether the facts hold a size/rank attribute (the default patterns)
    at ``-N``, or at ``None`` in the ``__init__`` family."""
    from checks._helpers import name_matches

    facts = SentinelFacts.collect(ast.parse(text), text, "m", "m.py") or {}
    for data in facts.get("classes", {}).values():
        for attr, (value, _span, where) in data.get("sentinel", {}).items():
            if not name_matches(attr, ("*world_size", "*rank", "*_size", "num_*")):
                continue
            if value != "None" or where != "class body":
                return True
    return False


def test_site_needle_admits_every_recorded_sentinel() -> None:
    import itertools

    from checks.unresolved_sentinel_reaches_impl import _SITE_NEEDLES

    recorded = 0
    for target, value, place in itertools.product(_SITE_TARGETS, _SITE_VALUES, _SITE_PLACES):
        if place.startswith("class") and target.startswith(("self.", "this.")):
            continue  # not a class attribute
        text = _site_snippet(target, value, place)
        if _records_a_sentinel(text):
            recorded += 1
            assert _SITE_NEEDLES._match(text), text
            assert _SITE_NEEDLES._match(text.replace("\n", "\r\n")), text
    assert recorded > 100  # (the shapes do hold sentinels)


def test_site_needle_explicit_cases() -> None:
    from checks.unresolved_sentinel_reaches_impl import _SITE_NEEDLES

    admitted = [
        _site_snippet("self.cp_world_size", "\\\n        -1", "init"),
        _site_snippet("self.cp_world_size", "(\n        -1\n    )", "init"),
        _site_snippet("self.cp_world_size", "- 1", "init"),
        _site_snippet("self.CP_RANK", "None", "init"),
        _site_snippet("cp_world_size", "-1", "class"),
        _site_snippet("num_slots: Annotated[int, Field(ge=0)]", "-1", "class"),
        _site_snippet("this.tp_rank", "None", "init_if"),
        _site_snippet("self.other = self.sp_rank", "None", "semicolon"),
        "impl = FlashImpl \\\n    (heads)\n",
        "impl = (FlashImpl)(heads)\n",
    ]
    admitted.append("class Impl: cp_rank = -1\n")
    for text in admitted:
        assert _SITE_NEEDLES._match(text), text
    dropped = [
        "out = torch.cat([a, b], dim=-1)\n",
        "def f(world_size: int = -1, rank=None):\n    return world_size\n",
        "def f():\n    local_rank = -1\n    return local_rank\n",
        "x = foo(\n    world_size=-1,\n)\n",
        "q, k = qkv.split(\n    [self.q_size, self.kv_size], dim=-1\n)\n",
        "# self.cp_world_size = -1 until resolved\n",
        "req.cp_rank = None\n",
        "class A:\n    cp_rank = None\n",  # a class-level None: too common to parse for
        "a, self.cp_rank = None, -1\n",  # a tuple target: real values
    ]
    for text in dropped:
        assert not _SITE_NEEDLES._match(text), text


def test_site_needle_stays_linear() -> None:
    """Many sentinel-looking assignments in one function or on one line:
    each statement's owner is found once (a statement above at the same
    indentation answers for the next), each target read backwards."""
    import time

    from checks.unresolved_sentinel_reaches_impl import _SITE_NEEDLES

    n = 20000
    texts = [
        "def f():\n" + "".join(f"    x{i}_size = -1\n" for i in range(n)),
        "def f():\n" + "".join(f"    if a:\n        x{i}_size = -1\n" for i in range(n)),
        "x = {" + ", ".join(f"k{i}: {i}" for i in range(n)) + "}; self.cp_rank = -1\n",
        "self.rank" + ": x" * n + " = -1\n",
    ]
    for text in texts:
        t = time.process_time()
        _SITE_NEEDLES._match(text)
        assert time.process_time() - t < 1.5, text[:40]


def test_site_needle_on_the_corpus() -> None:
    from checks.unresolved_sentinel_reaches_impl import _SITE_NEEDLES

    for p in sorted(CORPUS_DIR.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        if _records_a_sentinel(text):
            assert _SITE_NEEDLES._match(text), p


@pytest.mark.parametrize(
    "body",
    [
        ["kernel_cls = backend.get_impl_cls()", "k: DecodeKernel = kernel_cls(heads)"],
        ["kernel_cls = cast(type[DecodeKernel], backend.get_impl_cls())", "k = kernel_cls(heads)"],
    ],
)
def test_a_factory_result_typed_as_a_class_outside_the_family_is_gated_in(tmp_path: Path, body: list[str]) -> None:
    """The bare factory's family holds no class keeping the sentinel (no
    ``*Impl`` here, no factory returning one): only the annotation or the
    cast names ``DecodeKernel``. The facts gate must let the file through
    (it asks the family and the classes the file's casts and annotations
    name), and the rule reports the construction."""
    write_project(
        tmp_path,
        {
            "eng/kernel.py": """
                class DecodeKernel:
                    def __init__(self, heads):
                        self.heads = heads
                        self.cp_world_size = -1
            """,
            "eng/layer.py": """
                from eng.kernel import DecodeKernel


                class Layer:
                    def __init__(self, heads):
                        self.k = DecodeKernel(heads)
                        if self.k.cp_world_size == -1:
                            self.k.cp_world_size = 1
            """,
            "eng/model.py": "from typing import cast\n\nfrom eng.kernel import DecodeKernel\n\n\n"
            + "def build(backend, heads):\n"
            + "".join(f"    {line}\n" for line in [*body, "return k.heads // k.cp_world_size"]),
        },
    )
    diags = run(tmp_path)
    assert [(d.path, "DecodeKernel" in d.message) for d in diags] == [("eng/model.py", True)]


def test_lazy_index_answers_as_the_eager_one_and_reads_only_what_it_needs() -> None:
    """Classes through package re-exports, nested classes, the leaf-name
    fallback, MROs several levels down, resolvers and factories by name:
    the same answers whether every module's facts are at hand or each is
    read when asked, and an answer read once is replayed into each later
    recording (a cached check must list the modules behind it)."""
    from checks._sentinels import SentinelIndex, outline_of_facts
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
        assert sorted(index.resolver_attrs()) == ["tp_rank"]
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


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 7), max_size=3), st.booleans(), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_any_effective_is_a_superset_of_asking_every_class(spec: list[Any]) -> None:
    from checks._sentinels import SentinelIndex
    from checks.unresolved_sentinel_reaches_impl import UnresolvedSentinelReachesImpl, _SentinelView

    classes: dict[str, Any] = {}
    resolvers = []
    for i, (bases, sentinel, real) in enumerate(spec):
        data: dict[str, Any] = {"bases": [f"m.C{b}" for b in bases if b < len(spec)], "methods": {}}
        data["real"] = ["cp_size"] if real else []
        if sentinel:
            data["sentinel"] = {"cp_size": ["-1", [1, 0, 1, 5], "__init__"]}
        classes[f"C{i}"] = data
    resolvers.append(
        {"attr": "cp_size", "obj": "x", "test": "-1", "span": [1, 0, 1, 1], "func": "f", "scope": "f"}
    )
    index = SentinelIndex({"m": {"path": "m.py", "classes": classes, "resolvers": resolvers, "calls": {}}})
    opts = {k: o.default for k, o in UnresolvedSentinelReachesImpl.options.items()}
    for scope in ("any", "none", "paired"):
        view = _SentinelView(index, {**opts, "resolver-scope": scope})
        expected = any(
            _SentinelView(index, {**opts, "resolver-scope": scope}).effective(f"m.{c}") for c in classes
        )
        # (the facts gate's answer: never "no" when some class would say yes)
        assert view.any_effective() or not expected


# -- what the ast readers and the check read -----------------------------------------


def test_scoped_sites_and_check_equal_the_whole_on_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """SHD201's ast readers and its check read only the top-level statements
    holding an import, an ``__init__``-family method, an assignment of a
    capitalised call or a configured factory method (``ast_scope``): on every
    corpus file, the scoped ``sentinel_sites`` facts hold the same
    constructions, own-init sizes and factories as the whole file's (a
    cast's names only from the functions that call a method), and a run
    over each of the rule's corpus projects reports exactly what a run that
    reads whole files does."""
    from corpus_harness import parsed_corpus_files

    from checks.unresolved_sentinel_reaches_impl import (
        SentinelSiteFacts,
        UnresolvedSentinelReachesImpl,
        _scope,
    )
    from linter.facts import mask_text, scoped_tree

    blanked = 0
    for path, text, tree in parsed_corpus_files():
        spans = _scope(text, {})
        if spans is None:
            continue
        part_tree = scoped_tree(ast.parse(mask_text(text, spans)), text, spans)
        whole = SentinelSiteFacts.collect(tree, text, "pkg.m", "pkg/m.py")
        part = SentinelSiteFacts.collect(part_tree, text, "pkg.m", "pkg/m.py")
        for key in ("own", "named", "factories"):
            assert part.get(key) == whole.get(key), (path.name, key)
        assert set(part.get("typed", ())) <= set(whole.get("typed", ())), path.name
        blanked += len(tree.body) - len(part_tree.body)
    assert blanked >= 20, "the corpus must hold statements the scope leaves out"

    def run(root: Path) -> list[Diagnostic]:
        config = load_config([root], load_registry()) if (root / "pyproject.toml").is_file() else Config(root=root)
        config = config.with_overrides(select=("SHD201",))
        return Engine(config, jobs=1).run([root]).diagnostics

    rule_dir = CORPUS_DIR / "unresolved_sentinel_reaches_impl"
    roots = [rule_dir, *(d for d in sorted(rule_dir.iterdir()) if d.is_dir())]
    scoped = {r: run(r) for r in roots}
    assert sum(len(v) for v in scoped.values()) >= 10
    for cls in (UnresolvedSentinelReachesImpl, SentinelSiteFacts):
        monkeypatch.setattr(cls, "ast_scope", classmethod(lambda cls, text, options: None))
    for r in roots:
        assert run(r) == scoped[r], r.name


def test_the_scan_scope_leaves_out_methods_without_a_site_and_reads_the_same() -> None:
    """The scan's readers (SHD201's ast gate, ``sentinel_sites``) also leave
    out the methods of a kept class whose code holds no import, no
    ``__init__``-family name, no configured factory name and no assignment
    of a capitalised call (``scan_scope``): on every corpus file, whether
    the text is compiled masked to the scan scope or whole
    (``scoped_tree``), the facts hold the top-level scope's constructions
    and own-init sizes, its calls of a configured factory, and casts only
    from those (what the facts gate reads: a method it leaves out can only
    have added a factory nobody configured, or a cast of one's result)."""
    from corpus_harness import parsed_corpus_files

    from checks.unresolved_sentinel_reaches_impl import (
        _DEFAULT_FACTORIES,
        SentinelSiteFacts,
        _scan_scope,
        _scope,
    )
    from linter.facts import mask_text, scoped_tree

    left_out = 0
    for path, text, tree in parsed_corpus_files():
        spans, nested = _scope(text, {}), _scan_scope(text, {})
        if spans is None:
            assert nested is None
            continue
        top = scoped_tree(tree, text, spans)
        want = SentinelSiteFacts.collect(top, text, "pkg.m", "pkg/m.py")
        for got_tree in (scoped_tree(ast.parse(mask_text(text, nested)), text, nested), scoped_tree(tree, text, nested)):
            got = SentinelSiteFacts.collect(got_tree, text, "pkg.m", "pkg/m.py")
            assert (got["own"], got["named"]) == (want["own"], want["named"]), path.name
            assert set(got["factories"]) <= set(want["factories"]), path.name
            assert set(got["factories"]) & set(_DEFAULT_FACTORIES) == set(want["factories"]) & set(_DEFAULT_FACTORIES)
            assert set(got.get("typed", ())) <= set(want.get("typed", ())), path.name
        methods = lambda t: sum(  # noqa: E731
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
            for c in t.body if isinstance(c, ast.ClassDef) for m in c.body
        )
        left_out += methods(top) - methods(scoped_tree(tree, text, nested))
    assert left_out >= 10, "the corpus must hold methods the scan scope leaves out"


def test_the_scan_scope_keeps_a_method_that_calls_a_configured_factory() -> None:
    """A method is kept for the configured ``factory-methods`` names it
    calls; asked again about the same text with other names, the scan scope
    answers for those names (its memo is keyed by them)."""
    from checks.unresolved_sentinel_reaches_impl import _scan_scope

    text = textwrap.dedent(
        """
        class Runner:
            def __init__(self):
                self.n = 1

            def build(self):
                impl = self.backend.make_worker()
                return impl

            def log(self):
                return self.n
        """
    ).lstrip("\n")

    def kept(options: dict) -> list[str]:
        return [text[a:b].strip().split("\n")[0] for a, b in _scan_scope(text, options) or ()]

    assert kept({}) == ["class Runner:", "def __init__(self):"]
    custom = {"SHD201": {"factory-methods": ["make_worker"]}}
    assert kept(custom) == ["class Runner:", "def __init__(self):", "def build(self):"]
    assert kept({}) == ["class Runner:", "def __init__(self):"]


def test_configured_factory_methods_widen_the_scope() -> None:
    from checks.unresolved_sentinel_reaches_impl import _scope

    text = textwrap.dedent(
        """
        CONSTANT = 3


        def plain(x):
            return x + 1


        def via_factory(backend):
            return backend.make_impl()


        def builds(x):
            layer = nn.Linear(x, x)
            return layer
        """
    )
    def kept(options: dict[str, Any]) -> list[str]:
        return [text[a:b].strip().split("\n")[0] for a, b in _scope(text, options) or ()]

    assert kept({}) == ["def builds(x):"]
    assert kept({"SHD201": {"factory-methods": ["make_impl"]}}) == ["def via_factory(backend):", "def builds(x):"]
    # code outside ASCII (an identifier the compiler normalises): all is read
    assert _scope(text.replace("plain", "plaín"), {}) is None
