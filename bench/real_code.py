"""Every rule over real engine trees: findings per rule and per file, and the
run time. The verdict on each finding lives in docs/triage/SHDxxx.md.

    python bench/real_code.py [--spec vllm==0.33.0 --spec sglang==0.5.23] [--select CODES] [--list]

Trees come from ../shared/tools/fetch-engines.sh (cached under
$SHARDLINT_CORPUS, default ~/.cache/shardlint-corpus). Runs without the cache,
so the time is a cold run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from speed import engine_tree  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", action="append", help="NAME==VERSION (repeatable)")
    ap.add_argument("--select", help="codes to run (default: the default rules)")
    ap.add_argument("--list", action="store_true", help="print every finding (path:line code message)")
    args = ap.parse_args()
    specs = args.spec or ["vllm==0.33.0", "sglang==0.5.23"]
    total = Counter()
    for spec in specs:
        root = engine_tree(spec)
        pkg = root / spec.split("==")[0].replace("-", "_")
        cmd = [sys.executable, "-m", "linter", "check", str(pkg), "--no-cache", "-q", "-v",
               "--output-format", "json", "--exit-zero"]
        if args.select:
            cmd += ["--select", args.select]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            print(p.stderr, file=sys.stderr)
            raise SystemExit(f"{spec}: shardlint exited {p.returncode}")
        findings = json.loads(p.stdout)
        internal = [ln for ln in p.stderr.splitlines() if "internal error" in ln]
        stats = [ln for ln in p.stderr.splitlines() if "files checked" in ln]
        print(f"== {spec}: {len(findings)} findings in {wall:.1f}s wall")
        for ln in stats:
            print("   " + ln.replace("shardlint: ", ""))
        if internal:
            print(f"   {len(internal)} INTERNAL ERRORS:")
            for ln in internal:
                print("     " + ln)
        per_rule = Counter(f["code"] for f in findings)
        for code, n in sorted(per_rule.items()):
            print(f"   {code}: {n}")
            total[code] += n
        per_file = Counter((f["path"], f["code"]) for f in findings)
        for (path, code), n in sorted(per_file.items()):
            print(f"     {path}  {code} x{n}")
        if args.list:
            for f in findings:
                print(f"     {f['path']}:{f['line']}:{f['column']} {f['code']} {f['message']}")
    print("== total: " + ", ".join(f"{c} {n}" for c, n in sorted(total.items())))


if __name__ == "__main__":
    main()
