"""The editor's path: re-lint one buffer through ``Engine.lint_text`` (what
the language server and the flake8 plugin call), with the project's facts
already in memory, against libcst's own parse of the same text in this run.

    python bench/single_file.py [--runs 7]

Targets: vLLM's model_executor/models/llama.py (a typical model file) and
v1/worker/gpu_model_runner.py (its largest file). ``lint_text`` is the file
as on disk (flake8's case, an editor opening a file: the project's facts
hold its facts already); ``edited`` the same text with one line appended, so
that the buffer's facts are collected again (the editor's case before its
facts are laid over, see ``linter.lsp.buffers``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from speed import engine_tree  # noqa: E402

import libcst as cst  # noqa: E402

from linter.config import load_config  # noqa: E402
from linter.engine import Engine  # noqa: E402
from linter.registry import load_registry  # noqa: E402

TARGETS = ("model_executor/models/llama.py", "v1/worker/gpu_model_runner.py")


def median_time(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    tree = engine_tree("vllm==0.33.0") / "vllm"
    registry = load_registry()
    config = load_config([tree], registry)
    engine = Engine(config, registry, jobs=1)
    t = time.perf_counter()
    engine.project_facts()
    print(f"project facts (once per editor session): {time.perf_counter() - t:.2f}s", file=sys.stderr)
    print(f"{'file':<36} {'lines':>6} {'lint_text ms':>13} {'edited ms':>10} {'libcst parse ms':>16} {'ratio':>6}")
    for rel in TARGETS:
        path = tree / rel
        text = path.read_text(encoding="utf-8")
        engine.lint_text(text, path)  # warm imports
        lint = median_time(lambda: engine.lint_text(text, path), args.runs)
        edited_text = text + "# edited\n"
        edited = median_time(lambda: engine.lint_text(edited_text, path), args.runs)
        parse = median_time(lambda: cst.parse_module(text), args.runs)
        lines = text.count("\n")
        print(f"{rel:<36} {lines:>6} {lint * 1000:>13.0f} {edited * 1000:>10.0f} {parse * 1000:>16.0f} {lint / parse:>6.2f}")


if __name__ == "__main__":
    main()
