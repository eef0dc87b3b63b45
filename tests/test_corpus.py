"""Every corpus file: the rules fire exactly where the markers say."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_harness import CORPUS, corpus_files, diagnostics_for, expectations, rule_dirs
from linter.config import Config
from linter.engine import Engine
from linter.fixer import fix_text, parses
from linter.registry import load_registry

# fixed.py is the expected output of --fix on bad.py: checked by
# test_fixed_matches_and_converges, not by markers
FILES = [(d, f) for d in rule_dirs() for f in corpus_files(d) if f.name != "fixed.py"]


@pytest.mark.parametrize(
    ("rule_dir", "path"), FILES, ids=[f.relative_to(CORPUS).as_posix() for _, f in FILES]
)
def test_markers(rule_dir: Path, path: Path) -> None:
    exp = expectations(path)
    got: dict[int, set[str]] = {}
    for d in diagnostics_for(rule_dir).get(path, []):
        got.setdefault(d.span.line, set()).add(d.code)
    problems = []
    for line, codes in exp.error.items():
        for code in codes - got.get(line, set()):
            problems.append(f"line {line}: expected {code}, nothing fired")
    for line, codes in exp.todo_ok.items():
        for code in codes - got.get(line, set()):
            problems.append(f"line {line}: known false alarm {code} no longer fires; drop the todo-ok marker")
    for line, codes in got.items():
        for code in codes:
            if code in exp.todo_error.get(line, set()):
                problems.append(f"line {line}: known miss {code} now fires; make it an error marker")
            elif code not in exp.error.get(line, set()) | exp.todo_ok.get(line, set()):
                msgs = [d.message for d in diagnostics_for(rule_dir)[path] if d.span.line == line]
                problems.append(f"line {line}: unexpected {code}: {msgs}")
    assert not problems, "\n".join(problems)


def test_every_rule_has_a_corpus() -> None:
    registry = load_registry()
    names = {d.name for d in rule_dirs()}
    for rule in registry.checkers:
        mod = rule.name.replace("-", "_")
        assert mod in names, f"{rule.code} has no corpus/{mod}/"
        assert (CORPUS / mod / "bad.py").is_file(), f"corpus/{mod}/bad.py missing"
        assert (CORPUS / mod / "good.py").is_file(), f"corpus/{mod}/good.py missing"
        bad = expectations(CORPUS / mod / "bad.py")
        assert any(rule.code in c for c in bad.error.values()), f"bad.py of {rule.code} expects nothing"
    for d in rule_dirs():
        assert registry.by_name(d.name.replace("_", "-")), f"corpus/{d.name} belongs to no rule"


FIXED = [d for d in rule_dirs() if (d / "fixed.py").is_file()]


@pytest.mark.parametrize("rule_dir", FIXED, ids=[d.name for d in FIXED])
def test_fixed_matches_and_converges(rule_dir: Path) -> None:
    registry = load_registry()
    rule = registry.by_name(rule_dir.name.replace("_", "-"))
    engine = Engine(Config(root=rule_dir, select=(rule.code,)), registry, jobs=1)
    bad = (rule_dir / "bad.py").read_text(encoding="utf-8")
    out = fix_text(engine, bad, rule_dir / "bad.py", unsafe=True)
    assert out.applied > 0
    assert parses(out.text)
    assert out.text == (rule_dir / "fixed.py").read_text(encoding="utf-8")
    again = fix_text(engine, out.text, rule_dir / "bad.py", unsafe=True)
    assert again.applied == 0 and again.text == out.text


@pytest.mark.parametrize("rule_dir", rule_dirs(), ids=lambda p: p.name)
def test_every_message_fits_on_one_line(rule_dir: Path) -> None:
    """One finding, one output line (flake8-style consumers, CI annotations),
    even where the code a message quotes spans lines."""
    for path, diags in diagnostics_for(rule_dir).items():
        for d in diags:
            assert "\n" not in d.message and "\r" not in d.message, (path, d.message)
