"""Reading only some top-level statements (``Rule.ast_scope``): the regions
follow Python's statements, a file compiled in part gives the same scan and
check results as one compiled whole, configured names widen the scope, and
a syntax error outside it is still reported."""

from __future__ import annotations

import ast
import itertools
import textwrap
from pathlib import Path
from typing import Any

import pytest
from corpus_harness import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pp_rules import _dropping_method

import linter.engine as engine_mod
from checks._textfunctions import top_level_regions
from checks.pp_cross_rank_module_alias import PpAliasShapes, PpCrossRankModuleAlias
from checks.pp_payload_drops_tensors import PpPayloadDropsTensors, PpPayloadShapes, PpReceiverFacts
from linter.config import Config
from linter.engine import Engine, check_text, scan_text
from linter.facts import FactCollector, ProjectFacts, mask_text, scoped_tree
from linter.needles import Needles
from linter.registry import load_registry

# Statements Python reads in ways a line-based reader could miss: decorators
# over blank and comment lines, clauses in column 0, brackets and strings
# running over column-0 lines, continuations, semicolons.
TRICKY = textwrap.dedent(
    '''\
    """A module docstring
    class NotAClass:
    def not_a_function():
    """
    import os; import sys
    @decorator

    # a comment between a decorator and its definition
    @other(
    1,
    )
    def decorated():
        x = [
    1,
    ]
        return x
    if os:
        pass
    elif sys:
        pass
    else:
        pass
    try:
        pass
    except (ValueError,
    TypeError):
        pass
    finally:
        pass
    for i in range(3):
        pass
    else:
        pass
    total = 1 + \\
    2
    text = f"""{total}
    def inside_a_string():
    """
    (a, b) = 1, 2
    "a string statement"
    async def coroutine():
        await x
    class Last:
        def method(self):
            return """
    class Inside:
    """
    '''
)


def _corpus_texts() -> list[tuple[str, str]]:
    out = [("tricky.py", TRICKY)]
    for p in sorted(CORPUS.rglob("*.py")):
        out.append((str(p.relative_to(CORPUS)), p.read_text(encoding="utf-8")))
    return out


TEXTS = _corpus_texts()


def _dump(body: list[ast.stmt]) -> list[str]:
    return [ast.dump(s, include_attributes=True) for s in body]


def test_regions_start_where_pythons_statements_start() -> None:
    regions = top_level_regions(TRICKY)
    assert regions is not None
    tree = ast.parse(TRICKY)
    starts = {TRICKY.count("\n", 0, a) + 1 for a, _ in regions}
    # every statement starts in a region; every region but the first starts
    # at a statement (or its first decorator), except a string statement,
    # which goes with the statement above
    firsts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in tree.body]
    strings = {s.lineno for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
    assert starts - {1} == set(firsts) - strings - {1}
    assert [b for _, b in regions][-1] == len(TRICKY)
    assert all(b == a2 for (_, b), (a2, _) in itertools.pairwise(regions))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(TEXTS))), st.randoms(use_true_random=False))
def test_any_regions_masked_compile_to_the_statements_read_from_the_whole(i: int, rnd: Any) -> None:
    name, text = TEXTS[i]
    regions = top_level_regions(text)
    if regions is None:
        return
    kept = [r for r in regions if rnd.random() < 0.5]
    whole = ast.parse(text)
    part = compile(mask_text(text, kept), name, "exec", ast.PyCF_ONLY_AST)
    assert _dump(part.body) == _dump(scoped_tree(whole, text, kept).body)
    # the masked text keeps every position
    assert mask_text(text, kept).count("\n") == text.count("\n")


@pytest.mark.parametrize("text", ["class A:\n\tpass\n", "x = 1\r\ny = 2\r\n", "x = 1\n\f\ny = 2\n"])
def test_tabs_form_feeds_and_carriage_returns_are_read_whole(text: str) -> None:
    assert top_level_regions(text) is None
    assert PpPayloadDropsTensors.ast_scope(text + "IntermediateTensors\n", {}) is None


class _ReadsEverything(FactCollector):
    """A reader with no scope: makes the engine compile the whole text."""

    name = "reads_everything"
    needles = Needles()

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return None


_SCOPED_COLLECTORS = [PpPayloadShapes, PpReceiverFacts, PpAliasShapes]
_SCOPED_RULES = [PpPayloadDropsTensors, PpCrossRankModuleAlias]
_FORK_OPTIONS = {
    "SHD301": {"payload-classes": ["StageHandoff"], "last-rank-accessors": ["is_tail_stage"]},
    "SHD302": {"first-rank-modules": ["tok_emb*"], "last-rank-modules": ["*out_proj"]},
}


@pytest.mark.parametrize("options", [{}, _FORK_OPTIONS], ids=["defaults", "fork-names"])
@pytest.mark.parametrize(
    "name", [n for n, t in TEXTS if n.startswith(("pp_", "tricky")) or "IntermediateTensors" in t]
)
def test_a_scan_in_part_gives_the_same_results_as_a_whole_one(name: str, options: Any) -> None:
    text = dict(TEXTS)[name]
    part = scan_text(text, name, "m", _SCOPED_COLLECTORS, _SCOPED_RULES, options=options)
    whole = scan_text(text, name, "m", [*_SCOPED_COLLECTORS, _ReadsEverything], _SCOPED_RULES, options=options)
    assert part.rules == whole.rules
    assert part.facts == whole.facts and part.error == whole.error


# a model that drops its taps on the non-last ranks (``tests/test_pp_rules.py``)
DROPPING = "from vllm.sequence import IntermediateTensors\n\n\nclass Model:\n" + _dropping_method().lstrip("\n")
# the same drop, written with a fork's own names (no default word in the class)
FORK = DROPPING.replace("IntermediateTensors", "StageHandoff").replace("is_last_rank", "is_tail_stage")


def test_configured_names_widen_the_scope() -> None:
    # a default word elsewhere in the file lets the text gate through
    text = FORK + "\n\ndef unrelated():\n    return IntermediateTensors({})\n"
    regions = top_level_regions(text)
    assert regions is not None
    model = next(r for r in regions if text.startswith("class Model", r[0]))
    assert model not in PpPayloadDropsTensors.ast_scope(text, {})
    fork = {"SHD301": {"payload-classes": ["StageHandoff"], "last-rank-accessors": ["is_tail_stage"]}}
    assert model in PpPayloadDropsTensors.ast_scope(text, fork)
    # an accessor glob with no literal part could match any name: all read
    assert PpPayloadDropsTensors.ast_scope(text, {"SHD301": {"last-rank-accessors": ["*"]}}) is None
    # so do names the text may spell otherwise than the compiler reads them
    assert PpPayloadDropsTensors.ast_scope(text + "ｘ = 1\n", {}) is None


DRAFT = textwrap.dedent(
    """\
    class Draft:
        def load(self, target):
            self.embed_tokens = target.model.embed_tokens


    class Unrelated:
        def load(self, target):
            self.vocab = target.model.tok_emb
    """
)


def test_configured_module_names_widen_shd302s_scope() -> None:
    regions = top_level_regions(DRAFT)
    assert regions is not None and len(regions) == 2
    assert PpCrossRankModuleAlias.ast_scope(DRAFT, {}) == regions[:1]
    assert PpCrossRankModuleAlias.ast_scope(DRAFT, _FORK_OPTIONS) == regions
    assert PpCrossRankModuleAlias.ast_scope(DRAFT, {"SHD302": {"last-rank-modules": ["?"]}}) is None


def _run(root: Path, **options: Any) -> Any:
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    config = Config(root=root, select=("SHD301",), rule_options=(("SHD301", opts),) if opts else ())
    return Engine(config, load_registry(), jobs=1).run([root])


def test_custom_names_still_fire_across_the_scope(tmp_path: Path) -> None:
    (tmp_path / "fork.py").write_text(FORK + "\n\ndef unrelated():\n    return IntermediateTensors({})\n")
    assert [d.code for d in _run(tmp_path).diagnostics] == []
    got = _run(tmp_path, **{"payload-classes": ["StageHandoff"], "last-rank-accessors": ["is_tail_stage"]})
    assert [(d.code, d.span.line) for d in got.diagnostics] == [("SHD301", 11)]


def test_a_syntax_error_outside_the_scope_is_still_reported(tmp_path: Path) -> None:
    # the scan compiles only the class; the check compiles the whole text
    (tmp_path / "model.py").write_text(DROPPING + "\n\ndef broken(:\n    pass\n")
    result = _run(tmp_path)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("SHD000", 15)]


@pytest.mark.parametrize(("code", "folder"), [("SHD301", "pp_payload"), ("SHD302", "pp_cross")])
def test_a_check_in_part_reports_what_a_whole_one_does(
    code: str, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = load_registry()
    rule = registry.rules[code]
    config = Config(root=Path("."), select=(code,))
    cases = [t for n, t in TEXTS if n.startswith(folder)] + [DROPPING + "\n\nclass Other:\n    x = 1\n"]
    fired = masked = 0
    for text in cases:
        masked += engine_mod._check_source(text, "m.py", [rule], config) != text
        part, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
        assert not errors
        with monkeypatch.context() as m:
            m.setattr(engine_mod, "_check_source", lambda text, *a: text)
            whole, _ = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
        assert part == whole
        fired += len(part)
    assert fired >= 5 and masked >= 5


def test_a_rule_that_can_fix_is_parsed_whole() -> None:
    # a fix may read the whole module (where its imports go)
    registry = load_registry()
    config = Config(root=Path("."))
    text = DROPPING + "\n\nblock = min(n, 128)\n"
    rules = [registry.rules["SHD301"], registry.rules["SHD101"]]
    assert engine_mod._check_source(text, "m.py", rules, config) is text
    assert engine_mod._check_source(text, "m.py", rules[:1], config) != text


# A class body a line reader could split wrongly: a docstring and a string
# statement, decorators over comment lines, a clause in the body's column,
# a bracket closing below the body's column, a nested class, an async method.
TRICKY_CLASS = textwrap.dedent(
    '''\
    import os


    @dataclass
    class Holder(
        Base,
        metaclass=Meta,
    ):
        """Doc,
    class NotAMember:
        """

        size: int = -1

        @property
        # a comment between a decorator and its method
        @other(
            1,
        )
        def width(self):
            return (1,
    2)
        "a string statement after a method"
        if os:
            def maybe(self):
                pass
        else:
            pass

        class Inner:
            def method(self):
                pass

        async def later(self):
            await os.x

        def __init__(self):
            self.impl = Impl()
    '''
)


def _class_texts() -> list[tuple[str, str]]:
    return [("tricky_class.py", TRICKY_CLASS), *TEXTS]


def test_class_members_are_the_statements_pythons_class_body_holds() -> None:
    """``class_members``: each statement directly in a class's body starts a
    member at its first line (a decorator's), a string statement going with
    the member before it; ``is_def`` tells a method; the members run to the
    region's end. Classes whose body shares the header's line are read whole."""
    from checks._textfunctions import class_members, skeleton_to

    seen = 0
    for name, text in _class_texts():
        regions = top_level_regions(text)
        if regions is None:
            continue
        sk = skeleton_to(text, len(text))
        tree = ast.parse(text)
        by_line = {min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]): s for s in tree.body}
        for a, b in regions:
            got = class_members(sk, a, b)
            node = by_line.get(text.count("\n", 0, a) + 1)
            while node is None and a < b:  # (a region may start with blank or comment lines)
                a = text.index("\n", a) + 1
                node = by_line.get(text.count("\n", 0, a) + 1)
            if not isinstance(node, ast.ClassDef):
                assert got is None, name
                continue
            if got is None:
                assert node.body[0].lineno == node.lineno, name  # the body on the header's line
                continue
            first, members = got
            seen += 1
            lines = [text.count("\n", 0, s) + 1 for s, _, _ in members]
            expect = [
                min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))])
                for s in node.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            assert lines == expect, name
            kinds = [isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in node.body
                     if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            assert [d for _, _, d in members] == kinds, name
            assert first == members[0][0] and members[-1][1] == b
            assert all(e == s2 for (_, e, _), (s2, _, _) in itertools.pairwise(members))
    assert seen >= 30


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(range(len(TEXTS) + 1)), st.randoms(use_true_random=False))
def test_any_class_members_masked_compile_to_the_class_read_from_the_whole(i: int, rnd: Any) -> None:
    """A scope that keeps some of a class's statements (its header and at
    least one statement of its body): the masked text compiles to the class
    ``scoped_tree`` makes of the whole text's, positions included."""
    from checks._textfunctions import class_members, skeleton_to

    name, text = _class_texts()[i]
    regions = top_level_regions(text)
    if regions is None:
        return
    sk = skeleton_to(text, len(text))
    kept: list[tuple[int, int]] = []
    for a, b in regions:
        got = class_members(sk, a, b) if rnd.random() < 0.8 else None
        if got is None:
            if rnd.random() < 0.5:
                kept.append((a, b))
            continue
        first, members = got
        chosen = [(s, e) for s, e, _ in members if rnd.random() < 0.5] or [members[-1][:2]]
        kept += [(a, first), *chosen]
    whole = ast.parse(text)
    part = compile(mask_text(text, kept), name, "exec", ast.PyCF_ONLY_AST)
    assert _dump(part.body) == _dump(scoped_tree(whole, text, kept).body)
