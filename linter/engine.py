"""The engine: files -> scan (gates, facts) -> merge -> check -> suppress.

Every function here returns plain data; nothing prints. The CLI, the flake8
plugin and the language server are thin layers over :class:`Engine`. The
phases themselves live in :mod:`linter.scan` and :mod:`linter.check`; this
module runs them over a project, in a process pool when there are many
files, through the cache.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter._lazy import load_in_background
from linter.check import check_text
from linter.config import Config
from linter.facts import FactCollector, FileLoader, LazyModules, ProjectFacts, run_collectors
from linter.files import SourceFile, discover, module_name_of, project_files, relpath_of
from linter.registry import Registry, load_registry
from linter.reparse import ParseMemo
from linter.scan import Cut, Gate, ScanResult, gate_of, scan_text, text_digest
from linter.deep import met_recursion_limit, with_deep_retry
from linter.safeio import size_of
from linter.source import normalize_identifiers, read_source
from linter.workers import exit_with_parent, gc_frozen, gc_paused
from linter.suppression import apply_suppressions, parse_suppressions, unused_noqa
from linter.types import Diagnostic, InternalError, RunResult

if TYPE_CHECKING:
    import ast

    from linter.rule import Rule

# Below this many files the pool costs more than it saves.
POOL_MIN_FILES = 24
# libcst checks of at least this much source go to the pool even when few
# (~60 µs a line: 64 KB is about 0.1 s of work; a fork of the parent, which
# has libcst imported already, costs a few tens of ms)
HEAVY_CHECK_BYTES = 64 * 1024


def _has_facts_gate(rule: type[Rule]) -> bool:
    from linter.rule import Rule

    return getattr(rule.candidate_facts, "__func__", None) is not Rule.candidate_facts.__func__


_W: dict[str, Any] = {}


def _init_pool_worker(state: dict[str, Any]) -> None:
    exit_with_parent()
    _init_worker(state)


def _init_worker(state: dict[str, Any]) -> None:
    _W.clear()
    _W.update(state)
    if state.get("gc") is False:  # a scan worker (see linter.workers.gc_paused)
        gc.disable()


_SCANNED = [0]


def _scan_job(job: tuple[str, str, bool]) -> ScanResult:
    path, relpath, checked = job
    engine: Engine = _W["engine"]
    text, err = read_source(path, relpath, engine.config.max_file_size)
    if text is None:
        return ScanResult(relpath, error=err if checked else None)
    res = engine.scan_one_deep(text, relpath, checked)
    if not gc.isenabled():
        # (see linter.workers.gc_paused) the few reference cycles files leave behind (the
        # stdlib's ast.dump and ast.literal_eval make some; the readers
        # themselves keep no tree in one, a test holds them to it) are all
        # young: collecting the youngest generation between files frees them
        # for next to nothing
        _SCANNED[0] += 1
        if _SCANNED[0] % 32 == 0:
            gc.collect(0)
    return res


def _check_job(job: tuple[str, str, list[str], Cut | None]) -> CheckOutcome:
    path, relpath, codes, cut = job
    engine: Engine = _W["engine"]
    text, err = read_source(path, relpath, engine.config.max_file_size)
    if text is None:
        return CheckOutcome([err] if err else [])
    facts = engine._facts
    if facts is None:
        return engine.check_one_deep(text, relpath, codes=codes, cut=cut)
    with facts.recording() as read:
        out = engine.check_one_deep(text, relpath, codes=codes, cut=cut)
    out.lazy = {f"{n}\0{m}": facts.raw(n).facts_hash(m) for n, m in sorted(read)}  # type: ignore[attr-defined]
    return out


@dataclass
class CheckOutcome:
    diagnostics: list[Diagnostic]
    errors: list[InternalError] = field(default_factory=list)
    parsed: bool = False
    collectors: tuple[str, ...] = ()
    # the lazy facts the check read: "collector\0module" -> facts hash
    lazy: dict[str, str] = field(default_factory=dict)


# -- the engine ------------------------------------------------------------------


class Engine:
    """One configured linter. ``run`` lints paths; ``lint_text`` lints one
    buffer (stdin, the editor, flake8) with the project's facts."""

    def __init__(
        self,
        config: Config,
        registry: Registry | None = None,
        jobs: int | None = None,
        cache: Any = None,
        gates: bool = True,
    ) -> None:
        self.config = config
        # False: every rule on every whole file, no facts gate (what the
        # gates' soundness test compares against; slow)
        self.gates = gates
        self.registry = registry or load_registry()
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.cache = cache
        self.enabled = config.enabled_codes(self.registry)
        # metadata (or classes): enough for keys and selection; the classes are
        # loaded by _real() only when something must be parsed
        self.rule_meta = [r for r in self.registry.checkers if r.code in self.enabled]
        used = sorted({f for r in self.rule_meta for f in r.facts})
        missing = [f for f in used if f not in self.registry.collectors]
        if missing:
            raise RuntimeError(f"rules use unknown fact collectors: {missing}")
        self.collector_meta = [self.registry.collectors[f] for f in used]
        self._facts: ProjectFacts | None = None
        # module -> files, file -> content digest (set by _merge: lazy facts)
        self._mod_rels: dict[str, list[str]] = {}
        self._digests: dict[str, str] = {}
        self._key = ""
        # progress(phase, done, total): set by the CLI for an interactive run
        self.progress: Callable[[str, int, int], None] | None = None
        # set by the CLI, which defers libcst (linter._lazy): load it while
        # the scan workers run, so that the parse phase finds it loaded
        self.preload_libcst = False
        self._rules: list[type[Rule]] | None = None
        self._collectors: list[type[FactCollector]] | None = None

    def _real(self) -> None:
        if self._rules is None:
            real = self.registry.real()
            self._rules = [real.rules[r.code] for r in self.rule_meta]
            self._collectors = [real.collectors[c.name] for c in self.collector_meta]

    @property
    def rules(self) -> list[type[Rule]]:
        self._real()
        assert self._rules is not None
        return self._rules

    @property
    def collectors(self) -> list[type[FactCollector]]:
        self._real()
        assert self._collectors is not None
        return self._collectors

    @property
    def scan_collectors(self) -> list[type[FactCollector]]:
        """The collectors the scan runs (lazy ones read modules on demand)."""
        return [c for c in self.collectors if not getattr(c, "lazy", False)]

    def rule_options(self, rule: Any) -> Mapping[str, Any]:
        """The effective options of ``rule`` (memoised per engine)."""
        memo = self.__dict__.setdefault("_rule_options", {})
        got = memo.get(rule.code)
        if got is None:
            got = memo[rule.code] = self.config.effective_options(rule)
        return got

    def gate(self, rule: Any) -> Gate:
        """What ``rule`` declares under its effective options (memoised)."""
        memo = self.__dict__.setdefault("_gates", {})
        got = memo.get(rule.code)
        if got is None:
            got = memo[rule.code] = gate_of(rule, self.rule_options(rule))
        return got

    def _collector_map(self) -> Mapping[str, Any]:
        return {c.name: c for c in self.collectors}

    # -- single file --------------------------------------------------------
    def rules_for(self, relpath: str) -> list[type[Rule]]:
        """The enabled rules, less those per-file-ignores switch off here."""
        ignored = self.config.ignored_for(relpath)
        return [r for r in self.rules if not (ignored and r.code.startswith(ignored))]

    def facts_gate(self, relpath: str, codes: Sequence[str], facts: ProjectFacts | None = None) -> list[str]:
        """``codes`` less the rules whose facts gate says they cannot fire in
        this module (a crashing gate keeps the rule)."""
        facts = facts if facts is not None else (self._facts or ProjectFacts())
        wanted = set(codes)
        keep = []
        module = module_name_of(relpath)
        for r in self.rules:
            if r.code not in wanted:
                continue
            if self.gates and _has_facts_gate(r):
                try:
                    if not r.candidate_facts(module, relpath, facts, self.rule_options(r)):
                        continue
                except Exception:
                    pass
            keep.append(r.code)
        return keep

    def noqa_check(self, relpath: str, text: str) -> bool:
        return "SHD900" in self.enabled and "noqa" in text and not self._ignored(relpath, "SHD900")

    def scan_one(
        self,
        text: str,
        relpath: str,
        checked: bool,
        syntax: bool | None = None,
        keep_tree: bool = False,
        collect: bool = True,
    ) -> ScanResult:
        res = scan_text(
            text, relpath, module_name_of(relpath), self.scan_collectors if collect else [],
            [self.gate(r) for r in self.rules_for(relpath)] if checked else None,
            self.config.check_syntax if syntax is None else syntax,
            self.cache is not None,
            closed=not self.gates,
            keep_tree=keep_tree,
        )
        res.noqa = checked and self.noqa_check(relpath, text)
        return res

    def check_one(
        self,
        text: str,
        relpath: str,
        facts: ProjectFacts | None = None,
        codes: Sequence[str] | None = None,
        cut: Cut | None = None,
        tree: ast.Module | None = None,
        memo: ParseMemo | None = None,
    ) -> CheckOutcome:
        """Check one text with the rules named by ``codes`` (default: those
        whose prefilter passes): diagnostics (suppressed ones marked), internal
        errors, whether libcst parsed it and which fact collectors its rules
        read. ``cut``: the scan's definitions of the text, if at hand;
        ``tree``: its ``ast``, if at hand; ``memo``: the document's last
        parse (``linter.reparse``)."""
        facts = facts if facts is not None else (self._facts or ProjectFacts())
        if codes is None:
            scan = self.scan_one(text, relpath, True)
            codes, cut = self.facts_gate(relpath, scan.rules or [], facts), scan.cut
        wanted = set(codes)
        rules = [r for r in self.rules if r.code in wanted]
        diags: list[Diagnostic] = []
        errors: list[InternalError] = []
        parsed = False
        if rules:
            parsed = True
            diags, errors = check_text(
                text, relpath, module_name_of(relpath), rules, self.config, facts,
                [self.gate(r) for r in rules] if self.gates else None,
                cut,
                tree,
                memo,
            )
        noqa_on = self.noqa_check(relpath, text)
        if diags or noqa_on:
            sup = parse_suppressions(text, tree)
            diags, used = apply_suppressions(diags, sup)
            if noqa_on:
                diags += unused_noqa(
                    relpath,
                    sup,
                    used,
                    self.registry.rules,
                    self.enabled,
                    # the lines tokenize numbers (``str.splitlines`` also
                    # breaks at form feeds and other separators)
                    text.split("\n"),
                )
        cols = tuple(sorted({f for r in rules for f in r.facts}))
        return CheckOutcome(diags, errors, parsed, cols)

    def scan_one_deep(self, text: str, relpath: str, checked: bool, **how: Any) -> ScanResult:
        """``scan_one`` (``how``: its keyword arguments), done again on a deep
        stack if the code nests past the recursion limit, or one SHD000 past
        ``linter.deep.MAX_NESTING``."""
        return with_deep_retry(
            lambda: self.scan_one(text, relpath, checked, **how),
            lambda res: res.error is not None and met_recursion_limit([res.error]),
            text, relpath,
            lambda error: ScanResult(relpath, error=error if checked else None),
        )

    def check_one_deep(
        self,
        text: str,
        relpath: str,
        facts: ProjectFacts | None = None,
        codes: Sequence[str] | None = None,
        cut: Cut | None = None,
        tree: ast.Module | None = None,
    ) -> CheckOutcome:
        """``check_one`` as ``scan_one_deep`` does ``scan_one``."""
        return with_deep_retry(
            lambda: self.check_one(text, relpath, facts, codes, cut, tree),
            lambda out: met_recursion_limit(out.diagnostics, out.errors),
            text, relpath,
            lambda error: CheckOutcome(self._finish_file([error], relpath, text)),
        )

    def _ignored(self, relpath: str, code: str) -> bool:
        ignored = self.config.ignored_for(relpath)
        return bool(ignored) and code.startswith(ignored)

    def lint_text(self, text: str, path: Path | str) -> tuple[list[Diagnostic], list[InternalError]]:
        """Lint one buffer as if it were at ``path`` (which need not exist)."""
        text = normalize_identifiers(text)
        relpath = relpath_of(Path(path), self.config.root)
        module = module_name_of(relpath)
        facts = self.project_facts()
        # the file as the project's facts read it (flake8, an editor opening
        # a file): its facts are in them already
        known = self.scanned_as(relpath, text)
        # one buffer: compiling it costs milliseconds, so any syntax error shows
        scan = self.scan_one_deep(text, relpath, True, syntax=True, keep_tree=True, collect=False)
        if scan.error is not None:
            return self._finish_file([scan.error], relpath, text), []
        if not known:
            mine = self.text_facts(text, relpath, scan.tree)
            # Most edits leave a module's facts as they were: then the project's
            # facts (and the indexes already built on them) serve as they are.
            if any(facts.raw(c.name).get(module) != mine.get(c.name) for c in self.collector_meta):
                facts = facts.with_module(module, mine)
        codes = self.facts_gate(relpath, scan.rules or [], facts)
        out = self.check_one_deep(text, relpath, facts, codes, scan.cut, scan.tree)
        return sorted(out.diagnostics, key=lambda d: d.sort_key), out.errors

    def text_facts(self, text: str, relpath: str, tree: ast.Module | None) -> dict[str, Any]:
        """The facts of ``text`` at ``relpath`` as the scan and the lazy
        modules read them, every collector's (``tree``: its ``ast``)."""
        return run_collectors(self.collectors, text, module_name_of(relpath), relpath, tree)

    def scanned_as(self, relpath: str, text: str) -> bool:
        """Whether the project's facts were read from ``text`` at ``relpath``
        (then they hold its facts already: nothing to collect again)."""
        digest = self._digests.get(relpath)
        return bool(digest) and digest == text_digest(text)

    def _finish_file(self, diags: list[Diagnostic], relpath: str, text: str | None) -> list[Diagnostic]:
        if self._ignored(relpath, "SHD000") or "SHD000" not in self.enabled:
            return []
        if text is not None:
            diags, _ = apply_suppressions(diags, parse_suppressions(text))
        return diags

    # -- facts --------------------------------------------------------------
    def project_facts(self) -> ProjectFacts:
        """The facts of the whole project (computed once per engine, through
        the cache when there is one): what the editor and flake8 use."""
        if self._facts is None:
            files = {sf.relpath: sf for sf in project_files(self.config)} if self.collector_meta else {}
            key = self.cache_key()
            entries = self.cache.entries(key) if self.cache is not None else {}
            scans = self._scan_cached(files, set(), key, entries)
            self._facts = self._merge(scans.values())
            if self.cache is not None:
                self.cache.save()
        return self._facts

    def _scan_cached(
        self,
        files: Mapping[str, SourceFile],
        checked: set[str],
        key: str,
        entries: dict[str, Any],
    ) -> dict[str, ScanResult]:
        """Scan results for ``files``: from the cache where the file's size and
        mtime are unchanged, else by scanning (in the pool when many)."""
        scans: dict[str, ScanResult] = {}
        stats: dict[str, tuple[int, int]] = {}
        todo: list[SourceFile] = []
        for rel, sf in files.items():
            try:
                st = os.stat(sf.abspath)
                stats[rel] = (st.st_mtime_ns, st.st_size)
            except OSError:
                stats[rel] = (-1, -1)
            e = entries.get(rel)
            if (
                e is not None
                and e.scan is not None
                and (e.mtime, e.size) == stats[rel]
                and (e.scan.get("checked") or rel not in checked)
                and isinstance(e.scan.get("fh"), dict)
            ):
                err = e.scan.get("error")
                scans[rel] = ScanResult(
                    rel,
                    e.digest,
                    Diagnostic.from_dict(err) if err else None,
                    None,  # read from the cache's facts files if a rule asks
                    e.scan.get("rules"),
                    e.scan.get("noqa", False),
                    e.scan["fh"],
                )
            else:
                todo.append(sf)
        from linter.cache import Entry

        for res in self._scan(todo, checked, {rel: st[1] for rel, st in stats.items()}):
            scans[res.relpath] = res
            if self.cache is not None and stats[res.relpath][0] >= 0:
                old = entries.get(res.relpath)
                keep_check = old.check if old is not None and old.digest == res.digest else None
                entries[res.relpath] = Entry.of_scan(stats[res.relpath], res, res.relpath in checked, keep_check)
                self.cache.mark_dirty(key, res.relpath)
        return scans

    def _merge(self, scans: Iterable[ScanResult]) -> ProjectFacts:
        """The project's facts. Their digests (check results' dependencies)
        combine the per-file facts hashes, so an edit that leaves a file's
        facts alone invalidates nothing and nothing is serialised; the facts
        themselves are read from the cache only when a rule asks for them."""
        scans = list(scans)
        names = [c.name for c in self.collector_meta if not c.lazy]
        # lazy collectors: a module's facts are read from its file(s) when
        # a rule asks (module -> files, in scan order: the last with facts wins)
        rels: dict[str, list[str]] = {}
        for s in scans:
            rels.setdefault(module_name_of(s.relpath), []).append(s.relpath)
        self._mod_rels = rels
        self._digests = {s.relpath: s.digest for s in scans}
        lazy = {
            c.name: LazyModules(c.name, FileLoader(self.registry, c.name, self.config.root, rels), list(rels))
            for c in self.collector_meta
            if c.lazy
        }
        lines: dict[str, list[str]] = {n: [] for n in names}
        for s in scans if self.cache is not None else ():  # (no cache: no hashes, see scan_text)
            if s.fh:
                mod = module_name_of(s.relpath)
                for name, h in s.fh.items():
                    if name in lines:
                        lines[name].append(f"{mod}={h}")
        hashes = {n: hashlib.sha256("\n".join(sorted(ls)).encode()).hexdigest() for n, ls in lines.items()}
        if self.cache is None:
            hashes = {}  # computed from the facts if anybody asks (ProjectFacts.collector_digest)

        if all(s.facts is not None for s in scans):
            data: dict[str, dict[str, Any]] = {n: {} for n in names}
            for s in scans:
                mod = module_name_of(s.relpath)
                for name, value in (s.facts or {}).items():
                    if name in data:
                        data[name][mod] = value
            return ProjectFacts(data, self._collector_map, hashes, lazy=lazy)
        return ProjectFacts(
            None, self._collector_map, hashes, load=lambda n: self._load_facts(scans, n), names=tuple(names), lazy=lazy
        )

    def _load_facts(self, scans: list[ScanResult], name: str) -> dict[str, Any]:
        """One collector's facts, per module: fresh scans have them; cached
        files' are read from the cache's facts files, and a file whose facts
        are lost there is scanned again (same content, same facts)."""
        key = self.cache_key()
        entries = self.cache.entries(key) if self.cache is not None else {}
        if self.cache is not None:
            self.cache.load_facts(key, {name})
        out: dict[str, Any] = {}
        for s in scans:
            if name not in s.fh:
                continue
            if s.facts is not None and name in s.facts:
                value = s.facts[name]
            else:
                e = entries.get(s.relpath)
                value = e.facts.get(name) if e is not None else None
                if value is None:
                    text, _ = read_source(self.config.root / s.relpath, s.relpath, self.config.max_file_size)
                    fresh = scan_text(text or "", s.relpath, module_name_of(s.relpath), self.scan_collectors)
                    s.facts, s.fh = fresh.facts, fresh.fh
                    if e is not None and self.cache is not None:
                        e.facts = dict(fresh.facts)
                        self.cache.mark_dirty(key, s.relpath)
                    value = fresh.facts.get(name)
                    if value is None:
                        continue
            out[module_name_of(s.relpath)] = value
        return out

    def _pool(self, n: int, state: dict[str, Any], heavy: bool = False) -> ProcessPoolExecutor | None:
        """A pool for many files, or for a few ``heavy`` ones (libcst checks
        of big files: a fork costs less than one of them)."""
        if self.jobs <= 1 or n < (2 if heavy else POOL_MIN_FILES):
            return None
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # pragma: no cover - platforms without fork
            ctx = multiprocessing.get_context()
        return ProcessPoolExecutor(
            max_workers=min(self.jobs, n), mp_context=ctx, initializer=_init_pool_worker, initargs=(state,)
        )

    def _map(
        self, fn: Callable[[Any], Any], jobs: list[Any], state: dict[str, Any], phase: str = "",
        heavy: bool = False, preload: bool = False,
    ) -> list[Any]:
        """``fn`` over ``jobs`` in order, in the pool when there are many;
        reports progress to ``self.progress(phase, done, total)`` if set."""
        progress = self.progress
        out: list[Any] = []
        pool = self._pool(len(jobs), state, heavy)
        if pool is None:
            saved = dict(_W)
            _init_worker(state)
            try:
                for j in jobs:
                    out.append(fn(j))
                    if progress is not None:
                        progress(phase, len(out), len(jobs))
                return out
            finally:
                _init_worker(saved)
        try:
            # small chunks: the callers put the biggest files first, so the
            # workers finish together instead of one waiting on a last chunk;
            # not too small: each chunk costs the main process a round trip
            # (64 rather than 16 on vLLM's 3,231 files: 0.035 s sooner)
            chunk = max(1, min(64, len(jobs) // (self.jobs * 8)))
            results = pool.map(fn, jobs, chunksize=chunk)
            # (a fork pool has started every worker by now: a thread cannot
            # be forked in the middle of an import)
            loader = load_in_background() if preload else None
            try:
                # Executor.map yields in order as results arrive: enough for a counter
                for r in results:
                    out.append(r)
                    if progress is not None:
                        progress(phase, len(out), len(jobs))
            finally:
                if loader is not None:
                    loader.join()
            return out
        finally:
            pool.shutdown(wait=True)

    def _while_waiting(self) -> None:
        """Work for this process while it waits on its workers: the facts
        files of the cache (the bulk of what the end of the run writes)."""
        if self.cache is not None:
            self.cache.save_facts()

    def _scan(
        self,
        files: Sequence[SourceFile],
        report_errors: bool | set[str],
        sizes: Mapping[str, int] | None = None,
    ) -> list[ScanResult]:
        """``sizes``: bytes per relpath, when the caller has stat'ed the files."""

        def want(sf: SourceFile) -> bool:
            return report_errors if isinstance(report_errors, bool) else sf.relpath in report_errors

        if not files:
            return []
        jobs = [(sf.abspath, sf.relpath, want(sf)) for sf in files]
        if len(jobs) >= POOL_MIN_FILES and self.jobs > 1:
            # the longest jobs first
            jobs.sort(key=lambda j: -(sizes[j[1]] if sizes and j[1] in sizes else size_of(j[0])))
        self._real()
        with gc_paused():
            return self._map(
                _scan_job, jobs, {"engine": self, "gc": False}, "reading", preload=self.preload_libcst
            )

    # -- lazy facts in the cache ---------------------------------------------------
    def _module_digest(self, module: str) -> str:
        """The content of the files a module's lazy facts are read from
        (empty for a module the project does not have)."""
        return "|".join(self._digests.get(r, "") for r in self._mod_rels.get(module, ()))

    def _lazy_deps(self, read: set[tuple[str, str]]) -> dict[str, list[str]]:
        """What a check result records of the lazy facts it read:
        ``"collector\0module" -> [content digest, facts hash]``."""
        assert self._facts is not None
        return {
            f"{n}\0{m}": [self._module_digest(m), self._facts.raw(n).facts_hash(m)]  # type: ignore[attr-defined]
            for n, m in sorted(read)
        }

    def _lazy_valid(self, ld: Any) -> bool:
        """Whether the lazy facts a cached check read are still the same: the
        files are unchanged, or their facts read again hash the same (an
        edit that changes no fact re-checks nothing)."""
        if not ld:
            return ld is not None or not any(c.lazy for c in self.collector_meta)
        assert self._facts is not None
        try:
            for k, (dig, fh) in ld.items():
                name, _, module = k.partition("\0")
                if self._module_digest(module) == dig:
                    continue
                if not self._facts.is_lazy(name):
                    return False
                if self._facts.raw(name).facts_hash(module) != fh:  # type: ignore[attr-defined]
                    return False
        except (TypeError, ValueError, AttributeError):
            return False  # a damaged entry
        return True

    # -- a whole run ------------------------------------------------------------
    def cache_key(self) -> str:
        if self._key:
            return self._key
        from linter.registry import rules_fingerprint

        parts = [self.config.digest(), ",".join(sorted(self.enabled)), rules_fingerprint()]
        parts += [f"{c.name}:{c.version}" for c in self.collector_meta]
        self._key = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
        return self._key

    def run(self, paths: Sequence[Path]) -> RunResult:
        result = RunResult()
        project = project_files(self.config) if self.collector_meta else None
        checked = discover(paths, self.config, project)
        result.stats.files = len(checked)
        checked_set = {sf.relpath for sf in checked}
        everything: dict[str, SourceFile] = {sf.relpath: sf for sf in checked}
        for sf in project or ():
            everything.setdefault(sf.relpath, sf)

        key = self.cache_key()
        entries = self.cache.entries(key) if self.cache is not None else {}
        # What the scan leaves (its results, the facts merged from them)
        # lasts the run: out of the collector's sight as soon as the scan
        # ends, or its first collections walk all of it (~0.02 s on vLLM).
        with gc_frozen():
            scans = self._scan_cached(everything, checked_set, key, entries)
            return self._run_checks(result, checked, everything, scans, key, entries)

    def _run_checks(
        self,
        result: RunResult,
        checked: list[SourceFile],
        everything: dict[str, SourceFile],
        scans: dict[str, ScanResult],
        key: str,
        entries: dict[str, Any],
    ) -> RunResult:
        """``run`` after the scan: the facts merged, cached results reused,
        the facts gates, the libcst checks, the cache saved."""
        result.stats.facts_files = sum(1 for s in scans.values() if s.fh)
        self._facts = self._merge(scans.values())

        diags: list[Diagnostic] = []
        pending: list[tuple[SourceFile, ScanResult, Any]] = []
        for sf in checked:
            scan = scans[sf.relpath]
            if scan.error is not None:
                diags.extend(self._finish_file([scan.error], sf.relpath, None))
                continue
            if not scan.rules and not scan.noqa:
                continue  # no rule can match: never parsed with libcst
            e = entries.get(sf.relpath)
            chk = e.check if e is not None and e.digest == scan.digest else None
            if (
                chk is not None
                and chk.get("fk") == self._facts.digest(tuple(chk.get("cols", ())))
                and self._lazy_valid(chk.get("ld"))
            ):
                diags.extend(Diagnostic.from_dict(d) for d in chk["diags"])
                result.stats.cached += 1
                continue
            pending.append((sf, scan, e))
        # The facts gates run here, in this process, biggest files first; the
        # files they admit start their libcst check in the pool at once, so
        # the longest checks overlap the remaining gates.
        sizes = {sf.relpath: size_of(sf.abspath) for sf, _, _ in pending} if self.jobs > 1 else {}
        pending.sort(key=lambda p: -sizes.get(p[0].relpath, 0))
        todo: list[tuple[str, str, list[str], Cut | None]] = []
        gate_deps: dict[str, dict[str, list[str]]] = {}
        with _Checks(self, sizes) as checks:
            for sf, scan, e in pending:
                with self._facts.recording() as read:
                    codes = self.facts_gate(sf.relpath, scan.rules or [])
                if self.cache is not None:
                    gate_deps[sf.relpath] = self._lazy_deps(read)
                if not codes and not scan.noqa:
                    if self.cache is not None and e is not None:
                        cols = tuple(sorted({f for r in self.rules if r.code in (scan.rules or []) for f in r.facts}))
                        e.check = {
                            "cols": list(cols),
                            "fk": self._facts.digest(cols),
                            "ld": gate_deps[sf.relpath],
                            "diags": [],
                            "parsed": False,
                        }
                        self.cache.mark_dirty(key, sf.relpath, facts=False)
                    continue
                job = (sf.abspath, sf.relpath, codes, scan.cut)
                todo.append(job)
                checks.add(job)
            outs = checks.results()
        for (path, rel, _, _), out in zip(todo, outs):
            diags.extend(out.diagnostics)
            result.errors.extend(out.errors)
            result.stats.parsed += int(out.parsed)
            e = entries.get(rel)
            if self.cache is not None and e is not None and not out.errors:
                ld = dict(gate_deps.get(rel, {}))
                for k, fh in out.lazy.items():
                    ld[k] = [self._module_digest(k.partition("\0")[2]), fh]
                e.check = {
                    "cols": list(out.collectors),
                    "fk": self._facts.digest(out.collectors),
                    "ld": ld,
                    "diags": [d.to_dict() for d in out.diagnostics],
                    "parsed": out.parsed,
                }
                self.cache.mark_dirty(key, rel, facts=False)
        result.stats.skipped = len(checked) - result.stats.parsed - result.stats.cached
        if self.cache is not None:
            # forget files that are gone, so the state file does not grow forever
            root = self.config.root
            for rel in [r for r in entries if r not in everything and not (root / r).exists()]:
                del entries[rel]
                self.cache.mark_dirty(key, rel)
            self.cache.save()
        result.diagnostics = sorted(diags, key=lambda d: d.sort_key)
        return result


class _Checks:
    """The check phase's jobs, started as the facts gates admit them: in
    this process when they are few and small (a fork would cost more), in a
    pool as soon as they are many or heavy enough (``HEAVY_CHECK_BYTES``)."""

    def __init__(self, engine: Engine, sizes: Mapping[str, int]) -> None:
        self.engine = engine
        self.sizes = sizes
        self.jobs: list[tuple[str, str, list[str], Cut | None]] = []
        self.bytes = 0
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Any] = []

    def __enter__(self) -> _Checks:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=exc[0] is not None)

    def add(self, job: tuple[str, str, list[str], Cut | None]) -> None:
        self.jobs.append(job)
        self.bytes += self.sizes.get(job[1], 0)
        if self.pool is not None:
            self.futures.append(self.pool.submit(_check_job, job))
        elif self.engine.jobs > 1 and (len(self.jobs) >= POOL_MIN_FILES or self.bytes >= HEAVY_CHECK_BYTES):
            self.pool = self.engine._pool(max(2, self.engine.jobs), {"engine": self.engine}, heavy=True)
            if self.pool is not None:
                self.futures = [self.pool.submit(_check_job, j) for j in self.jobs]

    def results(self) -> list[CheckOutcome]:
        if self.pool is None:
            return self.engine._map(_check_job, self.jobs, {"engine": self.engine}, "checking") if self.jobs else []
        progress = self.engine.progress
        out: list[CheckOutcome] = []
        if not all(f.done() for f in self.futures):
            self.engine._while_waiting()
        for f in self.futures:
            out.append(f.result())
            if progress is not None:
                progress("checking", len(out), len(self.futures))
        return out
