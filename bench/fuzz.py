"""Nightly-sized fuzzing: the checks of tests/test_fuzz.py for as long as
asked, over more inputs, with counts at the end.

    python bench/fuzz.py --minutes 10 [--seed 1] [--trees ~/.cache/shardlint-corpus/vllm-0.33.0/vllm]
                         [--out /tmp/fuzz-found]

Rotates over four sources, each input through every rule (``select = ALL``)
and ``--fix`` (unsafe fixes too), in one process:

- mutated files: a random mutation (tests/test_fuzz.py ``mutations``) of a
  random corpus file, or of a file of ``--trees`` (real engine code);
- deep nesting: a random recursive construct at a random depth (1-400,
  sometimes past ``linter.deep.MAX_NESTING``) in a function holding a finding;
- hypothesmith: a program from Python's grammar, and one from valid trees.

Anything but findings (an exception, an internal error, a finding lost in
deep code, a fix that breaks the code) is a problem: printed, and the input
written to ``--out``. Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from test_fuzz import DEEP, Problem, check_deep, check_program, corpus_files, fuzz_engine, mutations  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--trees", type=Path, nargs="*", default=[], help="folders of real code to mutate too")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "shardlint-fuzz-found")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    warnings.simplefilter("ignore")
    from linter.deep import MAX_NESTING

    files = corpus_files() + [p for t in args.trees for p in sorted(t.expanduser().rglob("*.py"))]
    engine = fuzz_engine(Path(tempfile.mkdtemp(prefix="shardlint-fuzz-")))
    try:
        import hypothesmith

        strategies = [hypothesmith.from_grammar(), hypothesmith.from_node()]
    except ImportError:
        strategies = []
    counts: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    found: list[tuple[str, str]] = []
    deadline = time.monotonic() + args.minutes * 60
    kinds = ["mutated", "deep"] + (["hypothesmith"] if strategies else [])
    while time.monotonic() < deadline:
        kind = rng.choice(kinds)
        label, text = "", ""
        try:
            if kind == "mutated":
                f = rng.choice(files)
                try:
                    source = f.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                label, text = rng.choice(list(mutations(source, rng)))
                label = f"{f.name} ({label})"
                n, changed = check_program(engine, text, engine.config.root / f.name)
                outcomes["mutated: fixed" if changed else ("mutated: findings" if n else "mutated: clean")] += 1
            elif kind == "deep":
                name = rng.choice(sorted(DEEP))
                depth = MAX_NESTING + 50 if rng.random() < 0.02 else rng.randint(1, 400)
                label, text = f"{name} x{depth}", DEEP[name](depth)
                outcomes["deep: " + check_deep(engine, text, engine.config.root / "deep.py")] += 1
            else:
                text = rng.choice(strategies).example()
                label = "generated"
                n, changed = check_program(engine, text, engine.config.root / "gen.py")
                outcomes["hypothesmith: fixed" if changed else ("hypothesmith: findings" if n else "hypothesmith: clean")] += 1
            counts[kind] += 1
        except Problem as exc:
            counts[kind] += 1
            found.append((label, str(exc)))
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{len(found):04d}.py").write_text(text)
            print(f"PROBLEM {kind} {label}: {str(exc)[:300]}", flush=True)
    total = sum(counts.values())
    print(f"seed {seed}: {total:,} inputs in {args.minutes:g} min: "
          + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
    for k, v in sorted(outcomes.items()):
        print(f"  {k}: {v:,}")
    print(f"problems: {len(found)}" + (f" (inputs in {args.out})" if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
