"""SHD201 unresolved-sentinel-reaches-impl: findings, messages, options,
cross-file inheritance, and the text gate admitting every file a finding
needs (the sentinel facts themselves: tests/test_facts_sentinels.py)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from checks.facts.sentinels import SentinelFacts
from checks.unresolved_sentinel_reaches_impl import UnresolvedSentinelReachesImpl
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


def test_bad_resolver_scope_value_is_a_config_error_naming_key_and_file(project: Path) -> None:
    from linter.config import ConfigError

    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nresolver-scope = "sometimes"\n')
    with pytest.raises(ConfigError) as exc:
        load_config([project], load_registry())
    assert "resolver-scope" in str(exc.value) and "pyproject.toml" in str(exc.value)


# -- findings that need the project's facts ----------------------------------------


def test_only_constructions_of_sentinel_classes_are_reported(project: Path) -> None:
    # every module of the project passes the text gate (``Impl``, ``= -``);
    # only the model constructs a class keeping a resolved sentinel
    assert [d.path for d in run(project)] == ["pkg/model.py"]
    (project / "pkg/wrapper.py").unlink()  # no normal path: nothing fires
    assert run(project) == []


def test_the_configured_factory_is_followed(tmp_path: Path) -> None:
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
    # ``build_cls`` is not a factory by default
    assert run(tmp_path) == []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD201]\nfactory-methods = ["build_cls"]\n'
    )
    assert [d.span.line for d in run(tmp_path)] == [15]


# -- the facts gate: which modules libcst parses for SHD201 ------------------------


def _admitted(root: Path, pyproject: str | None = None) -> set[str]:
    """The modules the rule's facts gate lets through."""
    registry = load_registry()
    config = load_config([root], registry) if (root / "pyproject.toml").is_file() else Config(root=root)
    engine = Engine(config.with_overrides(select=("SHD201",)), registry, jobs=1)
    facts = engine.project_facts()
    options = engine.rule_options(UnresolvedSentinelReachesImpl)
    out = set()
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        module = rel[:-3].replace("/", ".").removesuffix(".__init__")
        if UnresolvedSentinelReachesImpl.candidate_facts(module, rel, facts, options):
            out.add(module)
    return out


def test_facts_gate_admits_constructions_of_sentinel_classes_by_any_name(project: Path) -> None:
    write_project(
        project,
        {
            # an import alias, a nested function, a cast of a factory's result
            "pkg/aliased.py": """
                from pkg.sub import FastContextImpl as Fast

                def build():
                    def inner():
                        k = Fast(2)
                        return k
                    return inner
            """,
            "pkg/factory.py": """
                from typing import cast

                def build(backend):
                    impl_cls = cast(type, backend.get_impl_cls())
                    return impl_cls(2)
            """,
            # constructs only classes without a sentinel, sets no sentinel
            "pkg/unrelated.py": """
                class Plain:
                    pass

                class Holder:
                    def __init__(self):
                        self.block_size = -1
                        self.num_kv_splits = None
                        self.ok = Plain()
            """,
        },
    )
    admitted = _admitted(project)
    # base: defines the sentinel class; sub: inherits it; model, aliased:
    # construct it by name; wrapper, factory: through get_impl_cls()
    assert admitted == {"pkg.base", "pkg.sub", "pkg.model", "pkg.aliased", "pkg.wrapper", "pkg.factory"}
    assert sorted(d.path for d in run(project)) == ["pkg/aliased.py", "pkg/model.py"]


def test_facts_gate_follows_the_options(project: Path) -> None:
    # with ``num_*`` counted as a parallel size, the unrelated holder's
    # ``num_kv_splits = None`` makes it a candidate (its own checks)
    (project / "pkg/unrelated.py").write_text(
        "class Holder:\n    def __init__(self):\n        self.num_kv_splits = None\n"
    )
    assert "pkg.unrelated" not in _admitted(project)
    (project / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD201]\nattribute-patterns = ["num_*", "*world_size", "*rank"]\n'
    )
    assert "pkg.unrelated" in _admitted(project)
    # a custom factory method admits the modules calling it
    (project / "pkg/custom.py").write_text("def f(b):\n    k = b.build_cls()\n    return k\n")
    assert "pkg.custom" not in _admitted(project)
    (project / "pyproject.toml").write_text('[tool.shardlint.rules.SHD201]\nfactory-methods = ["build_cls"]\n')
    assert "pkg.custom" in _admitted(project)


def test_counts_and_other_sizes_are_not_parallelism_sentinels(tmp_path: Path) -> None:
    """``num_*`` fields and block sizes left at None/-1, resolved by a paired
    wrapper and constructed directly elsewhere: not a parallel group's size
    or rank, so silent (SGLang's draft-input dataclasses had 18 such)."""
    write_project(
        tmp_path,
        {
            "eng/spec.py": """
                class DraftInput:
                    def __init__(self):
                        self.num_accepted = None
                        self.block_size = -1
                        self.kv_lora_rank = -1

                class Worker:
                    def step(self):
                        d = DraftInput()
                        if d.num_accepted is None:
                            d.num_accepted = 0
                        if d.block_size == -1:
                            d.block_size = 16
                        if d.kv_lora_rank == -1:
                            d.kv_lora_rank = 512
                        return d

                def runner():
                    spec = DraftInput()
                    return spec.block_size * 2
            """,
        },
    )
    assert run(tmp_path) == []
    text = (tmp_path / "eng/spec.py").read_text().replace("num_accepted", "attn_tp_rank")
    (tmp_path / "eng/spec.py").write_text(text)
    diags = run(tmp_path)
    assert [d.span.line for d in diags] == [20] and "`attn_tp_rank`" in diags[0].message


@pytest.mark.parametrize(
    "body",
    [
        ["kernel_cls = backend.get_impl_cls()", "k: DecodeKernel = kernel_cls(heads)"],
        ["kernel_cls = cast(type[DecodeKernel], backend.get_impl_cls())", "k = kernel_cls(heads)"],
    ],
)
def test_a_factory_result_typed_as_a_class_outside_the_family_is_reported(tmp_path: Path, body: list[str]) -> None:
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


# -- the re-set: a subclass writes the sentinel over its base's value ---------------

RESET_BASE = """
from {engine}.distributed import get_dcp_group


class ImplBase:
    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.dcp_world_size = get_dcp_group().world_size
        return self


class LatentImpl(ImplBase):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.dcp_world_size = -1
"""

RESET_LAYER = """
from {engine}.distributed import get_dcp_group
from {engine}.impls import LatentImpl


class Layer:
    def __init__(self, heads):
        self.impl = LatentImpl(heads)

    def forward(self, q):
        if self.impl.dcp_world_size == -1:
            self.impl.dcp_world_size = get_dcp_group().world_size
        return q
"""

RESET_MODEL = """
from {engine}.impls import LatentImpl


class FusedModel:
    def __init__(self, heads):
        self.impl = LatentImpl(heads)
"""


@pytest.mark.parametrize(("engine", "spelling"), [("vllm", "get_dcp_group().world_size"), ("sglang", "get_dcp_world_size()")])
def test_a_reset_over_the_base_is_named_and_the_fix_is_in_the_engines_spelling(
    tmp_path: Path, engine: str, spelling: str
) -> None:
    write_project(
        tmp_path,
        {
            f"{engine}/__init__.py": "",
            f"{engine}/impls.py": RESET_BASE.format(engine=engine),
            f"{engine}/layer.py": RESET_LAYER.format(engine=engine),
            f"{engine}/model.py": RESET_MODEL.format(engine=engine),
        },
    )
    diags = run(tmp_path)
    assert [(d.path, d.span.line) for d in diags] == [(f"{engine}/model.py", 7)]
    d = diags[0]
    assert "DCP disabled included" in d.message and "-1 as the decode context parallel world size" in d.message
    texts = [n.message for n in d.notes]
    assert any("overwriting the value ImplBase.__new__ gave it (a re-set)" in t for t in texts)
    fix = next(t for t in texts if t.startswith("fix:"))
    assert f"self.impl.dcp_world_size = {spelling}" in fix
    assert "drop the re-set in LatentImpl.__init__" in fix


def test_a_sentinel_written_before_the_base_init_that_resolves_it_is_resolved(tmp_path: Path) -> None:
    base = RESET_BASE.format(engine="vllm").replace(
        "        super().__init__()\n        self.heads = heads\n        self.dcp_world_size = -1\n",
        "        self.dcp_world_size = -1\n        super().__init__()\n        self.heads = heads\n",
    ).replace(
        "        return self\n",
        "        return self\n\n    def __init__(self):\n        self.dcp_world_size = get_dcp_group().world_size\n",
    )
    write_project(
        tmp_path,
        {
            "vllm/__init__.py": "",
            "vllm/impls.py": base,
            "vllm/layer.py": RESET_LAYER.format(engine="vllm"),
            "vllm/model.py": RESET_MODEL.format(engine="vllm"),
        },
    )
    assert run(tmp_path) == []
    # the same write after the base's __init__ is a re-set again
    (tmp_path / "vllm/impls.py").write_text(
        textwrap.dedent(base).replace(
            "        self.dcp_world_size = -1\n        super().__init__()\n",
            "        super().__init__()\n        self.dcp_world_size = -1\n",
        )
    )
    assert [d.path for d in run(tmp_path)] == ["vllm/model.py"]


def test_a_reset_nothing_resolves_is_reported_where_the_class_uses_it(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "eng/impl.py": """
                from eng.groups import get_tp_group


                def kernel(x, tp_world_size):
                    return x


                class Base:
                    def __init__(self):
                        self.tp_world_size = get_tp_group().world_size


                class Sub(Base):
                    def __init__(self):
                        super().__init__()
                        self.tp_world_size = -1

                    def forward(self, x):
                        return kernel(x, tp_world_size=self.tp_world_size)

                    def guarded(self, x):
                        if self.tp_world_size < 1:
                            return x
                        return kernel(x, tp_world_size=self.tp_world_size)
            """,
        },
    )
    diags = run(tmp_path)
    assert [(d.path, d.span.line) for d in diags] == [("eng/impl.py", 20)]
    assert "re-sets it to the sentinel -1 after `Base.__init__` resolved it" in diags[0].message
    assert any(n.span is not None and n.span.line == 17 for n in diags[0].notes)


def test_the_facts_gate_reads_the_buffer_being_edited(project: Path) -> None:
    """In the editor, a construction typed into a module that held none on
    disk is reported: the gate reads the buffer's own outline."""
    (project / "pkg/model.py").write_text("from pkg.sub import FastContextImpl\n")
    registry = load_registry()
    engine = Engine(Config(root=project, select=("SHD201",)), registry, jobs=1)
    assert engine.lint_text((project / "pkg/model.py").read_text(), project / "pkg/model.py")[0] == []
    diags, _ = engine.lint_text(textwrap.dedent(MODEL), project / "pkg/model.py")
    assert [d.span.line for d in diags if d.code == "SHD201"] == [8]
