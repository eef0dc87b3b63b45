"""Lint the trees and sort every finding into one class by matching
fingerprints across trees (:func:`linter.baseline.match`: rule and
fingerprint, on the same path first, then anywhere, one to one)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from linter.astwalk import first_line
from linter.baseline import match
from linter.config import Config
from linter.registry import Registry
from linter.types import Diagnostic, InternalError, RunStats

from linter.audit.trees import Tree

INTRODUCED = "introduced"
FIXED_UPSTREAM = "fixed-upstream"
ARRIVES = "arrives-with-upgrade"
CARRIED = "carried"
UPGRADE_INDUCED = "upgrade-induced"
# report order: what the upgrade meeting must act on first
CLASSES = (UPGRADE_INDUCED, INTRODUCED, FIXED_UPSTREAM, ARRIVES, CARRIED)
TITLES = {
    UPGRADE_INDUCED: "Upgrade-induced in fork code",
    INTRODUCED: "Introduced by the fork",
    FIXED_UPSTREAM: "Fixed upstream, still in the fork",
    ARRIVES: "Arrives with the upgrade",
    CARRIED: "Carried (in all three)",
}


@dataclass(frozen=True)
class Classified:
    cls: str
    diagnostic: Diagnostic
    tree: str  # the tree the finding is reported in: fork, upstream or overlay
    upstream_hint: str = ""  # fixed-upstream: where the fixed code lives upstream
    base_diagnostic: Diagnostic | None = None  # fixed-upstream: the finding in the base tree


def lint_tree(
    tree: Tree,
    config: Config,
    registry: Registry,
    cache: object | None,
    jobs: int | None,
    only: Sequence[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[list[Diagnostic], list[InternalError], RunStats]:
    """One engine run over ``tree`` (its whole project read for facts; only
    the files ``only`` names checked, when given). The cache is shared by
    every tree of an audit: a file identical in two trees is scanned and
    checked once, unless the facts it depends on differ."""
    from linter.engine import Engine

    engine = Engine(replace(config, root=tree.root), registry, jobs=jobs, cache=cache)
    engine.progress = progress
    targets = [tree.root / rel for rel in only] if only is not None else [tree.root]
    if only is not None and not targets:
        return [], [], RunStats()
    result = engine.run(targets)
    return [d for d in result.diagnostics if not d.suppressed], list(result.errors), result.stats


def classify(
    fork: Sequence[Diagnostic],
    base: Sequence[Diagnostic],
    upstream: Sequence[Diagnostic],
    overlay: Sequence[Diagnostic],
    fork_changed: set[str],
) -> list[Classified]:
    """Each fork finding is introduced (not in B), carried (in B and U) or
    fixed upstream (in B, not in U); each upstream finding in neither B nor
    F arrives with the upgrade; each finding of the overlay in a file the
    fork changed that neither F nor U has is upgrade-induced."""
    out: list[Classified] = []
    in_base, introduced, _ = match(list(fork), list(base))
    out += [Classified(INTRODUCED, d, "fork") for d in introduced]
    base_side = [b for _, b in in_base]
    still, _, gone_upstream = match(base_side, list(upstream))
    carried_b = {id(b) for b, _ in still}
    for f, b in in_base:
        if id(b) in carried_b:
            out.append(Classified(CARRIED, f, "fork"))
        else:
            out.append(Classified(FIXED_UPSTREAM, f, "fork", base_diagnostic=b))
    _, new_upstream, _ = match(list(upstream), list(base))
    _, arrives, _ = match(new_upstream, list(fork))
    out += [Classified(ARRIVES, d, "upstream") for d in arrives]
    fork_code = [d for d in overlay if d.path in fork_changed]
    _, not_in_fork, _ = match(fork_code, list(fork))
    _, induced, _ = match(not_in_fork, list(upstream))
    out += [Classified(UPGRADE_INDUCED, d, "overlay") for d in induced]
    return out


# -- where a finding's code lives upstream -----------------------------------


def enclosing_function(text: str, line: int) -> str:
    """The qualified name of the innermost function or class holding
    ``line`` ('' at module level or when the text does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return ""
    best = ""

    def walk(body: Sequence[ast.stmt], prefix: str) -> None:
        nonlocal best
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = first_line(node)
                if start <= line <= (node.end_lineno or node.lineno):
                    best = prefix + node.name
                    walk(node.body, best + ".")

    walk(tree.body, "")
    return best


def definitions(text: str) -> dict[str, int]:
    """Qualified name -> line of every function and class of a module."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[str, int] = {}

    def walk(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.setdefault(prefix + node.name, node.lineno)
                walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return out


def upstream_location(d: Diagnostic, base: Tree, upstream: Tree) -> str:
    """Where the code of a fixed-upstream finding lives in the upstream tree:
    'path:line Qualified.name' in the same file, else in a file of the same
    name elsewhere (a move), else a note that it is gone."""
    qual = enclosing_function(_read(base.root / d.path), d.span.line)
    if not qual:
        return f"{d.path} (module level)" if d.path in upstream.files else "file removed upstream"
    name = d.path.rsplit("/", 1)[-1]
    candidates = [d.path] if d.path in upstream.files else []
    candidates += sorted(r for r in upstream.files if r != d.path and r.rsplit("/", 1)[-1] == name)
    for rel in candidates[:20]:
        line = definitions(_read(upstream.root / rel)).get(qual)
        if line is not None:
            return f"{rel}:{line} {qual}"
    return f"{qual} not found upstream (removed or renamed)"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def with_upstream_hints(items: list[Classified], base: Tree, upstream: Tree) -> list[Classified]:
    return [
        replace(c, upstream_hint=upstream_location(c.base_diagnostic or c.diagnostic, base, upstream))
        if c.cls == FIXED_UPSTREAM
        else c
        for c in items
    ]
