"""SHD103 floor-grid-drops-tail: messages (what is skipped, for which width),
the engine-specific suggestion, the kernel facts it reads, and the prefilter
never hiding a finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

from corpus_harness import CORPUS, diagnostics_for, lint_snippet, with_gates_open_and_closed

from checks.floor_grid_drops_tail import FloorGridDropsTail
from linter.config import Config
from linter.engine import Engine
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic, Severity

FLOOR = CORPUS / "floor_grid_drops_tail"
CODE = FloorGridDropsTail.code


def lint(code: str, tmp_path: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    return lint_snippet(code, CODE, tmp_path, gates, **options)


def test_grid_message_names_kernel_width_and_mask_note() -> None:
    [d] = [d for d in diagnostics_for(FLOOR)[FLOOR / "bad.py"] if d.span.line == 19]
    assert d.code == CODE and d.severity is Severity.WARNING
    assert "`width // BLOCK`" in d.message and "`_scale_cols_kernel`" in d.message
    assert "with BLOCK = 64: the last" in d.message and "are skipped" in d.message
    assert any("masks against `width`" in n.message for n in d.notes)
    assert d.fix is not None and d.fix.applicability is Applicability.DISPLAY_ONLY
    assert "triton.cdiv(width, BLOCK)" in d.fix.title


def test_loop_suggestion_uses_the_engine_spelling(tmp_path: Path) -> None:
    code = """
        def f(x, chunk: int = 256):
            n = x.shape[-1]
            for i in range(n // chunk):
                x[:, i * chunk : (i + 1) * chunk].zero_()
        """
    engine = Engine(Config(root=tmp_path, select=(CODE,)), load_registry(), jobs=1)
    for root, spelling in (("sglang", "ceil_div"), ("vllm", "vllm.utils.math_utils")):
        pkg = tmp_path / root
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        [d], _ = engine.lint_text(textwrap.dedent(code), pkg / "mod.py")
        assert spelling in (d.fix.title if d.fix else ""), (root, d.fix)


def test_silent_on_ceiling_asserted_and_tail_handled(tmp_path: Path) -> None:
    assert not lint(
        """
        def f(x, BLOCK: int = 128):
            n = x.shape[-1]
            a = [i for i in range((n + BLOCK - 1) // BLOCK)]
            assert n % BLOCK == 0
            for i in range(n // BLOCK):
                pass
        """,
        tmp_path,
    )


def test_block_names_option(tmp_path: Path) -> None:
    code = """
        def f(x, grp: int = 128):
            n = x.shape[-1]
            for g in range(n // grp):
                x[..., g * grp : (g + 1) * grp].zero_()
        """
    assert not lint(code, tmp_path)
    [d] = lint(code, tmp_path, **{"block-names": ["grp"]})
    assert "`n // grp`" in d.message


def test_gates_never_hide_a_finding() -> None:
    for path, _text, opened, closed in with_gates_open_and_closed(FLOOR, CODE):
        assert [(d.span, d.message) for d in opened] == [(d.span, d.message) for d in closed], path


def test_power_of_two_width_names_a_smaller_power_of_two_and_the_compile_error() -> None:
    # the launched kernel (in another module) takes tl.arange(0, HD): a
    # width that is not a power of two fails to compile, so the only loss is
    # a width below the block
    path = FLOOR / "decode_pkg" / "decode.py"
    [d] = diagnostics_for(FLOOR)[path]
    assert "head_dim = 32 with BLOCK_E = 64" in d.message
    assert "fail to compile" in d.message and "are skipped" not in d.message
    assert "triton.cdiv(head_dim, BLOCK_E)" in (d.fix.title if d.fix else "")


def test_power_of_two_requirement_and_lower_bound_guard_the_floor(tmp_path: Path) -> None:
    code = """
        import triton

        def f(x, busy, heads):
            V = x.shape[-1]
            {guard}
            BV = 32 if busy else 64 if heads > 8 else V
            for i in range(V // BV):
                x[..., i * BV : (i + 1) * BV].zero_()
        """
    guarded = (
        "assert V == triton.next_power_of_2(V) >= 64",
        "assert is_power_of_2(V) and V >= 64",
        "if V & (V - 1) or V < 64: raise ValueError(V)",
        "if (V & (V - 1)) != 0 or not V >= 64: raise ValueError(V)",
    )
    for guard in guarded:
        assert not lint(code.replace("{guard}", guard), tmp_path), guard
    # a power of two with no lower bound still loses a width below the block
    [d] = lint(code.replace("{guard}", "assert V == triton.next_power_of_2(V)"), tmp_path)
    assert "V = 32 with BV = 64" in d.message and "power of two" in d.message
    # a bound with no power-of-two requirement: 96 leaves a partial block
    assert lint(code.replace("{guard}", "assert V >= 64"), tmp_path)


def test_admitted_widths_guard_only_when_each_is_a_multiple(tmp_path: Path) -> None:
    code = """
        def f(x):
            D = x.shape[-1]
            if D not in ({widths}):
                raise RuntimeError("unsupported width")
            for i in range(D // 1024):
                x[..., i * 1024 : (i + 1) * 1024].zero_()
        """
    assert not lint(code.replace("{widths}", "2048, 4096"), tmp_path)
    [d] = lint(code.replace("{widths}", "2048, 2560"), tmp_path)
    assert "D = 2560, a width the function admits" in d.message and "the last 512 are skipped" in d.message


def test_a_range_over_unpacked_arguments_is_read_not_a_crash(tmp_path: Path) -> None:
    # ``range(*dims)`` has no first argument to read: the rule once raised
    # IndexError there and gave up on the whole file (an internal error)
    [d] = lint(
        """
        def f(x, dims, chunk: int = 256):
            for i in range(*dims):
                pass
            n = x.shape[-1]
            for i in range(n // chunk):
                x[:, i * chunk : (i + 1) * chunk].zero_()
        """,
        tmp_path,
    )
    assert d.code == CODE and "`n // chunk`" in d.message
