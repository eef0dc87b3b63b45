"""SHD401 repeated-budget-division: what a user sees (messages naming their
variables, severity, the suggestion), options, and the text prefilter
(``needles``, ``definition_needles``) never hiding a finding."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from corpus_harness import CORPUS, diagnostics_for, lint_snippet, with_gates_open_and_closed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.repeated_budget_division import RepeatedBudgetDivision
from linter.config import ConfigError, load_config
from linter.registry import load_registry
from linter.types import Applicability, Diagnostic, Severity

BUDGET = CORPUS / "repeated_budget_division"
CODE = RepeatedBudgetDivision.code


def lint(code: str, tmp_path: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    return lint_snippet(code, CODE, tmp_path, gates, **options)


def test_budget_message_names_budget_sizes_and_path() -> None:
    [d] = [d for d in diagnostics_for(BUDGET)[BUDGET / "bad.py"] if d.span.line == 10]
    assert d.code == CODE and d.severity is Severity.ERROR
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
        tmp_path,
    )


def test_budget_options_replace_defaults(tmp_path: Path) -> None:
    code = """
        def f(kv_pool_blocks, num_blocks, dp_size, replica_count, ep_size):
            a = kv_pool_blocks // dp_size // replica_count
            b = num_blocks // dp_size // ep_size
            return a, b
        """
    default = lint(code, tmp_path)
    assert [d.span.line for d in default] == [4]
    configured = lint(
        code,
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


# -- the prefilter ------------------------------------------------------------------
# The text a finding needs (a division and a default size word, any case) must
# be in the file and in the one top-level definition holding the finding; a
# configured size name holding a size word keeps that true. Budget names may
# be anything.

#: options far broader than the defaults, within what the docstring asks of
#: configured names: every name is a budget
BROAD = {"budget-names": ("*",), "parallel-size-names": ("*dp_size", "*_world_size", "ep_size")}


def _split(text: str) -> list[str]:
    """The text of each top-level definition of ``text`` (decorators included)."""
    lines = text.splitlines(keepends=True)
    out = []
    for s in ast.parse(text).body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([s.lineno, *(d.lineno for d in s.decorator_list)])
            out.append("".join(lines[first - 1 : s.end_lineno]))
    return out


@pytest.mark.parametrize("broad", [False, True], ids=["configured", "broad"])
def test_gates_hide_nothing_on_the_corpus(broad: bool) -> None:
    """Every corpus file, under its folder's options and under broad ones:
    the same findings with the gates open as with every gate closed."""
    fired = 0
    for f, text, opened, closed in with_gates_open_and_closed(BUDGET, CODE, **(BROAD if broad else {})):
        assert opened == closed, f.name
        fired += len(closed)
        if closed:
            assert RepeatedBudgetDivision.needles.match(text), f.name
    assert fired >= 20, "the corpus must exercise the rule"


def test_needles_skip_files_that_cannot_match() -> None:
    no_parallel = "def f(num_blocks, page):\n    return num_blocks // page\n"
    assert not RepeatedBudgetDivision.needles.match(no_parallel)
    no_division = "def f(num_blocks, dp_size):\n    return num_blocks * dp_size\n"
    assert not RepeatedBudgetDivision.needles.match(no_division)
    assert RepeatedBudgetDivision.needles.match(no_division.replace("*", "//"))
    # the size words in any case, ceiling divisions by name
    upper = "def f(NUM_BLOCKS, DP_SIZE, EP_SIZE):\n    return cdiv(cdiv(NUM_BLOCKS, DP_SIZE), EP_SIZE)\n"
    assert RepeatedBudgetDivision.needles.match(upper)


def test_a_definition_without_the_words_is_skipped_alone(tmp_path: Path) -> None:
    """Only the definition holding a division by a size is parsed; the
    finding is the same as with the whole file read."""
    text = (
        "def setup(num_blocks):\n    return num_blocks\n\n\n"
        "class Runner:\n    def split(self, cfg, dp_size, ep_size):\n"
        "        return cfg.num_blocks // dp_size // ep_size\n"
    )
    setup, runner = _split(text)
    assert not RepeatedBudgetDivision.definition_needles.match(setup)  # type: ignore[union-attr]
    assert RepeatedBudgetDivision.definition_needles.match(runner)  # type: ignore[union-attr]
    assert [d.span.line for d in lint(text, tmp_path)] == [7]
    assert lint(text, tmp_path) == lint(text, tmp_path, gates=False)


# Shapes the rule fires on that older text gates rejected (a lost finding).
# Original code, written for these tests.
_SHAPES = [
    "def f(cfg, ep_size):\n    return (cfg.num_blocks * 2) / get_dp_size() // ep_size\n",
    "def f(num_blocks, dp_size, ep_size):\n    return ceildiv(ceildiv(num_blocks, dp_size), ep_size)\n",
    "def f(num_blocks, dp_size, ep_size):\n    return div_ceil(div_round_up(num_blocks, dp_size), ep_size)\n",
    "def f(cfg, dp_size, ep_size):\n    n = cfg.num_gpu_blocks\n    a = n // dp_size\n    return a // ep_size\n",
    "def f(cfg, dp_size, ep_size):\n    n = cfg.num_blocks\n    a = n // cfg.groups[0].dp_size\n    return cdiv(a, (\n        ep_size))\n",
    "def f(self):\n    self.max_num_seqs = self.max_num_seqs // get_dp_size()\n",
    "def f(num_blocks, dp_size, ep_size):\n    a = (cdiv)(num_blocks, dp_size)\n    return ( util.cdiv )(a, ep_size)\n",
    "def f(self, dp_size):\n    self.cfg = replace(**self.cfg, num_blocks=self.cfg.num_blocks // dp_size)\n",
    "class C:\n    @deco(\n    )\n    def f(self, dp_size):\n        '''Doc\nreturn 1\n'''\n        self.num_blocks //= dp_size\n",
]


@pytest.mark.parametrize("text", _SHAPES)
def test_needles_see_every_shape_the_rule_fires_on(text: str, tmp_path: Path) -> None:
    diags = lint(text, tmp_path)
    assert [d.code for d in diags] == [CODE], text
    assert RepeatedBudgetDivision.needles.match(text), text
    assert lint(text, tmp_path, gates=False) == diags


# Random functions built from the statements and expressions the rule
# follows (and some it does not): wherever the rule fires with every gate
# closed, it fires alike with the gates open.


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


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"budget-names": ("*blocks*", "nb", "x", "g"), "parallel-size-names": ("*dp_size", "ep_size")},
        {"budget-names": ("num_blocks",), "parallel-size-names": ("dp_size", "ep_size")},
    ],
    ids=["defaults", "broad", "narrow"],
)
def test_gates_hide_nothing_on_random_functions(options: dict[str, object], tmp_path: Path) -> None:
    r = random.Random(CODE)
    # each function a top-level definition: the definition gate judges each
    # alone; a quiet module-level line between them
    text = "g = 1\n" + "".join(f"\n\n{_budget_function(r)}\n\nz = 1\n" for _ in range(120))
    closed = lint(text, tmp_path, gates=False, **options)
    assert len(closed) >= 20, "the random functions must exercise the rule"
    assert lint(text, tmp_path, **options) == closed


# Layouts that fool a reader of text (lines of a string, of a bracket or after
# a backslash at any indentation, `def` inside strings, f-strings, decorators
# and headers over lines): the rule fires in each, with the gates open too.
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
    "{i}u = {{\n'k': [\n1]}}",
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
    body: list[str] = []
    for stmt in draw(st.sampled_from(_FINDINGS)):
        body += [p.format(i=i) for p in draw(pieces)]
        body.append(stmt.format(i=i))
    body += [p.format(i=i) for p in draw(pieces)]
    out = ["class C:"] if in_class else []
    out += [f"{o}def before(c, foo, use, w, a, x):", *[p.format(i=i) for p in draw(pieces)], f"{i}pass"]
    out += [draw(st.sampled_from(_HEADERS)).format(o=o), *body]
    out += ["", "", "def after(c, foo, use, w, a, x):", *[p.format(i="    ") for p in draw(pieces)], "    pass"]
    return "\n".join(out) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_budget_layouts())
def test_rule_fires_in_every_layout_with_the_gates_open(text: str) -> None:
    ast.parse(text)
    closed = lint(text, Path("."), gates=False)
    assert [d.code for d in closed], text  # every layout holds a finding ...
    assert lint(text, Path(".")) == closed, text  # ... that the gates let through


# -- the shapes the engines shipped (bench/history/cases/repeated_budget_division.toml)


def test_one_group_spelled_twice_fires_nested_owning_groups_stay_silent(tmp_path: Path) -> None:
    diags = lint(
        """
        def plan(sched, attn_dp_size, dp_size, pp_size):
            per_dp = sched.max_num_seqs // attn_dp_size
            twice = per_dp // dp_size
            micro = per_dp // pp_size
            return twice, micro
        """,
        tmp_path,
    )
    assert [d.span.line for d in diags] == [4]
    why = diags[0].notes[1].message
    assert "`attn_dp_size`, `dp_size` name the same data-parallel group" in why


def test_split_stored_on_self_is_followed_into_other_methods(tmp_path: Path) -> None:
    [d] = lint(
        """
        class Planner:
            def __init__(self, cache_config, parallel_config):
                self.ep_size = parallel_config.expert_parallel_size
                self.per_replica = cache_config.num_gpu_blocks // parallel_config.data_parallel_size

            def allocate(self):
                return self.per_replica // self.ep_size
        """,
        tmp_path,
    )
    assert d.span.line == 8
    path = d.notes[0].message
    assert "(in `Planner.__init__`)" in path and "self.per_replica // self.ep_size" in path
    assert "own no share" in d.notes[1].message


def test_default_set_in_one_branch_leaves_the_field_shared(tmp_path: Path) -> None:
    code = """
        class Args:
            def __post_init__(self):
                if self.chunked_prefill_size is None:
                    self.chunked_prefill_size = 8192
                {else_branch}
                if self.enable_dp_attention:
                    self.chunked_prefill_size = self.chunked_prefill_size // (self.dp_size if self.enable_dp_attention else 1)
        """
    [d] = lint(code.replace("{else_branch}", ""), tmp_path)
    assert d.span.line == 8 and "`self.dp_size` > 1" in d.message
    every_path = code.replace(
        "{else_branch}", "else:\n                    self.chunked_prefill_size = 4096"
    )
    assert not lint(every_path, tmp_path)


@pytest.mark.parametrize(("package", "spelling"), [("sglang", "resolve_once"), ("vllm", "dataclasses.replace")])
def test_in_place_fix_is_spelled_for_the_engine(tmp_path: Path, package: str, spelling: str) -> None:
    from linter.config import Config
    from linter.engine import Engine

    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    code = "def resolve(args):\n    args.max_prefill_tokens = args.max_prefill_tokens // args.dp_size\n"
    diags, errors = Engine(Config(root=tmp_path, select=(CODE,)), load_registry(), jobs=1).lint_text(
        code, tmp_path / package / "args.py"
    )
    assert not errors and len(diags) == 1
    assert diags[0].fix is not None and spelling in diags[0].fix.title
