"""SHD101 block-size-min-divisibility: messages, fixes, options, cross-module
kernel facts and the soundness of the prefilter."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest
from corpus_harness import CORPUS, corpus_files, diagnostics_for, parsed_corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import _kernels
from checks import block_size_min_divisibility as bsmd
from checks._kernels import TritonKernels
from checks.block_size_min_divisibility import (
    BlockMinSites,
    BlockSizeMinDivisibility,
    _div_example,
    _pow2_example,
    _replay_tree,
)
from linter.config import Config, ConfigError, load_config
from linter.engine import Engine
from linter.fixer import fix_text, parses
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic

RULE_DIR = CORPUS / "block_size_min_divisibility"
CODE = "SHD101"


def lint(text: str, tmp_path: Path, name: str = "mod.py", **cfg: object) -> list[Diagnostic]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    engine = Engine(Config(root=tmp_path, select=(CODE,), **cfg), load_registry(), jobs=1)  # type: ignore[arg-type]
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
    assert _div_example("w", "B", str(cap), cap) == expected


@pytest.mark.parametrize(
    ("cap", "expected"),
    [(1024, "w=768 → B=768"), (8, "w=6 → B=6"), (96, "w=128 → B=96")],
)
def test_power_of_two_counterexample(cap: int, expected: str) -> None:
    assert _pow2_example("w", "B", str(cap), cap, cap & (cap - 1) == 0).startswith(expected)


def test_counterexamples_really_break() -> None:
    for cap in (3, 4, 6, 8, 12, 96, 128, 384, 1000, 1024, 4096):
        x = cap * 3 // 2 if cap & (cap - 1) == 0 else 1 << cap.bit_length()
        assert x > cap and x % min(x, cap) != 0
        msg = _div_example("w", "B", str(cap), cap)
        assert f"w={x} " in msg
    for cap in (4, 8, 16, 1024):
        x = int(_pow2_example("w", "B", str(cap), cap, True).split("=")[1].split(" ")[0])
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


# -- the collector's text reader -------------------------------------------------


def _kernel_facts_both(text: str, path: str = "pkg/mod.py") -> tuple[object, object]:
    """(facts from the text reader, facts from the whole file's ``ast``)."""
    tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    return (
        _kernels.collect_facts(text, "pkg.mod", path),
        _kernels._collect_ast(tree, text, "pkg.mod", path),
    )


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


@pytest.mark.parametrize("name", sorted(READER_CASES))
def test_text_reader_agrees_with_the_ast(name: str) -> None:
    text = _READER_HEAD + READER_CASES[name]
    got, want = _kernel_facts_both(text)
    assert got == want
    if name != "reexport":
        assert got and got["kernels"], got


def test_text_reader_reads_without_the_fallback() -> None:
    for name in ("guarded", "docstring", "dedented", "backslash", "headers", "not_kernels"):
        _kernels._collect_text(_READER_HEAD + READER_CASES[name], "pkg.mod", "pkg/mod.py")
    with pytest.raises(_kernels._Fallback):
        _kernels._collect_text(_READER_HEAD + READER_CASES["alias"], "pkg.mod", "pkg/mod.py")


def test_text_reader_on_a_file_that_does_not_compile() -> None:
    # the fallback compiles the whole file: no facts, as with ``ast``
    text = (
        _READER_HEAD
        + "import triton.language as lang\n@triton.jit\ndef k(A):\n    tl.arange(0, A\n"
    )
    assert _kernels.collect_facts(text, "pkg.mod", "pkg/mod.py") is None


def _call_needs_parsed(text: str, m: re.Match[str]) -> object:
    """What ``_kernel_facts`` reads of a call without the fast path."""
    end = _kernels._balanced_end(text, m.end() - 1)
    try:
        call = ast.parse(text[m.start() : end], mode="eval").body if end >= 0 else None
    except SyntaxError:
        return None
    return (_kernels._call_needs(call, m.group(2)), end) if isinstance(call, ast.Call) else None


# (call text, whether the fast path reads it)
_FAST_CALLS = [
    ("tl.arange(0, BLOCK)", True),
    ("tl.arange( 0 ,\tBLOCK )", True),
    ("triton.language.arange(0, B)", True),
    ("tl.zeros([BM, 16], dtype=tl.float32)", True),
    ("tl.zeros((BM, BN), dtype=acc_dtype)", True),
    ("tl.zeros((BM), dtype=x)", True),
    ("tl.zeros([0, 1, B], dtype=x)", True),
    ("tl.reshape(acc, (BM, BN))", True),
    ("tl.broadcast_to(x.T, [match, _])", True),
    ("tl.arange(0, None)", False),  # a keyword: a ``Constant``
    ("tl.arange(0, if)", False),
    ("tl.arange (0, B)", False),
    ("tl.arange\n(0, B)", False),  # does not parse
    ("tl.arange(0, Bé)", False),
    ("tl.arange(0, B,)", False),
    ("tl.arange(00, B)", False),
    ("tl.zeros([B, 01], dtype=x)", False),  # does not parse
    ("tl.zeros([B, 1_0, 0x2], dtype=x)", False),
    ("tl.zeros([B, 1.5], dtype=x)", False),
    ("tl.zeros([B), dtype=x)", False),
    ("tl.zeros([B], dtype=x.None)", False),
    ("tl.zeros([B], shape=[C])", False),
    ("tl.zeros([B,], dtype=x)", False),
    ("tl.zeros([B, True], dtype=x)", False),
    ("tl.reshape(None, [B])", False),
    ("tl.reshape(x, [B], can_reorder=True)", False),
    ("tl.reshape(x, [B  # c\n])", False),
    ("tl.full([B], 0, tl.int32)", False),
]


@pytest.mark.parametrize("call, fast", _FAST_CALLS)
def test_fast_call_forms_read_as_parsed(call: str, fast: bool) -> None:
    # the text around the call as in a kernel: the fast path must not read
    # past the call's ``)`` nor claim a call that ``ast`` reads otherwise
    text = f"    y = {call} + 1\n"
    (m,) = [m for m in _kernels._OP_CALL.finditer(text) if m.group(1) in _kernels._DEFAULT_TL]
    got = _kernels._fast_needs(text, m)
    assert (got is not None) == fast
    if got is not None:
        assert got == _call_needs_parsed(text, m)


# (decorators and signature, whether the fast path reads them)
_FAST_DEFS = [
    ("@triton.jit\ndef k(A, B: tl.constexpr, C=-1, D: tl.constexpr = 4):", True),
    ("@triton.jit  \n@other\ndef k(\n    A,\n\tB: tl.constexpr = None,\n) -> None:", True),
    ("@triton.jit\ndef k():", True),
    ("@triton.jit\ndef k(a: None = True, match=_, _: x.y = False):", True),
    ("@triton.jit\ndef k(A=1, B):", False),  # does not compile
    ("@triton.jit\ndef k(if):", False),
    ("@triton.jit\ndef if(A):", False),
    ("@None\ndef k(A):", False),  # not a name chain: no decorator name
    ("@a.if\ndef k(A):", False),
    ("@triton.jit\ndef k(A: None.x):", False),
    ("@triton.jit\ndef k(A=01):", False),
    ("@triton.jit\ndef k(A=True.real):", False),
    ("@triton.jit\ndef k(A) -> True.x:", False),
    ("@triton.autotune(configs=[], key=[])\ndef k(A):", False),
    ("@triton.jit\ndef k(A, *, B):", False),  # ``B`` is a parameter, ``*`` is not
    ("@triton.jit\ndef k(A, B='('):", False),
    ("@triton.jit\ndef k(A,, B):", False),
    ("@triton.jit\ndef k(Aé):", False),
    ("@ triton.jit\ndef k(A):", False),
]


@pytest.mark.parametrize("header, fast", _FAST_DEFS)
def test_fast_def_reads_as_compiled(header: str, fast: bool) -> None:
    text = "x = 1\n" + header + "\n    pass\n"
    p, d = 6, text.index("\ndef ") + 1
    colon = _kernels._header_end(_kernels._blank(text), d)
    got = _kernels._fast_def(text, p, d, colon)
    assert (got is not None) == fast
    if got is not None:
        tree = compile(text[p:colon] + " pass\n", "<t>", "exec", ast.PyCF_ONLY_AST)
        fn = _kernels._fn_record(tree.body[0])
        assert got == (fn.name, fn.decorators, fn.params)


_BLANK_CASES = [
    "",
    "x = 1\n",
    "s = 'a#b' # it's \"q\"\n",
    "s = '''a\n'b'\n''' + \"\"\"c\\\"\"\"\"\" # '\n",
    's = \'unclosed\nt = "x" # c\n',
    "s = 'a\\\nb' + \"\\\"\" + '''\n",
    "# only a comment with ' and \"",
    "x = \"é\\\\\" # é '\n'''never closed\n",
]


@pytest.mark.parametrize("text", _BLANK_CASES)
def test_blank_is_the_plain_sub(text: str) -> None:
    # ``blank`` (the reader's ``_blank``) only skips ahead to where a token
    # can start; ``_blank_sub`` tries the token pattern at every offset
    from checks._pyscan import _blank_sub

    assert _kernels._blank(text) == _blank_sub(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["'", '"', "'''", '"""', "#", "\\", "\n", "a", " "]), max_size=40))
def test_blank_is_the_plain_sub_generated(parts: list[str]) -> None:
    from checks._pyscan import _blank_sub

    text = "".join(parts)
    assert _kernels._blank(text) == _blank_sub(text)


# (statement, whether the fast path reads it)
_FAST_FROMS = [
    ("from a import b\n", True),
    ("from .a.b import (c,\n    d as e,  # comment\n)\n\n# tail\n", True),
    ("from . import x as y, z", True),
    ("from ... import x\n", True),
    ("from a import(b)\n", True),
    ("from a import b as\n", False),
    ("from a import b,\n", False),  # does not compile
    ("from a importb\n", False),
    ("from a import *\n", False),
    ("from a import if\n", False),
    ("from a.None import b\n", False),
    ("from __future__ import annotations\n", False),
    ("from .import x\n", False),
    ("from a import b; x = 1\n", False),
    ("from a import b \\\n    , c\n", False),
    ("from a import b\n    x = 1\n", False),
    ("from a import é\n", False),
]


@pytest.mark.parametrize("stmt, fast", _FAST_FROMS)
def test_fast_from_reads_as_compiled(stmt: str, fast: bool) -> None:
    got = _kernels._fast_from(_kernels._blank(stmt), 0, len(stmt))
    assert (got is not None) == fast
    if got is not None:
        (want,) = compile(stmt, "<t>", "exec", ast.PyCF_ONLY_AST).body
        assert ast.dump(got) == ast.dump(want, include_attributes=False)


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
    assert _kernels.FacadeImports.needles._match(text) == want


_STMT = st.sampled_from(
    [
        "@triton.jit\ndef k{i}(A, B):\n    tl.arange(0, A)\n",
        "@triton.jit\ndef k{i}(A):\n    x = f(\n1, tl.zeros([A]))\n",
        "if c:\n    @triton.jit\n    def k{i}(A):\n        tl.full([A], 0)\nelse:\n    pass\n",
        's{i} = """\n@triton.jit\ndef fake{i}(A):\n    tl.arange(0, A)\n"""\n',
        "from .m{i} import a{i}, b{i} as c{i}\n",
        "x{i} = [\n1,\n]\n",
        "# tl.arange(0, A)\n",
        "@triton.jit\ndef k{i}(A, B):  # (\n    return tl.static_assert(A % B == 0)\n\n# tail\n",
        "class C{i}:\n    @triton.jit\n    def m(A):\n        tl.arange(0, A)\n",
        "y{i} = a \\\n    + tl.arange(0, A)\n",
        "@triton.jit\ndef k{i}(A): tl.reshape(x, [A])\n",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STMT, min_size=1, max_size=6))
def test_text_reader_agrees_with_the_ast_on_generated_modules(parts: list[str]) -> None:
    text = _READER_HEAD + "".join(p.format(i=i) for i, p in enumerate(parts))
    got, want = _kernel_facts_both(text)
    assert got == want


# -- prefilter soundness ----------------------------------------------------------


def gates(text: str) -> bool:
    """The rule's prefilter as the engine applies it: the regex gate, then
    the gate on the shared ``ast`` (skipped when ``ast`` cannot parse)."""
    if not BlockSizeMinDivisibility.candidate(text):
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return True
    return BlockSizeMinDivisibility.candidate_tree(tree, text)


def test_candidate_true_for_every_corpus_file_where_the_rule_fires() -> None:
    fired = 0
    for f in corpus_files(RULE_DIR):
        diags = [d for d in diagnostics_for(RULE_DIR).get(f, []) if d.code == CODE]
        if diags:
            fired += 1
            assert gates(f.read_text(encoding="utf-8")), f
    assert fired >= 4


def test_candidate_is_regex_only() -> None:
    # the text gate does not parse: broken code with the shape passes it
    broken = "def f(n:\n    b = min(n, 1024)\n    assert n % b == 0\n"
    assert BlockSizeMinDivisibility.candidate(broken)


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
    ],
)
def test_gates_skip_files_without_the_shape(text: str) -> None:
    assert not gates(text), text


def test_gates_pass_the_seed_shape() -> None:
    assert gates(SEED_SHAPE)


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


def gated_and_open(
    tmp_path: Path, text: str, options: str = "", extra: dict[str, str] | None = None
) -> tuple[bool, list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """Whether ``mod.py`` reaches libcst through all three gates (under the
    options), the findings through the gates and those with every gate open."""
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.shardlint.rules.SHD101]\n{options}\n", encoding="utf-8"
    )
    for name, body in (extra or {}).items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    (tmp_path / "mod.py").write_text(text, encoding="utf-8")
    registry = load_registry()
    config = load_config([tmp_path], registry).with_overrides(select=(CODE,))
    engine = Engine(config, registry, jobs=1)
    facts = engine.project_facts()
    scan = engine.scan_one(text, "mod.py", True)
    reaches = CODE in engine.facts_gate("mod.py", scan.rules or [], facts)
    gated, errors = engine.lint_text(text, tmp_path / "mod.py")
    assert not errors, errors
    opened = engine.check_one(text, "mod.py", facts, [CODE]).diagnostics

    def key(d: Diagnostic) -> tuple[int, int, str]:
        return (d.span.line, d.span.column, d.message)

    return reaches, sorted(map(key, gated)), sorted(map(key, opened))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_gates_are_sound(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """Through the three gates the rule finds what it finds with every gate
    open; where it fires, each gate passes."""
    assert parses(text), text
    reaches, gated, opened = gated_and_open(tmp_path_factory.mktemp("p"), text)
    assert gated == opened, text
    if opened:
        assert BlockSizeMinDivisibility.candidate(text), text
        assert BlockSizeMinDivisibility.candidate_tree(ast.parse(text), text), text
        assert reaches, text


def test_generated_programs_do_fire(tmp_path: Path) -> None:
    """The property above is only worth something if the generator reaches
    the rule: the plainest spelling of each consumer fires."""
    for consumer in ("assert n % blk == 0", "k = n // blk", "_k[(1,)](x, n, BLK=blk)"):
        text = _KERNEL + f"def f(x, n):\n    blk = min(n, 1024)\n    {consumer}\n"
        assert lint(text, tmp_path), consumer


# -- the replay and the facts gate -------------------------------------------------

EDGE_GATES = (RULE_DIR / "edge_gates.py").read_text(encoding="utf-8")


def _edge_function(name: str) -> str:
    """``edge_gates.py`` cut down to its header (imports, constants, the
    kernel) and one function."""
    tree = ast.parse(EDGE_GATES)
    first = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "_rows_kernel"
    )
    header = "\n".join(EDGE_GATES.splitlines()[: first.lineno - 1])
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return header + "\n" + (ast.get_source_segment(EDGE_GATES, fn) or "") + "\n"


@pytest.mark.parametrize(
    "name",
    [
        "warps_are_a_launch_option",  # facts: the kernel has no such parameter
        "warps_from_a_power_of_two",  # ast: max(pow2 // 256, 1) is a power of two
        "remainder_padded",  # facts: the only need left is silenced by the guard
        "width_pinned",  # ast: `if n not in (..): raise` pins the width
        "block_rebuilt",  # ast: gcd rebinds the block
        "group_is_a_constant",  # ast: the one-line suite's binding is not read
    ],
)
def test_gates_stop_the_look_alikes(tmp_path: Path, name: str) -> None:
    reaches, gated, opened = gated_and_open(tmp_path, _edge_function(name))
    assert opened == [] and gated == []
    assert not reaches


@pytest.mark.parametrize(
    "name",
    [
        "chunk_asserted_by_the_kernel",
        "splits_from_a_guarded_constant",
        "lowest_set_bit_in_parentheses",
    ],
)
def test_gates_pass_what_fires(tmp_path: Path, name: str) -> None:
    reaches, gated, opened = gated_and_open(tmp_path, _edge_function(name))
    assert reaches and len(opened) == 1 and gated == opened


def test_ast_gate_reaches_the_facts_gate_only_with_open_questions() -> None:
    # the whole corpus file: launches and host findings are open questions;
    # the look-alikes settled on ``ast`` alone leave nothing behind
    tree = ast.parse(EDGE_GATES)
    rep = _replay_tree(tree, EDGE_GATES)
    assert rep.host  # the parenthesised ``(w) & -w``: the replay cannot tell
    for name in (
        "warps_from_a_power_of_two",
        "width_pinned",
        "block_rebuilt",
        "group_is_a_constant",
    ):
        text = _edge_function(name)
        assert not BlockSizeMinDivisibility.candidate_tree(ast.parse(text), text), name


_CAP_CALL = _KERNEL + textwrap.dedent(
    """
    def f(x, n, m):
        blk = min(n, my_cap(m))
        _k[(1,)](x, n, BLK=blk)
    """
)


def test_option_sensitive_call_is_left_to_the_facts_gate(tmp_path: Path) -> None:
    # with my_cap a power of two, `min(n, my_cap(m))` is a site: the ast gate
    # cannot know the option, the facts gate does
    assert BlockSizeMinDivisibility.candidate_tree(ast.parse(_CAP_CALL), _CAP_CALL)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    reaches, gated, opened = gated_and_open(tmp_path / "a", _CAP_CALL)
    assert not reaches and opened == []
    option = 'power-of-two-functions = ["my_cap"]'
    reaches, gated, opened = gated_and_open(tmp_path / "b", _CAP_CALL, option)
    assert reaches and len(gated) == 1 and gated == opened


def test_facts_gate_follows_kernel_decorators_and_imports(tmp_path: Path) -> None:
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
        reaches, gated, opened = gated_and_open(
            tmp_path / sub, launch, option, extra={"kmod.py": kernels}
        )
        assert reaches is fires and bool(opened) is fires and gated == opened


def test_text_gate_sees_a_step_keyword() -> None:
    # `range` refuses keywords, but the rule reads the third argument as written
    text = "def f(n):\n    blk = min(n, 96)\n    for i in range(0, n, step=blk):\n        pass\n"
    assert BlockSizeMinDivisibility.candidate(text)
    assert BlockSizeMinDivisibility.candidate_tree(ast.parse(text), text)


def test_collector_records_the_open_questions() -> None:
    text = _KERNEL + textwrap.dedent(
        """
        def f(x, n, m):
            blk = min(n, my_cap(m))  # a site only if my_cap is a power of two
            _k[(1,)](x, n, BLK=blk)


        def g(x, n):
            blk = min(n, 1024)
            _k[(1,)](x, n, 4, blk)
        """
    )
    data = BlockMinSites.collect(ast.parse(text), text, "pkg.mod", "pkg/mod.py")
    assert data == {
        "path": "pkg/mod.py",
        "opt": ["my_cap"],
        "launches": [[["pkg.mod._k"], "dp", [], [3]]],
        "tk": True,
    }
    host = "def f(n):\n    blk = min(n, 1024)\n    assert n % blk == 0\n"
    assert BlockMinSites.collect(ast.parse(host), host, "m", "m.py") == {
        "path": "m.py",
        "host": True,
    }
    silent = (
        "def f(n):\n    blk = min(n, 1024)\n    blk = math.gcd(blk, n)\n    assert n % blk == 0\n"
    )
    assert BlockMinSites.collect(ast.parse(silent), silent, "m", "m.py") is None


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
def test_replay_decides_as_the_rule(
    tmp_path_factory: pytest.TempPathFactory, program: tuple[str, str]
) -> None:
    text, options = program
    reaches, gated, opened = gated_and_open(
        tmp_path_factory.mktemp("d"), text, options, extra={"kmod.py": _FAR}
    )
    assert gated == opened, (options, text)
    assert reaches or not opened, (options, text)


# -- the text gate's spellings and its backward searches ------------------------


@pytest.mark.parametrize(
    "body",
    [
        # ``(min)`` is a call of ``min`` for libcst and ``ast`` alike
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
def test_gates_pass_unusual_spellings_that_fire(tmp_path: Path, body: str) -> None:
    text = _KERNEL + "from consts import BLOCK_CAP\n\n\ndef f(x, n):\n" + body
    reaches, gated, opened = gated_and_open(tmp_path, text)
    assert opened and gated == opened and reaches, text
    assert BlockSizeMinDivisibility.candidate(text)


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
def test_text_gate_drops_look_alikes(tmp_path: Path, body: str) -> None:
    text = _KERNEL + "\n\ndef f(x, n, off):\n" + body
    reaches, gated, opened = gated_and_open(tmp_path, text)
    assert opened == [] and gated == [] and not reaches
    if "max(" not in body and "next_power" not in body:
        assert not BlockSizeMinDivisibility.candidate(text), text


_ONE_FUNCTION = {
    # the binding and the consumer in two functions: the rule reads each alone
    "split over two functions": "def f(x, n):\n    blk = min(n, 1024)\n    return blk\n\n\n"
    "def g(x, n, blk):\n    assert n % blk == 0\n",
    # the only ``min(`` in a docstring and a comment
    "in a docstring": 'def f(x, n, blk):\n    """blk = min(n, 1024)"""\n    assert n % blk == 0\n',
    "in a comment": "def f(x, n, blk):\n    # blk = min(n, 1024)\n    assert n % blk == 0\n",
}


@pytest.mark.parametrize("name", sorted(_ONE_FUNCTION))
def test_text_gate_reads_each_function(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file-wide test admits these; asked of each function's text (where
    the rule analyses a ``min(``) it does not, and the rule finds nothing."""
    text = "import triton\n\n\n" + _ONE_FUNCTION[name]
    reaches, gated, opened = gated_and_open(tmp_path, text)
    assert opened == [] and gated == [] and not reaches
    bsmd._TEXT_GATE_MEMO[:] = [None, False]
    assert not BlockSizeMinDivisibility.candidate(text), text
    monkeypatch.setattr(bsmd, "_function_gate", lambda t: True)
    bsmd._TEXT_GATE_MEMO[:] = [None, False]
    assert BlockSizeMinDivisibility.candidate(text), text


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
def test_text_gate_per_function_keeps_what_fires(tmp_path: Path, text: str) -> None:
    reaches, gated, opened = gated_and_open(tmp_path, text)
    assert opened and gated == opened and reaches, text
    bsmd._TEXT_GATE_MEMO[:] = [None, False]
    assert BlockSizeMinDivisibility.candidate(text), text


# The one-pass regexes the backward searches replace (the reference).
_REF_BOUND_TO = re.compile(r"=(?=" + bsmd._PGAP + bsmd._NAME + bsmd._ALONE + r")")
_REF_DIVIDED_BY = re.compile(
    r"[%/](?=" + bsmd._PGAP + r"(?<![\w.])" + bsmd._NAME + bsmd._BARE + r")"
)
_TOKENS = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        "\\\n",
        "(",
        ")",
        "=",
        ":=",
        ": int =",
        "%",
        "//",
        "/",
        ",",
        "]",
        "[",
        "# c = min(\n",
        "#",
        "B",
        "t",
        "xB",
        ".B",
        "B.x",
        "B(",
        "min",
        "min(",
        "(min)(",
        "1",
        "-",
        "+",
        "e",
        "'s'",
        ";",
        "\t",
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_TOKENS, min_size=1, max_size=14).map("".join))
def test_backward_searches_match_the_regexes(text: str) -> None:
    for name in ("B", "t"):
        divided, aliases = bsmd._name_uses(text, name)
        want_div = any(m.group(1) == name for m in _REF_DIVIDED_BY.finditer(text))
        assert divided == want_div, (text, name)
        if not divided:
            ref = {m.start() for m in _REF_BOUND_TO.finditer(text) if m.group(1) == name}
            got = set(aliases)
            assert ref <= got, (text, name)
            # the extras: walrus targets ending at ``,``, ``]`` or ``}``
            assert all(text[p - 1] == ":" for p in got - ref), (text, name)
    ref_min = {(m.start(), m.end() - 1) for m in bsmd._MIN_BINDING.finditer(text)}
    assert ref_min <= set(bsmd._min_bindings(text)), text
    assert bsmd._consumer_hint(text) == (bsmd._CONSUMER_HINT.search(text) is not None)
    assert bsmd._min_calls(text) == [m.start() for m in re.finditer(bsmd._MIN_CALL, text)]


_ARG = st.sampled_from(
    [
        "n",
        "x.e",
        "1e-5",
        "1.e-5",
        "0x1e",
        "1_024",
        "-n",
        "+n",
        "(n)",
        "x[0]",
        "'a'",
        "f(n)",
        "True",
        "lambda: -1",
        "a if c else -1",
        "not -n",
        "{1}",
        "n ** -1",
        "-1",
        "n  # - 1\n",
    ]
)
_OP = st.sampled_from([" - ", "-", " + ", "+", " * ", ", ", " // "])


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(_ARG, _OP), min_size=1, max_size=4))
def test_offset_proof_is_sound(parts: list[tuple[str, str]]) -> None:
    """A proven ``+``/``-`` is a real ``BinOp`` among the call's arguments."""
    args = "".join(a + op for a, op in parts) + "n"
    text = f"b = min({args}\n)\n"
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    if bsmd._offset_in_args(text, text.index("(")):
        call = tree.body[0].value  # type: ignore[attr-defined]
        assert any(
            isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
            for a in call.args
            for n in ast.walk(a)
        ), text


# -- ``facade_imports`` from the text ----------------------------------------------

FACADE_CASES = {
    "plain": "from .a import k\nfrom .b import k2 as kk, other\n__all__ = ['k']\n",
    "parenthesised": "from . import (\n    a,  # first\n    b as c,\n)\nfrom .x import *\n",
    "guarded": "try:\n    from .a import k\nexcept ImportError:\n    k = None\nif X:\n    from .b import j\n",
    "continued": "from .a \\\n    import k\nimport os; from .b import j\n",
    "strings": "'''\nfrom .fake import no\n'''\nfrom .a import k  # from .c import d\n",
    "absolute": "from pkg.ops import k\nfrom .. import up\n",
}


@pytest.mark.parametrize("name", sorted(FACADE_CASES) + sorted(READER_CASES))
@pytest.mark.parametrize("path", ["pkg/sub/__init__.py", "pkg/sub/mod.py"])
def test_facade_reader_agrees_with_the_ast(name: str, path: str) -> None:
    text = FACADE_CASES.get(name) or (_READER_HEAD + READER_CASES[name])
    module = "pkg.sub" if path.endswith("__init__.py") else "pkg.sub.mod"
    tree = ast.parse(text)
    want = _kernels._from_imports(tree, module, path) or None
    assert _kernels.FacadeImports.collect(None, text, module, path) == want
    assert not _kernels.FacadeImports.needs_ast


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STMT, min_size=1, max_size=6))
def test_facade_reader_agrees_with_the_ast_on_generated_modules(parts: list[str]) -> None:
    text = _READER_HEAD + "".join(p.format(i=i) for i, p in enumerate(parts))
    tree = ast.parse(text)
    want = _kernels._from_imports(tree, "pkg", "pkg/__init__.py") or None
    assert _kernels.facade_facts(text, "pkg", "pkg/__init__.py") == want


# -- the ast gate's scope ---------------------------------------------------------


def _replay(tree: ast.Module, text: str) -> tuple[bool, list[str], list[object]]:
    bsmd._REPLAY_MEMO[:] = [None, None, None]
    got = bsmd._replay_tree(tree, text)
    bsmd._REPLAY_MEMO[:] = [None, None, None]
    return got.host, sorted(got.opt), sorted(got.launches)


def test_the_replay_of_the_scoped_tree_is_the_replay_of_the_whole() -> None:
    """The ast gate reads every top-level statement but the classes holding
    no function the text test passes and no import (``ast_scope``): on every
    corpus file the text gate admits, the replay of that part of the file
    equals the replay of the whole, and the class the scope leaves out is
    really blanked. (The same held for the scan results of all 64,423
    files of the 51 engine trees this was measured on.)"""
    from linter.facts import mask_text, scope_of, scoped_tree

    rule = load_registry().rules["SHD101"]
    compared = blanked = 0
    for path, text, whole in parsed_corpus_files():
        bsmd._TEXT_GATE_MEMO[:] = [None, False]
        if not rule.candidate(text):
            continue
        spans = scope_of(rule, text, {})
        part = ast.parse(mask_text(text, spans)) if spans is not None else whole
        assert _replay(scoped_tree(part, text, spans), text) == _replay(whole, text), path.name
        compared += 1
        if spans is not None:
            blanked += sum(1 for s in whole.body if not any(a <= _offset(text, s) < b for a, b in spans))
    assert compared >= 8
    assert blanked >= 1, "the corpus must hold a class the scope leaves out"


def _offset(text: str, node: ast.stmt) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: node.lineno - 1])


def test_the_scope_keeps_what_the_replay_may_read() -> None:
    """A class whose method may leave a finding, a class or function with an
    import (``_qualified`` reads every import of the module), every
    statement that is not a definition, and the module's functions called
    by name in what is read (and those they call: ``_fn_pow2`` reads their
    returns) are read; a class or a function whose ``min(`` cannot leave
    anything is blanked, and so is a function only named, not called
    (``_fn_pow2`` is asked about calls alone)."""
    text = textwrap.dedent(
        """
        import triton

        WIDTH = 4096
        if triton:
            CAP = 1024


        def pow2_cap(n):
            return round_pow2  (  # a call over two lines
                n)


        def round_pow2(n):
            return triton.next_power_of_2(n)


        def unused_kernel(x):
            return x


        def named_only(x):
            return x


        TABLE = {"f": named_only}


        class Fires:
            def f(self, n):
                blk = min(pow2_cap(n), 1024)
                assert n % blk == 0


        class Imports:
            def g(self, n):
                from .kernels import k
                return min(n, 8)


        @decorated
        class Quiet:
            def h(self, n):
                return min(n, 8)


        async def quiet_too(n):
            return min(n, 8)
        """
    )
    spans = bsmd._scope(text)
    assert spans is not None
    kept = [text[a:b] for a, b in spans]
    for name in ("import triton", "WIDTH", "CAP", "def pow2_cap", "def round_pow2", "class Fires", "class Imports"):
        assert any(name in k for k in kept), name
    for name in ("def unused_kernel", "def named_only", "class Quiet", "quiet_too"):
        assert not any(name in k for k in kept), name
    # tabs or a lone carriage return: the regions cannot be told, all is read
    assert bsmd._scope(text.replace("    blk", "\tblk")) is None
