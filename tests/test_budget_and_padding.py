"""SHD401 repeated-budget-division and SHD501 padded-unpadded-width-mismatch:
what a user sees (messages naming their variables, severities, suggestions),
options, and the raw-text prefilter never hiding a finding."""

from __future__ import annotations

import ast
import random
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus_harness import CORPUS, corpus_files, diagnostics_for, parsed_corpus_files, project_roots
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import _textfunctions as tf
from checks.padded_unpadded_width_mismatch import PaddedUnpaddedWidthMismatch
from checks.repeated_budget_division import RepeatedBudgetDivision
from linter.config import Config, ConfigError, load_config
from linter.docs import REQUIRED_HEADINGS, sections
from linter.engine import Engine, check_text, scan_text
from linter.facts import ProjectFacts, mask_text, scope_of, scoped_tree
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


def _gates_pass(rule: type, text: str, rel: str, options: dict[str, object]) -> str | None:
    """Which of the three prefilter gates hides ``text`` (None: none does),
    as the engine runs them (``scan_text``: the ast gate and the rule's own
    collector each read their scope of the file); the facts gate sees what
    that collector records."""
    if not rule.candidate(text):
        return "text"
    [name] = rule.facts
    collector = load_registry().collectors[name]
    opts = {k: o.default for k, o in rule.options.items()}
    opts.update(options)
    res = scan_text(text, rel, "m", [collector], [rule], options={rule.code: opts})
    if rule.code not in (res.rules or ()):
        return "ast"
    data = res.facts.get(name)
    facts = ProjectFacts({name: {"m": data}} if data is not None else {})
    if not rule.candidate_facts("m", rel, facts, opts):
        return "facts"
    return None


def _unscoped(rule: type) -> type:
    """``rule`` reading the whole file (no ``ast_scope``): what the scoped
    readers and check must agree with."""
    return type(rule.__name__, (rule,), {"ast_scope": classmethod(lambda cls, text, options: None)})


# Options under which both rules fire far more often than by default (every
# name a budget; every whole dimension a padded width): the gates must stay
# sound for configured names, not only the defaults.
BROAD = {
    "SHD401": {"budget-names": ("*",), "parallel-size-names": ("*size*", "*world*", "*_dp*")},
    "SHD501": {
        "padded-names": ("*",),
        "rounding-functions": ("round_up", "align", "cdiv", "max", "min"),
    },
}


@pytest.mark.parametrize("broad", [False, True], ids=["configured", "broad"])
@pytest.mark.parametrize("rule", [RepeatedBudgetDivision, PaddedUnpaddedWidthMismatch])
def test_candidate_is_sound_on_the_corpus(rule: type, broad: bool) -> None:
    """Run the rule with every prefilter bypassed: wherever it fires, the
    text, ast and facts gates must all have let the file through, under the
    folder's own options and under broad ones."""
    registry = load_registry()
    fired = 0
    for d in (BUDGET, PADDING):
        for root in project_roots(d):
            own = (root / "pyproject.toml").is_file()
            config = load_config([root], registry) if own else Config(root=root)
            options = dict(config.options_for(rule.code))
            if broad:
                options.update(BROAD[rule.code])
                config = Config(
                    root=root, rule_options=((rule.code, tuple(options.items())),)
                )
            for f in corpus_files(root):
                text = f.read_text(encoding="utf-8")
                diags, errors = check_text(text, f.name, "m", [_unscoped(rule)], config, ProjectFacts())
                assert not errors
                scoped, _ = check_text(text, f.name, "m", [rule], config, ProjectFacts())
                assert scoped == diags, f"the scoped check of {f.name} differs ({rule.code})"
                if any(x.code == rule.code for x in diags):
                    fired += 1
                    hidden = _gates_pass(rule, text, f.name, options)
                    assert hidden is None, f"the {hidden} gate hides {f.name} ({rule.code})"
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
    # the ast gate: the copy's source has no width the function can see
    assert not PaddedUnpaddedWidthMismatch.candidate_tree(ast.parse(padded), padded)
    seen = padded.replace("    out = ", "    k = x.shape[-1]\n    out = ")
    assert PaddedUnpaddedWidthMismatch.candidate_tree(ast.parse(seen), seen)
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


def test_facts_gates_apply_the_effective_options() -> None:
    """The facts gates keep a file exactly when the configured names can make
    the rule fire there: defaults skip it, the configured names keep it."""
    # (the text gate wants divisors named like a default parallel size)
    budget = (
        "def f(kv_pool_blocks, replica_dp_size, dp_size):\n"
        "    return kv_pool_blocks // dp_size // replica_dp_size\n"
    )
    assert _gates_pass(RepeatedBudgetDivision, budget, "a.py", {}) == "facts"
    configured = {"budget-names": ("kv_pool_blocks",), "parallel-size-names": ("dp_size", "replica_*")}
    assert _gates_pass(RepeatedBudgetDivision, budget, "a.py", configured) is None
    padding = (
        "import torch\n"
        "def f(x, hidden_aligned):\n"
        "    m, hidden = x.shape\n"
        "    a = torch.empty(m, hidden_aligned)\n"
        "    a.copy_(x)\n"
    )
    assert _gates_pass(PaddedUnpaddedWidthMismatch, padding, "a.py", {}) == "facts"
    aligned = {"padded-names": ("*_aligned",)}
    assert _gates_pass(PaddedUnpaddedWidthMismatch, padding, "a.py", aligned) is None


# -- the gates' reasoning -----------------------------------------------------------


@pytest.mark.parametrize("rule", [RepeatedBudgetDivision, PaddedUnpaddedWidthMismatch])
def test_collector_sees_every_file_the_text_gate_admits(rule: type) -> None:
    """Names match case-insensitively, so the text gate lower-cases; the
    collector's needles are that same test, or an upper-case file would
    reach libcst unjudged by the facts gate."""
    [name] = rule.facts
    collector = load_registry().collectors[name]
    texts = [f.read_text(encoding="utf-8") for d in (BUDGET, PADDING) for f in corpus_files(d)]
    texts += [t.upper() for t in texts]
    assert sum(rule.candidate(t) for t in texts) >= 15
    for t in texts:
        assert collector.needles.match(t) == rule.candidate(t)


def test_upper_case_files_are_judged_by_the_facts_gate() -> None:
    for rule, d in ((RepeatedBudgetDivision, BUDGET), (PaddedUnpaddedWidthMismatch, PADDING)):
        text = (d / "edge_gate_upper_case.py").read_text(encoding="utf-8")
        assert _gates_pass(rule, text, "a.py", {}) is None
    lookalike = (BUDGET / "edge_gate_upper_case_lookalike.py").read_text(encoding="utf-8")
    assert _gates_pass(RepeatedBudgetDivision, lookalike, "a.py", {}) == "facts"
    configured = {"budget-names": ("blocks_per_*",)}
    assert _gates_pass(RepeatedBudgetDivision, lookalike, "a.py", configured) is None


def test_gate_lookalikes_stop_before_libcst() -> None:
    """Every function of these files has the ingredients the old per-function
    gates asked for, and none can fire (the corpus markers say so)."""
    budget = (BUDGET / "edge_gate_lookalikes.py").read_text(encoding="utf-8")
    assert _gates_pass(RepeatedBudgetDivision, budget, "a.py", {}) == "ast"
    padding = (PADDING / "edge_gate_lookalikes.py").read_text(encoding="utf-8")
    assert _gates_pass(PaddedUnpaddedWidthMismatch, padding, "a.py", {}) == "facts"
    # a padded name pairs through the stems of the pattern it matches
    paired = padding.replace("m, k = x.shape", "m, hidden = x.shape")
    assert _gates_pass(PaddedUnpaddedWidthMismatch, paired, "a.py", {}) is None


def test_budget_gate_follows_local_derivations() -> None:
    ok = "def f(num_blocks, dp_size, ep_size):\n    a = num_blocks // dp_size\n{}"
    # through copies, clamps, sums and branches the split is still seen ...
    for tail in (
        "    b = max(1, a)\n    c = b + 1\n    return c // ep_size\n",
        "    if a:\n        b = -a\n    else:\n        b = 0\n    return cdiv(b, ep_size)\n",
        "    for _ in range(2):\n        a //= ep_size\n",
    ):
        assert _gates_pass(RepeatedBudgetDivision, ok.format(tail), "a.py", {}) is None
    # ... not through an opaque call, a subscript or a modulo
    for tail in (
        "    b = opaque(a)\n    return b // ep_size\n",
        "    b = [a][0]\n    return b // ep_size\n",
        "    b = a % 7\n    return b // ep_size\n",
    ):
        assert _gates_pass(RepeatedBudgetDivision, ok.format(tail), "a.py", {}) == "ast"


def test_gates_read_arguments_as_the_rules_do(tmp_path: Path) -> None:
    """Spellings where the rule reads an argument by position in the source
    (``args[0]`` of libcst, keywords and stars included): it fires, so the
    gates must let the file through."""
    head = "import torch\n\n\ndef f(x):\n    m, hidden = x.shape\n"
    stored = (
        "def f(self, dp_size):\n"
        "    self.cfg = replace(**self.cfg, num_blocks=self.cfg.num_blocks // dp_size)\n"
    )
    copy = "    a.copy_(x)\n"
    cases = [
        (PaddedUnpaddedWidthMismatch, f"{head}    a = torch.empty(m, np.int(x=round_up(hidden, 8)))\n{copy}"),
        (PaddedUnpaddedWidthMismatch, f"{head}    a = torch.empty(size=(m, *hidden_padded))\n{copy}"),
        (RepeatedBudgetDivision, stored),
    ]
    for rule, text in cases:
        config = Config(root=tmp_path, select=(rule.code,))
        diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
        assert not errors and [d.code for d in diags] == [rule.code], text
        assert _gates_pass(rule, text, "a.py", {}) is None, text


# Random functions built from the statements and expressions each rule
# follows (and some it does not): wherever the rule fires with every gate
# open, the ast and facts gates must let that function through.


def _budget_function(r: random.Random) -> str:
    names = ["num_blocks", "nb", "x", "self.num_blocks", "cfg.num_blocks", "g"]
    sizes = ["dp_size", "ep_size", "self.tp_size", "get_dp_size()", "k"]

    def expr(d: int = 0) -> str:
        if d > 2 or r.random() < 0.3:
            return r.choice([*names, "1", "foo()"])
        e, s = expr(d + 1), r.choice(sizes)
        return r.choice([
            f"{e} // {s}", f"{e} / {s}", f"cdiv({e}, {s})", f"max(1, {e})", f"({e} + 1)",
            f"({e} * 2)", f"-{e}", f"h({e})", f"({e} % 3)", f"{e}[0]", f"({e} if c else 1)",
            f"int({e})", f"({e} * {s})", f"{e} // ({s} * 2)",
        ])

    def block(n: int, ind: str, depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            t, s, c = r.choice(names), r.choice(sizes), r.randrange(12 if depth < 2 else 8)
            if c < 3:
                out.append(f"{ind}{t} = {expr()}")
            elif c == 3:
                out.append(f"{ind}{t} //= {s}")
            elif c == 4:
                out.append(f"{ind}{t}: int = {expr()}")
            elif c == 5:
                out.append(f"{ind}cfg.override(num_blocks={expr()})")
            elif c == 6:
                out.append(f"{ind}self.cfg = replace(self.cfg, num_blocks={expr()})")
            elif c == 7:
                out.append(f"{ind}use({expr()})")
            else:
                out.append(ind + r.choice(["if c:", "for i in r:", "with m:", "def inner():"]))
                out += block(r.randint(1, 3), ind + "    ", depth + 1)
        return out

    head = ["    global g"] if r.random() < 0.2 else []
    body = head + block(r.randint(2, 6), "    ", 0)
    return "def f(self, cfg, c, r, num_blocks, nb, x, dp_size, ep_size, k):\n" + "\n".join(body)


def _padding_function(r: random.Random) -> str:
    tensors = ["a", "b", "y", "self.buf"]
    widths = ["h", "h", "h", "h", "hidden", "self.h", "hp", "h_padded", "hidden_padded", "H"]

    def width() -> str:
        w = r.choice(widths)
        return r.choice([
            w, f"round_up({w}, 256)", f"align({w}, 64)", f"cdiv({w}, 64) * 64",
            f"({w} + 127) // 128 * 128", f"({w} + n - 1) // n * n", f"int(round_up({w}, 8))",
            f"foo({w}, 3)", "x.shape[-1]",
        ])

    def alloc(padded: bool = False) -> str:
        w = width()
        if padded:
            base = r.choice(["h", "h", "hidden", "self.h"])
            w = r.choice([
                f"round_up({base}, 256)", f"align({base}, 64)", f"cdiv({base}, 64) * 64",
                f"({base} + 127) // 128 * 128", f"int(round_up({base}, 8))", "h_padded", "hp",
            ])
        dims = ", ".join(["m"] * (r.random() < 0.7) + [w])
        return r.choice([
            f"torch.empty({dims})", f"torch.zeros({dims})", f"torch.empty(({dims}))",
            f"torch.empty({dims})", f"torch.zeros({dims})",
            f"x.new_empty({dims})", f"torch.empty_like({r.choice(tensors)})",
            f"torch.zeros(size=({dims}))", f"torch.full(({dims}), 0)", f"empty({dims})",
            f"tl.zeros({dims})",
        ])

    # mostly one buffer and one other side, so that they meet
    pad = r.choice(tensors)
    other = r.choice(["x", "x", *(t for t in tensors if t != pad)])

    def block(n: int, ind: str, depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            t = pad if r.random() < 0.7 else r.choice(tensors)
            u = other if r.random() < 0.7 else r.choice([*tensors, "x"])
            w = r.choice(widths)
            c = r.randrange(16 if depth < 2 else 15)
            out.append(ind + [
                f"{t} = {alloc()}", f"{w} = {width()}", f"m, {w} = {u}.shape",
                f"{w} = {u}.shape[-1]", f"{w} = {u}.size(1)",
                f"{t}.{r.choice(['copy_', 'add_', 'mul_'])}({u})",
                f"{u}.{r.choice(['copy_', 'add_', 'mul_'])}({t})", f"{t} += {u}",
                f"torch.add({t}, {u}, out={r.choice([t, u])})", f"{t}[:, :{w}] = {u}",
                f"{t}[..., {w}:] = 0", f"z = torch.matmul({t}, {u})", f"{t}.sum()",
                f"{t}[:, :{w}].copy_({u})", f"{t} = {u}", "if c:",
            ][c])
            if c == 15:
                out += block(r.randint(1, 2), ind + "    ", depth + 1)
        return out

    head = [r.choice(["m, h = x.shape", "h = x.shape[-1]", "m, hidden = x.shape", "h = x.size(-1)"])]
    if other != "x" and r.random() < 0.7:
        head.append(f"{other} = torch.{r.choice(['empty', 'zeros'])}(m, {r.choice(widths)})")
    head.append(f"{pad} = {alloc(padded=r.random() < 0.7)}")
    body = ["    " + s for s in head] + block(r.randint(1, 4), "    ", 0)
    return "def f(self, x, a, b, c, m, n, h, hidden, hp, h_padded, hidden_padded, H):\n" + "\n".join(body)


_RANDOM = {
    "SHD401": ("g = 1\n", _budget_function, 80, [
        {"budget-names": ("*blocks*", "nb", "x", "g"), "parallel-size-names": ("*_size", "k")},
        {"budget-names": ("num_blocks",), "parallel-size-names": ("dp_size", "ep_size")},
        {},
    ]),
    "SHD501": ("import torch\n", _padding_function, 150, [
        {},
        {"padded-names": ("*",), "rounding-functions": ("round_up", "cdiv", "max")},
        {"padded-names": ("*_*", "h*"), "rounding-functions": ("foo",)},
        {"padded-names": ("hp", "*_padded"), "rounding-functions": ("align",)},
    ]),
}


@pytest.mark.parametrize("rule", [RepeatedBudgetDivision, PaddedUnpaddedWidthMismatch])
def test_gates_are_sound_on_random_functions(rule: type, tmp_path: Path) -> None:
    head, make, count, option_sets = _RANDOM[rule.code]
    r = random.Random(rule.code)
    functions = [make(r) for _ in range(count)]
    # one file for the rule (one libcst parse per option set), one per
    # function for the gates
    text = head + "".join(f"\n\n{f}\n" for f in functions)
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.parse(text).body[1:]]
    assert len(spans) == count
    [name] = rule.facts
    collector = load_registry().collectors[name]
    fired = 0
    for extra in option_sets:
        options = {k: o.default for k, o in rule.options.items()} | extra
        config = Config(root=tmp_path, rule_options=((rule.code, tuple(options.items())),))
        diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
        assert not errors
        lines = {d.span.line for d in diags if d.code == rule.code}
        for f, (first, last) in zip(functions, spans):
            if not any(first <= line <= last for line in lines):
                continue
            fired += 1
            alone = f"{head}\n\n{f}\n"
            tree = ast.parse(alone)
            facts = ProjectFacts({name: {"m": collector.collect(tree, alone, "m", "m.py")}})
            if _text_visible(rule, options):
                assert rule.candidate(alone), alone
            assert rule.candidate_tree(tree, alone), alone
            assert rule.candidate_facts("m", "m.py", facts, options), (extra, alone)
    assert fired >= 25, "the random functions must exercise the rule"


def _text_visible(rule: type, options: dict[str, object]) -> bool:
    """Whether the text gate must see every finding under ``options``: the
    names the docstrings ask of configured names (the text gate runs before
    options are known; ``k``, ``nb``, ``hp`` or ``*`` are not such names)."""
    if rule is RepeatedBudgetDivision:
        budgets = ("blocks", "budget", "memory", "bytes", "max_num_", "max_total_", "max_running")
        sizes = ("dp_size", "ep_size", "tp_size", "pp_size", "cp_size", "world_size", "parallel_size")
        return all(any(w in b.lower() for w in budgets) for b in options["budget-names"]) and all(
            any(w in z.lower() for w in sizes) for z in options["parallel-size-names"]
        )
    words = ("round_up", "round_to", "align", "ceil_to", "next_multiple_of")
    return all(("padded" in p.lower() or "aligned" in p.lower()) for p in options["padded-names"]) and all(
        any(w in f for w in words) for f in options["rounding-functions"]
    )


# -- the gates skip definitions by their lines ------------------------------------
# Both ast gates enter only the definitions whose lines hold a word every
# finding needs (an allocator's name; a division or a ``*div*`` call). The
# shapes must be exactly those of the full walk, also for functions nested in
# classes, ``try``/``except``, ``match`` cases and other functions.

_NESTED = '''
import torch

try:
    import extra
except ImportError:
    class Fallback:
        def f(self, x, h):
            m, h = x.shape
            a = torch.empty(m, round_up(h, 8))
            a.copy_(x)
            return self.num_blocks // self.dp_size // self.ep_size

match mode:
    case "a":
        def g(x, hidden_padded, num_blocks, dp_size, ep_size):
            def inner():
                m, hidden = x.shape
                b = torch.zeros(m, hidden_padded)
                b += x
                per = num_blocks // dp_size
                return cdiv(per, ep_size)
            return inner
    case _:
        def plain(x):
            return x + 1
'''


def _full_and_pruned(module: object, shape: object, text: str) -> tuple[list, list]:
    from checks._helpers import function_bodies_at

    tree = ast.parse(text)
    every = range(1, text.count("\n") + 2)
    full = [r for b in function_bodies_at(tree, every) for r in shape(b)]
    hits = module.lines_with(text, module._ALLOC_WORDS if hasattr(module, "_ALLOC_WORDS") else module._DIV_WORDS)  # type: ignore[attr-defined]
    pruned = [r for b in function_bodies_at(tree, hits) for r in shape(b)]
    return full, pruned


def test_gates_skip_only_definitions_that_cannot_hold_a_finding() -> None:
    import checks.padded_unpadded_width_mismatch as pad
    import checks.repeated_budget_division as bud

    def budget_rows(body: list) -> list:
        s = bud._function_shape(body)
        return [s] if s is not None else []

    texts = [_NESTED] + [f.read_text(encoding="utf-8") for d in (BUDGET, PADDING) for f in corpus_files(d)]
    rng = random.Random(7)
    texts += ["import torch\n\n" + _padding_function(rng) for _ in range(40)]
    texts += [_budget_function(rng) for _ in range(40)]
    kept = 0
    for text in texts:
        for module, shape in ((pad, pad._function_shape), (bud, budget_rows)):
            full, pruned = _full_and_pruned(module, shape, text)
            assert pruned == full, text
            kept += bool(full)
    assert kept >= 40
    tree = ast.parse(_NESTED)
    assert pad.padding_shapes(tree, _NESTED) and bud.budget_shapes(tree, _NESTED)


def test_padding_text_gate_needs_a_lower_case_allocator_call() -> None:
    # the rule only knows lower-case allocators: an upper-case lookalike
    # (a class named `...Full(`) no longer admits a file on its own
    text = (
        "import torch\n"
        "def f(x, hidden_padded):\n"
        "    m, hidden = x.shape\n"
        "    a = torch.empty(m, hidden_padded)\n"
        "    a.copy_(x)\n"
    )
    assert PaddedUnpaddedWidthMismatch.candidate(text)
    assert not PaddedUnpaddedWidthMismatch.candidate(text.replace("torch.empty(", "torch.Empty("))
    assert not PaddedUnpaddedWidthMismatch.candidate(text.replace("torch.empty(", "MakeFull("))


# -- the text gates see every shape the rules fire on -----------------------------
# Each snippet fires with the default options; older text gates rejected each
# one (a lost finding). Original code, written for these tests.

_PAD_HEAD = "import torch\n\n\ndef f(x, n):\n    m, h = x.shape\n"
_TEXT_HOLES = [
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = (h + 127) // 128 * 128\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, ceil_div(h, n) * n)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, n * ceildiv(h, n))\n    a.add_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, div_ceil(h, 64) * 64)\n    a += x\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = int(round_up(h, 8))\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = (round_up(h, 8))\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = int(\n        round_up(h, 8)\n    )\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    w = hp = round_up(h, 8)\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.empty((m, int(round_up(h, 8))))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, _align(h, 16))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.randn(m, round_up(h, 8))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.rand (m, round_up(h, 8))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.empty(m, round_up(h, 8))\n    a[:, :h] = x\n    return a.max()\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.empty(m, round_up(h, 8))\n    a[:, :h] = x\n    return torch.max(a)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    torch.abs(x, out = a)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, x_padded)\n    a.copy_(x)\n".replace("x_padded", "h_padded")),
    # the allocation scan reads which call and which argument a name is
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    self.hp = round_up(h, 8)\n    a = torch.zeros(m, self.hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = x.new_zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = empty(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = torch . zeros(m, hp)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = torch.zeros(size=(m, hp), dtype=x.dtype)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = torch.zeros(m, ( hp ), device=x.device)\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = torch.zeros(\n        m,\n        hp,\n    )\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    hp = round_up(h, 8)\n    a = torch.empty_strided((m, hp), (hp, 1))\n    a.copy_(x)\n"),
    # the gate's reading of one function: the buffer's binding and its uses,
    # across comments, line breaks, dotted names and parentheses
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    # the buffer\n    a = torch.zeros(m, round_up(h, 8))\n    # whole\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = b = torch.zeros(m, round_up(h, 8))\n    b.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    n . buf = torch.zeros(m, round_up(h, 8))\n    n . buf . copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    x.copy_(a)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    n.a = torch.zeros(m, round_up(h, 8))\n    x += n.a\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    n.a = torch.zeros(m, round_up(h, 8))\n    torch.add(x, x, out=n.a)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.empty(m, round_up(h, 8))\n    a[:, :h] = x\n    return torch.mm(\n        a,\n        n,\n    )\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    a.copy_(  # whole\n        x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = (\n        torch.zeros(m, round_up(h, 8))\n    )\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    b = torch.empty_like(a)\n    b.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = \\\n        torch.zeros(m, round_up(h, 8))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    (a\n        .copy_(x))\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    t = 1,\n    a = torch.zeros(m, round_up(h, 8))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    if n: a = torch.zeros(m, round_up(h, 8))\n    a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    n = 1; a = torch.zeros(m, round_up(h, 8)); a.copy_(x)\n"),
    (PaddedUnpaddedWidthMismatch, _PAD_HEAD + "    a = torch.zeros(m, round_up(h, 8))\n    x.copy_(\n        a,\n    )\n"),
    (RepeatedBudgetDivision, "def f(cfg, ep_size):\n    return (cfg.num_blocks * 2) / get_dp_size() // ep_size\n"),
    (RepeatedBudgetDivision, "def f(num_blocks, dp_size, ep_size):\n    return ceildiv(ceildiv(num_blocks, dp_size), ep_size)\n"),
    (RepeatedBudgetDivision, "def f(num_blocks, dp_size, ep_size):\n    return div_ceil(div_round_up(num_blocks, dp_size), ep_size)\n"),
    (RepeatedBudgetDivision, "def f(cfg, dp_size, ep_size):\n    n = cfg.num_gpu_blocks\n    a = n // dp_size\n    return a // ep_size\n"),
    (RepeatedBudgetDivision, "def f(cfg, dp_size, ep_size):\n    n = cfg.num_blocks\n    a = n // cfg.groups[0].dp_size\n    return cdiv(a, (\n        ep_size))\n"),
    (RepeatedBudgetDivision, "def f(self):\n    self.max_num_seqs = self.max_num_seqs // get_dp_size()\n"),
    # a bracketed callee names the ceiling division too
    (RepeatedBudgetDivision, "def f(num_blocks, dp_size, ep_size):\n    a = (cdiv)(num_blocks, dp_size)\n    return ( util.cdiv )(a, ep_size)\n"),
]


@pytest.mark.parametrize("rule,text", _TEXT_HOLES)
def test_text_gates_see_every_shape_the_rules_fire_on(rule: type, text: str, tmp_path: Path) -> None:
    config = Config(root=tmp_path, select=(rule.code,))
    diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
    assert not errors and rule.code in [d.code for d in diags], text
    assert _gates_pass(rule, text, "a.py", {}) is None, text


_ONE_FUNCTION_LOOKALIKES = {
    # every word the file-wide test asks for is in the file, but no function
    # holds a padded buffer bound to a name that meets an exchange there
    "in another function": "def alloc(m, h):\n    return torch.zeros(m, round_up(h, 8))\n\n\n"
    "def merge(x, y):\n    m, h = x.shape\n    y.copy_(x)\n",
    "returned": "def f(x, y):\n    m, h = x.shape\n    y.copy_(x)\n    return torch.empty(m, round_up(h, 8))\n",
    "a keyword's value": "def f(x, y):\n    m, h = x.shape\n    y.copy_(x)\n"
    "    return run(x, out_buf=torch.empty(m, round_up(h, 8)))\n",
    "handed to a kernel": "def f(x, y):\n    m, h = x.shape\n    buf = torch.empty(m, round_up(h, 8))\n"
    "    kernel[(m,)](x, buf, h)\n    y.copy_(x)\n    return buf[:, :h]\n",
    "its shape read": "def f(x, y):\n    m, h = x.shape\n    buf = torch.zeros(m, round_up(h, 8))\n"
    "    n = buf.shape[-1]\n    y += x\n    return n\n",
    "a tuple's element": "def f(x, y):\n    m, h = x.shape\n    a, b = torch.zeros(m, round_up(h, 8)), x\n    y.copy_(x)\n",
    "zeroed, written, consumed": "def f(x, w, y):\n    m, h = x.shape\n    a = torch.zeros(m, round_up(h, 8))\n"
    "    a[:, :h] = x\n    y += x\n    return torch.mm(a, w)\n",
}


@pytest.mark.parametrize("name", sorted(_ONE_FUNCTION_LOOKALIKES))
def test_padding_text_gate_needs_buffer_and_exchange_in_one_function(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file-wide test admits each of these, the per-function reading
    does not, and the rule indeed finds nothing there."""
    text = "import torch\n\n\n" + _ONE_FUNCTION_LOOKALIKES[name]
    config = Config(root=tmp_path, select=("SHD501",))
    diags, errors = check_text(text, "m.py", "m", [PaddedUnpaddedWidthMismatch], config, ProjectFacts())
    assert not errors and not diags
    assert not PaddedUnpaddedWidthMismatch._text_gate(text)
    monkeypatch.setattr(PaddedUnpaddedWidthMismatch, "_function_gate", classmethod(lambda cls, t: True))
    assert PaddedUnpaddedWidthMismatch._text_gate(text)


def test_padding_text_gate_reads_names_as_the_compiler_does() -> None:
    """``ａ`` (full-width) is the name ``a`` for the compiler: a use spelled
    so must not hide the exchange; other characters outside ASCII (comments,
    strings) change nothing."""
    head = "import torch\n\n\ndef f(x):\n    m, h = x.shape\n"
    spelled = head + "    a = torch.zeros(m, round_up(h, 8))\n    \uff41.copy_(x)\n"
    assert "a" == __import__("unicodedata").normalize("NFKC", "\uff41")
    assert PaddedUnpaddedWidthMismatch._text_gate(spelled)
    noted = head + "    # \u2192 \u5bbd\u5ea6\n    a = torch.zeros(m, round_up(h, 8))\n    run(a)\n    x.copy_(x)\n"
    assert not tf.ascii_lookalikes("# \u2192 \u5bbd\u5ea6") and not PaddedUnpaddedWidthMismatch._text_gate(noted)


_BOUND = [
    ("    a = torch.empty(n)", "a"),
    ("    self.buf = torch.empty(n)", "buf"),
    ("    a = x.new_zeros(n)", "a"),
    ("    a = x . y . new_zeros(n)", "a"),
    ("    a = (\n        torch.empty(n))", "a"),
    ("    # a comment line\n    a = torch.empty(n)", "a"),
    ("    a: T = torch.empty(n)", "T"),  # not bound by the rule: more is fine
    ("    return torch.empty(n)", None),
    ("    f(out=torch.empty(n))", None),
    ("    f(a,\n      out=torch.empty(n))", ""),  # after a line break: a tuple statement?
    ("    f(\n        out=torch.empty(n))", None),
    ("    a, b = torch.empty(n), 1", None),
    ("    a = 1, torch.empty(n)", None),
    ("    a += torch.empty(n)", None),
    ("    a == torch.empty(n)", None),
    ("    a = b and torch.empty(n)", None),
    ("    a = b = torch.empty(n)", ""),  # chained: unsure
    ("    t = 1,\n    a = torch.empty(n)", ""),  # a tuple statement or an argument
    ("    f(a,  # note\n      out=torch.empty(n))", ""),  # a comment after code
    ("    a = f()[0].new_zeros(n)", ""),  # a receiver not read here
    ("    a[0] = torch.empty(n)", ""),
    ("    a = \\\n        torch.empty(n)", ""),
    ("    \u00e9 = torch.empty(n)", ""),  # (``e\u0301`` may stand for it elsewhere)
]


@pytest.mark.parametrize("line,want", _BOUND)
def test_padding_text_gate_reads_the_target_an_allocation_is_bound_to(line: str, want: str | None) -> None:
    """``_bound_name``: the last name of the target an allocation is bound to
    whole (as ``_on_assign`` binds), None where it surely is not, "" where a
    comment, a continuation or a layout keeps the text from telling."""
    from checks import padded_unpadded_width_mismatch as pad

    text = "def f(x, n):\n" + line + "\n"
    [(at, _, _)] = pad._allocation_sites(text)
    assert pad._bound_name(text, at) == want


def _relayout(r: random.Random, function: str) -> str:
    """The same function (the same ``ast``) laid out otherwise: comment
    lines and trailing comments, arguments over lines, blanks around dots,
    line continuations, parenthesised values."""
    import re

    lines = function.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        ind = line[: len(line) - len(line.lstrip())]
        body = line.strip()
        tail = ""
        for _ in range(r.randint(0, 2)):
            k = r.randrange(5)
            if k == 0:
                body = re.sub(r"(?<=\w)\.(?=[A-Za-z_])", lambda m: r.choice([".", " .", ". ", " . "]), body)
            elif k == 1 and "(" in body:
                i = body.index("(")
                head, rest = body[: i + 1], body[i + 1 :]
                pad = "\n" + ind + " " * 8
                body = head + pad + rest.replace(", ", "," + pad)
            elif k == 2 and re.match(r"[\w.]+ = ", body) and not body.endswith(":"):
                name, value = body.split(" = ", 1)
                body = name + " = (" + value + ")" if r.random() < 0.5 else name + " = \\\n" + ind + "    " + value
            elif k == 3:
                out.append(ind + "# " + r.choice(["note", "a, b", "out=y", "x.copy_(y)"]))
            elif k == 4 and not body.endswith(":"):
                tail = "  # " + r.choice(["tail", "(", "a,"])
        body += tail
        out.append(ind + body)
    return "\n".join(out)


def test_padding_text_gate_is_sound_on_relaid_functions(tmp_path: Path) -> None:
    """Every random function the rule fires on, laid out otherwise (same
    ``ast``), is still admitted by the text gate, and fires alike."""
    r = random.Random("relayout")
    rule = PaddedUnpaddedWidthMismatch
    functions = [_padding_function(r) for _ in range(400)]
    relaid = [_relayout(r, f) for f in functions]
    for f, g in zip(functions, relaid):
        assert ast.dump(ast.parse(f)) == ast.dump(ast.parse(g)), g
    config = Config(root=tmp_path, select=(rule.code,))
    fired = []
    for batch in (functions, relaid):
        text = "import torch\n" + "".join(f"\n\n{f}\n" for f in batch)
        spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.parse(text).body[1:]]
        diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
        assert not errors
        lines = {d.span.line for d in diags}
        fired.append([any(a <= line <= b for line in lines) for a, b in spans])
    assert fired[0] == fired[1]
    assert sum(fired[1]) >= 25, "the random functions must exercise the rule"
    for g, hit in zip(relaid, fired[1]):
        if hit:
            assert rule._text_gate(f"import torch\n\n\n{g}\n"), g


def test_text_gates_skip_lookalikes() -> None:
    """What the text gates can tell apart without a parse: a padded word in
    a comment or a string far from any allocation, a rounded value bound to
    a name no allocation uses, a keyword `=` inside a call; a budget with a
    parallel size that is not a divisor."""
    pad = (
        "import torch\n\n\ndef f(x, n):\n"
        "    # the padded width is handled by the caller\n"
        "    grid = round_up(n, 8)\n"
        "    a = torch.zeros(n, x.shape[-1])\n"
        "    a.copy_(x)\n"
        "    launch(grid=round_up(n, 8), hp=round_up(n, 4))\n"
        "    return a, f'hp={round_up(n, 8)}'\n"
    )
    assert not PaddedUnpaddedWidthMismatch.candidate(pad)
    assert PaddedUnpaddedWidthMismatch.candidate(pad.replace("zeros(n,", "zeros(grid,"))
    # another module's allocator (Triton, NumPy) or a longer name is not a
    # tracked allocation; a rounded name that is not a whole dimension (a
    # keyword other than `size=`, a product, a call's attribute) pads nothing
    head = "import torch\n\n\ndef f(x, n):\n    m, h = x.shape\n    hp = round_up(h, 8)\n"
    tail = "    a.copy_(x)\n"
    shapes = {
        "tl.zeros([m, hp])": False,
        "np.empty((m, hp))": False,
        "my_empty(m, hp)": False,
        "x.renew_zeros(m, hp)": False,
        "torch.zeros(m, n, dtype=hp)": False,
        "torch.zeros(m, n * hp)": False,
        "torch.zeros(m, g().hp)": False,
        "torch.zeros(m, -hp)": False,
        "torch.zeros(m, hp)": True,
        "torch.zeros(m, cfg.hp)": True,
        "x.new_empty(m, hp)": True,
        "torch.ones((m, *hp))": True,
    }
    for call, admitted in shapes.items():
        text = head + f"    a = {call}\n" + tail
        assert PaddedUnpaddedWidthMismatch.candidate(text) is admitted, call
    budget = (
        "def f(cfg, tp_size, dp_size):\n"
        "    heads = cfg.num_heads // tp_size\n"
        "    return cfg.num_blocks * dp_size, heads\n"
    )
    assert not RepeatedBudgetDivision.candidate(budget)
    assert RepeatedBudgetDivision.candidate(budget.replace("* dp_size", "// dp_size // tp_size"))
    # two divisions in one function, but only one divides a budget (the
    # other divides heads, which no budget flows into): no chain
    assert not RepeatedBudgetDivision.candidate(budget.replace("* dp_size", "// dp_size"))
    assert RepeatedBudgetDivision.candidate(
        budget.replace("* dp_size", "// dp_size").replace("cfg.num_heads", "cfg.num_blocks")
    )


# -- SHD401's text gate, per function ---------------------------------------------
# The budget word, the divisions and the store of a finding meet in one function
# body; the text gate delimits bodies on a skeleton of the file (strings and
# comments blanked). Layouts that fool a plain indentation reader: lines of a
# string, of a bracket or after a backslash, at any indentation; `def` inside
# strings; f-strings with fields, specs and quotes.
_LAYOUT_PIECES = (
    "{i}x = foo(\n1,\n{i})",
    '{i}"""Doc at column 0:\ndef g():\nclass A:\n  return 1\n{i}"""',
    "{i}s = '(['  # ] don't",
    "{i}y = 1 + \\\n2",
    "{i}z = '''\n''' + (\n0)",
    '{i}m = f"{{a[\'k\']:>{{w}}}} {{{{x}}}} ("',
    "{i}# a comment with a quote ' and a bracket (",
    "{i}def inner(\na):\n{i}    return a",
    "{i}fn = lambda q: (q,\n)",
    '{i}t = "abc\\\ndef"',
    "{i}if c:\n{i}    pass",
    "{i}u = {{\n'k': [\n1]}}",
    "{i}v = r'\\'' + \"\\\"\" + b'\\\\'",
)
_FINDINGS = (
    ("{i}return num_blocks // dp_size // ep_size",),
    ("{i}per = num_blocks // dp_size", "{i}use(per // ep_size)"),
    ("{i}self.num_blocks //= dp_size",),
    ("{i}cfg.override(num_blocks=num_blocks // dp_size)",),
    ("{i}a = per = num_blocks", "{i}q = per // dp_size; z = 1", "{i}use(max(1, q) // ep_size)"),
    ("{i}self.per: int = (\n{i}    num_blocks\n{i})", "{i}use(self.per // dp_size // ep_size)"),
    ("{i}k = num_blocks", "{i}kk = k", "{i}kk //= dp_size", "{i}kk //= ep_size"),
)
_HEADERS = (
    "{o}def f(self, cfg, num_blocks, dp_size, ep_size):",
    "{o}def f(\nself, cfg,\n  num_blocks, dp_size, ep_size\n{o}):",
    "{o}async def f(self, cfg, num_blocks, dp_size, ep_size):",
    "{o}@deco(\n)\n{o}def f(self, cfg, num_blocks, dp_size, ep_size) -> dict[\nstr, int]:",
)


@st.composite
def _budget_layouts(draw: st.DrawFn) -> str:
    in_class = draw(st.booleans())
    o = "    " if in_class else ""
    i = o + "    "
    pieces = st.lists(st.sampled_from(_LAYOUT_PIECES), max_size=4)
    finding = draw(st.sampled_from(_FINDINGS))
    body: list[str] = []
    for stmt in finding:
        body += [p.format(i=i) for p in draw(pieces)]
        body.append(stmt.format(i=i))
    body += [p.format(i=i) for p in draw(pieces)]
    before = [p.format(i=i) for p in draw(pieces)]
    after = [p.format(i=i) for p in draw(pieces)]
    out = ["class C:"] if in_class else []
    out += [f"{o}def before(c, foo, use, w, a, x):", *before, f"{i}pass"]
    out += [draw(st.sampled_from(_HEADERS)).format(o=o), *body]
    out += [f"{o}def after(c, foo, use, w, a, x):", *after, f"{i}pass"]
    out += draw(st.sampled_from(["", "x = 1", "if c:\n    pass", "'''\n'''"])).splitlines()
    return "\n".join(out) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_budget_layouts())
def test_budget_text_gate_delimits_functions_as_python_does(text: str) -> None:
    tree = ast.parse(text)
    spans = list(tf.function_spans(tf.skeleton(text), range(len(text) + 1)))
    ends: dict[int, int] = {}
    for start, end in spans:
        line = text.count("\n", 0, start) + 1
        ends[line] = text.count("\n", 0, end) + 1
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert ends.get(n.lineno, 0) >= (n.end_lineno or n.lineno), (n.name, text)
    config = Config(root=Path("."), select=("SHD401",))
    diags, errors = check_text(text, "m.py", "m", [RepeatedBudgetDivision], config, ProjectFacts())
    assert not errors
    assert [d.code for d in diags], text  # every layout holds a finding ...
    assert RepeatedBudgetDivision._text_gate(text), text  # ... that the text gate sees


def test_budget_text_gate_follows_budgets_into_names() -> None:
    """Within a function, a division counts when its statement mentions a
    budget word or a name assigned (in any order, through chained, unpacking,
    annotated or augmented assignments, attributes by their last name) from a
    statement that does."""
    base = "def f(self, cfg, dp_size, ep_size):\n{}    return y // ep_size\n"
    for body in (
        "    a = b = cfg.num_blocks\n    y = b // dp_size\n",
        "    x = 1; self.per = self.num_blocks\n    y = self.per // dp_size\n",
        "    a, b = cfg.num_blocks, 1\n    y = a // dp_size\n",
        "    a: int = cfg.num_blocks\n    c = max(1, a)\n    y = cdiv(c, dp_size)\n",
        "    y = cfg.num_blocks\n    y //= dp_size\n",
        "    y = (\n        cfg.num_blocks\n        // dp_size\n    )\n",
        "    y = cfg.num_blocks \\\n        // dp_size\n",
    ):
        assert RepeatedBudgetDivision._text_gate(base.format(body)), body
    for body in (
        "    y = cfg.num_heads // dp_size\n    z = cfg.num_blocks\n",
        "    if cfg.num_blocks == 3:\n        y = cfg.tokens // dp_size\n",
    ):
        assert not RepeatedBudgetDivision._text_gate(base.format(body)), body


def test_budget_text_gate_needs_the_words_in_one_function() -> None:
    split = (
        "def f(num_blocks):\n    return num_blocks\n\n\n"
        "def g(x, dp_size, ep_size):\n    return x // dp_size // ep_size\n"
    )
    assert not RepeatedBudgetDivision._text_gate(split)
    # a method's body ends at the next method, not at a dedented argument
    # list or a docstring's column-0 line
    methods = (
        "class C:\n    def f(self, dp_size):\n        '''Doc\nreturn 1\n'''\n"
        "        self.num_blocks //= dp_size\n\n"
        "    def g(\nself):\n        pass\n"
    )
    assert RepeatedBudgetDivision._text_gate(methods)
    assert not RepeatedBudgetDivision._text_gate(methods.replace("self.num_blocks //=", "x //="))
    joined = (
        "def g(num_blocks, dp_size, ep_size):\n"
        "    x = num_blocks\n"
        "    return x // dp_size // ep_size\n"
    )
    assert RepeatedBudgetDivision._text_gate(joined)
    # a division at module level, or in a class body, is never analysed
    assert not RepeatedBudgetDivision._text_gate("x = num_blocks // dp_size // ep_size\n")
    # a `def` only in a string delimits nothing
    fake = 'def f(num_blocks, dp_size):\n    s = """\ndef g():\n"""\n    num_blocks //= dp_size\n    return num_blocks // dp_size\n'
    assert RepeatedBudgetDivision._text_gate(fake)


def test_budget_text_gate_falls_back_where_it_cannot_delimit() -> None:
    """Where the skeleton may not match Python's tokens, the whole file is
    one function (the file-wide test decides)."""
    split = (
        "def f(num_blocks):\n    return num_blocks\n\n\n"
        "def g(x, dp_size, ep_size):\n{}    return x // dp_size // ep_size\n"
    )
    assert not RepeatedBudgetDivision._text_gate(split.format(""))
    for odd in (
        "\tpass\n",  # tabs
        "    pass\r\n",  # carriage returns
        '    s = f"{d["k"]}"\n',  # Python 3.12: a field holding the string's own quote
        "    s = f'{d['k'] + e['}']}'\n",
    ):
        assert RepeatedBudgetDivision._text_gate(split.format(odd)), odd
    # fields, specs and doubled braces of ordinary f-strings are read as Python does
    for ok in ('    s = f"{d[\'k\']:>{w}} {{x}}"\n', "    s = f'{a!r:{\"<\"}10}'\n"):
        assert not RepeatedBudgetDivision._text_gate(split.format(ok)), ok


# -- the padding text gate's shortcuts answer as the plain reading -----------------
# Written for these tests: token soups full of brackets, strings, comments and
# continuations, where a shortcut that read the text differently would show.

_SOUP = st.lists(
    st.sampled_from([
        "(", ")", "[", "]", "{", "}", "'", '"', '"""', "'''", "#", "\\", "\\\n", "\\\r\n", "\n",
        "\r", " ", "\t", "\xa0", "\u3000", "=", "==", "hp", "h", "round_up(h, 8)", "*", "//",
        "+", "cdiv", "x", ",", "#c\n", "'s'", "((((((", "))))))",
    ]),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_SOUP, pos=st.integers(0, 200))
def test_padding_value_scan_ends_where_the_value_pattern_does(text: str, pos: int) -> None:
    from checks import padded_unpadded_width_mismatch as pad

    pos = min(pos, len(text))
    assert pad._value_end(text, pos) == pad._value().match(text, pos).end()  # type: ignore[union-attr]


def _assigned_rounded_reference(text: str, name: str) -> bool:
    """``_text_assigned_rounded`` as first written: every occurrence of the
    name tried with the regexes, the value read by ``_VALUE_PATTERN``."""
    from checks import padded_unpadded_width_mismatch as pad

    i = text.find(name)
    while i >= 0:
        j = i + len(name)
        if i == 0 or not pad._WORD_CHAR(text, i - 1):
            m = pad._ASSIGN_AFTER(text, j)
            if m is not None:
                v = pad._value().match(text, m.end())
                end = v.end()  # type: ignore[union-attr]
                c = text[end] if end < len(text) else "\n"
                if c in "\n#":
                    if pad._text_rounded(v.group()):  # type: ignore[union-attr]
                        return True
                elif c not in ")]}'\"":
                    return True
        i = text.find(name, j)
    return False


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_SOUP, name=st.sampled_from(["hp", "h", "x"]))
def test_padding_assigned_rounded_skips_only_what_cannot_assign(text: str, name: str) -> None:
    from checks import padded_unpadded_width_mismatch as pad

    assert pad._text_assigned_rounded(text, name) == _assigned_rounded_reference(text, name)


def test_padding_assigned_rounded_reads_every_blank_before_the_equals() -> None:
    from checks import padded_unpadded_width_mismatch as pad

    # a one-letter name is looked for with a regex, a longer one with str.find
    for name in ("hp", "w"):
        for gap in (" ", "\t", "\xa0", "\u3000", "\x1c", "\x85", "\v", ")", ") ", "\\\n", ""):
            text = f"z = w + hp\n{name}{gap}= round_up(h, 8)\n"
            assert pad._text_assigned_rounded(text, name), (name, gap)
            assert _assigned_rounded_reference(text, name), (name, gap)
        assert not pad._text_assigned_rounded(f"{name} == round_up(h, 8)\n", name)
        assert not pad._text_assigned_rounded(f"x{name} = round_up(h, 8)\n", name)
        assert not pad._text_assigned_rounded(f"{name} = h\n{name}(x) == round_up(h, 8)\n", name)
    # a value nested deeper than the pattern follows cannot be delimited
    deep = "hp = f(((((((1))))))) + g\n"
    assert pad._value_end(deep, 5) == pad._value().match(deep, 5).end() == 6  # type: ignore[union-attr]
    assert pad._text_assigned_rounded(deep, "hp")


# -- the budget text gate lower-cases a non-ASCII text only when it must -----------

_CASED = st.lists(
    st.sampled_from([
        "blocks", "BLOCKS", "BloCKs", "bloc", "ks", "budget", "Memory", "BYTES", "max_num_", "MAX_TOTAL_",
        "max_runn", "ing", "\u0130", "\u212a", "\u017f", "\u0131", "\u00e9", "\u00c9", "\u03a3", "\u1e9e",
        "\U0001f600", "\udcff", " ", "\n", "x", "K", "k", "i", "I", "s",
    ]),
    max_size=12,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_CASED)
def test_budget_words_found_in_utf8_bytes_as_in_the_lower_cased_text(text: str) -> None:
    from checks import repeated_budget_division as bud

    want = any(w in text.lower() for w in bud._BUDGET_WORDS)
    assert bud._budget_word_in_lower(text) == want
    assert bud._budget_word_in_lower(text + "\u00e9") == want  # a non-ASCII text


def test_budget_words_lower_cased_into_ascii_are_found() -> None:
    from checks import repeated_budget_division as bud

    # U+212A KELVIN SIGN lower-cases to `k`: `BLOC\u212aS` holds `blocks`
    assert bud._budget_word_in_lower("n = BLOC\u212aS // dp_size \u00e9")
    assert not bud._budget_word_in_lower("n = BLOCS // dp_size \u00e9")
    assert bud._budget_word_in_lower("n = \u00c9BYTES")
    for word in ("blocks", "budget", "memory", "bytes", "max_num_", "max_total_", "max_running"):
        assert bud._budget_word_in_lower(f"\u00e9{word.upper()}")


def test_budget_fstring_fields_fast_match_reads_as_the_loop() -> None:
    """``_SIMPLE_FIELDS`` answers for the bodies whose fields hold no
    bracket, brace or quote: every short body over the characters that
    matter is read alike with and without it."""
    import itertools

    for n in range(7):
        for chars in itertools.product("{}(']:x", repeat=n):
            body = "".join(chars)
            assert tf._fields_closed(body) == tf._fields_read(body), body
    for body in ("{x} and {y.z!r:>{w}}", "{{literal}} {a=}", "{d['k']}", '{f"{x}"}', "{x:{{}}}", "}{"):
        assert tf._fields_closed(body) == tf._fields_read(body), body


def test_padding_rounded_text_test_spells_out_its_words() -> None:
    from checks import padded_unpadded_width_mismatch as pad

    assert pad._ROUND_WORDS == ("round_up", "round_to", "align", "ceil_to", "next_multiple_of")
    assert pad._CDIV_WORDS == ("cdiv", "ceil")
    for w in pad._ROUND_WORDS:
        assert pad._text_rounded(f"x = {w}(h, 8)")
    for w in pad._CDIV_WORDS:
        assert pad._text_rounded(f"{w}(h, 8) * 8") and not pad._text_rounded(f"{w}(h, 8) + 8")
    assert pad._text_rounded("(h + 7) // 8 * 8") and not pad._text_rounded("(h + 7) // 8")
    assert not pad._text_rounded("round(h) * 8 // 2")


def test_budget_skeleton_reads_an_unfinished_string_in_linear_time() -> None:
    """A string running to a backslash at the end of the text (a file being
    written): the string pattern's loops once backtracked exponentially
    there (a minute for 40 characters)."""
    import time

    for q in ('"', "'", '"""', "'''"):
        text = "def f(num_blocks, dp_size):\n    s = " + q + "ab " * 3000 + "\\"
        start = time.process_time()
        sk = tf.skeleton(text)
        # a hang guard, not a speed goal: milliseconds now, beyond any
        # patience before (each extra character doubled the time)
        assert time.process_time() - start < 10.0, q
        # no string closes: only an empty `""` before the third quote does
        assert sk == (text if len(q) == 1 else text.replace(q[:2], "  ", 1)), q


def _injected_into_every_function(
    lines: list[str], plain_whitespace: bool = False
) -> Iterator[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef, int, str, ast.Module]]:
    """``lines`` appended to the body of every function of every corpus file
    that still parses so (a one-line body has no room): (path, function,
    the line the body ended on, the text, its tree). With
    ``plain_whitespace``, files holding a tab, a form feed or a carriage
    return are left out."""
    for path, text, tree in parsed_corpus_files():
        if plain_whitespace and ("\t" in text or "\r" in text or "\f" in text):
            continue
        source = text.split("\n")
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            indent = " " * fn.body[0].col_offset
            at = fn.body[-1].end_lineno or fn.body[-1].lineno
            injected = "\n".join(source[:at] + [indent + line for line in lines] + source[at:])
            try:
                new_tree = ast.parse(injected)
            except SyntaxError:
                continue
            yield path, fn, at, injected, new_tree


@pytest.mark.parametrize(
    "rule,lines",
    [
        (PaddedUnpaddedWidthMismatch, ["zz_padded = torch.zeros(4, round_up(zz_h, 8))", "zz_padded.copy_(zz_src)"]),
        ("SHD101", ["zz_blk = min(zz_n, 1024)", "assert zz_n % zz_blk == 0"]),
    ],
)
def test_text_gates_admit_a_finding_injected_into_every_corpus_function(rule: object, lines: list[str]) -> None:
    """The per-function text gates delimit functions on raw text: a finding's
    statements appended to the body of every function of every corpus file
    (decorated, nested, methods, multi-line signatures, strings and comments
    around) still reach the rule. (Swept the same way over vLLM 0.33.0 and
    SGLang 0.5.23 functions: 13,577 injections for SHD501, 5,347 for SHD101,
    no miss.)"""
    if rule == "SHD101":
        rule = load_registry().rules["SHD101"]
    assert isinstance(rule, type)
    tried = 0
    # (tabs, form feeds or carriage returns: the file-wide test decides there)
    for path, fn, _, injected, new_tree in _injected_into_every_function(lines, plain_whitespace=True):
        tried += 1
        if rule.code == "SHD101":
            from checks import block_size_min_divisibility as bsmd

            bsmd._TEXT_GATE_MEMO[:] = [None, False]
            bsmd._REPLAY_MEMO[:] = [None, None, None]
            # (as the engine hands it: the statements its scope reads)
            spans = scope_of(rule, injected, {})
            if spans is not None:
                new_tree = scoped_tree(ast.parse(mask_text(injected, spans)), injected, spans)
            assert rule.candidate_tree(new_tree, injected), (path.name, fn.name)
            bsmd._TEXT_GATE_MEMO[:] = [None, False]
        assert rule.candidate(injected), (path.name, fn.name)  # type: ignore[attr-defined]
    assert tried > 300


def test_a_shorter_skeleton_of_the_same_text_is_cut_from_the_last_one() -> None:
    """The gates and scopes of one file each ask for the skeleton up to some
    offset (``skeleton_to``): one asked after a longer one of the same text
    is cut from it and equals the skeleton made of that prefix; another
    text, or a longer prefix, is blanked afresh."""
    files = sorted((Path(__file__).resolve().parent.parent / "corpus").rglob("*.py"))[:60]
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        if "\t" in text or "\r" in text:
            continue
        cuts = [m.start() + 2 for m in re.finditer(r"\n(?:def|class|async|@)", text)] + [len(text)]
        try:
            whole = tf.skeleton_to(text, len(text))
        except tf.Unsure:
            continue
        assert whole == tf.skeleton(text)
        for cut in cuts:
            # a string running past the cut is blanked alike, so the cut
            # skeleton equals the prefix's own unless the prefix is unsure
            try:
                own = tf.skeleton(text[:cut])
            except tf.Unsure:
                continue
            assert tf.skeleton_to(text, cut) == own, (f, cut)
    # another text is blanked afresh, not cut from the last one
    first = "x = '#'  # c\n" * 3
    assert tf.skeleton_to(first, len(first)) == ("x = " + " " * 8 + "\n") * 3
    other = "y = 1  # '\n" * 3
    assert tf.skeleton_to(other, 11) == "y = 1     \n"
    longer = "def f():\n    return ' a '\n"
    assert tf.skeleton_to(longer, 9) == "def f():\n"
    assert tf.skeleton_to(longer, len(longer)) == "def f():\n    return      \n"


def test_budget_scope_keeps_a_split_injected_into_every_corpus_function() -> None:
    """Under the default names SHD401's ast readers and its check read only
    the top-level statements holding a function its text test passes
    (``ast_scope``): a double split appended to the body of every function
    of every corpus file (methods, nested and decorated functions, multi-line
    signatures, strings and comments around) passes all three gates and is
    reported at its line by the scoped check. (Swept the same way over the
    functions of vLLM 0.33.0 and SGLang 0.5.23.)"""
    config = Config(root=Path("."), select=("SHD401",))
    line = "zz_split = zz_cfg.num_blocks // zz_dp_size // zz_ep_size"
    tried = 0
    for path, fn, at, injected, _ in _injected_into_every_function([line]):
        tried += 1
        assert _gates_pass(RepeatedBudgetDivision, injected, "m.py", {}) is None, (path.name, fn.name)
        diags, _ = check_text(injected, "m.py", "m", [RepeatedBudgetDivision], config, ProjectFacts())
        assert at + 1 in {d.span.line for d in diags}, (path.name, fn.name)
    assert tried > 300


def test_budget_scan_scope_keeps_the_methods_the_text_test_passes() -> None:
    """SHD401's scan readers read, of a class they keep, only the methods
    holding a function its text test passes (a nested one included) and
    every statement that is no method; the gate still passes the file."""
    from checks.repeated_budget_division import _scan_scope

    text = textwrap.dedent(
        """
        class Runner:
            chunk = 4

            def split(self, cfg):
                per_dp = cfg.num_blocks // cfg.dp_size
                return per_dp // cfg.ep_size

            def quiet(self, n):
                return n // 2

            def outer(self, cfg):
                def inner():
                    return cfg.max_num_tokens // cfg.dp_size // cfg.ep_size
                return inner
        """
    ).lstrip("\n")
    spans = _scan_scope(text, {})
    assert spans is not None
    kept = [text[a:b].strip().split("\n")[0] for a, b in spans]
    assert kept == ["class Runner:", "chunk = 4", "def split(self, cfg):", "def outer(self, cfg):"]
    assert _gates_pass(RepeatedBudgetDivision, text, "m.py", {}) is None
