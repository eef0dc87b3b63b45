"""Where the scan phase's CPU goes, per needle, gate and fact collector: the
table to read before making a cold run faster.

    python bench/scan_profile.py [--spec vllm==0.33.0] [--top 30]

Replays the engine's scan (``linter.engine.scan_text``) file by file in one
process, with the cyclic GC off as in a real run, and charges CPU seconds
(``time.process_time``) to each step: reading, hashing, each collector's
needles and facts, each rule's text gate and CPython-``ast`` gate, the
compile of the files some gate or collector needs an ``ast`` for, and the
facts hashes. Below the table: how many files pass each step and, per
consumer, the lines compiled because of it (``solo``: compiled for it alone;
the lines outside the statements every reader of a file scopes itself to,
``Rule.ast_scope``, or ``scan_scope`` where a reader narrows it inside
classes, are blanked before the compile)
— a whole file is compiled when any consumer needs it, so the compiled
lines of the loosest needle are what a tighter one can save.
"""

from __future__ import annotations

import argparse
import ast
import gc
import hashlib
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from speed import engine_tree  # noqa: E402

from linter.config import Config  # noqa: E402
from linter.engine import Engine, _has_tree_gate, _text_gate, facts_hash, read_source  # noqa: E402
from linter.facts import mask_text, scope_of, scoped_tree  # noqa: E402
from linter.files import discover, module_name_of  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default="vllm==0.33.0")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    base = engine_tree(args.spec)
    pkg = base / args.spec.split("==")[0].replace("-", "_")
    config = Config(root=base)
    eng = Engine(config, jobs=1)
    rules, collectors = eng.rules, eng.scan_collectors  # (lazy collectors: read on demand, not in the scan)
    files = discover([pkg], config, None)
    options = eng.scan_options

    cpu: dict[str, float] = defaultdict(float)
    passed: dict[str, int] = defaultdict(int)
    lines: dict[str, int] = defaultdict(int)
    clock = time.process_time
    gc.disable()
    for sf in files:
        t = clock()
        text, _ = read_source(Path(sf.abspath), sf.relpath)
        cpu["read"] += clock() - t
        if text is None:
            continue
        n = text.count("\n") + 1
        t = clock()
        hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        cpu["hash"] += clock() - t
        wanted = []
        for c in collectors:
            t = clock()
            hit = c.needles.match(text)
            cpu[f"needle:{c.name}"] += clock() - t
            if hit:
                wanted.append(c)
                passed[f"needle:{c.name}"] += 1
        cands = []
        for r in rules:
            t = clock()
            hit = _text_gate(r, text)
            cpu[f"text gate:{r.code}"] += clock() - t
            if hit:
                cands.append(r)
                passed[f"text gate:{r.code}"] += 1
        gated = [r for r in cands if _has_tree_gate(r)]
        readers = [c for c in wanted if c.needs_ast] + gated
        need = [c.name for c in wanted if c.needs_ast] + [r.code for r in gated]
        tree = None
        views = {}
        if need:
            t = clock()
            scopes = {r: scope_of(r, text, options, scan=True) for r in readers}
            cpu["scopes"] += clock() - t
            t = clock()
            source = text
            if all(v is not None for v in scopes.values()):
                spans = sorted({p for v in scopes.values() for p in v})  # type: ignore[union-attr]
                source = mask_text(text, spans)
                lines["of which blanked (scopes)"] += n - sum(text.count("\n", a, b) for a, b in spans)
            try:
                tree = compile(source, sf.relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, ValueError):
                tree = None
            cpu["compile"] += clock() - t
            if tree is not None:
                for r in readers:
                    views[r] = scoped_tree(tree, text, scopes[r])
            passed["compile"] += 1
            lines["compile (all)"] += n
            for k in need:
                lines[k] += n
            if len(need) == 1:
                lines[f"solo {need[0]}"] += n
        for r in gated:
            if tree is None:
                continue
            t = clock()
            try:
                keep = r.candidate_tree(views[r], text)
            except Exception:
                keep = True
            cpu[f"tree gate:{r.code}"] += clock() - t
            passed[f"tree gate:{r.code}"] += int(bool(keep))
        module = module_name_of(sf.relpath)
        for c in wanted:
            if c.needs_ast and tree is None:
                continue
            t = clock()
            data = c.collect(views.get(c) if c.needs_ast else None, text, module, sf.relpath)
            cpu[f"collect:{c.name}"] += clock() - t
            if data is not None:
                t = clock()
                facts_hash(data)
                cpu["facts hashes"] += clock() - t
    gc.enable()

    total = sum(cpu.values())
    print(f"{args.spec}: {len(files)} files, scan CPU {total:.2f} s (one process)\n")
    print(f"{'step':<34} {'CPU s':>7} {'share':>6}")
    for k, v in sorted(cpu.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{k:<34} {v:7.3f} {v / total:6.1%}")
    print(f"\n{'files passing':<34} {'files':>7}")
    for k, v in sorted(passed.items()):
        print(f"{k:<34} {v:7d}")
    print(f"\n{'lines compiled because of':<34} {'lines':>9}")
    for k, v in sorted(lines.items(), key=lambda kv: -kv[1]):
        print(f"{k:<34} {v:9d}")


if __name__ == "__main__":
    main()
