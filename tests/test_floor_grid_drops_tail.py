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
