"""SHD503 double-scaled-padding: what a user sees (the pad, both
multiplications, the consequence), the three places the second
multiplication hides (same function, a helper's return, a consumer's
parameter), options, and the prefilter never hiding a finding."""

from __future__ import annotations

from pathlib import Path

from corpus_harness import CORPUS, diagnostics_for, lint_snippet, with_gates_open_and_closed

from checks.double_scaled_padding import DoubleScaledPadding
from linter.types import Diagnostic, Severity

FOLDER = CORPUS / "double_scaled_padding"
CODE = DoubleScaledPadding.code


def lint(code: str, tmp_path: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    return lint_snippet(code, CODE, tmp_path, gates, **options)


def test_message_names_the_pad_both_scalings_and_the_consequence() -> None:
    [d] = diagnostics_for(FOLDER)[FOLDER / "bad.py"]
    assert d.code == CODE and d.severity is Severity.WARNING
    assert "`pad_total`" in d.message and "`pad_per_rank * tp_size`" in d.message
    assert "`pad_total * tp_size`" in d.message
    notes = " ".join(n.message for n in d.notes)
    assert "RuntimeError" in notes and "scale once" in notes


def test_helper_return_and_consumer_parameter(tmp_path: Path) -> None:
    code = """
        def padding(rows, align, tp_size):
            pad = -(rows // tp_size) % align
            return pad * tp_size

        def take(w, extra_pad, tp_size):
            return w.narrow(0, 0, w.shape[0] + extra_pad * tp_size)

        def total(rows, align, tp_size):
            return rows + padding(rows, align, tp_size) * tp_size

        def load(w, rows, align, tp_size):
            pad_all = padding(rows, align, tp_size)
            return take(w, pad_all, tp_size)
        """
    found = lint(code, tmp_path)
    assert [d.span.line for d in found] == [10, 14]
    assert "`take` multiplies its parameter `extra_pad`" in found[1].message


def test_scaled_once_or_by_other_factors_is_silent(tmp_path: Path) -> None:
    assert not lint(
        """
        def f(rows, align, tp_size, ep_size, x):
            pad = (-rows % align) * tp_size
            a = pad * ep_size
            b = 2 * (-rows % 256)
            b *= 2
            pad_bytes = rows * x.element_size()
            return a + b + pad_bytes * tp_size
        """,
        tmp_path,
    )


def test_options_replace_defaults(tmp_path: Path) -> None:
    code = """
        def f(rows, align, shards):
            gap = (-rows % align) * shards
            return gap * shards
        """
    assert not lint(code, tmp_path)
    assert [d.span.line for d in lint(code, tmp_path, **{"factor-names": ["shards"], "value-names": ["gap"]})] == [4]


def test_gates_hide_nothing_on_the_corpus() -> None:
    fired = 0
    for f, text, opened, closed in with_gates_open_and_closed(FOLDER, CODE):
        assert opened == closed, f.name
        fired += len(closed)
    assert fired >= 5


def test_needles_follow_the_configured_names() -> None:
    text = "def f(gap, shards):\n    return gap * shards * shards\n"
    default, _ = DoubleScaledPadding.declared_needles(
        {k: o.default for k, o in DoubleScaledPadding.options.items()}
    )
    assert not default.match(text)
    configured, _ = DoubleScaledPadding.declared_needles({"value-names": ["gap"], "factor-names": ["shards"]})
    assert configured.match(text)
    everything, _ = DoubleScaledPadding.declared_needles({"value-names": ["*"]})
    assert everything.match(text)
