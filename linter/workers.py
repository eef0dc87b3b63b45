"""The run's processes: pool workers never outlive the run that started
them, and the cyclic garbage collector is kept out of the scan's way.

A worker forked by a run that is then killed (``kill -9``, an OOM kill, a CI
timeout) is reparented and would go on (at 100 % CPU on a file that takes
long) until it finishes its queue. :func:`exit_with_parent` starts a daemon
thread in the worker that polls its parent's pid twice a second and ends
the worker when the parent is gone; a worker busy in Python code gets the
GIL back often enough for it to run.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

POLL_SECONDS = 0.5


def exit_with_parent() -> None:
    """In a freshly forked worker: end it as soon as its parent is gone."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, name="shardlint-parent-watch", daemon=True).start()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic cyclic garbage collection while scanning. The scan
    allocates millions of objects (CPython ``ast`` trees, facts) and keeps
    the facts: the collector, triggered every 700 net allocations, kept
    walking half-built trees and the growing heap, ~17 % of the scan's CPU on
    vLLM. Trees and facts are acyclic (ast nodes have no parent links, facts
    are JSON-shaped), so reference counting frees them; the few cycles a file
    leaves are collected between files by ``linter.engine._scan_job``."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _FROZEN[0]:
            # inside a run's ``gc_frozen``: what the pause left alive (the
            # scan's results) joins the frozen set before the collector is
            # back, or its first collections walk all of it
            gc.freeze()
        if was:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """libcst checks leave reference cycles, so the collector stays on after
    the scan; but everything alive when the scan ends (its results, loaded
    modules) is moved out of its sight: collections then walk only what the
    merge, the gates and the checks allocate (the first collection after the
    scan walked every scan result; a big file's check spent ~20 % more
    otherwise). Forked workers inherit the frozen set."""
    if gc.get_freeze_count():  # somebody else froze: leave it to them
        yield
        return
    gc.freeze()
    _FROZEN[0] = True
    try:
        yield
    finally:
        _FROZEN[0] = False
        gc.unfreeze()


# whether this process is inside a ``gc_frozen`` that froze the heap itself
_FROZEN = [False]


def keep_out_of_sight() -> None:
    """What is alive now stays alive a long while (a language server's
    project facts): collect the garbage, then freeze the rest, so that the
    collector's full collections during each later lint walk only what that
    lint allocates (in the server, a tenth of a large file's re-lint went to
    walking the facts). :func:`bring_back` undoes it before they are
    replaced."""
    gc.collect()
    gc.freeze()


def bring_back() -> None:
    """Unfreeze what :func:`keep_out_of_sight` froze: facts about to be
    dropped must be collectable again."""
    gc.unfreeze()
