"""Whole-tree speed benchmark: shardlint cold / warm / one file changed against
ruff (default rules) and Fixit 2.2.1 with an equivalent ``min(x, <int>)``
rule, all measured in this one run on a private copy of vLLM 0.33.0.

    python bench/speed.py [--runs 3] [--skip-fixit] [--ruff PATH] [--fixit PATH]

Peers: ``ruff`` and ``fixit`` from PATH, or from a venv made with
``python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install ruff fixit==2.2.1``
(``--ruff``/``--fixit`` take explicit paths). Prints medians, ratios against
ruff measured here, and each command's peak RSS (largest process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def engine_tree(spec: str) -> Path:
    cache = Path(os.environ.get("SHARDLINT_CORPUS", Path.home() / ".cache" / "shardlint-corpus"))
    name, _, version = spec.partition("==")
    dest = cache / f"{name}-{version}"
    if not (dest / ".complete").exists():
        subprocess.run(["bash", str(SHARED / "tools" / "fetch-engines.sh"), str(cache), spec], check=True)
    return dest


def timed(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of the largest process of ``cmd``; an
    exit code outside ``ok`` stops the benchmark (a crash is not a time)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode() if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{err[-2000:]}")
    return wall, ru.ru_maxrss / 1024


def find_tool(name: str, given: str | None) -> str | None:
    if given:
        return given
    for cand in (shutil.which(name), f"/tmp/bench-venv/bin/{name}"):
        if cand and Path(cand).exists():
            return cand
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-fixit", action="store_true")
    ap.add_argument("--ruff")
    ap.add_argument("--fixit")
    args = ap.parse_args()

    src = engine_tree("vllm==0.33.0")
    work = Path(tempfile.mkdtemp(prefix="shardlint-bench-"))
    tree = work / "vllm"
    shutil.copytree(src / "vllm", tree)
    files = sum(1 for _ in tree.rglob("*.py"))
    shardlint = [sys.executable, "-m", "linter", "check", "vllm", "-q", "--exit-zero"]
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    # As after `pip install`, which compiles the package to bytecode: without
    # this, a machine with PYTHONDONTWRITEBYTECODE set recompiles shardlint's
    # ~30 modules from source on every run (~0.08 s of each warm run here).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    cache = work / ".shardlint_cache"
    rows: list[tuple[str, list[float], float]] = []

    def measure(label: str, cmd: list[str], before=None, runs: int = args.runs, e=None, ok=(0,)) -> None:
        walls, peak = [], 0.0
        for i in range(runs):
            if before:
                before(i)
            w, rss = timed(cmd, work, e, ok)
            walls.append(w)
            peak = max(peak, rss)
        rows.append((label, walls, peak))
        print(f"  {label}: {statistics.median(walls):.2f}s", file=sys.stderr, flush=True)

    print(f"vLLM 0.33.0 copy: {files} files in {tree}", file=sys.stderr)
    measure("shardlint cold", shardlint, before=lambda i: shutil.rmtree(cache, ignore_errors=True), e=env)
    measure("shardlint warm", shardlint, runs=max(5, args.runs), e=env)
    target = tree / "model_executor" / "models" / "llama.py"

    def touch(i: int) -> None:
        with target.open("a") as fh:
            fh.write(f"\n# bench edit {time.time_ns()} {i}\n")

    measure("shardlint one file changed", shardlint, before=touch, e=env)
    ruff = find_tool("ruff", args.ruff)
    if ruff:
        measure("ruff default --no-cache", [ruff, "check", "--no-cache", "--exit-zero", "-q", "vllm"])
        shutil.rmtree(work / ".ruff_cache", ignore_errors=True)
        timed([ruff, "check", "--exit-zero", "-q", "vllm"], work)
        measure("ruff default warm", [ruff, "check", "--exit-zero", "-q", "vllm"])
    fixit = None if args.skip_fixit else find_tool("fixit", args.fixit)
    if fixit:
        fenv = dict(os.environ, PYTHONPATH=str(HERE))
        # Fixit exits 1 when it reports something
        measure("fixit 2.2.1 min(x,<int>)", [fixit, "--rules", "fixit_rules.min_int", "lint", "vllm"],
                runs=1, e=fenv, ok=(0, 1))

    base = next((statistics.median(w) for label, w, _ in rows if label == "ruff default --no-cache"), None)
    print(f"\n{'command':<30} {'median s':>9} {'runs':>5} {'vs ruff cold':>13} {'peak RSS MB':>12}")
    for label, walls, peak in rows:
        med = statistics.median(walls)
        ratio = f"{med / base:.2f}x" if base else "-"
        print(f"{label:<30} {med:>9.2f} {len(walls):>5} {ratio:>13} {peak:>12.0f}")
    cold = statistics.median(rows[0][1])
    for label, walls, _ in rows:
        if label.startswith("fixit"):
            print(f"\nshardlint cold is {statistics.median(walls) / cold:.1f}x faster than Fixit")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
