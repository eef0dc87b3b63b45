"""SHD102 fixed-block-divisibility: what a user sees (the real model width
that fails, the crash site, the fix and its safety), the options, and the
prefilter never hiding a finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_harness import CORPUS, diagnostics_for, lint_snippet, with_gates_open_and_closed

from checks.fixed_block_divisibility import FixedBlockDivisibility
from checks.fixed_block_divisibility.dims import HEAD, HIDDEN, INTERMEDIATE, counterexample
from linter.config import Config
from linter.engine import Engine
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic, Severity

FIXED = CORPUS / "fixed_block_divisibility"
CODE = FixedBlockDivisibility.code


def lint(code: str, tmp_path: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    return lint_snippet(code, CODE, tmp_path, gates, **options)


def test_message_names_a_real_width_and_the_crash_site() -> None:
    [d] = [d for d in diagnostics_for(FIXED)[FIXED / "bad.py"] if d.span.line == 16]
    assert d.code == CODE and d.severity is Severity.ERROR
    assert "`BLOCK_D` (1024)" in d.message and "`hidden_size`" in d.message
    assert "2880" in d.message and "gpt-oss" in d.message and "2880 % 1024 = 832" in d.message
    assert "assert `hidden_size % BLOCK_D == 0`" in d.message


def test_fix_is_safe_on_host_only_blocks_and_unsafe_when_a_kernel_gets_them(tmp_path: Path) -> None:
    diags = diagnostics_for(FIXED)[FIXED / "bad.py"]
    by_line = {d.span.line: d for d in diags}
    assert by_line[16].fix is not None and by_line[16].fix.applicability is Applicability.UNSAFE
    host = by_line[24]
    assert host.fix is not None and host.fix.applicability is Applicability.SAFE
    assert "math.gcd(intermediate, 128)" in host.fix.title


def test_block_bound_before_the_width_gets_a_suggestion(tmp_path: Path) -> None:
    [d] = lint(
        """
        def f(x):
            BLOCK = 512
            hidden = x.shape[1]
            assert hidden % BLOCK == 0
        """,
        tmp_path,
    )
    assert d.fix is not None and d.fix.applicability is Applicability.DISPLAY_ONLY
    assert "math.gcd(hidden, 512)" in d.fix.title


def test_chain_names_the_fallback_that_fails(tmp_path: Path) -> None:
    [d] = lint(
        """
        def f(w):
            ffn_dim = w.shape[-1]
            tile = 256 if ffn_dim % 256 == 0 else 128
            assert ffn_dim % tile == 0
        """,
        tmp_path,
    )
    assert "fallback chain" in d.message and "2880 % 128 = 64" in d.message


def test_negated_chain_quotes_the_fallback_the_width_takes(tmp_path: Path) -> None:
    # ``128 if h % 1024 != 0 else 1024``: 2880 is not a multiple of 1024, so
    # it takes 128, and the assert fails on 2880 % 128, not on 2880 % 1024
    [d] = lint(
        """
        def gather(x):
            hidden_size = x.shape[1]
            BLOCK_D = 128 if hidden_size % 1024 != 0 else 1024
            assert hidden_size % BLOCK_D == 0
        """,
        tmp_path,
    )
    assert "2880 % 128 = 64" in d.message and "2880 % 1024" not in d.message
    # the fix rewrites the branch that width takes, not the wide block
    assert d.fix is not None and "math.gcd(hidden_size, 128)" in d.fix.title
    assert any("math.gcd(hidden_size, 128)" in e.replacement for e in d.fix.edits)


def test_silent_when_every_listed_width_is_a_multiple(tmp_path: Path) -> None:
    assert not lint(
        """
        def f(x):
            hidden = x.shape[-1]
            head_dim = x.shape[-2]
            A = 32
            B = 16
            assert hidden % A == 0
            assert head_dim % B == 0
        """,
        tmp_path,
    )


def test_dimension_names_option(tmp_path: Path) -> None:
    code = """
        def f(x, n_embd):
            BLOCK = 1024
            assert n_embd % BLOCK == 0
        """
    assert not lint(code, tmp_path)
    [d] = lint(code, tmp_path, **{"dimension-names": ["n_embd"]})
    assert "`n_embd`" in d.message


def test_counterexamples_are_real_table_entries() -> None:
    # the table's own promise: the first width no block divides
    assert counterexample("hidden", [1024]) == HIDDEN[0]
    assert counterexample("intermediate", [64]).value == 3696  # type: ignore[union-attr]
    assert counterexample("head", [64]).value == 80  # type: ignore[union-attr]
    assert counterexample("head", [16]) is None
    for table in (HIDDEN, INTERMEDIATE, HEAD):
        assert all(d.where and d.value > 1 for d in table)


def test_gates_never_hide_a_finding() -> None:
    for path, _text, opened, closed in with_gates_open_and_closed(FIXED, CODE):
        assert [(d.span, d.message) for d in opened] == [(d.span, d.message) for d in closed], path



@pytest.mark.parametrize(
    "rule, relpath, imported",
    [
        (CODE, "fixed_block_divisibility/kernel_pkg/launch.py", "from .ops import tiled_quant_kernel\n"),
        ("SHD103", "floor_grid_drops_tail/decode_pkg/decode.py", "from .kernels import state_decode_kernel\n"),
    ],
)
def test_a_kernel_imported_in_another_function_is_found_whichever_definitions_are_kept(
    rule: str, relpath: str, imported: str
) -> None:
    """SHD102 and SHD103 follow no definitions: ``KernelFinder`` resolves a
    launch's kernel through the whole file's imports -- one inside a
    definition the gates' cut blanks included -- as with every gate closed."""
    path = CORPUS / relpath
    original = path.read_text(encoding="utf-8")
    text = original.replace(imported, "def _kernels():\n    " + imported)
    assert text != original
    found = []
    for gates in (True, False):
        config = Config(root=path.parent, select=(rule,))
        diags, errors = Engine(config, load_registry(), jobs=1, gates=gates).lint_text(text, path)
        assert not errors
        found.append(sorted((d.span, d.message) for d in diags))
    assert found[0] == found[1] and len(found[0]) == 1
