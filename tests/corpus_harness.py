"""Reads corpus expectations and runs the engine on corpus projects.

Markers, trailing on the line where a diagnostic starts:
  # error: SHD101            the rule must fire here
  # todo-error: SHD101 why   a known miss: must NOT fire (fails once it does)
  # todo-ok: SHD101 why      a known false alarm: fires (fails once it stops)
A corpus folder is one project; a sub-folder holding its own pyproject.toml is
a separate project with that configuration (for rule options).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from linter.config import Config, load_config
from linter.engine import Engine
from linter.registry import load_registry
from linter.types import Diagnostic

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_MARK = re.compile(r"#\s*(error|todo-error|todo-ok):\s*((?:SHD\d{3}[,\s]*)+)")


@dataclass
class Expect:
    error: dict[int, set[str]]
    todo_error: dict[int, set[str]]
    todo_ok: dict[int, set[str]]


def expectations(path: Path) -> Expect:
    e = Expect(defaultdict(set), defaultdict(set), defaultdict(set))
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for m in _MARK.finditer(line):
            codes = set(re.findall(r"SHD\d{3}", m.group(2)))
            getattr(e, m.group(1).replace("-", "_"))[i] |= codes
    return e


def rule_dirs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def project_roots(d: Path) -> list[Path]:
    subs = sorted(p.parent for p in d.rglob("pyproject.toml") if p.parent != d)
    return [d, *subs]


def corpus_files(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*.py") if p.name != "__init__.py" or p.stat().st_size)


def parsed_corpus_files() -> Iterator[tuple[Path, str, ast.Module]]:
    """Every corpus file that CPython parses: (path, text, tree)."""
    for path in sorted(CORPUS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        yield path, text, tree


_cache: dict[tuple[Path, bool], dict[Path, list[Diagnostic]]] = {}


def run_project(root: Path, exclude_subprojects: list[Path], gates: bool = True) -> dict[Path, list[Diagnostic]]:
    registry = load_registry()
    if (root / "pyproject.toml").is_file():
        config = load_config([root], registry)
    else:
        config = Config(root=root)
    rule = registry.by_name(root.name.replace("_", "-")) if root.parent == CORPUS else None
    extra = (rule.code,) if rule is not None else ()
    rel_ex = tuple(p.relative_to(root).as_posix() for p in exclude_subprojects)
    config = config.with_overrides(
        extend_select=tuple(config.extend_select) + extra,
        extend_exclude=tuple(config.extend_exclude) + rel_ex,
    )
    engine = Engine(config, registry, jobs=1, gates=gates)
    result = engine.run([root])
    assert not result.errors, result.errors
    out: dict[Path, list[Diagnostic]] = defaultdict(list)
    for d in result.diagnostics:
        if not d.suppressed:
            out[root / d.path].append(d)
    return out


def diagnostics_for(d: Path, gates: bool = True) -> dict[Path, list[Diagnostic]]:
    """All diagnostics of a rule's corpus folder, by absolute file path
    (with ``gates`` off: every rule on every whole file, no prefilter)."""
    if (d, gates) not in _cache:
        roots = project_roots(d)
        merged: dict[Path, list[Diagnostic]] = {}
        for r in roots:
            subs = [s for s in roots if s != r and r in s.parents]
            merged.update(run_project(r, subs, gates))
        _cache[d, gates] = merged
    return _cache[d, gates]


def lint_snippet(code: str, select: str, root: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    """The findings of rule ``select`` in ``code`` (dedented), through the
    whole pipeline, as a file of a project at ``root`` with the rule's
    ``options`` (with ``gates`` off: no prefilter)."""
    import textwrap

    items = tuple((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in options.items())
    config = Config(root=root, select=(select,), rule_options=((select, items),) if items else ())
    diags, errors = Engine(config, load_registry(), jobs=1, gates=gates).lint_text(
        textwrap.dedent(code), root / "mod.py"
    )
    assert not errors, errors
    return diags


def with_gates_open_and_closed(
    folder: Path, select: str, **extra: object
) -> Iterator[tuple[Path, str, list[Diagnostic], list[Diagnostic]]]:
    """(file, text, findings with the gates open, with every gate closed) of
    rule ``select`` on each corpus file below ``folder``, under its project's
    options updated with ``extra``."""
    registry = load_registry()
    for root in project_roots(folder):
        own = (root / "pyproject.toml").is_file()
        config = load_config([root], registry) if own else Config(root=root)
        options = {**dict(config.options_for(select)), **extra}
        for f in corpus_files(root):
            text = f.read_text(encoding="utf-8")
            yield (
                f,
                text,
                lint_snippet(text, select, root, **options),
                lint_snippet(text, select, root, gates=False, **options),
            )
