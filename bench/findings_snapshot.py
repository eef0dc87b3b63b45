"""Capture shardlint's findings (JSON, fingerprints included) on the corpus
and on real engine trees, and compare two captures.

    python bench/findings_snapshot.py capture OUT_DIR [--src DIR] [--trees ...]
    python bench/findings_snapshot.py compare BEFORE_DIR AFTER_DIR [--codes SHD101,...]

``capture`` runs ``python -m linter check TREE --output-format json`` with
the source tree ``--src`` first on ``sys.path`` (default: this checkout), so a
capture of an older commit is made from a ``git worktree`` of it. Engine trees
come from ``../shared/tools/fetch-engines.sh`` (``$SHARDLINT_CORPUS``, else
``~/.cache/shardlint-corpus``); a tree not fetched is skipped with a line on
stderr. ``compare`` prints every finding present on one side only, per
target, and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("SHARDLINT_CORPUS", Path.home() / ".cache" / "shardlint-corpus"))
DEFAULT_TREES = (
    "corpus",
    "vllm-0.33.0/vllm",
    "sglang-0.5.23/sglang",
    "vllm-0.26.0/vllm",
    "sglang-0.5.13/sglang",
    "vllm-0.10.2/vllm",
)


def _target(name: str, src: Path) -> Path:
    return src / name if name == "corpus" else CACHE / name


def _normalise(findings: list[dict]) -> list[dict]:
    return sorted(findings, key=lambda r: json.dumps(r, sort_keys=True))


def capture(out: Path, src: Path, trees: list[str], select: str | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(src))
    for name in trees:
        target = _target(name, src)
        if not target.exists():
            print(f"skip {name}: {target} not fetched", file=sys.stderr)
            continue
        cmd = [sys.executable, "-m", "linter", "check", str(target), "--output-format", "json",
               "--no-cache", "--exit-zero", "-q"]
        if select:
            cmd += ["--select", select]
        res = subprocess.run(cmd, cwd=target, env=env, capture_output=True, text=True)
        if res.returncode not in (0, 1):
            print(f"{name}: exit {res.returncode}\n{res.stderr[-2000:]}", file=sys.stderr)
        findings = json.loads(res.stdout or "[]")
        rows = _normalise(findings)
        (out / (name.replace("/", "__") + ".json")).write_text(json.dumps(rows, indent=1, sort_keys=True))
        print(f"{name}: {len(rows)} findings", file=sys.stderr)


def _strip_top(value, top: str):
    """Paths as seen from inside the tree: a run may report them from its
    parent (``vllm/x.py``) or from the tree itself (``x.py``)."""
    if isinstance(value, dict):
        return {k: (v[len(top):] if k == "path" and isinstance(v, str) and v.startswith(top) else _strip_top(v, top))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_top(v, top) for v in value]
    return value


def compare(before: Path, after: Path, codes: tuple[str, ...] = ()) -> int:
    differ = 0
    for b in sorted(before.glob("*.json")):
        a = after / b.name
        if not a.exists():
            print(f"{b.stem}: missing after")
            continue
        keep = (lambda r: r["code"].startswith(codes)) if codes else (lambda r: True)
        top = b.stem.rpartition("__")[2] + "/"
        old = {json.dumps(_strip_top(r, top), sort_keys=True) for r in json.loads(b.read_text()) if keep(r)}
        new = {json.dumps(_strip_top(r, top), sort_keys=True) for r in json.loads(a.read_text()) if keep(r)}
        gone, came = sorted(old - new), sorted(new - old)
        print(f"{b.stem}: {len(old)} before, {len(new)} after, {len(gone)} gone, {len(came)} new")
        for r in gone:
            print("  - " + r)
        for r in came:
            print("  + " + r)
        differ += len(gone) + len(came)
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("out", type=Path)
    c.add_argument("--src", type=Path, default=HERE)
    c.add_argument("--trees", nargs="*", default=list(DEFAULT_TREES))
    c.add_argument("--select", default=None, help="only these codes (comma-separated)")
    k = sub.add_parser("compare")
    k.add_argument("before", type=Path)
    k.add_argument("after", type=Path)
    k.add_argument("--codes", default="", help="compare only these codes or prefixes (comma-separated)")
    args = ap.parse_args()
    if args.cmd == "capture":
        capture(args.out, args.src.resolve(), args.trees, args.select)
        return 0
    return compare(args.before, args.after, tuple(c for c in args.codes.split(",") if c))


if __name__ == "__main__":
    sys.exit(main())
