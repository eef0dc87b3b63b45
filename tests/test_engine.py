"""Engine behaviour users rely on: bad input becomes SHD000, a crashing rule
does not stop the run, noqa, per-file ignores, cache and pool equivalence."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toy_rules import FlagMinCalls, toy_registry

from linter.cache import Cache
from linter.config import Config
from linter.engine import Engine


def write(root: Path, rel: str, content: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def run(root: Path, **kw) -> tuple[list, list]:
    cfg = Config(root=root, **kw)
    res = Engine(cfg, toy_registry(), jobs=1).run([root])
    return res.diagnostics, res.errors


def test_bad_files_become_one_shd000_each_and_the_run_goes_on(tmp_path: Path) -> None:
    # a file being edited: something a rule would look at, then a syntax error
    write(tmp_path, "syntax.py", "b = min(a, 3)\ndef broken(:\n    pass\n")
    write(tmp_path, "binary.py", b"\x00\x01\x02binary")
    write(tmp_path, "latin.py", b"x = '\xff\xfe'\n")
    write(tmp_path, "ok.py", "b = min(a, 3)\n")
    diags, errors = run(tmp_path)
    by = {(d.path, d.code) for d in diags}
    assert ("syntax.py", "SHD000") in by
    assert ("binary.py", "SHD000") in by
    assert ("latin.py", "SHD000") in by
    assert ("ok.py", "SHD990") in by
    assert not errors
    syntax = next(d for d in diags if d.path == "syntax.py")
    assert syntax.span.line == 2 and "syntax error" in syntax.message
    assert [d.code for d in diags if d.path == "syntax.py"] == ["SHD000"]


def test_a_syntax_error_no_rule_would_read_shows_with_check_syntax(tmp_path: Path) -> None:
    # nothing in the file is anything a rule or a fact collector reads: by
    # default it is never compiled (the cold-run cost), with check-syntax it is
    write(tmp_path, "ok.py", "b = min(a, 3)\n")
    write(tmp_path, "plain.py", "def nothing_to_see(:\n")
    diags, _ = run(tmp_path)
    assert {(d.path, d.code) for d in diags} == {("ok.py", "SHD990")}
    diags, _ = run(tmp_path, check_syntax=True)
    assert ("plain.py", "SHD000") in {(d.path, d.code) for d in diags}
    plain = next(d for d in diags if d.path == "plain.py")
    assert plain.span.line == 1 and "syntax error" in plain.message


def test_the_editor_path_always_reports_a_syntax_error(tmp_path: Path) -> None:
    eng = Engine(Config(root=tmp_path), toy_registry(), jobs=1)
    diags, _ = eng.lint_text("def nothing_to_see(:\n", tmp_path / "buf.py")
    assert [d.code for d in diags] == ["SHD000"]


def test_a_crashing_rule_is_reported_and_others_keep_their_findings(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "f = lambda x: x\nb = min(a, 3)\nc = min(d, 4)\n")
    diags, errors = run(tmp_path)
    assert [d.span.line for d in diags if d.code == "SHD990"] == [2, 3]
    assert len(errors) == 1
    assert errors[0].code == "SHD991" and errors[0].path == "m.py" and "ZeroDivisionError" in errors[0].message


def test_scope_and_positions(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "class A:\n    def f(self):\n        é = min(a, 3)  # café\n")
    diags, _ = run(tmp_path)
    (d,) = diags
    assert d.message == "min call in A.f"
    # columns are code points: "        é = " is 12 characters
    assert (d.span.line, d.span.column, d.span.end_column) == (3, 12, 21)


def test_noqa_forms(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m.py",
        "a = min(x, 1)  # noqa\n"
        "b = min(x, 1)  # noqa: SHD990\n"
        "c = min(x, 1)  # noqa: SHD9\n"
        "d = min(x, 1)  # noqa: E501\n"
        "e = min(x, 1)  # NOQA:SHD\n",
    )
    diags, _ = run(tmp_path)
    live = [d.span.line for d in diags if not d.suppressed]
    assert live == [4]
    assert [d.span.line for d in diags if d.suppressed] == [1, 2, 3, 5]


def test_file_level_noqa(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "# shardlint: noqa\na = min(x, 1)\n")
    write(tmp_path, "n.py", "# shardlint: noqa: SHD1\na = min(x, 1)\n")
    diags, _ = run(tmp_path)
    assert {d.path: d.suppressed for d in diags} == {"m.py": True, "n.py": False}


def test_unused_noqa_is_off_by_default_and_reported_when_selected(tmp_path: Path) -> None:
    src = "a = 1  # noqa: SHD990\nb = min(x, 1)  # noqa: SHD990, SHD977, E501\n"
    write(tmp_path, "m.py", src)
    diags, _ = run(tmp_path)
    assert not [d for d in diags if d.code == "SHD900"]
    diags, _ = run(tmp_path, extend_select=("SHD900",))
    msgs = {d.span.line: d.message for d in diags if d.code == "SHD900"}
    assert msgs == {1: "noqa comment with unused SHD990", 2: "noqa comment with unknown SHD977"}


def test_unused_noqa_fix_after_a_form_feed_removes_only_the_comment(tmp_path: Path) -> None:
    # ``str.splitlines`` breaks at a form feed, tokenize does not: the fix's
    # line must be the comment's own, not the one before it
    from linter.fixes import apply_fixes

    src = "import os\n\x0c\nx = 1  # noqa: SHD990\ny = 2\n"
    write(tmp_path, "m.py", src)
    diags, _ = run(tmp_path, extend_select=("SHD900",))
    fixes = [d.fix for d in diags if d.code == "SHD900" and d.fix is not None]
    assert len(fixes) == 1
    fixed, n = apply_fixes(src, fixes)
    assert n == 1 and fixed == "import os\n\x0c\nx = 1\ny = 2\n"


def test_per_file_ignores_and_select(tmp_path: Path) -> None:
    write(tmp_path, "pkg/gen/a.py", "a = min(x, 1)\n")
    write(tmp_path, "pkg/b.py", "a = min(x, 1)\n")
    diags, _ = run(tmp_path, per_file_ignores=(("pkg/gen/*", ("SHD99",)),))
    assert [d.path for d in diags] == ["pkg/b.py"]
    diags, _ = run(tmp_path, ignore=("SHD990",))
    assert diags == []
    diags, _ = run(tmp_path, select=("SHD991",))
    assert diags == []


def test_rule_options_reach_the_rule(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "a = min(x, 1)\n")
    diags, _ = run(tmp_path, rule_options=(("SHD990", (("label", "smallest"),)),))
    assert diags[0].message.startswith("smallest call")


def _tree(root: Path) -> None:
    for i in range(40):
        body = "".join(f"v{j} = min(a, {j})\n" for j in range(i % 3))
        write(root, f"pkg/m{i:02}.py", body + ("min(:\n" if i == 7 else ""))


def test_results_identical_with_and_without_cache_and_with_1_or_n_jobs(tmp_path: Path) -> None:
    _tree(tmp_path)
    cfg = Config(root=tmp_path)
    reg = toy_registry()
    base = Engine(cfg, reg, jobs=1).run([tmp_path]).diagnostics
    assert len(base) > 30
    pooled = Engine(cfg, reg, jobs=2).run([tmp_path]).diagnostics
    assert pooled == base
    cache = Cache(tmp_path / ".cache")
    cold = Engine(cfg, reg, jobs=2, cache=cache).run([tmp_path])
    warm = Engine(cfg, reg, jobs=2, cache=Cache(tmp_path / ".cache")).run([tmp_path])
    assert cold.diagnostics == base and warm.diagnostics == base
    assert warm.stats.parsed == 0 and warm.stats.cached == cold.stats.parsed
    # 14 files without min( are never parsed with libcst (the one with a
    # syntax error is: nothing compiled it before, and libcst reports it)
    assert cold.stats.skipped == warm.stats.skipped == 14
    assert ("pkg/m07.py", "SHD000") in {(d.path, d.code) for d in base}


def test_cache_sees_edits_and_survives_corruption(tmp_path: Path) -> None:
    _tree(tmp_path)
    cfg = Config(root=tmp_path)
    reg = toy_registry()
    Engine(cfg, reg, jobs=1, cache=Cache(tmp_path / ".c")).run([tmp_path])
    write(tmp_path, "pkg/m01.py", "z = min(a, 1)\nz = min(a, 2)\nz = min(a, 3)\n")
    res = Engine(cfg, reg, jobs=1, cache=Cache(tmp_path / ".c")).run([tmp_path])
    assert len([d for d in res.diagnostics if d.path == "pkg/m01.py"]) == 3
    assert res.stats.parsed == 1
    for f in (tmp_path / ".c").glob("*.json"):
        f.write_text(f.read_text()[:100])  # truncated
    again = Engine(cfg, reg, jobs=1, cache=Cache(tmp_path / ".c")).run([tmp_path])
    assert again.diagnostics == res.diagnostics


def test_config_change_invalidates_cache(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "a = min(x, 1)\n")
    reg = toy_registry()
    cache_dir = tmp_path / ".c"
    Engine(Config(root=tmp_path), reg, jobs=1, cache=Cache(cache_dir)).run([tmp_path])
    cfg = Config(root=tmp_path, rule_options=(("SHD990", (("label", "tiny"),)),))
    res = Engine(cfg, reg, jobs=1, cache=Cache(cache_dir)).run([tmp_path])
    assert res.diagnostics[0].message.startswith("tiny")


@pytest.mark.parametrize("content", ["x = 1\r\ny = min(a, 2)\r\n", "\ufeffy = min(a, 2)\n"])
def test_crlf_and_bom(tmp_path: Path, content: str) -> None:
    (tmp_path / "m.py").write_bytes(content.encode("utf-8"))
    diags, _ = run(tmp_path)
    assert [d.code for d in diags] == ["SHD990"]


def test_progress_reports_each_phase_to_completion(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = Engine(Config(root=tmp_path), toy_registry(), jobs=2)
    seen: dict[str, tuple[int, int]] = {}
    engine.progress = lambda phase, done, total: seen.__setitem__(phase, (done, total))
    engine.run([tmp_path])
    assert seen["reading"] == (40, 40)
    assert seen["checking"][0] == seen["checking"][1] > 0


def test_no_progress_bar_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from linter import cli

    monkeypatch.setattr(cli.sys, "stderr", io.StringIO())
    assert cli._progress_bar() is None


def test_cache_rechecks_a_file_when_a_fact_it_depends_on_changes_elsewhere(tmp_path: Path) -> None:
    """The capability flag lives on a base class in another file: flipping it
    must change the subclass's cached result, and an edit that leaves every
    fact alone must not re-check anything."""
    from linter.registry import load_registry

    root, cfg = _corpus_project(tmp_path, "pp_payload_drops_tensors", "stages", "SHD301")
    reg = load_registry()

    def run_cached():
        return Engine(cfg, reg, jobs=1, cache=Cache(root / ".c")).run([root])

    first = run_cached()
    fired = {d.path for d in first.diagnostics}
    assert "stages/variant.py" in fired
    base = root / "stages" / "backbone.py"
    base.write_text(base.read_text() + "\n# a comment changes no fact\n")
    again = run_cached()
    # only the edited base is parsed again: the subclass's result comes
    # from the cache
    assert {d.path for d in again.diagnostics} == fired and again.stats.parsed == 1
    base.write_text(base.read_text().replace("supports_aux_hidden_states_over_pp = True", "supports_aux_hidden_states_over_pp = False"))
    flipped = run_cached()
    assert "stages/variant.py" not in {d.path for d in flipped.diagnostics}


@pytest.mark.parametrize("jobs", [1, 2])
def test_sentinel_facts_read_lazily_still_invalidate_cached_results(tmp_path: Path, jobs: int) -> None:
    """SHD201's facts are read module by module: the sentinel lives in
    ``common.py``, the resolver in ``wrapper.py``, the constructions in
    ``model.py``. Changing the sentinel (a module the check read) or
    removing the resolver (a name in the eager outline) changes the cached
    result; a comment changes nothing and parses nothing."""
    from linter.registry import load_registry

    root, cfg = _corpus_project(tmp_path, "unresolved_sentinel_reaches_impl", "backend_pkg", "SHD201")
    reg = load_registry()

    def run_cached():
        return Engine(cfg, reg, jobs=jobs, cache=Cache(root / ".c")).run([root])

    first = run_cached()
    fired = sorted((d.path, d.span.line) for d in first.diagnostics)
    assert ("backend_pkg/model.py", 15) in fired
    common = root / "backend_pkg" / "common.py"
    common.write_text(common.read_text() + "\n# a comment changes no fact\n")
    again = run_cached()
    # only the edited module is parsed again (it passes the text gate): the
    # constructions' results come from the cache
    assert sorted((d.path, d.span.line) for d in again.diagnostics) == fired and again.stats.parsed == 1
    common.write_text(common.read_text().replace("pcp_world_size: int = -1", "pcp_world_size: int = 1"))
    (msg,) = [d.message for d in run_cached().diagnostics if (d.path, d.span.line) == ("backend_pkg/model.py", 15)]
    assert "pcp_rank" in msg and "pcp_world_size" not in msg  # (1 is no sentinel)
    common.write_text(common.read_text().replace("pcp_world_size: int = 1", "pcp_world_size: int = -1"))
    assert sorted((d.path, d.span.line) for d in run_cached().diagnostics) == fired
    wrapper = root / "backend_pkg" / "wrapper.py"
    wrapper.write_text(wrapper.read_text().replace("if self.impl.pcp_world_size < 0:", "if True:"))
    assert [d for d in run_cached().diagnostics if d.path == "backend_pkg/model.py"] == []


def test_a_class_added_where_the_outline_said_none_was_invalidates_the_cached_result(tmp_path: Path) -> None:
    """Looking a class up by its qualified name reads only the modules whose
    outline names such a class: with the base renamed away, the gate of
    ``model.py`` reads nothing of ``common.py``; naming it back (which
    changes the eager outline) brings the finding back from the cache."""
    from linter.registry import load_registry

    root, cfg = _corpus_project(tmp_path, "unresolved_sentinel_reaches_impl", "backend_pkg", "SHD201")
    reg = load_registry()

    def fired() -> list[tuple[str, int]]:
        result = Engine(cfg, reg, jobs=1, cache=Cache(root / ".c")).run([root])
        return sorted((d.path, d.span.line) for d in result.diagnostics)

    assert ("backend_pkg/model.py", 15) in fired()
    common = root / "backend_pkg" / "common.py"
    text = common.read_text()
    common.write_text(text.replace("class SparseDecodeImplBase:", "class SparseDecodeImplBaseOld:"))
    assert ("backend_pkg/model.py", 15) not in fired()
    common.write_text(text)
    assert ("backend_pkg/model.py", 15) in fired()


def _corpus_project(tmp_path: Path, rule_dir: str, sub: str, code: str) -> tuple[Path, Config]:
    """A copy of ``corpus/<rule_dir>/<sub>`` as a project of its own, and a
    configuration selecting ``code``."""
    import shutil

    corpus = Path(__file__).resolve().parent.parent / "corpus" / rule_dir / sub
    root = tmp_path / "proj"
    shutil.copytree(corpus, root / sub)
    (root / "pyproject.toml").write_text("[tool.shardlint]\n")
    return root, Config(root=root.resolve(), select=(code,))


def _stages_project(tmp_path: Path) -> tuple[Path, Config]:
    return _corpus_project(tmp_path, "pp_payload_drops_tensors", "stages", "SHD301")


def test_lazy_class_facts_read_in_a_check_worker_still_invalidate_its_cached_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "classes" facts are read per module on demand, also inside the
    check workers: what a worker read must reach the cache entry, or an edit
    of the base class in another file would leave a stale result."""
    import linter.engine as engine_mod
    from linter.registry import load_registry

    monkeypatch.setattr(engine_mod, "HEAVY_CHECK_BYTES", 1)  # checks in a pool
    monkeypatch.setattr(engine_mod, "POOL_MIN_FILES", 1)
    root, cfg = _stages_project(tmp_path)
    reg = load_registry()

    def run_cached():
        return Engine(cfg, reg, jobs=2, cache=Cache(root / ".c")).run([root])

    first = run_cached()
    assert "stages/variant.py" in {d.path for d in first.diagnostics}
    base = root / "stages" / "backbone.py"
    base.write_text(base.read_text() + "\n# a comment changes no fact\n")
    again = run_cached()
    assert again.diagnostics == first.diagnostics and again.stats.parsed == 1  # the edited base alone
    base.write_text(base.read_text().replace("supports_aux_hidden_states_over_pp = True", "supports_aux_hidden_states_over_pp = False"))
    assert "stages/variant.py" not in {d.path for d in run_cached().diagnostics}


def test_a_check_reports_the_lazy_facts_it_read(tmp_path: Path) -> None:
    """What the rule itself reads (not only its facts gate) is recorded:
    the check of a subclass depends on its base's module."""
    import linter.engine as engine_mod
    from linter.registry import load_registry

    root, cfg = _stages_project(tmp_path)
    eng = Engine(cfg, load_registry(), jobs=1)
    eng.project_facts()
    engine_mod._init_worker({"engine": eng})
    try:
        out = engine_mod._check_job((str(root / "stages" / "variant.py"), "stages/variant.py", ["SHD301"], None))
    finally:
        engine_mod._init_worker({})
    assert out.diagnostics
    assert "classes\0stages.backbone" in out.lazy


def test_a_base_class_module_added_later_invalidates_the_cached_result(tmp_path: Path) -> None:
    """A lookup of a module the project does not have is a dependency too:
    once the file appears, the class it defines joins the MRO."""
    from linter.registry import load_registry

    root, cfg = _stages_project(tmp_path)
    variant = root / "stages" / "variant.py"
    variant.write_text(
        variant.read_text()
        .replace("from .backbone import", "from .mixins import Quiet\nfrom .backbone import")
        .replace("class ShortcutVariant(Backbone):", "class ShortcutVariant(Quiet, Backbone):")
    )
    reg = load_registry()

    def run_cached():
        return Engine(cfg, reg, jobs=1, cache=Cache(root / ".c")).run([root])

    assert "stages/variant.py" in {d.path for d in run_cached().diagnostics}
    # the mixin's own claim comes first in the MRO: no claim, no finding
    (root / "stages" / "mixins.py").write_text("class Quiet:\n    supports_aux_hidden_states_over_pp = False\n")
    cached = run_cached()
    fresh = Engine(cfg, reg, jobs=1).run([root])
    assert "stages/variant.py" not in {d.path for d in fresh.diagnostics}
    assert cached.diagnostics == fresh.diagnostics


def test_warm_run_over_an_unchanged_tree_reads_no_facts_and_lost_facts_are_rebuilt(tmp_path: Path) -> None:
    """The facts are most of the cache's bytes: an unchanged tree is re-checked
    from the small shards alone; when the facts files are damaged and a rule
    needs them, the files are scanned again and the findings stay the same."""
    import shutil

    from linter.registry import load_registry

    corpus = Path(__file__).resolve().parent.parent / "corpus" / "pp_payload_drops_tensors" / "stages"
    root = tmp_path / "proj"
    shutil.copytree(corpus, root / "stages")
    (root / "pyproject.toml").write_text("[tool.shardlint]\n")
    reg = load_registry()
    cfg = Config(root=root.resolve(), select=("SHD301",))

    def engine() -> Engine:
        return Engine(cfg, reg, jobs=1, cache=Cache(root / ".c"))

    first = engine().run([root])
    assert "stages/variant.py" in {d.path for d in first.diagnostics}
    assert list((root / ".c").glob("*.facts.pp_receivers.json"))
    # (the lazy "classes" facts are read per module when asked, never cached)
    assert not list((root / ".c").glob("*.facts.classes.json"))
    warm_engine = engine()
    warm = warm_engine.run([root])
    assert warm.diagnostics == first.diagnostics and warm.stats.parsed == 0
    assert warm_engine._facts is not None
    assert not any(warm_engine._facts.loaded(n) for n in ("pp_receivers", "pp_capture_setters"))
    assert not warm_engine._facts.raw("classes")._done  # type: ignore[attr-defined]
    for f in (root / ".c").glob("*.facts.*.json"):
        f.write_text(f.read_text()[:50])  # truncated
    variant = root / "stages" / "variant.py"
    variant.write_text(variant.read_text() + "\n# edited\n")
    again = engine().run([root])
    assert again.diagnostics == first.diagnostics and again.stats.parsed == 1
    # the facts files were rewritten whole
    assert engine().run([root]).diagnostics == first.diagnostics


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_leaves_the_host_garbage_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    # The engine pauses automatic collection while scanning and freezes the
    # heap during checks; a program embedding it (an editor server, flake8)
    # must get its collector back untouched, including after a failing rule.
    import gc

    _tree(tmp_path)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        Engine(Config(root=tmp_path), toy_registry(), jobs=1).run([tmp_path])
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable() if was else gc.disable()


def test_the_scan_frees_reference_cycles_it_makes(tmp_path: Path) -> None:
    # Collection is paused during the scan but the youngest generation is
    # collected between files: cycles a collector leaves per file (the
    # stdlib's ast.literal_eval makes some) must not pile up for the run.
    import weakref

    from linter import engine as eng
    from linter.files import discover

    made: list[weakref.ref] = []

    class Node:
        pass

    orig = eng.Engine.scan_one

    def leaky(self, text, relpath, checked, *args, **kw):  # type: ignore[no-untyped-def]
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the collector can free
        made.append(weakref.ref(a))
        return orig(self, text, relpath, checked, *args, **kw)

    for i in range(80):
        write(tmp_path, f"pkg/f{i:02d}.py", f"X = {i}\n")
    eng.Engine.scan_one = leaky  # type: ignore[method-assign]
    try:
        cfg = Config(root=tmp_path)
        Engine(cfg, toy_registry(), jobs=1)._scan(discover([tmp_path], cfg, None), True)
        alive_during = sum(r() is not None for r in made)
    finally:
        eng.Engine.scan_one = orig  # type: ignore[method-assign]
    assert len(made) == 80
    # at most the files since the last collection between files are left
    assert alive_during <= 32


def test_the_scan_readers_leave_no_syntax_tree_in_a_reference_cycle() -> None:
    # A tree kept alive by a cycle (a recursive closure over a dict of its
    # nodes) waits for the collector, which the scan pauses: the trees of
    # the files since the last collection pile up (37 MB more on vLLM) and
    # the collection between files walks them all. Every gate and collector
    # of every rule, on every corpus file, must let its trees go by
    # reference counting alone.
    import ast
    import gc

    from corpus_harness import CORPUS

    engine = Engine(Config(root=CORPUS), jobs=1)
    engine._real()
    was, flags = gc.isenabled(), gc.get_debug()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    kept: dict[str, set[str]] = {}
    try:
        for path in sorted(CORPUS.rglob("*.py")):
            rel = path.relative_to(CORPUS).as_posix()
            engine.scan_one(path.read_text(encoding="utf-8"), rel, True)
            gc.collect()
            nodes = {type(o).__name__ for o in gc.garbage if isinstance(o, ast.AST)}
            if nodes:
                kept[rel] = nodes
            gc.garbage.clear()
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        gc.enable() if was else gc.disable()
    assert not kept


def _decode_like_python(data: bytes) -> str | None:
    import io
    import tokenize

    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(enc)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    text = text[1:] if text.startswith("\ufeff") else text
    return text.replace("\r\n", "\n").replace("\r", "\n")


_PIECES = [b"x = 1", b"\n", b"\r", b"\r\n", b"# coding: latin-1", b"# -*- coding: utf-8 -*-",
           b"# vim: set fileencoding=cp1252 :", b"\xe9", b"\xc3\xa9", b"\xef\xbb\xbf", b" ", b"coding", b"\xff", b"\x80"]


@given(st.lists(st.sampled_from(_PIECES), max_size=8))
@settings(max_examples=400, deadline=None)
def test_source_decodes_as_python_reads_it(parts: list[bytes]) -> None:
    # the UTF-8 fast path (no BOM, no cookie in the first two lines) must
    # give exactly what the PEP 263 / BOM / universal-newline path gives
    from linter.source import decode_source

    data = b"".join(parts)
    text, err = decode_source(data, "m.py")
    expected = _decode_like_python(data)
    assert text == expected
    assert (err is None) == (expected is not None)


_DEFINITIONS_EVERYWHERE = '''
import x

class Top(Base):
    attr = [lambda q: q for _ in range(2)]

    def method(self):
        class InMethod:
            pass

        def helper():
            return 1

        if self.flag:
            def in_if(): ...
        elif other:
            class InElif: ...
        else:
            def in_else(): ...
        for i in range(3):
            def in_for(): ...
        else:
            def in_for_else(): ...
        while cond:
            def in_while(): ...
        try:
            def in_try(): ...
        except ValueError:
            def in_except(): ...
        else:
            def in_try_else(): ...
        finally:
            def in_finally(): ...
        with ctx() as c:
            @decorator(lambda: 1)
            def in_with(): ...
        match c:
            case [1, *_] if c:
                class InCase: ...
        return helper


async def coroutine():
    async with a:
        async def nested(): ...
    async for i in b:
        class InAsyncFor: ...
    try:
        pass
    except* OSError:
        def in_except_star(): ...

def one_liner(): return [x for x in ()]
'''


def test_definition_only_visitors_walk_statements_but_see_every_definition() -> None:
    """Visitors of only ``Module``/``FunctionDef``/``ClassDef`` get a walk that
    skips expressions (no definition lives in one): the same calls in the
    same order as the full walk, which runs when any other node type is
    visited, and the engine's scope callbacks see every definition."""
    import libcst as cst

    from linter.check import fast_visit_batched, parse_module_unvalidated

    class Definitions(cst.BatchableCSTVisitor):
        def __init__(self, log: list[tuple[str, str]]) -> None:
            super().__init__()
            self.log = log

        def visit_Module(self, node: cst.Module) -> None:
            self.log.append(("module", ""))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.log.append(("def", node.name.value))

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.log.append(("end def", node.name.value))

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.log.append(("class", node.name.value))

        def leave_ClassDef(self, node: cst.ClassDef) -> None:
            self.log.append(("end class", node.name.value))

    class Names(cst.BatchableCSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            pass

    module = parse_module_unvalidated(_DEFINITIONS_EVERYWHERE)
    runs = []
    for extra in ([], [Names()]):
        log: list[tuple[str, str]] = []
        scopes: list[str] = []

        def before(node: object) -> None:
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                scopes.append(node.name.value)

        fast_visit_batched(module, [Definitions(log), *extra], before, lambda node: None)
        runs.append((log, scopes))
    assert runs[0] == runs[1]
    names = [n for kind, n in runs[0][0] if kind in ("def", "class")]
    assert names == runs[0][1]
    assert names == [
        "Top", "method", "InMethod", "helper", "in_if", "InElif", "in_else", "in_for",
        "in_for_else", "in_while", "in_try", "in_except", "in_try_else", "in_finally",
        "in_with", "InCase", "coroutine", "nested", "InAsyncFor", "in_except_star", "one_liner",
    ]


def test_rules_speak_libcsts_batchable_visitor_protocol(tmp_path: Path) -> None:
    """``Rule`` does not inherit from ``libcst.BatchableCSTVisitor`` (so the
    rule modules import without loading libcst) but behaves as one: the
    same visitor methods as libcst's own ``get_visitors`` finds, and
    declared metadata resolved for the traversal and read with
    ``get_metadata``."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    from linter.registry import Registry, load_registry
    for code, cls in load_registry().rules.items():
        rule = cls.__new__(cls)  # (no facts to build one with)
        found = rule.get_visitors().keys()
        assert found == cst.BatchableCSTVisitor.get_visitors(rule).keys(), code
        assert found or code in ("SHD000", "SHD900"), code  # (the built-ins visit nothing)

    class LineOfMin(FlagMinCalls):
        code = "SHD989"
        name = "line-of-min"
        METADATA_DEPENDENCIES = (PositionProvider,)

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "min":
                line = self.get_metadata(PositionProvider, node).start.line
                self.report(node, f"min on line {line}")
                assert self.get_metadata(PositionProvider, cst.Name("x"), None) is None

    assert LineOfMin.get_inherited_dependencies() == {PositionProvider}
    root = tmp_path / "p"
    write(root, "m.py", "x = 1\n\ny = min(x, 2)\n")
    reg = Registry({"SHD989": LineOfMin}, {})
    res = Engine(Config(root=root, select=("SHD989",)), reg, jobs=1).run([root])
    assert [d.message for d in res.diagnostics] == ["min on line 3"] and not res.errors


def test_cached_launch_results_follow_edits_of_the_kernels_module_and_its_reexports(tmp_path: Path) -> None:
    """Kernels and re-exports are read per module on demand (lazy facts):
    the launching file's cached SHD101 results must still follow an edit of
    the kernel, or of the package that re-exports it; a comment changes
    nothing and re-parses nothing."""
    import shutil

    from linter.registry import load_registry

    corpus = Path(__file__).resolve().parent.parent / "corpus" / "block_size_min_divisibility" / "kernel_pkg"
    root = tmp_path / "proj"
    # (the package's launcher modules only: its head_* and gate_* files test other shapes and the gates)
    shutil.copytree(corpus, root / "kernel_pkg", ignore=shutil.ignore_patterns("head_*", "gate_*"))
    (root / "pyproject.toml").write_text("[tool.shardlint]\n")
    cfg = Config(root=root.resolve(), select=("SHD101",))
    reg = load_registry()

    def cached():
        return Engine(cfg, reg, jobs=1, cache=Cache(root / ".c")).run([root])

    def fresh():
        return Engine(cfg, reg, jobs=1).run([root]).diagnostics

    def lines() -> set[int]:
        return {d.span.line for d in cached().diagnostics}

    first = lines()
    assert len(first) == 3
    kernels = root / "kernel_pkg" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n# a comment changes no fact\n")
    again = cached()
    assert {d.span.line for d in again.diagnostics} == first and again.stats.parsed == 0
    # the kernel no longer needs TILE to be a power of two: that launch is fine
    kernels.write_text(kernels.read_text().replace("cols = tl.arange(0, TILE)\n    x = tl.load(x_ptr + row * n_cols + cols)\n", "cols = tl.arange(0, 1024)\n    x = tl.load(x_ptr + row * n_cols + cols)\n", 1))
    after_kernel = cached()
    assert after_kernel.diagnostics == fresh() and len(after_kernel.diagnostics) == 2
    # the package stops re-exporting tile_norm_kernel: that launch is unknown
    init = root / "kernel_pkg" / "__init__.py"
    init.write_text("from .kernels import fused_scale_kernel\n")
    after_init = cached()
    assert after_init.diagnostics == fresh() and len(after_init.diagnostics) == 1


def test_cache_keeps_a_few_other_configurations_and_nothing_it_did_not_write_goes(tmp_path: Path) -> None:
    """Every version and configuration has its own state: the folder keeps
    the one in use and the three most recently written others (a config
    switched back and forth stays warm), drops older ones and stale
    temporary files, and leaves files it does not name alone."""
    import os
    import re
    import time

    from linter import __version__
    from linter.cache import FORMAT, TAG_TEXT

    write(tmp_path, "a.py", "v = min(a, 1)\n")
    cache_dir = tmp_path / ".c"
    cache_dir.mkdir()
    (cache_dir / "CACHEDIR.TAG").write_text(TAG_TEXT)  # a folder shardlint made (it refuses others)
    now = time.time()
    others = [f"{i:016x}" for i in range(1, 7)]
    for age, key in enumerate(others):
        for name in (f"v{FORMAT}-{__version__}-{key}-3.json", f"v{FORMAT}-{__version__}-{key}-3.facts.x.json"):
            p = cache_dir / name
            p.write_text("{}")
            os.utime(p, (now - 1000 * (age + 1), now - 1000 * (age + 1)))
    (cache_dir / "notes.txt").write_text("mine")
    old_tmp, new_tmp = cache_dir / ".tmp-old.json", cache_dir / ".tmp-new.json"
    old_tmp.write_text("")
    new_tmp.write_text("")
    os.utime(old_tmp, (now - 7200, now - 7200))
    cfg = Config(root=tmp_path)
    res = Engine(cfg, toy_registry(), jobs=1, cache=Cache(cache_dir)).run([tmp_path])
    assert res.diagnostics
    keys = {m.group(1) for n in os.listdir(cache_dir) if (m := re.fullmatch(r"v\d+-.+-([0-9a-f]{16})-\d+.*\.json", n))}
    assert set(others[:3]) <= keys and not (set(others[3:]) & keys)
    assert len(keys) == 4  # and the one in use
    assert (cache_dir / "notes.txt").exists() and new_tmp.exists() and not old_tmp.exists()
    # the state in use still serves a warm run
    again = Engine(cfg, toy_registry(), jobs=1, cache=Cache(cache_dir)).run([tmp_path])
    assert again.diagnostics == res.diagnostics and again.stats.cached == 1


def test_every_rule_on_the_corpus_gives_the_same_findings_cold_warm_pooled_and_serial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real rules (with their lazy and eager facts) over the whole
    corpus: one process without a cache, two workers (pools forced for the
    scan and the checks) writing a cache, then reading it back."""
    import shutil

    import linter.engine as engine_mod
    from linter.registry import load_registry

    root = tmp_path / "corpus"
    shutil.copytree(Path(__file__).resolve().parent.parent / "corpus", root, ignore=shutil.ignore_patterns(".shardlint_cache", "__pycache__"))
    (root / "pyproject.toml").write_text("[tool.shardlint]\n")
    reg = load_registry()
    cfg = Config(root=root.resolve())
    serial = Engine(cfg, reg, jobs=1).run([root])
    assert len({d.code for d in serial.diagnostics}) >= 6 and not serial.errors
    monkeypatch.setattr(engine_mod, "POOL_MIN_FILES", 2)
    monkeypatch.setattr(engine_mod, "HEAVY_CHECK_BYTES", 1)
    cold = Engine(cfg, reg, jobs=2, cache=Cache(tmp_path / ".c")).run([root])
    warm = Engine(cfg, reg, jobs=2, cache=Cache(tmp_path / ".c")).run([root])
    assert cold.diagnostics == serial.diagnostics == warm.diagnostics
    assert warm.stats.parsed == 0 and not cold.errors and not warm.errors


def test_a_fix_edit_beyond_the_reported_statement_gets_its_position(tmp_path: Path) -> None:
    """Positions are computed up to the statement that holds the findings;
    a fix that edits a node further down still gets that node's own span,
    and the finding's scope is the function it sits in."""
    import libcst as cst

    from linter.check import check_text
    from linter.facts import ProjectFacts
    from linter.needles import Needles
    from linter.rule import PendingFix, Rule
    from linter.types import Applicability

    class FirstPassFixesLast(Rule):
        """## What it finds
        -
        ## Why it breaks
        -
        ## Example
        -
        ## Fix
        -
        ## Options
        -
        """

        code = "SHD993"
        name = "first-pass-fixes-last"
        summary = "test rule"
        needles = Needles(all_of=("pass",))

        def __init__(self, ctx, options=None):  # type: ignore[no-untyped-def]
            super().__init__(ctx, options)
            self.seen: list[cst.Pass] = []

        def visit_Pass(self, node: cst.Pass) -> None:
            self.seen.append(node)

        def finish(self) -> None:
            first, last = self.seen[0], self.seen[-1]
            self.report(first, "first", fix=PendingFix("edit the last", Applicability.SAFE, [(last, "...")]))

    text = "def f():\n    pass\n\n\n" + "x = 1\n" * 50 + "\n\ndef g():\n    pass\n"
    diags, errors = check_text(text, "m.py", "m", [FirstPassFixesLast], Config(root=tmp_path), ProjectFacts())
    assert not errors
    (d,) = diags
    assert (d.span.line, d.span.column) == (2, 4)
    (edit,) = d.fix.edits  # type: ignore[union-attr]
    assert (edit.span.line, edit.span.column, edit.span.end_line, edit.span.end_column) == (58, 4, 58, 8)
    assert edit.replacement == "..."


def test_facts_written_while_waiting_are_rewritten_only_if_they_change_again(tmp_path: Path) -> None:
    """``Cache.save_facts`` (a run calls it while it waits on its workers)
    writes the facts files of the dirty shards; the end of the run then
    writes every state file, and the facts files again only for shards
    whose facts changed since (a check result alone leaves them). Read back,
    the cache holds the run's last state either way."""
    from linter.cache import SHARDS, Entry, shard_of

    cache = Cache(tmp_path / "c")
    entries = cache.entries("k")
    rels = [f"pkg/m{i}.py" for i in range(40)]
    by_shard: dict[int, list[str]] = {}
    for i, rel in enumerate(rels):
        entries[rel] = Entry(i, i, f"d{i}", {"fh": {"col": f"h{i}"}}, None, {"col": {"n": i}})
        by_shard.setdefault(shard_of(rel), []).append(rel)
        cache.mark_dirty("k", rel)
    assert len(by_shard) == SHARDS
    cache.save_facts()
    facts_files = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "c").glob("*.facts.*.json")}
    assert len(facts_files) == SHARDS and not list((tmp_path / "c").glob("*-[0-9].json"))
    first, second = sorted(by_shard)[:2]
    # a check result in one shard, new facts in another
    changed_check, changed_facts = by_shard[first][0], by_shard[second][0]
    entries[changed_check].check = {"diags": [], "parsed": True}
    cache.mark_dirty("k", changed_check, facts=False)
    entries[changed_facts].facts = {"col": {"n": -1}}
    cache.mark_dirty("k", changed_facts)
    import time

    time.sleep(0.01)
    cache.save()
    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "c").glob("*.facts.*.json")}
    rewritten = {n for n in after if after[n] != facts_files.get(n)}
    assert rewritten == {f"{n}" for n in after if f"-{second}.facts." in n}
    back = Cache(tmp_path / "c")
    got = back.entries("k")
    back.load_facts("k")
    assert got[changed_check].check == {"diags": [], "parsed": True}
    assert got[changed_facts].facts == {"col": {"n": -1}}
    assert all(got[r].facts == {"col": {"n": i}} for i, r in enumerate(rels) if r != changed_facts)
