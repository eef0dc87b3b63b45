"""Pool workers never outlive the run that started them.

A worker forked by a run that is then killed (``kill -9``, an OOM kill, a CI
timeout) is reparented and would go on (at 100 % CPU on a file that takes
long) until it finishes its queue. :func:`exit_with_parent` starts a daemon
thread in the worker that polls its parent's pid twice a second and ends
the worker when the parent is gone; a worker busy in Python code gets the
GIL back often enough for it to run.
"""

from __future__ import annotations

import os
import threading
import time

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
