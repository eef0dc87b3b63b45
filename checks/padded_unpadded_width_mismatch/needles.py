"""The text SHD501's findings need (its ``needles`` and
``definition_needles``) under its effective options.

Every finding is made in one function body, so the file and the definition
holding the function (a method alone, for a class's method) hold:

- in one function (``_analyse``): an allocator's word (``empty``,
  ``zeros``, ``ones``, ``full``, ``rand``: every allocator the rule tracks
  holds one), a padded width (:func:`padded_width`: a ``padded-names``
  glob's literal part in any case, a ``rounding-functions`` or ``cdiv``-style
  name, or the floor of a parenthesised sum next to a product,
  ``(X + n - 1) // n * n``, ``n * ((X + n - 1) // n)``), and an exchange's
  or a consumer's token (``_EXCHANGE``: an in-place method, ``addcmul_``
  holding ``mul_``; an augmented ``+=``-style operator; ``out=``; a
  subscript, for a buffer written in part then handed to a GEMM or a
  reduction);
- across classes (``_across_classes``): an allocator's word, an output
  allocated at an input parameter's width (:data:`_INPUT_WIDTH`: a
  ``*_like`` call, a shape ending with ``x.shape[-1]``/``x.size(-1)``/
  ``*x.shape``, or ``x.shape``/``x.size()`` whole) and ``self`` (the result
  bound from it is handed with the output to one call).

So a definition needs an allocator's word, a padded width or an input
width, and an exchange token or ``self`` (``(A and B) or (C and D)``
implies ``A or C`` and ``B or D``). Blanks, line continuations, comments and
parentheses may stand between the tokens of a pattern (``x . shape [ - 1
]``, ``(x.size)()``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from linter.needles import Needles

_GAP = r"(?:[\s\\]|#[^\n]*+)*+"  # blanks, continuations, comments
_GAP_OPEN = r"(?:[\s\\(]|#[^\n]*+)*+"  # ... and opening parentheses
_GAP_CLOSE = r"(?:[\s\\)]|#[^\n]*+)*+"  # ... and closing parentheses
_GAP_PARENS = r"(?:[\s\\()]|#[^\n]*+)*+"  # ... and parentheses

_ALLOCATOR_WORDS = ("empty", "zeros", "ones", "full", "rand")
# a call of ``torch.<name>``, of a bare ``<name>`` or of a ``new_<name>``
# method, or a ``<name>_like`` call; blanks, line continuations, comments and
# parentheses may stand around the dot and before the ``(`` (``(torch) .
# zeros (``, ``(zeros)(``); a bare name follows no ``.`` or word
_ALLOCATION = "|".join(
    [
        rf"torch{_GAP_PARENS}\.{_GAP}(?:empty(?:_strided)?|zeros|ones|full|randn?){_GAP}[()]",
        rf"new_(?:empty|zeros|ones|full){_GAP}[()]",
        # (each led by its word: ``re`` then skips to the word's occurrences)
        *(rf"{w}(?<![\w.]{w}){_GAP}[()]" for w in ("empty", "empty_strided", "full", "ones", "rand", "randn", "zeros")),
        *(rf"_like(?<={w}_like){_GAP}[()]" for w in ("empty", "zeros", "ones", "full")),
    ]
)
_EXCHANGE = ("copy_", "add_", "sub_", "mul_", "div_", "lerp_", "+=", "-=", "*=", "/=", "out", "]")
#: the ceiling divisions a rounding by multiplication calls: ``cdiv(X, n) * n``
CDIV_NAMES = ("cdiv", "ceil_div", "ceildiv", "div_ceil", "div_round_up")

# ``(X + n - 1) // n * n`` or ``n * ((X + n - 1) // n)``: the numerator is a
# sum, so parenthesised (``)`` before ``//``); the divisor a literal or a
# dotted name, followed by the product's ``*`` or the parenthesis closing
# the floor on the product's right
_CEIL_BY_FLOOR = rf"\){_GAP}//(?:[\w.\s\\(+-]|#[^\n]*+)*+[*)]"
# an output at an input parameter's width (``across_classes.input_width_source``)
_INPUT_WIDTH = "|".join(
    [
        r"(?:empty|zeros|ones|full)_like",
        rf"shape{_GAP_CLOSE}\[{_GAP_OPEN}-",  # x.shape[-1]
        rf"size{_GAP_CLOSE}\({_GAP_OPEN}[-)]",  # x.size(-1), x.size()
        rf"shape{_GAP}[,)\]]",  # x.shape, *x.shape as the shape's last element
    ]
)


def _glob_literals(glob: str) -> list[str]:
    """The literal runs of an ``fnmatch`` glob (``*``, ``?`` and bracket
    sets cut it; an unclosed ``[`` is a literal, as ``fnmatch`` reads it)."""
    return [run for run in re.split(r"[*?]|\[!?+\]?+[^\]]*\]", glob) if run]


def padded_width(padded_names: Iterable[str], rounding: Iterable[str]) -> str | None:
    """A regex that occurs in every text computing a padded width under the
    options; None when one can be spelled without any fixed text (a glob
    with no literal part, or one outside ASCII, whose case folding the regex
    might not follow)."""
    parts: set[str] = set()
    for glob in padded_names:
        runs = _glob_literals(glob.lower())
        if not runs or not max(runs, key=len).isascii():
            return None
        parts.add(max(runs, key=len))
    # a text holding a part holds each part it contains
    kept = sorted(p for p in parts if not any(q != p and q in p for q in parts))
    names = "|".join(re.escape(p) for p in kept)
    words = sorted({*rounding, *CDIV_NAMES})
    alternatives = [f"(?i:{names})"] if names else []
    alternatives += [re.escape(w) for w in words if w]
    alternatives.append(_CEIL_BY_FLOOR)
    return "|".join(alternatives)


def declared(options: Mapping[str, Any]) -> tuple[Needles, Needles]:
    """The needles of the file and of a definition under ``options``."""
    return _declared(tuple(options["padded-names"]), tuple(options["rounding-functions"]))


@functools.cache
def _declared(padded_names: tuple[str, ...], rounding: tuple[str, ...]) -> tuple[Needles, Needles]:
    padded = padded_width(padded_names, rounding)
    definition = Needles(
        any_of=(_ALLOCATOR_WORDS, (*_EXCHANGE, "self")),
        regex=None if padded is None else f"{padded}|{_INPUT_WIDTH}",
        all_regex=(_ALLOCATION,),
    )
    return Needles(any_of=((*_EXCHANGE, "self"),), regex=_ALLOCATION), definition
