"""SHD401 repeated-budget-division and SHD501 padded-unpadded-width-mismatch:
what a user sees (messages naming their variables, severities, suggestions),
options, and the raw-text prefilter never hiding a finding."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from corpus_harness import CORPUS, corpus_files, diagnostics_for, project_roots

from checks.padded_unpadded_width_mismatch import PaddedUnpaddedWidthMismatch
from checks.repeated_budget_division import RepeatedBudgetDivision
from linter.config import Config, ConfigError, load_config
from linter.docs import REQUIRED_HEADINGS, sections
from linter.engine import Engine, check_text
from linter.facts import ProjectFacts
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic, Severity

BUDGET = CORPUS / "repeated_budget_division"
PADDING = CORPUS / "padded_unpadded_width_mismatch"


def lint(code: str, select: str, tmp_path: Path, **options: object) -> list[Diagnostic]:
    items = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items())
    config = Config(
        root=tmp_path,
        select=(select,),
        rule_options=((select, items),) if items else (),
    )
    diags, errors = Engine(config, load_registry(), jobs=1).lint_text(
        textwrap.dedent(code), tmp_path / "mod.py"
    )
    assert not errors
    return diags


# -- SHD401 -------------------------------------------------------------------------


def test_budget_message_names_budget_sizes_and_path() -> None:
    [d] = [d for d in diagnostics_for(BUDGET)[BUDGET / "bad.py"] if d.span.line == 10]
    assert d.code == "SHD401" and d.severity is Severity.ERROR
    assert "`cache_config.num_gpu_blocks`" in d.message
    assert "`dp_size`" in d.message and "`ep_size`" in d.message
    path = next(n.message for n in d.notes if n.message.startswith("path:"))
    assert "blocks_per_replica = cache_config.num_gpu_blocks // dp_size" in path
    assert "blocks_per_replica // ep_size" in path


def test_budget_suggestion_is_display_only_words() -> None:
    for d in diagnostics_for(BUDGET)[BUDGET / "bad.py"]:
        assert d.fix is not None
        assert d.fix.applicability is Applicability.DISPLAY_ONLY
        assert d.fix.edits == ()
        assert "once per parallel dimension" in d.fix.title
        assert "agree" in d.fix.title


def test_in_place_message_names_the_shared_field(tmp_path: Path) -> None:
    [d] = lint(
        """
        def shard(sched_cfg, attn_dp_size):
            sched_cfg.max_num_seqs //= attn_dp_size
        """,
        "SHD401",
        tmp_path,
    )
    assert "`sched_cfg.max_num_seqs`" in d.message and "`attn_dp_size`" in d.message
    assert "shared state" in d.message


def test_budget_silent_on_topology_and_single_splits(tmp_path: Path) -> None:
    assert not lint(
        """
        def f(tp_size, dp_size, cp_size, num_blocks, num_heads):
            attn_tp = tp_size // dp_size // cp_size
            heads = num_heads // tp_size // cp_size
            return attn_tp, heads, num_blocks // dp_size
        """,
        "SHD401",
        tmp_path,
    )


def test_budget_options_replace_defaults(tmp_path: Path) -> None:
    code = """
        def f(kv_pool_blocks, num_blocks, dp_size, replica_count, ep_size):
            a = kv_pool_blocks // dp_size // replica_count
            b = num_blocks // dp_size // ep_size
            return a, b
        """
    default = lint(code, "SHD401", tmp_path)
    assert [d.span.line for d in default] == [4]
    configured = lint(
        code,
        "SHD401",
        tmp_path,
        **{"budget-names": ["kv_pool_blocks"], "parallel-size-names": ["dp_size", "replica_count"]},
    )
    assert [d.span.line for d in configured] == [3]
    assert "`replica_count`" in configured[0].message


def test_budget_options_subproject_fires_only_on_configured_names() -> None:
    f = BUDGET / "options" / "custom_names.py"
    diags = diagnostics_for(BUDGET)[f]
    assert [d.span.line for d in diags] == [5]


def test_bad_option_value_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardlint.rules.SHD401]\nbudget-names = "num_blocks"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="budget-names"):
        load_config([tmp_path], load_registry())


# -- SHD501 -------------------------------------------------------------------------


def test_padding_message_names_both_widths_and_origins() -> None:
    [d] = diagnostics_for(PADDING)[PADDING / "bad.py"]
    assert d.code == "SHD501" and d.severity is Severity.WARNING
    assert "`output`" in d.message and "`expert_out`" in d.message
    assert "`hidden_padded = round_up(hidden, 256)`" in d.message
    assert "unpadded width `hidden` (read from `expert_out.shape`)" in d.message
    notes = " ".join(n.message for n in d.notes)
    assert "2880" in notes and "3072" in notes
    assert "output[..., :hidden]" in notes


def test_padding_uninitialised_tail_names_buffer_and_consumer(tmp_path: Path) -> None:
    [d] = lint(
        """
        import torch
        def f(act, weight):
            k_in = act.shape[-1]
            stage = torch.empty(act.shape[0], round_up(k_in, 128), device=act.device)
            stage[:, :k_in] = act
            return torch.mm(stage, weight)
        """,
        "SHD501",
        tmp_path,
    )
    assert d.span.line == 7
    assert "`stage`" in d.message and "`torch.mm`" in d.message
    assert any("stage[..., k_in:].zero_()" in n.message for n in d.notes)


def test_padding_silent_on_sliced_and_unpadded_names(tmp_path: Path) -> None:
    assert not lint(
        """
        import torch
        def f(y, hidden_unpadded, non_padded_width):
            m, h = y.shape
            out = torch.zeros(m, round_up(h, 256))
            out[:, :h].copy_(y)
            a = torch.empty(m, hidden_unpadded)
            b = torch.empty(m, non_padded_width)
            a.copy_(b)
            return out[:, :h]
        """,
        "SHD501",
        tmp_path,
    )


def test_padding_options_replace_defaults(tmp_path: Path) -> None:
    code = """
        import torch
        def f(x, hidden_aligned):
            m, hidden = x.shape
            a = torch.empty(m, hidden_aligned)
            a.copy_(x)
            b = torch.empty(m, round_up(hidden, 64))
            b.copy_(x)
        """
    assert [d.span.line for d in lint(code, "SHD501", tmp_path)] == [8]
    configured = lint(
        code, "SHD501", tmp_path, **{"padded-names": ["*_aligned"], "rounding-functions": ["x"]}
    )
    assert [d.span.line for d in configured] == [6]


# -- both ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", [RepeatedBudgetDivision, PaddedUnpaddedWidthMismatch])
def test_candidate_is_sound_on_the_corpus(rule: type) -> None:
    """Run the rule with both prefilters bypassed: wherever it fires, the
    prefilters must have let the file through."""
    registry = load_registry()
    d = CORPUS / rule.name.replace("-", "_")
    fired = 0
    for root in project_roots(d):
        own = (root / "pyproject.toml").is_file()
        config = load_config([root], registry) if own else Config(root=root)
        for f in corpus_files(root):
            text = f.read_text(encoding="utf-8")
            diags, errors = check_text(text, f.name, "m", [rule], config, ProjectFacts())
            assert not errors
            if any(x.code == rule.code for x in diags):
                fired += 1
                assert rule.candidate(text), f"text prefilter hides {f.name}"
                assert rule.candidate_tree(ast.parse(text), text), f"ast gate hides {f.name}"
    assert fired >= 4, "the corpus must exercise the rule"


def test_candidates_skip_files_that_cannot_match() -> None:
    heads_only = "def f(cfg, tp_size):\n    return cfg.num_attention_heads // tp_size\n"
    assert not RepeatedBudgetDivision.candidate(heads_only)
    no_parallel = "def f(num_blocks, page):\n    return num_blocks // page\n"
    assert not RepeatedBudgetDivision.candidate(no_parallel)
    padded_tokens = (
        "import torch\n"
        "def f(x, n):\n"
        "    out = torch.empty(n, 8)\n"
        "    out.copy_(x)\n"
    )
    assert not PaddedUnpaddedWidthMismatch.candidate(padded_tokens)
    padded = padded_tokens.replace("(n, 8)", "(n, round_up(k, 8))")
    assert PaddedUnpaddedWidthMismatch.candidate(padded)
    # the ast gate: a padded width and an allocation in one function
    assert PaddedUnpaddedWidthMismatch.candidate_tree(ast.parse(padded), padded)
    split_once = "def f(cfg, dp_size):\n    return cfg.num_blocks // dp_size\n"
    assert not RepeatedBudgetDivision.candidate_tree(ast.parse(split_once), split_once)
    split_twice = split_once.replace("dp_size\n", "dp_size // ep_size\n")
    assert RepeatedBudgetDivision.candidate_tree(ast.parse(split_twice), split_twice)


@pytest.mark.parametrize("rule", [RepeatedBudgetDivision, PaddedUnpaddedWidthMismatch])
def test_docs_have_every_heading_and_every_option(rule: type) -> None:
    secs = sections(rule)
    for h in REQUIRED_HEADINGS:
        assert secs.get(h), f"{rule.code} doc lacks '## {h}'"
    for opt in rule.options:
        assert f"`{opt}`" in secs["Options"]
