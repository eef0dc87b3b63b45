"""Rule metadata users and tools rely on: unique codes, names that match
modules and classes, complete documentation, options with docs."""

from __future__ import annotations

import re
from pathlib import Path

from linter.docs import REQUIRED_HEADINGS, render_markdown, sections
from linter.registry import RuleMeta, load_registry

ROOT = Path(__file__).resolve().parent.parent


def test_codes_and_names() -> None:
    reg = load_registry()
    names = [r.name for r in reg.rules.values()]
    assert len(names) == len(set(names))
    for code, rule in reg.rules.items():
        assert re.fullmatch(r"SHD\d{3}", code) and rule.code == code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert rule.summary and not rule.summary.endswith(".")
        if getattr(rule, "builtin", False):
            continue
        module = rule.__module__.rsplit(".", 1)[-1]
        assert module == rule.name.replace("-", "_"), f"{code}: module {module} vs name {rule.name}"
        camel = "".join(p.capitalize() for p in rule.name.split("-"))
        assert rule.__name__ == camel, f"{code}: class {rule.__name__} vs {camel}"


def test_docs_have_every_heading_and_every_option() -> None:
    for rule in load_registry().rules.values():
        secs = sections(rule)
        for h in REQUIRED_HEADINGS:
            assert secs.get(h), f"{rule.code}: empty or missing '## {h}'"
        for opt in rule.options:
            assert opt in secs["Options"], f"{rule.code}: option {opt} undocumented"
            assert rule.options[opt].doc
        md = render_markdown(rule)
        assert md.startswith(f"# {rule.code} {rule.name}")


def test_explain_shows_corpus_examples() -> None:
    for rule in load_registry().checkers:
        md = render_markdown(rule)
        assert "corpus/" in md and "```python" in md, rule.code
        assert "# error:" not in md  # markers are stripped from docs


def test_readme_lists_every_rule() -> None:
    readme = (ROOT / "README.md").read_text()
    for rule in load_registry().rules.values():
        assert f"| {rule.code} | {rule.name} |" in readme, rule.code


def test_metadata_snapshot_round_trips() -> None:
    for rule in load_registry().rules.values():
        meta = RuleMeta.of(rule)
        assert RuleMeta.from_json(meta.to_json()) == meta
