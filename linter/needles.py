"""The raw-text prefilter: what any match of a rule (or a fact collector) needs
to see in a file's text before the file is worth parsing with libcst.

Speed note: ``re`` scans fast only for a pattern that starts with a literal
(it then jumps from one occurrence of the literal to the next); a pattern
that starts with an alternation, a class or ``\\b`` is tried at every position
of the text, 10 to 40 times slower on real files. :func:`search_plan` turns a
needle regex into several such literal-led patterns with the same answer to
"does it occur anywhere?", so needles can be written for clarity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _class_end(pattern: str, i: int) -> int:
    """Index just past the character class opening at ``i`` (a ']' right
    after '[' or '[^' is a literal)."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def split_top(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (``a|b(c|d)`` -> ``a``, ``b(c|d)``)."""
    out: list[str] = []
    depth, start, i, n = 0, 0, 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _leading_group(branch: str) -> tuple[list[str], str] | None:
    """For ``(?:w1|w2|w3)REST`` where every ``wi`` starts with a plain word
    (and the group has no quantifier), the alternatives and ``REST``."""
    if not branch.startswith("(?:"):
        return None
    depth, i, n = 0, 0, len(branch)
    while i < n:
        ch = branch[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(branch, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
        i += 1
    else:
        return None
    inner, rest = branch[3:i], branch[i + 1 :]
    if rest[:1] in ("*", "+", "?", "{"):
        return None
    alts = split_top(inner)
    if not all(_WORD.match(a) for a in alts):
        return None
    return alts, rest


def search_plan(regex: str) -> list[str]:
    """Patterns, each led by a literal where the source allows it, such that
    ``regex`` occurs in a text exactly when one of them does. Top-level
    alternatives are searched separately and a leading word alternation
    ``(?:a|b)X`` becomes ``aX``, ``bX``. A backreference (``\\1``) or a named
    group is left whole: renumbering would change it."""
    if re.search(r"\(\?P[<=]", regex) or re.match(r"\(\?[aiLmsux]+\)", regex):
        return [regex]  # global flags must stay in front
    branches = split_top(regex)
    if re.search(r"\\[1-9]", regex):
        # a branch searched alone renumbers its groups: safe only when no
        # capturing group precedes a branch that refers back to one
        before = 0
        for b in branches:
            if re.search(r"\\[1-9]", b) and before:
                return [regex]
            before += re.compile(b).groups
    out: list[str] = []
    for branch in branches:
        lead = _leading_group(branch)
        if lead is not None and len(lead[0]) <= 12:
            out.extend(alt + lead[1] for alt in lead[0])
        else:
            out.append(branch)
    return out


def required_words(regex: str, flags: int = 0) -> frozenset[str] | None:
    """Lower-case ASCII strings at least one of which every match of
    ``regex`` contains, case aside (read from ``re``'s own parse of it);
    None when no such set is known (a branch with no literal run, or
    anything this does not follow)."""
    return _words_of(_parsed(regex, flags))


def _words_of(items: list[tuple[Any, Any]] | None) -> frozenset[str] | None:
    got = _required(items) if items is not None else None
    if not got or not all(w.isascii() for w in got):
        return None
    return frozenset(w.lower() for w in got)


def _parsed(regex: str, flags: int) -> list[tuple[Any, Any]] | None:
    """``regex`` as CPython's parser of ``re`` reads it (no hand-parsing)."""
    from re import _parser

    try:
        return list(_parser.parse(regex, flags))
    except re.error:
        return None


_REPEATS = tuple(
    getattr(re._constants, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(re._constants, n)  # type: ignore[attr-defined]
)


def _required(items: list[tuple[Any, Any]]) -> set[str] | None:
    """For a sequence of parsed ``re`` items: the best required set its runs
    of literals or its single items give (the one whose shortest member is
    longest)."""
    _c = re._constants  # type: ignore[attr-defined]
    options: list[set[str]] = []
    run = ""
    for op, arg in items:
        if op is _c.LITERAL:
            run += chr(arg)
            continue
        if run:
            options.append({run})
            run = ""
        got: set[str] | None = None
        if op is _c.SUBPATTERN:
            got = _required(list(arg[-1]))
        elif op is _c.BRANCH:
            alts = [_required(list(b)) for b in arg[1]]
            got = None if any(a is None for a in alts) else set().union(*alts)  # type: ignore[arg-type]
        elif op in _REPEATS and arg[0] >= 1:
            got = _required(list(arg[2]))
        elif op is getattr(_c, "ATOMIC_GROUP", None):
            got = _required(list(arg))
        if got:
            options.append(got)
    if run:
        options.append({run})
    return max(options, key=lambda o: min(len(w) for w in o), default=None)


_LOWER_OF: str | None = None
_LOWER = ""


def _lowered(text: str) -> str:
    """``text.lower()``, kept for the last text (several needles ask in a row)."""
    global _LOWER_OF, _LOWER
    if text is not _LOWER_OF:
        _LOWER_OF, _LOWER = text, text.lower()
    return _LOWER


def compile_search(regex: str, flags: int = re.MULTILINE) -> Callable[[str], bool]:
    """A ``text -> bool`` equal to ``re.compile(regex, flags).search(text) is
    not None``, built from :func:`search_plan`. A pattern ``re`` cannot scan
    by a literal prefix (a caseless one, one led by a class) is first ruled
    out by :func:`required_words`: on an ASCII text, a match needs one of
    them in ``text.lower()`` (case folding of ASCII letters is lowering)."""
    searches: list[Callable[[str], bool]] = []
    for p in search_plan(regex):
        pat = re.compile(p, flags)
        items = _parsed(p, pat.flags)
        # (``re`` scans fast for a pattern led by a case-sensitive literal)
        literal_led = bool(items) and items[0][0] is re._constants.LITERAL  # type: ignore[attr-defined,index]
        words = None if literal_led and not pat.flags & re.IGNORECASE else _words_of(items)
        searches.append(_search_by(pat.search, words))
    if len(searches) == 1:
        return searches[0]
    return lambda text: any(s(text) for s in searches)


def _search_by(search: Callable[[str], Any], words: frozenset[str] | None) -> Callable[[str], bool]:
    if not words:
        return lambda text: search(text) is not None

    def guarded(text: str) -> bool:
        if text.isascii():
            low = _lowered(text)
            if not any(w in low for w in words):
                return False
        return search(text) is not None

    return guarded


def contains(word: str) -> Callable[[str], bool]:
    """``lambda text: word in text``, by ``re`` for a word of two to four
    characters: ``re`` scans for those about twice as fast as ``str``
    (which wins for longer and single-character words) on this project's
    texts."""
    if 2 <= len(word) <= 4:
        search = re.compile(re.escape(word)).search
        return lambda text: search(text) is not None
    return lambda text: word in text


_LAST_TEXT: str | None = None
_LAST: dict[Needles, bool] = {}


@dataclass(frozen=True)
class Needles:
    """``all_of``: every substring must occur; ``any_of``: at least one group
    member must occur (each inner tuple is one group); ``regex``: a compiled
    search must succeed; ``all_regex``: each of these searches must succeed
    too (two patterns that must both occur, in any order, without a
    lookahead: each is searched the fast way, see :func:`search_plan`). All
    given conditions must hold. An empty ``Needles`` matches every file."""

    all_of: tuple[str, ...] = ()
    any_of: tuple[tuple[str, ...], ...] = ()
    regex: str | None = None
    all_regex: tuple[str, ...] = ()
    _search: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)
    _searches: tuple[Callable[[str], bool], ...] = field(default=(), compare=False, repr=False)
    _all: tuple[Callable[[str], bool], ...] = field(default=(), compare=False, repr=False)
    _any: tuple[tuple[Callable[[str], bool], ...], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.regex is not None:
            object.__setattr__(self, "_search", compile_search(self.regex))
        object.__setattr__(self, "_searches", tuple(compile_search(r) for r in self.all_regex))
        object.__setattr__(self, "_all", tuple(contains(s) for s in self.all_of))
        object.__setattr__(self, "_any", tuple(tuple(contains(s) for s in g) for g in self.any_of))

    def match(self, text: str) -> bool:
        # A rule's gate and a collector often share one ``Needles``: the scan
        # asks about the same text several times in a row.
        global _LAST_TEXT, _LAST
        if text is _LAST_TEXT:
            hit = _LAST.get(self)
            if hit is not None:
                return hit
        else:
            _LAST_TEXT, _LAST = text, {}
        hit = self._match(text)
        _LAST[self] = hit
        return hit

    def _match(self, text: str) -> bool:
        for has in self._all:
            if not has(text):
                return False
        for group in self._any:
            if not any(has(text) for has in group):
                return False
        if self._search is not None and not self._search(text):
            return False
        return all(search(text) for search in self._searches)
