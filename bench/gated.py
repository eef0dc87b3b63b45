"""Which files reach libcst, for which rules, and what each costs: the list to
read when tightening a rule's declared needles (``needles``,
``definition_needles``). ``lines`` counts the non-blank lines libcst parses
(the top-level definitions no admitted rule's ``definition_needles`` match
are blanked first, see ``linter.scan.check_source``).

    python bench/gated.py [--spec vllm==0.33.0] [--select SHD301] [--top 40]

Runs one cold check in-process with one job (no cache) and times every
libcst check (parse + traversal + the rules' work) per file. A gate is
worth tightening where many files are parsed and few have findings.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from speed import engine_tree  # noqa: E402

import linter.engine as engine  # noqa: E402
from linter.scan import check_source  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default="vllm==0.33.0")
    ap.add_argument("--select", help="codes to run (default: the default rules)")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    root = engine_tree(args.spec)
    pkg = root / args.spec.split("==")[0].replace("-", "_")

    rec: list[tuple[float, int, str, list[str], int]] = []
    orig = engine.check_text

    def timed(text, relpath, module, rules, config, facts, gates=None, cut=None, *rest, **how):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        out = orig(text, relpath, module, rules, config, facts, gates, cut, *rest, **how)
        took = time.perf_counter() - t
        source = check_source(text, relpath, gates, cut) if gates is not None else text
        parsed = sum(1 for line in source.splitlines() if line.strip())
        rec.append((took, parsed, relpath, [r.code for r in rules], len(out[0])))
        return out

    engine.check_text = timed
    from click.testing import CliRunner

    from linter.cli import main as cli

    argv = ["check", str(pkg), "--no-cache", "-j", "1", "-q", "--exit-zero"]
    if args.select:
        argv += ["--select", args.select]
    t0 = time.perf_counter()
    res = CliRunner().invoke(cli, argv)
    wall = time.perf_counter() - t0
    if res.exit_code != 0:
        raise SystemExit(res.output)
    per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0, 0])
    for t, lines, _, codes, found in rec:
        for c in codes:
            p = per[c]
            p[0] += t / len(codes)
            p[1] += 1
            p[2] += lines
            p[3] += found
    total = sum(r[0] for r in rec)
    print(f"{args.spec}: {len(rec)} files parsed with libcst, {sum(r[1] for r in rec)} lines, "
          f"{total:.2f}s in libcst checks, {wall:.1f}s whole run (-j 1)")
    print(f"{'rule':<8} {'files':>6} {'lines':>8} {'seconds':>8} {'findings':>9}")
    for code in sorted(per):
        s, n, lines, found = per[code]
        print(f"{code:<8} {n:>6} {lines:>8} {s:>8.2f} {found:>9}")
    print()
    for t, lines, rel, codes, found in sorted(rec, reverse=True)[: args.top]:
        print(f"{t:6.3f}s {lines:6d} lines  {found} found  {','.join(codes):<16} {rel}")


if __name__ == "__main__":
    main()
