"""The prefilter is the engine's, derived from what each rule declares
(``Rule.needles``, ``Rule.definition_needles``); it must be sound: with every
gate closed -- every rule on every whole file, no facts gate -- the findings
are the same, on the corpus and on mutated corpus files."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_harness import CORPUS, diagnostics_for, rule_dirs
from linter.config import Config
from linter.engine import Engine
from linter.registry import load_registry
from linter.scan import Gate, Regions, check_source, gate_of, regions_of


def _keys(found: dict[Path, list]) -> list[tuple]:
    return sorted(
        (d.path, d.span, d.code, d.message, d.fingerprint) for diags in found.values() for d in diags
    )


@pytest.mark.parametrize("rule_dir", rule_dirs(), ids=lambda p: p.name)
def test_corpus_findings_are_the_same_with_the_gates_closed(rule_dir: Path) -> None:
    assert _keys(diagnostics_for(rule_dir)) == _keys(diagnostics_for(rule_dir, gates=False))


# -- mutated corpus files -------------------------------------------------------

_FILES = sorted(
    p for p in CORPUS.rglob("*.py") if p.stat().st_size and not (p.parent / "pyproject.toml").is_file()
)


def _statements(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of each top-level statement, 1-based."""
    tree = ast.parse(text)
    return [
        (min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]), s.end_lineno or s.lineno)
        for s in tree.body
    ]


def _mutate(text: str, ops: list[tuple[str, int, int]]) -> str:
    """Apply structural mutations that keep the file valid Python: drop a
    top-level statement, duplicate one, swap two, or wrap one in a class or a
    function (moving code between definitions and module level)."""
    for op, i, j in ops:
        lines = text.splitlines(keepends=True)
        stmts = _statements(text)
        if not stmts:
            return text
        a, b = stmts[i % len(stmts)]
        c, d = stmts[j % len(stmts)]
        chunk = "".join(lines[a - 1 : b])
        if not chunk.endswith("\n"):
            chunk += "\n"
        if op == "drop" and len(stmts) > 1:
            new = lines[: a - 1] + lines[b:]
        elif op == "dup":
            new = lines[:b] + [chunk] + lines[b:]
        elif op == "swap" and (a, b) != (c, d):
            (a, b), (c, d) = sorted([(a, b), (c, d)])
            other = "".join(lines[c - 1 : d])
            new = lines[: a - 1] + [other if other.endswith("\n") else other + "\n"] + lines[b : c - 1] + [chunk] + lines[d:]
        elif op in ("in_class", "in_function"):
            head = "class Wrapped%d:\n" % i if op == "in_class" else "def wrapped_%d(self, x):\n" % i
            new = lines[: a - 1] + [head, textwrap.indent(chunk, "    ")] + lines[b:]
        else:
            continue
        candidate = "".join(new)
        try:
            ast.parse(candidate)
        except (SyntaxError, ValueError):
            continue
        text = candidate
    return text


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["drop", "dup", "swap", "in_class", "in_function"]),
        st.integers(0, 400),
        st.integers(0, 400),
    ),
    min_size=1,
    max_size=4,
)


def _engine(root: Path, gates: bool) -> Engine:
    registry = load_registry()
    return Engine(Config(root=root, select=tuple(r.code for r in registry.checkers)), registry, jobs=1, gates=gates)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(_FILES) - 1), ops=_OPS)
def test_mutated_corpus_files_find_the_same_with_the_gates_closed(index: int, ops: list) -> None:
    path = _FILES[index]
    try:
        text = _mutate(path.read_text(encoding="utf-8"), ops)
    except (SyntaxError, ValueError):
        return  # a corpus file that does not parse on purpose
    root = path.parent
    keys = []
    for gates in (True, False):
        diags, errors = _engine(root, gates).lint_text(text, path)
        assert not errors
        keys.append(sorted((d.span, d.code, d.message, d.fingerprint) for d in diags))
    assert keys[0] == keys[1], path


# -- the definition gate's cut ----------------------------------------------------

_MODULE = '''\
"""doc"""
import os

BLOCK = 128


@decorator
def first(x):
    return min(x, BLOCK)


class Second:
    def method(self):
        return "min("


if os:
    def third():
        pass
x = 1; y = 2
'''


def test_regions_are_the_top_level_definitions_with_their_decorators() -> None:
    regions = regions_of(ast.parse(_MODULE), _MODULE)
    assert regions is not None
    got = [(_MODULE[u.start : u.end], u.parent) for u in regions.units]
    assert got[0][0].startswith("@decorator\ndef first") and got[0][0].endswith("BLOCK)\n")
    assert got[1][0].startswith("class Second") and got[1][0].endswith('"min("\n')
    assert got[2][0].startswith("    def method") and got[2][1] == 1  # a member of Second
    assert len(got) == 3  # the def inside ``if`` is module-level code
    assert "def third" in regions.rest() and "import os" in regions.rest()


def test_a_lone_carriage_return_reads_the_whole_file() -> None:
    text = "def f():\r    return 1\rx = 1\n"
    assert regions_of(ast.parse(text), text) is None


def test_the_check_sees_the_matching_definitions_and_the_module_code() -> None:
    from linter.needles import Needles
    from linter.rule import Rule

    class Mins(Rule):
        code, name = "SHD999", "mins"
        needles = Needles(all_of=("min(",))
        definition_needles = Needles(all_of=("min(",))

    source = check_source(_MODULE, "m.py", [gate_of(Mins, {})])
    assert source.count("\n") == _MODULE.count("\n")  # positions kept
    assert "def first" in source and "class Second" in source  # both hold "min("
    assert "import os" in source and "def third" in source
    ast.parse(source)

    class Methods(Rule):
        code, name = "SHD998", "methods"
        needles = Needles(all_of=("def",))
        definition_needles = Needles(all_of=("self",))

    source = check_source(_MODULE, "m.py", [gate_of(Methods, {})])
    assert "def first" not in source and "class Second" in source and "BLOCK = 128" in source
    ast.parse(source)
    assert Regions(_MODULE, ()).kept([gate_of(Methods, {})]) == ([(0, len(_MODULE))], [])
    assert Regions(_MODULE, ()).kept([Gate("SHD997", Needles())]) is None  # no definition gate: all


def test_the_gates_follow_the_configured_names() -> None:
    """A rule whose names are options declares its needles from them: a
    configured name opens the gates for code that holds no default name."""
    from linter.needles import Needles
    from linter.options import Option
    from linter.rule import Rule

    class Named(Rule):
        code, name = "SHD996", "named"
        options = {"names": Option(("budget",), "list[str]", "names")}

        @classmethod
        def declared_needles(cls, options):  # type: ignore[no-untyped-def]
            words = Needles(any_of=(tuple(options["names"]),))
            return words, words

    default, custom = gate_of(Named, {"names": ("budget",)}), gate_of(Named, {"names": ("allowance",)})
    text = "def f(allowance, tp):\n    return allowance // tp\n"
    assert not default.file.match(text) and custom.file.match(text)
    assert "allowance //" in check_source(text, "m.py", [custom])
    assert "allowance //" not in check_source(text, "m.py", [default])


def test_a_kept_definition_brings_the_definitions_it_names() -> None:
    """A power-of-two helper called from a kept function, and that helper's
    own helper, are kept; a function only mentioning a longer name is not."""
    from linter.needles import Needles
    from linter.rule import Rule

    text = (
        "def round_pow2(n):\n    return next_pow2(n)\n\n"
        "def next_pow2(n):\n    return 1 << (n - 1).bit_length()\n\n"
        "def unrelated():\n    return round_pow2_table\n\n"
        "def launch(x):\n    block = min(x, 1024)\n    return round_pow2(block)\n"
    )

    class Mins(Rule):
        code, name = "SHD995", "mins"
        needles = definition_needles = Needles(all_of=("min(",))

    source = check_source(text, "m.py", [gate_of(Mins, {})])
    assert "def launch" in source and "def round_pow2" in source and "def next_pow2" in source
    assert "def unrelated" not in source
    assert source.count("\n") == text.count("\n")


def test_a_rule_that_follows_no_definitions_keeps_only_its_matches() -> None:
    """``follows_definitions = False``: the helper a matching function names
    is blanked for that rule, and kept when another admitted rule follows
    names; the blanked text keeps every position."""
    from linter.needles import Needles
    from linter.rule import Rule

    text = (
        "def helper(n):\n    return n * 2\n\n"
        "def launch(x):\n    block = min(x, 1024)\n    return helper(block)\n"
    )

    class Local(Rule):
        code, name = "SHD994", "local"
        needles = definition_needles = Needles(all_of=("min(",))
        follows_definitions = False

    class Following(Rule):
        code, name = "SHD993", "following"
        needles = definition_needles = Needles(all_of=("min(",))

    alone = check_source(text, "m.py", [gate_of(Local, {})])
    assert "def launch" in alone and "def helper" not in alone
    assert alone.count("\n") == text.count("\n")
    both = check_source(text, "m.py", [gate_of(Local, {}), gate_of(Following, {})])
    assert "def launch" in both and "def helper" in both


def test_the_check_reuses_the_scans_cut_only_for_the_same_text() -> None:
    """The scan hands the check its definitions (no second compile); a text
    changed in between is cut again rather than masked at stale offsets."""
    from linter.needles import Needles
    from linter.rule import Rule
    from linter.scan import scan_text

    class Mins(Rule):
        code, name = "SHD992", "mins-cut"
        needles = definition_needles = Needles(all_of=("min(",))

    gate = gate_of(Mins, {})
    text = "def other():\n    return 1\n\ndef launch(x):\n    return min(x, 8)\n"
    scan = scan_text(text, "m.py", "m", [], [gate])
    assert scan.rules == ["SHD992"] and scan.cut is not None
    assert check_source(text, "m.py", [gate], scan.cut) == check_source(text, "m.py", [gate])
    edited = "def launch(x):\n    return min(x, 8)\n\ndef other():\n    return 1\n"
    assert scan.cut.regions(edited) is None
    assert "def launch" in check_source(edited, "m.py", [gate], scan.cut)


def test_a_class_is_narrowed_to_the_members_that_matter() -> None:
    """A kept method brings its class's header and class-level statements
    and the methods it names (``self.helper()``); the others are blanked. A
    class named by kept code whose members are all blanked keeps a ``pass``,
    so the text still parses."""
    from linter.needles import Needles
    from linter.rule import Rule

    text = (
        "class Runner(Base):\n"
        "    limit = 4\n\n"
        "    def launch(self, x):\n        return self.block(min(x, self.limit))\n\n"
        "    def block(self, b):\n        return b\n\n"
        "    def unrelated(self):\n        return 0\n\n"
        "class Base:\n"
        "    def other(self):\n        return 1\n"
    )

    class Mins(Rule):
        code, name = "SHD994", "mins"
        needles = definition_needles = Needles(all_of=("min(",))

    source = check_source(text, "m.py", [gate_of(Mins, {})])
    assert "limit = 4" in source and "def launch" in source and "def block" in source
    assert "def unrelated" not in source and "def other" not in source
    assert "class Base:\n    pass\n" in source
    assert source.count("\n") == text.count("\n")
    ast.parse(source)


def test_a_definition_importing_a_name_kept_code_uses_is_kept() -> None:
    """Rules read a module's imports wherever they stand: the function that
    imports a kernel the kept launch names stays."""
    from linter.needles import Needles
    from linter.rule import Rule

    text = (
        "def setup():\n    from .kernels import scale_kernel\n\n"
        "def other():\n    import os\n\n"
        "def launch(x):\n    block = min(x, 1024)\n    scale_kernel[(1,)](x, BLOCK=block)\n"
    )

    class Mins(Rule):
        code, name = "SHD993", "mins"
        needles = definition_needles = Needles(all_of=("min(",))

    source = check_source(text, "m.py", [gate_of(Mins, {})])
    assert "def setup" in source and "def launch" in source and "def other" not in source


def test_a_rule_that_follows_top_level_definitions_keeps_no_member_by_its_name() -> None:
    """``follows_definitions = "top-level"``: a module function a match names
    is kept, a method it calls through ``self`` is blanked, and a method
    whose import binds a name the match uses is kept (imports are read
    wherever they stand)."""
    from linter.needles import Needles
    from linter.rule import Rule

    text = (
        "def pow2(n):\n    return 1 << n.bit_length()\n\n\n"
        "class Runner:\n"
        "    def size(self):\n        return 7\n\n"
        "    def loader(self):\n        from kernels import tile_kernel\n        return tile_kernel\n\n"
        "    def launch(self, x):\n        block = min(self.size(), pow2(x))\n        tile_kernel[(1,)](x, BLOCK=block)\n"
    )

    class TopLevel(Rule):
        code, name = "SHD990", "top-level"
        needles = definition_needles = Needles(all_of=("min(",))
        follows_definitions = "top-level"

    class Following(Rule):
        code, name = "SHD989", "following-all"
        needles = definition_needles = Needles(all_of=("min(",))

    top = check_source(text, "m.py", [gate_of(TopLevel, {})])
    assert "def launch" in top and "def pow2" in top and "def loader" in top
    assert "def size" not in top
    assert top.count("\n") == text.count("\n")
    both = check_source(text, "m.py", [gate_of(TopLevel, {}), gate_of(Following, {})])
    assert "def size" in both
