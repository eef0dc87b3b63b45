"""The needle regexes are rewritten for speed (:func:`search_plan`); the
rewrite must answer "does it occur?" exactly as the pattern as written."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from linter.needles import Needles, compile_search, required_words, search_plan, split_top
from linter.registry import load_registry

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _all_needle_regexes() -> list[str]:
    reg = load_registry()
    out = []
    for obj in [*reg.collectors.values(), *reg.rules.values()]:
        n = getattr(obj, "needles", None)
        if n is not None and n.regex:
            out.append(n.regex)
        if n is not None:
            out.extend(n.all_regex)
    return out


def test_split_top_respects_groups_classes_and_escapes() -> None:
    assert split_top(r"a|b(c|d)|[|]|\|x") == ["a", "b(c|d)", "[|]", r"\|x"]
    assert split_top(r"[]|]z|y") == ["[]|]z", "y"]


def test_a_leading_word_group_is_distributed_so_each_pattern_starts_with_a_literal() -> None:
    assert search_plan(r"(?:blocks|num_\w+)\s*//|x") == [r"blocks\s*//", r"num_\w+\s*//", "x"]
    # not distributed: a quantified group, a class inside, a backreference after a group
    assert search_plan(r"(?:ab|cd)+z") == [r"(?:ab|cd)+z"]
    assert search_plan(r"(?:[ab]|c)z") == [r"(?:[ab]|c)z"]
    assert search_plan(r"(a)|(b)\2") == [r"(a)|(b)\2"]
    assert search_plan(r"(?i)a|b") == [r"(?i)a|b"]


_TEXTS = st.text(alphabet="abcdemnoprstuwxyz_ =-+/()[]:.%0123456789\n\t\\'\"#", max_size=80)
_PATTERNS = [
    r"(?:blocks|budget|max_num_)\w*[\w.() ]{0,10}(?://|\bcdiv\(| / )|/=",
    r"self\.\w*(?:size|rank)[ \t]*=[ \t]*(?:-\d|None)\b|(?:size|rank)[ \t]*:[^=\n]+=[ \t]*-\d",
    r"-\s*1\s*\)\s*//\s*(\w+)\s*\*\s*\1|=\s*(?:round_up|cdiv)\(",
    r"^[ \t]*(?:def|class)\s+\w+|\b[tT]ype\s*\[",
    # caseless or led by a class: searched only when a required word occurs
    r"(?i:pad_?ded|a_b)\s*=|[xy]+_(?i:rank)(?<=y_rank)",
    r"(?i)_size(?:(?<=[dtp]p_size)|(?<=world_size))|\bMOD(?:ule)?s?\b",
]


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, which=st.sampled_from(_PATTERNS))
def test_rewritten_search_agrees_with_the_pattern(text: str, which: str) -> None:
    assert compile_search(which)(text) == (re.search(which, text, re.M) is not None)


def test_every_registered_needle_agrees_on_the_corpus() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py"))]
    assert len(texts) > 20
    for rx in _all_needle_regexes():
        fast, slow = compile_search(rx), re.compile(rx, re.M)
        for t in texts:
            assert fast(t) == (slow.search(t) is not None), rx


def test_needles_answer_the_same_for_the_same_text_asked_twice() -> None:
    a = Needles(all_of=("min",), regex=r"=\s*min\(")
    b = Needles(any_of=(("zeros", "empty"),))
    text = "x = min(a, 4)\n"
    assert a.match(text) and not b.match(text)
    assert a.match(text) and not b.match(text)  # memo of the last text
    assert not a.match("x = max(a, 4)\n") and b.match("torch.empty(3)\n")


def test_required_words_are_what_every_match_contains_case_aside() -> None:
    assert required_words(r"(?i:aux_hidden|layers_to_capture)") == {"aux_hidden", "layers_to_capture"}
    assert required_words(r"(?i:unpadded|non_?padded)") == {"unpadded", "padded"}
    assert required_words(r"[ab]x{0,2}(?:Foo)+") == {"foo"}
    # no word every match needs: a branch with no literal, an optional one
    assert required_words(r"(?i:abc)|\d+") is None
    assert required_words(r"(?:abc)?\w") is None


_CASED = st.text(alphabet="aAbBdDpPeEnNrRkKsS_\u212a\u017f\u0130 =\n", max_size=60)


@settings(max_examples=400, deadline=None)
@given(text=_CASED)
def test_caseless_search_agrees_on_any_case_and_on_non_ascii_folding(text: str) -> None:
    # \u212a (Kelvin sign) and \u017f (long s) match k and s caselessly:
    # the lowered-text guard applies to ASCII texts only
    for rx in (r"(?i:padded|a_b)\s*=|_(?i:rank)", r"(?i)k_s|bad"):
        assert compile_search(rx)(text) == (re.search(rx, text, re.M) is not None), rx
