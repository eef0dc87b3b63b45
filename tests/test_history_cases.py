"""The bug-history benchmark (bench/history.py): every case file is valid and
names its public evidence, a malformed one is refused naming the file and the
case, and a finding is matched to the case's function (flag detected, clean
flagged) on a small fake release under tmp_path -- offline, no fetch."""

from __future__ import annotations

import importlib.util
import re
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CASE_FILES = sorted((REPO / "bench" / "history" / "cases").glob("*.toml"))


def _load_history():
    spec = importlib.util.spec_from_file_location("bench_history", REPO / "bench" / "history.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_history"] = module
    spec.loader.exec_module(module)
    return module


history = _load_history()


@pytest.mark.parametrize("case_file", CASE_FILES, ids=lambda p: p.name)
def test_case_file_is_valid(case_file: Path) -> None:
    cases = history.load_cases([case_file])
    for case in cases:
        # the rule family the file is named after: its cases are that rule's
        assert case.package in ("vllm", "sglang"), case.source
        assert re.fullmatch(r"\d+(\.\d+)+(\.post\d+)?", case.version), case.source
        if case.expect == "flag":
            # public evidence names an issue or pull-request number; a case
            # without one says what it rests on instead (a GPU run, reading)
            if case.basis == "public":
                assert re.search(r"#\d+", case.evidence), f"{case.source}: evidence names no issue/PR (or set basis)"
            assert len(case.evidence) > 30, f"{case.source}: evidence says no why"


def test_case_files_do_not_repeat_a_case() -> None:
    seen: dict[tuple[str, ...], str] = {}
    for case in history.load_cases(CASE_FILES) if CASE_FILES else ():
        key = (case.package, case.version, case.path, case.function, case.rule, case.expect)
        assert key not in seen, f"{case.source} repeats {seen[key]}"
        seen[key] = case.source


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('package = "vllm"\n', "missing"),
        (
            'package="vllm"\nversion="1"\npath="a.py"\nfunction="f"\nrule="SHD401"\nexpect="maybe"\nevidence="x"\n',
            "expect",
        ),
        (
            'package="vllm"\nversion="1"\npath="a.py"\nfunction="f"\nrule="401"\nexpect="flag"\nevidence="x"\n',
            "rule",
        ),
        (
            'package="vllm"\nversion="1"\npath="a.py"\nfunction="f"\nrule="SHD401"\nexpect="flag"\nevidence="x"\n'
            'note="y"\n',
            "unknown",
        ),
        (
            'package="vllm"\nversion="1"\npath="../a.py"\nfunction="f"\nrule="SHD401"\nexpect="flag"\n'
            'evidence="x"\n',
            "path",
        ),
    ],
)
def test_bad_case_names_file_and_index(tmp_path: Path, body: str, problem: str) -> None:
    good = 'package="vllm"\nversion="1"\npath="a.py"\nfunction="f"\nrule="SHD401"\nexpect="flag"\nevidence="x"\n'
    bad = tmp_path / "bad.toml"
    bad.write_text(f"[[case]]\n{good}\n[[case]]\n{body}")
    with pytest.raises(history.CaseError) as err:
        history.load_cases([bad])
    assert "bad.toml #2" in str(err.value) and problem in str(err.value)
    assert history.main(["--cases", str(bad), "--no-fetch"]) == 2


MODULE_TEXT = textwrap.dedent(
    """\
    LIMIT = 4


    def helper(x):
        return x + 1


    class Planner:
        budget = 8

        @staticmethod
        def plan(a):
            def inner(b):
                return b * 2

            return inner(a)

        def other(self):
            return 0
    """
)


def test_function_ranges_qualified_and_module() -> None:
    ranges = history.function_ranges
    assert ranges(MODULE_TEXT, "helper") == [(4, 5)]
    assert ranges(MODULE_TEXT, "Planner.plan") == [(11, 16)]  # decorator included
    assert ranges(MODULE_TEXT, "Planner.plan.inner") == [(13, 14)]
    assert ranges(MODULE_TEXT, "plan") == []
    module = ranges(MODULE_TEXT, "<module>")
    covers = {n for a, b in module for n in range(a, b + 1)}
    assert 1 in covers and 9 in covers  # module and class level
    assert 5 not in covers and 19 not in covers


def _case(**over: str):
    fields = dict(
        package="fakeeng", version="1.0", path="fakeeng/mod.py", function="Planner.plan",
        rule="SHD401", expect="flag", evidence="fakeeng#1: test", source="t #1",
    )
    fields.update(over)
    return history.Case(**fields)


def test_matching_primary_and_note_locations() -> None:
    Loc, Finding = history.Location, history.Finding
    case = _case()
    ranges = history.function_ranges(MODULE_TEXT, case.function)
    inside = Finding("SHD401", "m", [Loc("fakeeng/mod.py", 12)])
    via_note = Finding("SHD401", "m", [Loc("fakeeng/other.py", 3), Loc("fakeeng/mod.py", 15)])
    elsewhere = Finding("SHD401", "m", [Loc("fakeeng/mod.py", 19)])
    other_rule = Finding("SHD101", "m", [Loc("fakeeng/mod.py", 12)])
    other_file = Finding("SHD401", "m", [Loc("fakeeng/x.py", 12)])
    got = history.matching(case, ranges, [inside, via_note, elsewhere, other_rule, other_file])
    assert got == [inside, via_note]


BUGGY = textwrap.dedent(
    """\
    def plan_blocks(cache_config, parallel_config):
        dp_size = parallel_config.data_parallel_size
        ep_size = parallel_config.expert_parallel_size
        per_replica = cache_config.num_gpu_blocks // dp_size
        per_rank = per_replica // ep_size
        return per_rank


    def plan_seqs(sched, parallel_config):
        return sched.max_num_seqs // parallel_config.data_parallel_size
    """
)


def test_evaluate_on_a_fake_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: shardlint runs on the fake tree (root = the tree), a flag
    case in the buggy function is detected, a clean one in the correct
    function is not flagged, and a missing release or function is
    unavailable instead of a crash."""
    tree = tmp_path / "fakeeng-1.0"
    (tree / "fakeeng" / "sub").mkdir(parents=True)
    (tree / "fakeeng" / "__init__.py").write_text("")
    (tree / "fakeeng" / "sub" / "mod.py").write_text(BUGGY)  # a folder without __init__.py
    (tree / ".complete").write_text("")
    monkeypatch.setenv("SHARDLINT_CORPUS", str(tmp_path))
    flag = _case(path="fakeeng/sub/mod.py", function="plan_blocks")
    clean = _case(path="fakeeng/sub/mod.py", function="plan_seqs", expect="clean")
    gone_fn = _case(path="fakeeng/sub/mod.py", function="nowhere", expect="clean")
    gone_tree = _case(version="9.9")
    outcomes = {o.case: o for o in history.evaluate([flag, clean, gone_fn, gone_tree], fetch=False, cache=False)}
    assert outcomes[flag].status == "hit"
    assert outcomes[clean].status == "silent"
    assert outcomes[gone_fn].status == "unavailable" and "nowhere" in outcomes[gone_fn].why
    assert outcomes[gone_tree].status == "unavailable"
    text = history.report(list(outcomes.values()))
    assert "SHD401" in text and "100%" in text and "UNAVAILABLE (2)" in text
