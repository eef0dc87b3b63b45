"""The bug-history benchmark: shardlint against real bugs that vLLM and SGLang
shipped and later fixed, recorded in bench/history/cases/*.toml (the format:
bench/history/README.md).

    python bench/history.py [--rule SHD401 ...] [--cases FILE ...] [--no-fetch] [--no-cache]

For each release the cases name, the tree is fetched (when missing) with
../shared/tools/fetch-engines.sh into $SHARDLINT_CORPUS (default
~/.cache/shardlint-corpus); shardlint checks only the case files, with the
whole tree as the project root (so project facts cover every module) and
only the rules the cases name. A flag case is detected when a finding of its
rule has its primary location, or a related location of one of its notes,
inside the case's function; a clean case is a false alarm when such a
finding exists. Prints, per rule, recall over the flag cases and the
false-alarm rate over the clean ones, then every miss and every false alarm
with its evidence, and the cases that could not be run (tree, file or
function unavailable).

Exit status: 0 after printing (a benchmark, not a gate); 2 when a case file
is malformed (the message names the file and the case's index).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES_DIR = REPO / "bench" / "history" / "cases"
FETCH = REPO.parent / "shared" / "tools" / "fetch-engines.sh"
MODULE = "<module>"

FIELDS = ("package", "version", "path", "function", "rule", "expect", "evidence")
# What a flag case rests on (optional field ``basis``): "public" (default) --
# an issue or pull request, named in ``evidence``; "gpu" -- no public report,
# the outcome confirmed by running the release's kernel (recorded in the
# rule's triage doc); "reading" -- no public report, the failure shown from
# the code and a real model's dimensions. The report gives recall over all
# flag cases and over the public ones alone.
BASES = ("public", "gpu", "reading")
EXPECTS = ("flag", "clean")
_RULE = re.compile(r"SHD\d{3}")
_QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class CaseError(Exception):
    """A malformed case file; the message names the file and the case."""


@dataclass(frozen=True)
class Case:
    package: str
    version: str
    path: str
    function: str
    rule: str
    expect: str
    evidence: str
    source: str  # "FILE #INDEX", for messages
    basis: str = "public"

    @property
    def release(self) -> str:
        return f"{self.package}-{self.version}"


@dataclass(frozen=True)
class Location:
    """A place a finding points at: its primary location or a note's."""

    path: str  # relative to the tree root, POSIX
    line: int


@dataclass
class Finding:
    code: str
    message: str
    locations: list[Location]

    @property
    def primary(self) -> Location:
        return self.locations[0]


@dataclass
class Outcome:
    case: Case
    status: str  # "hit" | "silent" | "unavailable"
    why: str = ""  # for unavailable: what is missing
    findings: list[Finding] = field(default_factory=list)


# -- case files -------------------------------------------------------------


def load_cases(paths: list[Path]) -> list[Case]:
    """Every case of ``paths``, validated; raises :class:`CaseError`."""
    cases: list[Case] = []
    for path in paths:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CaseError(f"{path}: cannot read: {exc}") from exc
        extra = set(data) - {"case"}
        if extra:
            raise CaseError(f"{path}: unknown top-level keys {sorted(extra)} (cases are [[case]] tables)")
        raw = data.get("case", [])
        if not isinstance(raw, list):
            raise CaseError(f"{path}: `case` is not an array of [[case]] tables")
        if not raw:  # a file just started: nothing to run, nothing wrong
            print(f"bench/history: {_show(path)} holds no [[case]] yet", file=sys.stderr)
        for index, table in enumerate(raw, 1):
            cases.append(_case(table, f"{_show(path)} #{index}"))
    return cases


def _case(table: object, where: str) -> Case:
    if not isinstance(table, dict):
        raise CaseError(f"{where}: not a table")
    missing = [k for k in FIELDS if k not in table]
    unknown = sorted(set(table) - set(FIELDS) - {"basis"})
    if missing or unknown:
        parts = ([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else [])
        raise CaseError(f"{where}: {'; '.join(parts)}")
    bad = [k for k in FIELDS if not isinstance(table[k], str) or not table[k].strip()]
    if bad:
        raise CaseError(f"{where}: {bad} must be non-empty strings")
    basis = table.get("basis", "public")
    if basis not in BASES:
        raise CaseError(f"{where}: basis = {basis!r}, not one of {BASES}")
    case = Case(**{k: table[k].strip() for k in FIELDS}, source=where, basis=basis)
    if case.expect not in EXPECTS:
        raise CaseError(f"{where}: expect = {case.expect!r}, not one of {EXPECTS}")
    if not _RULE.fullmatch(case.rule):
        raise CaseError(f"{where}: rule = {case.rule!r} is not a code like SHD401")
    if case.path.startswith("/") or ".." in Path(case.path).parts or not case.path.endswith(".py"):
        raise CaseError(f"{where}: path = {case.path!r} must be a .py file relative to the tree root")
    if case.function != MODULE and not _QUALNAME.fullmatch(case.function):
        raise CaseError(f"{where}: function = {case.function!r} is neither {MODULE!r} nor Class.method")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", case.package + case.version):
        raise CaseError(f"{where}: package/version {case.package!r} {case.version!r} not a release spec")
    return case


def _show(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


# -- functions --------------------------------------------------------------


def function_ranges(source: str, qualname: str) -> list[tuple[int, int]]:
    """Line ranges (first, last; decorators included) of the definitions
    named ``qualname`` (``Class.method``, ``outer.inner``) in ``source``; for
    ``<module>``, the module's lines outside every function. Empty when there
    is no such function."""
    tree = ast.parse(source)
    found: list[tuple[int, int]] = []
    functions: list[tuple[int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                span = (first, child.end_lineno or child.lineno)
                if name == qualname:
                    found.append(span)
                if not isinstance(child, ast.ClassDef):
                    functions.append(span)
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    if qualname != MODULE:
        return found
    last = len(source.splitlines()) or 1
    inside = {n for a, b in functions for n in range(a, b + 1)}
    ranges: list[tuple[int, int]] = []
    for n in range(1, last + 1):
        if n in inside:
            continue
        if ranges and ranges[-1][1] == n - 1:
            ranges[-1] = (ranges[-1][0], n)
        else:
            ranges.append((n, n))
    return ranges


def matching(case: Case, ranges: list[tuple[int, int]], findings: list[Finding]) -> list[Finding]:
    """The findings of the case's rule that point inside ``ranges`` of the
    case's file (primary location or a note's)."""
    return [
        f
        for f in findings
        if f.code == case.rule
        and any(loc.path == case.path and any(a <= loc.line <= b for a, b in ranges) for loc in f.locations)
    ]


# -- running shardlint --------------------------------------------------------


def corpus_dir() -> Path:
    return Path(os.environ.get("SHARDLINT_CORPUS", Path.home() / ".cache" / "shardlint-corpus"))


def tree_of(package: str, version: str, fetch: bool) -> tuple[Path | None, str]:
    """The unpacked release (fetched when asked and missing), else None and why."""
    dest = corpus_dir() / f"{package}-{version}"
    if (dest / ".complete").exists():
        return dest, ""
    if not fetch:
        return None, f"{dest} not fetched (--no-fetch)"
    try:
        res = subprocess.run(
            ["bash", str(FETCH), str(corpus_dir()), f"{package}=={version}"], capture_output=True, text=True
        )
    except OSError as exc:
        return None, f"fetch failed: {exc}"
    if res.returncode != 0 or not (dest / ".complete").exists():
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["?"]
        return None, f"fetch of {package}=={version} failed: {tail[0]}"
    return dest, ""


def run_shardlint(tree: Path, package: str, files: list[str], codes: list[str], cache: bool) -> list[Finding]:
    """Findings of ``codes`` on ``files`` (relative to ``tree``), with ``tree``
    as the project root: ``--config /dev/null`` keeps one project (no split)
    rooted where the first path's package chain ends, and the first path is
    the top package's ``__init__.py``, so the root is the tree itself even
    for a case file in a folder without ``__init__.py``."""
    top = f"{package.replace('-', '_')}/__init__.py"
    paths = [top] + [f for f in files if f != top]
    cmd = [sys.executable, "-m", "linter", "check", *paths, "--config", os.devnull, "--select", ",".join(codes),
           "--output-format", "json", "--exit-zero", "-q"]
    if not cache:
        cmd.append("--no-cache")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"shardlint exited {res.returncode} on {tree}:\n{res.stderr[-3000:]}")
    for line in res.stderr.splitlines():
        if "internal error" in line:
            print(f"  {tree.name}: {line.strip()}", file=sys.stderr)
    return [_finding(d, tree) for d in json.loads(res.stdout or "[]")]


def _finding(d: dict, tree: Path) -> Finding:
    own = _rel(d["path"], tree)
    locs = [Location(own, int(d["line"]))]
    for note in d.get("notes") or ():
        pos = note.get("location")
        if pos:
            locs.append(Location(_rel(note["path"], tree) if note.get("path") else own, int(pos["line"])))
    return Finding(d["code"], d["message"], locs)


def _rel(shown: str, tree: Path) -> str:
    p = Path(shown)
    full = (p if p.is_absolute() else tree / p).resolve()
    try:
        return full.relative_to(tree.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def evaluate(cases: list[Case], fetch: bool, cache: bool) -> list[Outcome]:
    by_release: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for c in cases:
        by_release[(c.package, c.version)].append(c)
    outcomes: list[Outcome] = []
    for (package, version), group in sorted(by_release.items(), key=lambda kv: _release_order("-".join(kv[0]))):
        tree, why = tree_of(package, version, fetch)
        if tree is None:
            outcomes += [Outcome(c, "unavailable", why) for c in group]
            continue
        ranges: dict[Case, list[tuple[int, int]]] = {}
        runnable: list[Case] = []
        for c in group:
            file = tree / c.path
            if not file.is_file():
                outcomes.append(Outcome(c, "unavailable", f"{c.path} not in {tree.name}"))
                continue
            try:
                got = function_ranges(file.read_text(encoding="utf-8"), c.function)
            except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
                outcomes.append(Outcome(c, "unavailable", f"{c.path} does not parse: {exc}"))
                continue
            if not got:
                outcomes.append(Outcome(c, "unavailable", f"no function {c.function} in {c.path}"))
                continue
            ranges[c] = got
            runnable.append(c)
        if not runnable:
            continue
        print(f"checking {tree.name}: {len({c.path for c in runnable})} files ...", file=sys.stderr, flush=True)
        try:
            findings = run_shardlint(
                tree, package, sorted({c.path for c in runnable}), sorted({c.rule for c in runnable}), cache
            )
        except (RuntimeError, OSError, ValueError) as exc:  # (a rule code unknown here, a crash)
            print(f"  {exc}", file=sys.stderr)
            outcomes += [Outcome(c, "unavailable", f"shardlint failed on {tree.name}") for c in runnable]
            continue
        for c in runnable:
            hits = matching(c, ranges[c], findings)
            others = [f for f in findings if f.code == c.rule and f.primary.path == c.path and f not in hits]
            outcomes.append(Outcome(c, "hit" if hits else "silent", findings=hits or others))
    return outcomes


# -- report -------------------------------------------------------------------


def _release_order(release: str) -> tuple[str, list[int]]:
    name, _, version = release.rpartition("-")
    return name, [int(p) for p in re.findall(r"\d+", version)]


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.0f}%" if d else "n/a"


def report(outcomes: list[Outcome]) -> str:
    lines: list[str] = []
    rules = sorted({o.case.rule for o in outcomes})
    lines.append(f"{'rule':8} {'flag':>5} {'found':>6} {'recall':>7}   {'clean':>5} {'flagged':>8} {'false-alarm':>12}"
                 f"   {'unavailable':>11}")
    totals = [0, 0, 0, 0, 0]
    for rule in rules:
        mine = [o for o in outcomes if o.case.rule == rule]
        ran = [o for o in mine if o.status != "unavailable"]
        flag = [o for o in ran if o.case.expect == "flag"]
        clean = [o for o in ran if o.case.expect == "clean"]
        found = sum(o.status == "hit" for o in flag)
        alarms = sum(o.status == "hit" for o in clean)
        gone = len(mine) - len(ran)
        for i, v in enumerate((len(flag), found, len(clean), alarms, gone)):
            totals[i] += v
        lines.append(f"{rule:8} {len(flag):>5} {found:>6} {_pct(found, len(flag)):>7}   {len(clean):>5} {alarms:>8} "
                     f"{_pct(alarms, len(clean)):>12}   {gone:>11}")
    f, d, c, a, g = totals
    lines.append(f"{'all':8} {f:>5} {d:>6} {_pct(d, f):>7}   {c:>5} {a:>8} {_pct(a, c):>12}   {g:>11}")
    public = [o for o in outcomes if o.status != "unavailable" and o.case.expect == "flag" and o.case.basis == "public"]
    hits = sum(o.status == "hit" for o in public)
    lines.append(f"flag cases resting on a public issue/PR: {len(public)}, found {hits} ({_pct(hits, len(public))});"
                 f" the others rest on a GPU run or on reading the code (field `basis`)")
    releases = sorted({o.case.release for o in outcomes if o.status != "unavailable"}, key=_release_order)
    lines.append(f"releases run: {len(releases)} ({', '.join(releases)})")

    def where(o: Outcome) -> str:
        c = o.case
        return f"{c.rule} {c.release} {c.path} {c.function} [{c.source}]"

    misses = [o for o in outcomes if o.case.expect == "flag" and o.status == "silent"]
    alarms_ = [o for o in outcomes if o.case.expect == "clean" and o.status == "hit"]
    gone_ = [o for o in outcomes if o.status == "unavailable"]
    for title, listed, prefix in (
        ("MISSES", misses, "elsewhere in the file: "),
        ("FALSE ALARMS", alarms_, ""),
    ):
        if listed:
            lines += ["", f"{title} ({len(listed)})"]
        for o in listed:
            lines += [f"- {where(o)}", f"    evidence: {o.case.evidence}"]
            lines += [f"    {prefix}line {f.primary.line}: {f.message}" for f in o.findings]
    if gone_:
        lines += ["", f"UNAVAILABLE ({len(gone_)})"]
        lines += [f"- {where(o)}: {o.why}" for o in gone_]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rule", action="append", default=[], help="only this rule's cases (repeatable)")
    ap.add_argument("--cases", action="append", type=Path, default=[],
                    help="this case file instead of bench/history/cases/*.toml (repeatable)")
    ap.add_argument("--no-fetch", action="store_true", help="do not download missing trees (their cases are unavailable)")
    ap.add_argument("--no-cache", action="store_true", help="run shardlint cold (no cache)")
    args = ap.parse_args(argv)
    files = args.cases or sorted(CASES_DIR.glob("*.toml"))
    try:
        cases = load_cases(files)
    except CaseError as exc:
        print(f"bench/history: bad case file: {exc}", file=sys.stderr)
        return 2
    wanted = {r.upper() for r in args.rule}
    if wanted:
        cases = [c for c in cases if c.rule in wanted]
    if not cases:
        print("no cases" + (f" for {', '.join(sorted(wanted))}" if wanted else ""))
        return 0
    print(report(evaluate(cases, fetch=not args.no_fetch, cache=not args.no_cache)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
