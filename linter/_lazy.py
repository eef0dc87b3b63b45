"""Deferred import of libcst for the command line.

Importing libcst costs ~0.12 s (its node classes are hundreds of
dataclasses), more than a warm run or a run over a few files that no rule
can match. The scan phase (needles, text and ``ast`` gates, fact
collectors) never touches libcst, but it lives in the rule modules, which
``import libcst as cst`` at the top and use ``cst`` only inside functions.

:func:`defer_libcst` puts a stand-in module in ``sys.modules['libcst']``:
every ``import libcst as cst`` binds it for free, and the first attribute
it does not have (``cst.Name``, or the ``__path__`` an
``import libcst.metadata`` asks for) imports the real package, which then
takes its place in ``sys.modules``; the stand-in copies the real module's
names, so later lookups through it cost what a module lookup costs. A
process that only scans, or reads its findings from the cache, never loads
libcst. (The standard library's ``LazyLoader`` cannot do this: CPython reads
``__spec__`` on every ``import libcst``, which loads a lazy module at once.)

The CLI calls it before the rules are imported; library users, the flake8
plugin and the language server import libcst the usual way (they parse
every file anyway), and :func:`defer_libcst` does nothing once libcst is
imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

_NAME = "libcst"


class _Deferred(types.ModuleType):
    """Stands in for libcst until a name is needed from it."""

    def __getattr__(self, name: str) -> Any:
        real = _load(self)
        value = getattr(real, name)
        self.__dict__.update(real.__dict__)
        self.__dict__[name] = value  # (a submodule attribute set after the copy)
        return value


def _load(stand_in: _Deferred) -> types.ModuleType:
    if sys.modules.get(_NAME) is stand_in:
        del sys.modules[_NAME]
    return importlib.import_module(_NAME)


def defer_libcst() -> None:
    """Make libcst load on first use, unless it is already imported."""
    if _NAME in sys.modules:
        return
    spec = importlib.util.find_spec(_NAME)
    if spec is None:  # pragma: no cover - not installed: the first use raises ImportError
        return
    stand_in = _Deferred(_NAME)
    # what ``import libcst`` reads from a module it finds in sys.modules (no
    # ``__path__``: a submodule import must load the package first)
    stand_in.__spec__ = spec
    stand_in.__loader__ = spec.loader
    sys.modules[_NAME] = stand_in


def load_in_background() -> threading.Thread | None:
    """Start loading a deferred libcst in a thread (None if there is
    nothing to load). For a process that waits on its workers and will
    parse afterwards: the import overlaps the wait. The caller joins the
    thread before it touches libcst or forks, and nothing else may use
    libcst meanwhile."""
    stand_in = sys.modules.get(_NAME)
    if not isinstance(stand_in, _Deferred) or libcst_loaded():
        return None

    def load() -> None:
        try:
            stand_in.__getattr__("Module")
        except Exception:  # noqa: BLE001 - the first use in the main thread raises it again
            pass

    thread = threading.Thread(target=load, name="shardlint-load-libcst", daemon=True)
    thread.start()
    return thread


def libcst_loaded() -> bool:
    """Whether libcst's code has run in this process (the stand-in in
    ``sys.modules`` does not count)."""
    return "libcst._nodes.base" in sys.modules
