"""The audit end to end, as plain data: lint base, fork, upstream and the
overlay with one shared cache, classify, find the contract drift."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack

from linter.config import Config
from linter.registry import Registry

from linter.audit.classify import classify, lint_tree, with_upstream_hints
from linter.audit.contracts import contract_drift
from linter.audit.report import AuditResult
from linter.audit.trees import Tree, build_overlay, shared_view

Say = Callable[[str], None]


def run_audit(
    fork: Tree,
    base: Tree,
    upstream: Tree,
    config: Config,
    registry: Registry,
    stack: ExitStack,
    cache: object | None = None,
    jobs: int | None = None,
    say: Say | None = None,
    file_progress: Callable[[str, int, int], None] | None = None,
) -> AuditResult:
    """Base first, then the fork (mostly the base's files: the shared cache
    answers for those), upstream, and the overlay, whose upstream files are
    hard links to upstream's (known to the cache) and whose checked files are
    the fork's own."""
    tell = say or (lambda _msg: None)
    overlay = build_overlay(fork, base, upstream, stack)
    identical = sum(
        1 for rel, h in fork.files.items() if base.files.get(rel) == h and upstream.files.get(rel) == h
    )
    timings: dict[str, float] = {}
    runs: dict[str, dict[str, int]] = {}
    found = {}
    errors = []
    fork_view = shared_view(fork, base, stack)
    fork_files = sorted(overlay.fork_changed & set(overlay.tree.files))
    steps = [(base, None), (fork_view, None), (upstream, None), (overlay.tree, fork_files)]
    for i, (tree, only) in enumerate(steps, 1):
        what = f"{len(tree.files)} files"
        if only is not None:
            what = f"{len(only)} fork files checked against {what}"
        tell(f"[{i}/{len(steps)}] scanning {tree.describe()}: {what}")
        started = time.perf_counter()
        diags, errs, st = lint_tree(tree, config, registry, cache, jobs, only, file_progress)
        timings[tree.label] = time.perf_counter() - started
        runs[tree.label] = st.to_dict()
        tell(f"[{i}/{len(steps)}] {tree.label}: {len(diags)} findings in {timings[tree.label]:.1f}s "
             f"({st.parsed} files parsed, {st.cached} checks answered by the cache)")
        found[tree.label] = diags
        errors += errs
    items = classify(found["fork"], found["base"], found["upstream"], found["overlay"], overlay.fork_changed)
    items = with_upstream_hints(items, base, upstream)
    started = time.perf_counter()
    drift = contract_drift(fork, base, upstream, overlay.fork_changed)
    timings["contract drift"] = time.perf_counter() - started
    return AuditResult(
        fork=fork,
        base=base,
        upstream=upstream,
        items=items,
        drift=drift,
        manual_merge=overlay.manual_merge,
        removed_upstream=overlay.removed_upstream,
        fork_changed=overlay.fork_changed, errors=errors, timings=timings, identical_files=identical, runs=runs,
    )
