"""Audit speed: ``shardlint audit`` of a real fork (three trees and the
overlay) against one cold ``shardlint check`` of one tree, both measured in
this one run, alternated, each with a fresh cache.

    python bench/audit.py [--runs 1] [--fork SPEC --base SPEC --upstream SPEC] [--check-tree fork|base|upstream]

Default trees (fetched into $SHARDLINT_CORPUS or ~/.cache/shardlint-corpus):
nm-vllm 0.6.3.0 (Neural Magic's fork of vLLM 0.6.3; its package folder is
``vllm/``), vLLM 0.6.3 and vLLM 0.10.2. The target is an audit within 2x one
cold check of the largest tree (upstream by default). Prints wall and CPU
(user + system of the command and its workers) medians and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
CORPUS = Path(os.environ.get("SHARDLINT_CORPUS", Path.home() / ".cache" / "shardlint-corpus"))


def tree(spec: str) -> Path:
    """A fetched tree (fetch-engines.sh layout: CORPUS/NAME-VERSION/)."""
    name, _, version = spec.partition("==")
    dest = CORPUS / f"{name}-{version}"
    if not any(dest.glob("*/__init__.py")):
        subprocess.run(["bash", str(SHARED / "tools" / "fetch-engines.sh"), str(CORPUS), spec], check=True)
    if not any(dest.glob("*/__init__.py")):
        raise SystemExit(f"{dest} holds no Python package (a fork whose package is named otherwise: "
                         f"unpack its wheel's package folder there)")
    return dest


def run_cpu(cmd: list[str], ok: tuple[int, ...]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the command and its
    workers) and stdout; an exit code outside ``ok`` stops the benchmark."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout.decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--fork", default="nm-vllm==0.6.3.0")
    ap.add_argument("--base", default="vllm==0.6.3")
    ap.add_argument("--upstream", default="vllm==0.10.2")
    ap.add_argument("--check-tree", choices=("fork", "base", "upstream"), default="upstream",
                    help="the tree whose one cold check is the yardstick (default: upstream, the largest)")
    ap.add_argument("--jobs", "-j", type=int, default=None)
    args = ap.parse_args()
    trees = {"fork": tree(args.fork), "base": tree(args.base), "upstream": tree(args.upstream)}
    exe = [sys.executable, "-m", "linter"]
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    check_w, check_c, audit_w, audit_c = [], [], [], []
    stats = {}
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
            w, c, _ = run_cpu([*exe, "check", str(trees[args.check_tree]), "-q", "--exit-zero",
                               "--cache-dir", f"{tmp}/check-cache", *jobs], (0,))
            check_w.append(w)
            check_c.append(c)
            w, c, out = run_cpu([*exe, "audit", "--fork", str(trees["fork"]), "--base", str(trees["base"]),
                                 "--upstream", str(trees["upstream"]), "-q", "--output-format", "json",
                                 "--fail-on", "none", "--cache-dir", f"{tmp}/audit-cache", *jobs], (0,))
            audit_w.append(w)
            audit_c.append(c)
            stats = json.loads(out)
        print(f"run {i + 1}: check {check_w[-1]:.2f}s (CPU {check_c[-1]:.2f}s)  "
              f"audit {audit_w[-1]:.2f}s (CPU {audit_c[-1]:.2f}s)", file=sys.stderr)
    cw, cc = statistics.median(check_w), statistics.median(check_c)
    aw, ac = statistics.median(audit_w), statistics.median(audit_c)
    files = {label: len(list(t.rglob("*.py"))) for label, t in trees.items()}
    print(f"trees: fork {args.fork} ({files['fork']} files), base {args.base} ({files['base']}), "
          f"upstream {args.upstream} ({files['upstream']})")
    print(f"one cold check of {args.check_tree}: {cw:.2f}s wall, {cc:.2f}s CPU")
    print(f"audit (3 trees + overlay):     {aw:.2f}s wall, {ac:.2f}s CPU")
    print(f"ratio audit / check: {aw / cw:.2f}x wall, {ac / cc:.2f}x CPU (target <= 2x)")
    print(f"fork files identical in base and upstream: {stats.get('identical_files')}")
    for label, st in stats.get("runs", {}).items():
        print(f"  {label:<9} {st['seconds']:>7.2f}s  files {st['files']:>5}  parsed {st['parsed']:>4}  "
              f"checks from the cache {st['cached']:>4}")


if __name__ == "__main__":
    main()
