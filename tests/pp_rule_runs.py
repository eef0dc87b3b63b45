"""Running SHD301 and SHD302 in the tests of each rule: a project on disk, or
one text past the file gate."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from linter.config import Config
from linter.engine import Engine, check_text
from linter.facts import ProjectFacts
from linter.registry import load_registry
from linter.types import Diagnostic


def _config(root: Path, code: str, options: dict[str, Any]) -> Config:
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    return Config(root=root, select=(code,), rule_options=((code, opts),) if opts else ())


def run(root: Path, code: str, **options: Any) -> list[Diagnostic]:
    """``code``'s findings on the project at ``root`` under ``options``."""
    result = Engine(_config(root, code, options), load_registry(), jobs=1).run([root])
    assert not result.errors, result.errors
    return [d for d in result.diagnostics if d.code == code]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src), encoding="utf-8")


def check_one(text: str, code: str, **options: Any) -> list[Diagnostic]:
    """The rule on one text, every gate open (the whole text read, whatever
    its needles say: see the Prefilter paragraph of the rule docs)."""
    rule = load_registry().rules[code]
    config = _config(Path("."), code, options)
    diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts(), gates=False)
    assert not errors, errors
    return diags
