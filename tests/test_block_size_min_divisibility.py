"""SHD101 block-size-min-divisibility: messages, fixes, options, cross-module
kernel facts and the soundness of the prefilter."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest
from corpus_harness import CORPUS, corpus_files, diagnostics_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.block_size_min_divisibility import BlockSizeMinDivisibility
from checks.block_size_min_divisibility.sites import div_example, pow2_example
from checks.facts.kernels import FacadeImports, TritonKernels, collect_text
from linter.config import Config, ConfigError, load_config
from linter.engine import Engine
from linter.fixer import fix_text, parses
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic

RULE_DIR = CORPUS / "block_size_min_divisibility"
CODE = "SHD101"


def lint(text: str, tmp_path: Path, name: str = "mod.py", gates: bool = True) -> list[Diagnostic]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    engine = Engine(Config(root=tmp_path, select=(CODE,)), load_registry(), jobs=1, gates=gates)
    diags, errors = engine.lint_text(text, path)
    assert not errors, errors
    return [d for d in diags if d.code == CODE]


SEED_SHAPE = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _gather_kernel(src, dst, D_BLOCK: tl.constexpr):
        offs = tl.arange(0, D_BLOCK)
        tl.store(dst + offs, tl.load(src + offs))


    def gather(src, dst):
        hidden_size = src.shape[1]
        D_BLOCK = min(hidden_size, 1024)
        assert hidden_size % D_BLOCK == 0
        _gather_kernel[(triton.cdiv(hidden_size, D_BLOCK),)](src, dst, D_BLOCK=D_BLOCK)
    """
)


# -- messages -----------------------------------------------------------------


def test_message_names_width_block_cap_and_counterexample(tmp_path: Path) -> None:
    (d,) = lint(SEED_SHAPE, tmp_path)
    assert "`D_BLOCK = min(hidden_size, 1024)`" in d.message
    assert "hidden_size % D_BLOCK == 0" in d.message
    assert "hidden_size=1536 → D_BLOCK=1024, 1536 % 1024 = 512" in d.message
    # the report points at the min(...) call, which the fix replaces
    assert (d.span.line, d.span.column) == (14, 14)


def test_cdiv_grid_does_not_hide_the_assert(tmp_path: Path) -> None:
    # the seed had a cdiv grid *and* the assert; only the assert crashed
    assert len(lint(SEED_SHAPE, tmp_path)) == 1


def test_same_file_kernel_note_points_at_arange(tmp_path: Path) -> None:
    (d,) = lint(SEED_SHAPE, tmp_path)
    located = [n for n in d.notes if n.path is not None]
    assert located, d.notes
    note = located[0]
    assert note.path == "mod.py"
    assert note.span is not None and note.span.line == 8
    assert "tl.arange" in note.message and "D_BLOCK" in note.message


def test_power_of_two_only_is_a_display_only_suggestion(tmp_path: Path) -> None:
    text = SEED_SHAPE.replace("    assert hidden_size % D_BLOCK == 0\n", "")
    (d,) = lint(text, tmp_path)
    assert "power of two" in d.message
    # 3/4 of the cap: between C/2 and C, three times a power of two
    assert "hidden_size=768 → D_BLOCK=768" in d.message
    assert d.fix is not None
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert d.fix.edits == ()
    assert "next_power_of_2" in d.fix.title and "mask" in d.fix.title


def test_non_power_of_two_cap_with_both_consumers_is_not_auto_fixed(tmp_path: Path) -> None:
    # gcd(X, 96) divides X but can be 96 itself: not a power of two
    text = SEED_SHAPE.replace("min(hidden_size, 1024)", "min(hidden_size, 96)")
    (d,) = lint(text, tmp_path)
    assert "hidden_size=128 → D_BLOCK=96, 128 % 96 = 32" in d.message
    assert d.fix is not None and d.fix.applicability is Applicability.DISPLAY_ONLY


@pytest.mark.parametrize(
    ("cap", "expected"),
    [
        (1024, "w=1536 → B=1024, 1536 % 1024 = 512"),
        # a cap that is not a power of two divides no power of two: the
        # next one above it (a width a power-of-two test lets through)
        (96, "w=128 → B=96, 128 % 96 = 32"),
        (7, "w=8 → B=7, 8 % 7 = 1"),
    ],
)
def test_divisibility_counterexample(cap: int, expected: str) -> None:
    assert div_example("w", "B", str(cap), cap) == expected


@pytest.mark.parametrize(
    ("cap", "expected"),
    [(1024, "w=768 → B=768"), (8, "w=3 → B=3"), (32, "w=24 → B=24"), (96, "w=128 → B=96")],
)
def test_power_of_two_counterexample(cap: int, expected: str) -> None:
    assert pow2_example("w", "B", str(cap), cap, cap & (cap - 1) == 0).startswith(expected)


def test_counterexamples_really_break() -> None:
    for cap in (3, 4, 6, 8, 12, 96, 128, 384, 1000, 1024, 4096):
        x = cap * 3 // 2 if cap & (cap - 1) == 0 else 1 << cap.bit_length()
        assert x > cap and x % min(x, cap) != 0
        msg = div_example("w", "B", str(cap), cap)
        assert f"w={x} " in msg
    for cap in (4, 8, 16, 1024):
        x = int(pow2_example("w", "B", str(cap), cap, True).split("=")[1].split(" ")[0])
        b = min(x, cap)
        assert b & (b - 1) != 0


# -- fixes --------------------------------------------------------------------


def test_fix_adds_import_math_once_for_two_findings(tmp_path: Path) -> None:
    registry = load_registry()
    engine = Engine(Config(root=RULE_DIR, select=(CODE,)), registry, jobs=1)
    bad = (RULE_DIR / "bad.py").read_text(encoding="utf-8")
    diags, _ = engine.lint_text(bad, RULE_DIR / "bad.py")
    assert len([d for d in diags if d.code == CODE]) == 2
    out = fix_text(engine, bad, RULE_DIR / "bad.py", unsafe=True)
    assert out.applied == 2
    assert parses(out.text)
    assert out.text.count("import math\n") == 1
    assert "math.gcd(width, 1024)" in out.text
    assert "math.gcd(x.shape[-1], 4096)" in out.text
    assert "min(" not in out.text.split("def copy_rows")[1].split("def chunk_sums")[0]


def test_fix_is_unsafe_and_not_applied_without_the_flag(tmp_path: Path) -> None:
    (d,) = lint(SEED_SHAPE, tmp_path)
    assert d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    engine = Engine(Config(root=tmp_path, select=(CODE,)), load_registry(), jobs=1)
    out = fix_text(engine, SEED_SHAPE, tmp_path / "mod.py", unsafe=False)
    assert out.applied == 0 and out.text == SEED_SHAPE


def test_fix_keeps_an_existing_math_import(tmp_path: Path) -> None:
    text = "import math\n" + SEED_SHAPE
    (tmp_path / "mod.py").write_text(text, encoding="utf-8")
    engine = Engine(Config(root=tmp_path, select=(CODE,)), load_registry(), jobs=1)
    out = fix_text(engine, text, tmp_path / "mod.py", unsafe=True)
    assert out.applied == 1
    assert out.text.count("import math") == 1
    assert "D_BLOCK = math.gcd(hidden_size, 1024)" in out.text
    ast.parse(out.text)


# -- options ------------------------------------------------------------------


def _project(tmp_path: Path, options: str, text: str, package: str | None = None) -> list[Diagnostic]:
    """``text`` as ``mod.py`` (or ``<package>/ops.py``) of a project whose
    SHD101 options are ``options``; the rule's findings."""
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.shardlint.rules.SHD101]\n{options}\n", encoding="utf-8"
    )
    if package is None:
        (tmp_path / "mod.py").write_text(text, encoding="utf-8")
    else:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("", encoding="utf-8")
        (tmp_path / package / "ops.py").write_text(text, encoding="utf-8")
    registry = load_registry()
    config = load_config([tmp_path], registry).with_overrides(select=(CODE,))
    result = Engine(config, registry, jobs=1).run([tmp_path])
    assert not result.errors
    return [d for d in result.diagnostics if d.code == CODE]


ROUNDED = SEED_SHAPE.replace("min(hidden_size, 1024)", "min(my_round(hidden_size), 1024)").replace(
    "    assert hidden_size % D_BLOCK == 0\n", ""
)


def test_power_of_two_functions_option(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert len(_project(tmp_path / "a", "", ROUNDED)) == 1
    assert _project(tmp_path / "b", 'power-of-two-functions = ["my_round"]', ROUNDED) == []


def test_kernel_decorators_option(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    # triton.jit no longer makes a kernel: the launch is not judged
    assert (
        _project(
            tmp_path / "a",
            'kernel-decorators = ["my_jit"]',
            SEED_SHAPE.replace("    assert hidden_size % D_BLOCK == 0\n", ""),
        )
        == []
    )
    (tmp_path / "b").mkdir()
    custom = SEED_SHAPE.replace("@triton.jit", "@my_jit")
    assert len(_project(tmp_path / "b", 'kernel-decorators = ["my_jit"]', custom)) == 1


POW2_ONLY = SEED_SHAPE.replace("    assert hidden_size % D_BLOCK == 0\n", "")


@pytest.mark.parametrize("package", ["plugin_ascend", "npu", "npu_kernels", "fused_npu", "torch_npu_ops"])
def test_npu_packages_drop_only_the_power_of_two_need(tmp_path: Path, package: str) -> None:
    # Triton-Ascend builds a tl.arange of any length: no power-of-two report...
    (tmp_path / "a").mkdir()
    assert _project(tmp_path / "a", "", POW2_ONLY, package) == []
    # ...but a width the block does not divide still fails its assert
    (tmp_path / "b").mkdir()
    diags = _project(tmp_path / "b", "", SEED_SHAPE, package)
    assert len(diags) == 1 and "need not divide" in diags[0].message
    # an empty option applies CUDA Triton's rule everywhere
    (tmp_path / "c").mkdir()
    diags = _project(tmp_path / "c", "npu-packages = []", POW2_ONLY, package)
    assert len(diags) == 1 and "power of two" in diags[0].message


@pytest.mark.parametrize("package", ["inputs", "snpu", "cuda_ops"])
def test_packages_merely_containing_npu_letters_keep_the_rule(tmp_path: Path, package: str) -> None:
    assert len(_project(tmp_path, "", POW2_ONLY, package)) == 1


def test_npu_kernel_launched_from_elsewhere(tmp_path: Path) -> None:
    """The kernel's own package counts too: a CUDA-named module launching a
    kernel of the NPU package is not held to the power-of-two rule."""
    kernel, _, launch = POW2_ONLY.partition("def gather")
    (tmp_path / "pyproject.toml").write_text("[tool.shardlint]\n", encoding="utf-8")
    for d in ("torch_npu_ops", "runner"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "torch_npu_ops" / "kernels.py").write_text(kernel, encoding="utf-8")
    caller = "from torch_npu_ops.kernels import _gather_kernel\n\n\ndef gather" + launch
    (tmp_path / "runner" / "moe.py").write_text(caller, encoding="utf-8")
    registry = load_registry()
    config = load_config([tmp_path], registry).with_overrides(select=(CODE,))
    result = Engine(config, registry, jobs=1).run([tmp_path])
    assert [d for d in result.diagnostics if d.code == CODE] == []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD101]\nnpu-packages = ["accel_*"]\n', encoding="utf-8"
    )
    config = load_config([tmp_path], registry).with_overrides(select=(CODE,))
    result = Engine(config, registry, jobs=1).run([tmp_path])
    assert len([d for d in result.diagnostics if d.code == CODE]) == 1


def test_bad_option_value_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD101]\npower-of-two-functions = "next_power_of_2"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="power-of-two-functions"):
        load_config([tmp_path], load_registry())


def test_options_are_documented() -> None:
    doc = BlockSizeMinDivisibility.__doc__ or ""
    options_section = doc.split("## Options", 1)[1]
    for name in BlockSizeMinDivisibility.options:
        assert f"`{name}`" in options_section


# -- cross-module kernel facts -------------------------------------------------


def _corpus_diags(rel: str) -> list[Diagnostic]:
    return [d for d in diagnostics_for(RULE_DIR).get(RULE_DIR / rel, []) if d.code == CODE]


def test_kernel_in_another_module_relative_import() -> None:
    d = next(x for x in _corpus_diags("kernel_pkg/launch.py") if "fused_scale_kernel" in x.message)
    located = [n for n in d.notes if n.path == "kernel_pkg/kernels.py"]
    assert located and located[0].span is not None
    kernels = (RULE_DIR / "kernel_pkg/kernels.py").read_text().splitlines()
    assert "tl.arange(0, TILE)" in kernels[located[0].span.line - 1]


def test_kernel_through_package_reexport_and_autotune() -> None:
    d = next(x for x in _corpus_diags("kernel_pkg/launch.py") if "tile_norm_kernel" in x.message)
    # the autotuned kernel asserts divisibility: gcd is the fix
    assert "static_assert" in d.message
    assert "group_size=192 → group=128, 192 % 128 = 64" in d.message
    assert d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    assert any(n.path == "kernel_pkg/kernels.py" for n in d.notes)


def test_kernel_through_module_alias_positional_argument() -> None:
    assert any(
        "kmod.masked_scale_kernel" in x.message for x in _corpus_diags("kernel_pkg/launch.py")
    )


def test_collector_records_needs_and_code_point_columns() -> None:
    text = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.autotune(configs=[], key=["n"])
        @triton.jit
        def k(x, n, A: tl.constexpr, Z: tl.constexpr, S: tl.constexpr, R: tl.constexpr):
            s = "é"; o = tl.arange(0, A)
            acc = tl.zeros([Z, 16], dtype=tl.float32)
            tl.static_assert(n % S == 0)
            y = torch.arange(0, R)

        def not_a_kernel(A):
            return tl.arange(0, A)
        """
    )
    data = TritonKernels.collect(ast.parse(text), text, "pkg.mod", "pkg/mod.py")
    k = data["kernels"]["k"]
    assert k["decorators"] == ["triton.autotune", "triton.jit"]
    assert {p: [n["kind"] for n in v] for p, v in k["needs"].items()} == {
        "A": ["pow2"],
        "Z": ["pow2"],
        "S": ["div"],
    }
    line = text.splitlines()[k["needs"]["A"][0]["span"][0] - 1]
    col = k["needs"]["A"][0]["span"][1]
    assert line[col:].startswith("tl.arange(0, A)")  # columns in code points, not bytes
    assert "not_a_kernel" not in data["kernels"]  # undecorated


# -- the kernel facts ----------------------------------------------------------


_READER_HEAD = "import triton\nimport triton.language as tl\nfrom .ops import helper as h\n"
READER_CASES = {
    # kernels under ``if``/``try`` at module level are module statements
    "guarded": """
if HAS_TRITON:
    @triton.jit
    def k(A):
        tl.arange(0, A)
else:
    pass
try:
    @triton.jit
    def k2(B):
        tl.zeros([B], tl.float32)
except ImportError:
    pass
""",
    # a string holding kernel-like code at column 0 (its closing quotes too)
    "docstring": '''
@triton.jit
def k(A):
    tl.arange(0, A)
    x = 1
s = """
@triton.jit
def fake(B):
    tl.arange(0, B)
"""
''',
    # a bracketed continuation dedented to column 0 inside the kernel
    "dedented": """
@triton.jit
def k(A, B):
    x = foo(
1,
tl.arange(0, A),
2)
    tl.zeros([B], tl.float32)
""",
    # a backslash continuation, a matmul ``@`` at column 0, comments after
    "backslash": """
y = a \\
@b
@triton.jit
def k(A):
    return tl.arange(0, A)  # tl.zeros([A])
# tl.arange(0, A)
""",
    # decorated class and ``async def``: not kernels; undecorated def neither
    "not_kernels": """
@dataclass
class C:
    def m(self, A):
        return tl.arange(0, A)
@deco
async def a(A):
    tl.arange(0, A)
def plain(A):
    tl.arange(0, A)
@triton.jit
def k(A):
    tl.arange(0, A)
""",
    # a call in a decorator or a default value, a one-line body, ``;``
    "headers": """
@triton.autotune(configs=[tl.arange(0, N)])
@triton.jit
def k(A, B=tl.zeros([C])) -> "x:y": return tl.arange(0, A)
import os; from .other import thing
@triton.jit
def k2(A: tl.constexpr, *, B: "(" = ")"): tl.static_assert(A % B == 0)
""",
    # ``triton.language`` spelled out, and another alias (the whole ast decides)
    "alias": """
import triton.language as lang
@triton.jit
def k(A, B):
    lang.arange(0, A)
    triton.language.zeros([B], lang.float32)
""",
    # a module whose kernel is re-exported: imports only
    "reexport": """
from .impl import k as k
x = tl.arange
""",
}


# What the collector reads of each module (kernel -> parameter -> kinds of need).
READER_EXPECTED = {
    "guarded": {"k": {"A": ["pow2"]}, "k2": {"B": ["pow2"]}},
    # the kernel-like code inside a string is no kernel
    "docstring": {"k": {"A": ["pow2"]}},
    "dedented": {"k": {"A": ["pow2"], "B": ["pow2"]}},
    # a Triton call in a comment is none
    "backslash": {"k": {"A": ["pow2"]}},
    "not_kernels": {"k": {"A": ["pow2"]}},
    # a call in a decorator or on a name that is no parameter: no need
    "headers": {"k": {"A": ["pow2"]}, "k2": {"B": ["div"]}},
    "alias": {"k": {"A": ["pow2"], "B": ["pow2"]}},
    "reexport": {},
}


@pytest.mark.parametrize("name", sorted(READER_CASES))
def test_collector_reads_kernels_of_every_module_shape(name: str) -> None:
    text = _READER_HEAD + READER_CASES[name]
    data = TritonKernels.collect(ast.parse(text), text, "pkg.mod", "pkg/mod.py")
    assert data is not None and data["path"] == "pkg/mod.py"
    got = {k: {p: [n["kind"] for n in v] for p, v in f["needs"].items()} for k, f in data["kernels"].items()}
    assert got == READER_EXPECTED[name]
    assert data["imports"]["h"] == "pkg.ops.helper"
    if name == "reexport":
        assert data["imports"]["k"] == "pkg.impl.k"


def _tree_of(text: str):  # type: ignore[no-untyped-def]
    """What ``RuleContext.ast_tree`` gives for ``text``."""
    from linter.rule import RuleContext

    return RuleContext("m.py", "m", text, None, None).ast_tree  # type: ignore[arg-type]


def test_collect_text_reads_the_buffer_and_skips_what_does_not_compile() -> None:
    text = _READER_HEAD + READER_CASES["guarded"]
    assert sorted(collect_text(text, "pkg.mod", "pkg/mod.py", _tree_of(text))) == ["pkg.mod.k", "pkg.mod.k2"]
    broken = text + "@triton.jit\ndef k3(A):\n    tl.arange(0, A\n"
    assert collect_text(broken, "pkg.mod", "pkg/mod.py", _tree_of(broken)) == {}
    assert collect_text("def f(): pass\n", "pkg.mod", "pkg/mod.py", _tree_of("def f(): pass\n")) == {}


FACADE_CASES = {
    "plain": "from .a import k\nfrom .b import k2 as kk, other\n__all__ = ['k']\n",
    "parenthesised": "from . import (\n    a,  # first\n    b as c,\n)\nfrom .x import *\n",
    "guarded": "try:\n    from .a import k\nexcept ImportError:\n    k = None\nif X:\n    from .b import j\n",
    "continued": "from .a \\\n    import k\nimport os; from .b import j\n",
    "strings": "'''\nfrom .fake import no\n'''\nfrom .a import k  # from .c import d\n",
    "absolute": "from pkg.ops import k\nfrom .. import up\n",
}


# The top-level ``from``-imports a facade re-exports (none under ``if``/``try``).
FACADE_EXPECTED = {
    "plain": {"k": "pkg.sub.a.k", "kk": "pkg.sub.b.k2", "other": "pkg.sub.b.other"},
    "parenthesised": {"a": "pkg.sub.a", "c": "pkg.sub.b"},
    "guarded": None,
    "continued": {"k": "pkg.sub.a.k", "j": "pkg.sub.b.j"},
    "strings": {"k": "pkg.sub.a.k"},
    "absolute": {"k": "pkg.ops.k", "up": "pkg.up"},
}


@pytest.mark.parametrize("name", sorted(FACADE_CASES))
def test_facade_imports_resolve_relative_imports(name: str) -> None:
    text = FACADE_CASES[name]
    got = FacadeImports.collect(ast.parse(text), text, "pkg.sub", "pkg/sub/__init__.py")
    assert got == FACADE_EXPECTED[name]


_FACADE_LAZY = re.compile(
    r"from(?<=^from)[ \t]+\.(?![\s\S]*?^(?:def|class|async)\s)(?![\s\S]{16385})", re.MULTILINE
)
_FACADE_LINES = [
    "from . import x\n",
    "from .a import b\n",
    "from\t.a import b\n",
    " from . import x\n",
    "from x import y\n",
    "def f(): pass\n",
    "def\tf(): pass\n",
    "def(",
    "class C: pass\n",
    "async def f(): pass\n",
    "    def g(): pass\n",
    "define = 1\n",
    "class\n",
    "def",
    "\n",
    "x" * 16380,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FACADE_LINES), max_size=12))
def test_facade_needle_is_the_lazy_regex(parts: list[str]) -> None:
    # the needle walks lines possessively: the same answer as the lazy scan
    text = "".join(parts)
    want = _FACADE_LAZY.search(text) is not None
    assert FacadeImports.needles.match(text) == want


# -- the prefilter (needles) is sound ---------------------------------------------


def gated_and_open(
    tmp_path: Path, text: str, options: str = "", extra: dict[str, str] | None = None
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """The findings in ``mod.py`` (under the options, next to the ``extra``
    files) through the engine's gates and with every gate closed."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.shardlint.rules.SHD101]\n{options}\n", encoding="utf-8")
    for name, body in (extra or {}).items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    (tmp_path / "mod.py").write_text(text, encoding="utf-8")
    registry = load_registry()
    config = load_config([tmp_path], registry).with_overrides(select=(CODE,))

    def key(d: Diagnostic) -> tuple[int, int, str]:
        return (d.span.line, d.span.column, d.message)

    found = []
    for gates in (True, False):
        diags, errors = Engine(config, registry, jobs=1, gates=gates).lint_text(text, tmp_path / "mod.py")
        assert not errors, errors
        found.append(sorted(key(d) for d in diags if d.code == CODE))
    return found[0], found[1]


def test_needles_match_every_corpus_file_where_the_rule_fires() -> None:
    fired = 0
    for f in corpus_files(RULE_DIR):
        if any(d.code == CODE for d in diagnostics_for(RULE_DIR).get(f, [])):
            fired += 1
            assert BlockSizeMinDivisibility.needles.match(f.read_text(encoding="utf-8")), f
    assert fired >= 4


def test_needles_skip_a_file_without_a_bound_min_call() -> None:
    assert not BlockSizeMinDivisibility.needles.match("def f(n):\n    return min(n, 1024)\n")
    assert not BlockSizeMinDivisibility.needles.match("minimum = 4\nx = n // minimum\n")
    assert BlockSizeMinDivisibility.needles.match("b = (  # why\n    min)(n, 1024)\n")


_KERNEL = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _k(x_ptr, n, BLK: tl.constexpr):
        tl.static_assert(n % BLK == 0)
        tl.store(x_ptr + tl.arange(0, BLK), 0)

    """
)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """Seed-shaped functions in many spellings: argument order, annotations,
    parentheses, line breaks, continuations and comments inside the call,
    parenthesised targets, aliases, strings holding brackets in a launch,
    module-level code, decorators, and every consumer kind."""
    name = draw(st.sampled_from(["blk", "BLOCK_D", "tile", "chunk_sz", "blöck"]))
    width = draw(
        st.sampled_from(["n", "x.shape[1]", "int(h)", "next_power_of_2(n)", "lim", "-n", "n*2"])
    )
    # offset arithmetic in an argument (no block), a sign, a float exponent
    arg_extra = draw(st.sampled_from(["", " - 1", " + pad", "-1", " * 1e-0"]))
    cap = draw(
        st.sampled_from(
            [
                "1024",
                "96",
                "CAP",
                "BLOCK_CAP",
                "triton.next_power_of_2(m)",
                "1 << m",
                "m",
                "cfg.CAP",
            ]
        )
    )
    cap_value = draw(st.sampled_from(["512", "96"]))
    lim = draw(
        st.sampled_from(
            [
                "    lim = 64\n",
                "    lim = 64\n    lim = n\n",
                "    lim = m\n",
                "    lim = x.shape[0]\n",
            ]
        )
    )
    args = [width + arg_extra, cap] if draw(st.booleans()) else [cap, width + arg_extra]
    sep = draw(st.sampled_from([", ", ",\n        ", ",  # note\n        "]))
    open_ = draw(
        st.sampled_from(
            [
                "min(",
                "min (",
                "(min(",
                "((min(",
                "(  # why\n        min(",
                "\\\n        min(",
                "min(  # why\n        ",
                "(min)(",
            ]
        )
    )
    close = ")" + ")" * (open_.count("(", 0, open_.index("min")) - open_.count(")"))
    ann = draw(st.sampled_from(["", ": int", ": 'Literal[\"a=b\"]'"]))
    target = draw(st.sampled_from(["{}", "({})", "other = {}"]))
    alias = draw(
        st.sampled_from(
            [
                "",
                "{use} = {name}",
                "{use}: int = ({name})",
                "({use} := {name})",
                "print({use} := {name}, 0)",
                "[{use} := {name}]",
            ]
        )
    )
    # the binding's value wrapped: no longer a ``min`` call (look-alikes)
    wrap = draw(st.sampled_from(["{}", "{}", "max(1, {})", "triton.next_power_of_2({})"]))
    use = "alias_" + name if alias else name
    launch_pre = draw(st.sampled_from(["", '"(", ', "')', ", "# )\n        "]))
    consumer = draw(
        st.sampled_from(
            [
                f"assert {width} % {use} == 0",
                f"assert {width} % ({use}) == 0, 'x'",
                f"k = {width} // {use}",
                f"k = {width} // \\\n        {use}",
                f"for i in range(0, {width}, {use}):\n        x.narrow(0, i, {use})",
                f"for i in range(0, {width}, ({use}),):\n        x.narrow(0, i, {use})",
                f"_k[(1,)]({launch_pre}x, {width}, BLK={use})",
                f"_k[(1,)](x, {width}, {use})",
                f"_k[(1,)] \\\n        (x, {width}, BLK={use})",
                f"if {width} % {use}:\n        raise ValueError",
                f"for i in (range)(0, {width}, {use}):\n        x.narrow(0, i, {use})",
                f"(_k[(1,)])(x, {width}, BLK={use})",
                f"_k[(1,)](x, {width}, BLK=min({width}, {cap}))",
                f"_k[(1,)](x, {width}, BLK=min({width}{arg_extra}, {cap}))",
            ]
        )
    )
    head = name + ann if ann else target.format(name)
    body = lim + f"    {head} = " + wrap.format(f"{open_}{args[0]}{sep}{args[1]}{close}") + "\n"
    if alias:
        body += "    " + alias.format(use=use, name=name) + "\n"
    body += f"    {consumer}\n"
    where = draw(st.sampled_from(["function", "method", "decorated", "module"]))
    header = _KERNEL + f"from consts import BLOCK_CAP\nCAP = {cap_value}\n\n\n"
    if where == "module":
        return header + textwrap.dedent(body)
    if where == "method":
        body = "\n".join("    " + line if line else line for line in body.split("\n"))
        return header + "class Holder:\n    def f(self, x, n, h, m):\n" + body
    deco = "@functools.cache\n" if where == "decorated" else ""
    return header + f"{deco}def f(x, n, h, m):\n" + body


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_needles_are_sound(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """Through the engine's gates the rule finds what it finds with every
    gate closed; where it fires, the needles match."""
    assert parses(text), text
    gated, opened = gated_and_open(tmp_path_factory.mktemp("p"), text)
    assert gated == opened, text
    if opened:
        assert BlockSizeMinDivisibility.needles.match(text), text


def test_generated_programs_do_fire(tmp_path: Path) -> None:
    """The property above is only worth something if the generator reaches
    the rule: the plainest spelling of each consumer fires."""
    for consumer in ("assert n % blk == 0", "k = n // blk", "_k[(1,)](x, n, BLK=blk)"):
        text = _KERNEL + f"def f(x, n):\n    blk = min(n, 1024)\n    {consumer}\n"
        assert lint(text, tmp_path), consumer


# -- look-alikes and what fires ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x = min(a, b)\nprint(x)\n",
        # end-index arithmetic
        "def f(a):\n    end = min(a + 4, 10)\n    return a // end\n",
        # no cap: two runtime values
        "def f(a, b):\n    n = min(a, b)\n    return a // n\n",
        # both arguments fixed
        "def f(a):\n    n = min(64, 1024)\n    return a // n\n",
        # the consumer divides another width
        "def f(a, c):\n    n = min(a, 1024)\n    return c // n\n",
        # the modulo is a guard, not an assertion
        "def f(a):\n    n = min(a, 1024)\n    r = a % n\n    return r\n",
        # the consumer is in another function
        "def f(a):\n    n = min(a, 1024)\n\ndef g(a, n):\n    return a // n\n",
        # a launch through self (not resolvable)
        "def f(self, a):\n    n = min(a, 1024)\n    self.k[(1,)](a, N=n)\n",
        # the loop handles the tail
        "def f(a, x):\n    n = min(a, 1024)\n    for i in range(0, a, n):\n        x[i : i + n]\n",
        # a class body is not analysed
        "class C:\n    n = min(A, 1024)\n    k = A // n\n",
        # the binding and the consumer in two functions: the rule reads each alone
        "def f(x, n):\n    blk = min(n, 1024)\n    return blk\n\n\ndef g(x, n, blk):\n    assert n % blk == 0\n",
        # the only ``min(`` in a docstring or a comment
        'def f(x, n, blk):\n    """blk = min(n, 1024)"""\n    assert n % blk == 0\n',
        "def f(x, n, blk):\n    # blk = min(n, 1024)\n    assert n % blk == 0\n",
    ],
)
def test_silent_on_look_alikes(tmp_path: Path, text: str) -> None:
    assert lint(text, tmp_path) == []


EDGE_GATES = (RULE_DIR / "edge_gates.py").read_text(encoding="utf-8")


def _edge_function(name: str) -> str:
    """``edge_gates.py`` cut down to its header (imports, constants, the
    kernel) and one function."""
    tree = ast.parse(EDGE_GATES)
    first = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "_rows_kernel")
    header = "\n".join(EDGE_GATES.splitlines()[: first.lineno - 1])
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return header + "\n" + (ast.get_source_segment(EDGE_GATES, fn) or "") + "\n"


@pytest.mark.parametrize(
    "name, fires",
    [
        ("warps_are_a_launch_option", False),  # the kernel has no such parameter
        ("warps_from_a_power_of_two", False),  # max(pow2 // 256, 1) is a power of two
        ("remainder_padded", False),  # the only need left is silenced by the guard
        ("width_pinned", False),  # `if n not in (..): raise` pins the width
        ("block_rebuilt", False),  # gcd rebinds the block
        ("group_is_a_constant", False),  # the one-line suite's binding is not read
        ("chunk_asserted_by_the_kernel", True),
        ("splits_from_a_guarded_constant", True),
        ("lowest_set_bit_in_parentheses", True),
    ],
)
def test_each_edge_function_alone(tmp_path: Path, name: str, fires: bool) -> None:
    gated, opened = gated_and_open(tmp_path, _edge_function(name))
    assert gated == opened and len(opened) == int(fires)


_CAP_CALL = _KERNEL + textwrap.dedent(
    """
    def f(x, n, m):
        blk = min(n, my_cap(m))
        _k[(1,)](x, n, BLK=blk)
    """
)


def test_a_configured_power_of_two_function_makes_a_cap(tmp_path: Path) -> None:
    # with my_cap a power of two, `min(n, my_cap(m))` is a site
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert gated_and_open(tmp_path / "a", _CAP_CALL) == ([], [])
    gated, opened = gated_and_open(tmp_path / "b", _CAP_CALL, 'power-of-two-functions = ["my_cap"]')
    assert len(gated) == 1 and gated == opened


def test_a_module_function_returning_a_power_of_two_is_read(tmp_path: Path) -> None:
    """A call of another top-level function of the file is a power of two
    when every ``return`` of it is one: a finding can depend on a second
    top-level definition (why the rule sets no ``definition_needles``)."""
    use = "\n\ndef f(x, n):\n    blk = min(pow2_width(n), 1024)\n    _k[(1,)](x, n, BLK=blk)\n"
    helper = "\n\ndef pow2_width(n):\n    return triton.next_power_of_2(n)\n"
    assert lint(_KERNEL + helper + use, tmp_path) == []
    (d,) = lint(_KERNEL + use, tmp_path)
    assert "`blk = min(pow2_width(n), 1024)`" in d.message


def test_kernel_decorators_and_imports_reach_another_module(tmp_path: Path) -> None:
    kernels = _KERNEL.replace("@triton.jit", "@my_jit")
    launch = textwrap.dedent(
        """
        from kmod import _k as kernel


        def f(x, n):
            blk = min(n, 1024)
            kernel[(1,)](x, n, blk)
        """
    )
    for sub, option, fires in (("a", "", False), ("b", 'kernel-decorators = ["my_jit"]', True)):
        (tmp_path / sub).mkdir()
        gated, opened = gated_and_open(tmp_path / sub, launch, option, extra={"kmod.py": kernels})
        assert bool(opened) is fires and gated == opened


def test_a_step_keyword_is_read(tmp_path: Path) -> None:
    # `range` refuses keywords, but the rule reads the third argument as written
    text = "def f(n):\n    blk = min(n, 96)\n    for i in range(0, n, step=blk):\n        pass\n"
    gated, opened = gated_and_open(tmp_path, text)
    assert len(opened) == 1 and gated == opened


# A denser grammar than ``programs``: what the replay must decide as the rule
# decides (caps and widths the power-of-two proof and constant folding see
# through or not, pins, guards, repairs, module constants bound in blocks and
# suites, consumers of every kind, options).
_WIDTHS = [
    "n",
    "x.shape[1]",
    "int(h)",
    "next_power_of_2(n)",
    "n & -n",
    "(n) & -n",
    "knob",
    "KN",
    "my_pow2(n)",
    "w",
    "max(n, 16)",
    "n // 2",
    "1 << m",
    "h.size(0)",
]
_CAPS = [
    "1024",
    "96",
    "1",
    "2",
    "CAP",
    "cfg.CAP",
    "m",
    "KN",
    "triton.next_power_of_2(m)",
    "my_pow2(m)",
    "64 // x.element_size()",
    "16 if m else 32",
    "min(CAP, 64)",
    "LOCAL",
]
_PRELUDES = [
    "CAP = 512",
    "CAP = 96",
    "if flag:\n    CAP = 96\nelse:\n    CAP = 512",
    "if flag: CAP = 96\nCAP = 512",
    "try:\n    CAP = 256\nexcept E:\n    CAP = 96",
    "CAP = 512\nCAP += 1",
    "CAP, OTHER = 64, 96",
]
_EXTRAS = [
    "assert {W} == 256",
    "if {W} not in (64, 128): raise ValueError",
    "if {W} != 64:\n        y = 2\n        raise ValueError",
    "if {W} % {B}:\n        pass",
    "while {W} % {B}:\n        {B} //= 2",
    "if is_power_of_2({B}):\n        pass",
    "g = triton.cdiv({W}, {B})",
    "{B} = math.gcd({B}, {W})",
    "w = x.shape[1]",
    "LOCAL = 128",
]
_USES = [
    "assert {W} % {B} == 0",
    "if {W} % {B}: raise ValueError",
    "k = {W} // {B}",
    "for i in range(0, {W}, {B}):\n        x.narrow(0, i, {B})",
    "_k[(1,)](x, {W}, BLK={B})",
    "_k[(1,)](x, {W}, {B})",
    "_k[(1,)](x, {W}, BLK=min({A}, {C}))",
    "kmod.far[(1,)](x, {W}, {B})",
    "k = ({W}) // {B}",
    "_k[(1,)](*args, {B})",
]
_OPTIONS = [
    "",
    'power-of-two-functions = ["my_pow2"]',
    'power-of-two-functions = ["size", "max"]',
    'kernel-decorators = ["my_jit"]',
]
_FAR = _KERNEL.replace("def _k(x_ptr, n, BLK", "def far(x_ptr, n, BLK")


@st.composite
def dense_programs(draw: st.DrawFn) -> tuple[str, str]:
    a, c = draw(st.sampled_from(_WIDTHS)), draw(st.sampled_from(_CAPS))
    if draw(st.booleans()):
        a, c = c, a
    w = draw(st.sampled_from([a, c]))
    lines = [draw(st.sampled_from(["", *_EXTRAS])), "blk = min({A}, {C})"]
    lines += draw(st.lists(st.sampled_from(_EXTRAS), max_size=2))
    lines += draw(st.lists(st.sampled_from(_USES), min_size=1, max_size=2))
    body = "\n".join("    " + ln for ln in lines if ln)
    body = body.replace("{B}", "blk").replace("{W}", w).replace("{A}", a).replace("{C}", c)
    head = f"import math\nimport kmod\n{draw(st.sampled_from(_PRELUDES))}\n"
    return head + _KERNEL + "def f(x, n, h, m, knob=64, KN=CAP, *args):\n" + body + "\n", draw(
        st.sampled_from(_OPTIONS)
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dense_programs())
def test_needles_are_sound_on_dense_programs(
    tmp_path_factory: pytest.TempPathFactory, program: tuple[str, str]
) -> None:
    text, options = program
    gated, opened = gated_and_open(tmp_path_factory.mktemp("d"), text, options, extra={"kmod.py": _FAR})
    assert gated == opened, (options, text)


@pytest.mark.parametrize(
    "body",
    [
        # ``(min)`` is a call of ``min``
        "    blk = (min)(n, 1024)\n    assert n % blk == 0\n",
        # a walrus alias inside call arguments and a list display
        "    blk = min(n, 1024)\n    print(t := blk, 0)\n    assert n % t == 0\n",
        "    blk = min(n, 1024)\n    [t := blk]\n    assert n % t == 0\n",
        # ``range`` and a launch called through parentheses
        "    blk = min(n, 1024)\n    for i in (range)(0, n, blk):\n        x.add_(i)\n",
        "    blk = min(n, 1024)\n    (_k[(1,)])(x, n, BLK=blk)\n",
        # a cap that is an imported constant, and an inline keyword launch
        "    blk = min(n, BLOCK_CAP)\n    assert n % blk == 0\n",
        "    _k[(1,)](x, n, BLK=min(n, 1024))\n",
        "    blk = max(1, min(n, 1024))\n    blk2 = min(n, 512)\n    k = n // blk2\n",
    ],
)
def test_unusual_spellings_fire(tmp_path: Path, body: str) -> None:
    text = _KERNEL + "from consts import BLOCK_CAP\n\n\ndef f(x, n):\n" + body
    gated, opened = gated_and_open(tmp_path, text)
    assert opened and gated == opened, text
    assert BlockSizeMinDivisibility.needles.match(text)


@pytest.mark.parametrize(
    "body",
    [
        # wrapped: the binding is no ``min`` call
        "    blk = max(1, min(n, 1024))\n    assert n % blk == 0\n",
        "    blk = triton.next_power_of_2(min(n, 1024))\n    _k[(1,)](x, n, BLK=blk)\n",
        # offset arithmetic in an argument: an end index, not a block
        "    blk = min(n - 1, 1024)\n    assert n % blk == 0\n",
        "    blk = min(off + n, 1024)\n    k = n // blk\n",
    ],
)
def test_wrapped_or_offset_mins_are_silent(tmp_path: Path, body: str) -> None:
    text = _KERNEL + "\n\ndef f(x, n, off):\n" + body
    assert gated_and_open(tmp_path, text) == ([], [])


@pytest.mark.parametrize(
    "text",
    [
        # the module's scope: a ``min(`` outside every function
        "N = get_width()\nBLK = min(N, 1024)\nassert N % BLK == 0\n\n\ndef f():\n    pass\n",
        # a nested function, its own scope
        "def f(x):\n    def g(n):\n        blk = min(n, 1024)\n        assert n % blk == 0\n    return g\n",
        # a method whose header spans lines, after a function holding a look-alike
        "def h(n, blk):\n    return n % blk\n\n\nclass A:\n    def f(\n        self,\n        n,\n    ):\n"
        "        blk = min(n, 1024)\n        k = n // blk\n",
    ],
)
def test_every_scope_is_analysed(tmp_path: Path, text: str) -> None:
    gated, opened = gated_and_open(tmp_path, text)
    assert opened and gated == opened, text


# -- kernel-side requirements (issue 19) ---------------------------------------

GROUP_TILES = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _tiles(q_ptr, out_ptr, GROUP: tl.constexpr, TILE: tl.constexpr):
        pid = tl.program_id(1)
        per_group = tl.cdiv(GROUP, TILE)
        group = pid // per_group
        rows = pid * TILE + tl.arange(0, TILE)
        tl.store(out_ptr + rows, tl.load(q_ptr + rows) + group)


    def run(q, kv, out):
        group = q.shape[1] // kv.shape[1]
        tile = min(8, group)
        _tiles[(1, triton.cdiv(q.shape[1], tile))](q, out, GROUP=group, TILE=tile)
    """
)


def test_group_tile_names_silent_and_compile_counterexamples(tmp_path: Path) -> None:
    (d,) = lint(GROUP_TILES, tmp_path)
    # a tile of 8 against a group of 12 straddles two groups: wrong, silently
    assert "group=12 → tile=8, 12 % 8 = 4" in d.message
    assert "silently wrong" in d.message
    # a group of 3 is not a power of two: the kernel does not compile
    assert "group=3 → tile=3" in d.message and "fails to compile" in d.message
    assert any(n.span is not None and "tiles each group" in n.message for n in d.notes)


def test_group_tile_of_another_width_is_not_a_group_need(tmp_path: Path) -> None:
    text = GROUP_TILES.replace("GROUP=group, TILE=tile", "GROUP=64, TILE=tile")
    text = text.replace("tl.arange(0, TILE)", "tl.arange(0, 8)")
    assert lint(text, tmp_path) == []


def test_static_assert_through_a_narrowed_tile_and_a_branch_alias(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """
        import triton
        import triton.language as tl


        @triton.jit
        def _paged(c_ptr, PAGE: tl.constexpr, CHUNK: tl.constexpr):
            tl.static_assert(PAGE % CHUNK == 0)
            tl.store(c_ptr + tl.arange(0, 16), 0.0)


        def run(cache, prefill, narrow):
            page = cache.shape[1]
            first = 32
            later = 16
            if narrow:
                first = min(first, page)
                later = min(later, page)
            chunk = first if prefill else later
            chunk_used = chunk
            _paged[(1,)](cache, PAGE=page, CHUNK=chunk_used)
        """
    )
    (d,) = lint(text, tmp_path)  # the two narrowings: one root cause
    assert "`PAGE % CHUNK == 0` at compile time (`tl.static_assert`), given `PAGE=page`" in d.message
    assert "page=48 → first=32, 48 % 32 = 16" in d.message
    assert any("also `later = min(later, page)`" in n.message and n.span for n in d.notes)


def test_assert_inside_a_kernel_is_debug_only(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """
        import triton
        import triton.language as tl


        @triton.jit
        def _rows(x_ptr, N: tl.constexpr, SPLIT: tl.constexpr):
            assert N % SPLIT == 0
            tl.store(x_ptr + tl.program_id(0), 0.0)


        def run(x):
            n = x.shape[1]
            split = min(n, 64)
            _rows[(1,)](x, N=n, SPLIT=split)
        """
    )
    (d,) = lint(text, tmp_path)
    assert "only in debug mode" in d.message and "remainder unhandled" in d.message


def test_a_helper_kernels_need_is_the_kernels_need() -> None:
    text = textwrap.dedent(
        """
        import triton
        import triton.language as tl


        @triton.jit
        def _load(p, T: tl.constexpr):
            tl.static_assert(T % 16 == 0)
            return tl.load(p + tl.arange(0, T))


        @triton.jit
        def outer(p, q, TILE: tl.constexpr):
            tl.store(q, tl.sum(_load(p, TILE)))
        """
    )
    facts = collect_text(text, "m", "m.py", _tree_of(text))["m.outer"]
    kinds = {(n.kind, n.via) for n in facts.needs["TILE"]}
    assert ("multiple", "_load") in kinds and ("pow2", "_load") in kinds


GUARDED = textwrap.dedent(
    """
    from contextvars import ContextVar

    import triton
    import triton.language as tl

    _staged: ContextVar[object] = ContextVar("staged", default=None)


    @triton.jit
    def _cast(x_ptr, W: tl.constexpr, CHUNK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, CHUNK), 0.0)


    def _run(out, staged):
        width = staged.shape[-1]
        chunk = min(2048, width)
        _cast[(1,)](staged, W=width, CHUNK=chunk)


    def forward(x, out):
        ok = x.is_contiguous() and x.shape[-1] % 2048 == 0
        _staged.set(x if ok else None)
        _run(out, _staged.get())
    """
)


def test_a_contextvar_set_only_under_a_divisibility_test_guards(tmp_path: Path) -> None:
    assert lint(GUARDED, tmp_path) == []
    unguarded = GUARDED.replace("_staged.set(x if ok else None)", "_staged.set(x)")
    (d,) = lint(unguarded, tmp_path)
    assert "width=1536 → chunk=1536" in d.message
    # the divisor must be a multiple of the cap
    weaker = GUARDED.replace("% 2048 == 0", "% 1024 == 0")
    assert len(lint(weaker, tmp_path)) == 1


@pytest.mark.parametrize(
    ("binding", "said"),
    [
        ("hidden = cfg.hidden_size // tp_size", "per-rank width"),
        ("hidden = self.config.hidden_size", "model's configuration"),
        ("hidden = x.shape[-1]", "tensor dimension"),
    ],
)
def test_rationale_follows_where_the_width_comes_from(tmp_path: Path, binding: str, said: str) -> None:
    text = SEED_SHAPE.replace("hidden_size = src.shape[1]", binding.replace("hidden", "hidden_size", 1))
    text = text.replace("def gather(src, dst):", "def gather(self, src, dst, cfg, tp_size, x):")
    (d,) = lint(text, tmp_path)
    assert said in d.notes[0].message
    if said != "per-rank width":
        assert "TP/EP" not in d.notes[0].message


def test_block_through_a_launcher_in_another_module() -> None:
    (d,) = _corpus_diags("kernel_pkg/head_callers.py")
    assert "launched by `launch_heads_mean`" in d.message
    assert any(n.path == "kernel_pkg/head_launch.py" for n in d.notes)
