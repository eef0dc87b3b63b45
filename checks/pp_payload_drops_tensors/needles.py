"""What a file's text, and each definition's, must hold for SHD301 to find
anything in it (the rule's docstring, "Prefilter", says what and why).

Every finding reports a payload return, a ``payload-classes`` call or a
return on the other ranks' path of an ``if`` whose test (through
``not``/``and``/``or``) is a ``last-rank-accessors`` name, bare, an attribute
or called with no arguments; or a runner path, a function calling a tap
setter. Between tokens: whitespace, comments, line continuations.

The definition gate: the rule reads one class at a time (the methods holding
a payload return, which hold the same text; the class-level statements; the
receiver anywhere in its body, which holds a ``receiver-factories`` or
``receiver-methods`` name) or one path function, and otherwise the project's
facts and the whole file's text (``capture.capture_gated``). So a definition
is needed when its own text holds the file needles or a receiver name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from linter.api import Needles

DEFAULT_PAYLOAD_CLASSES = ("IntermediateTensors", "PPProxyTensors")
DEFAULT_LAST_RANK = ("is_last_rank", "is_last_pp_rank", "is_pipeline_last_stage")
DEFAULT_RECEIVER_FACTORIES = ("make_empty_intermediate_tensors_factory",)
DEFAULT_RECEIVER_METHODS = ("make_empty_intermediate_tensors",)

# Whitespace, comments, line continuations. A comment runs to the end of its
# line (the lookahead): else a line of ``#`` splits into comments in
# exponentially many ways before a failing match gives up.
GAP = r"(?:\s|\\|#[^\r\n]*(?=[\r\n]|\Z))*"
# identifier characters (ASCII word characters or any non-ASCII one): one
# class, so a failing match backtracks linearly, written as the ASCII it
# excludes (a class of every non-ASCII character costs ~2 ms to compile)
IDENT_TAIL = r"[^\x00-/:-@\[-^`{-\x7f]*"
PAYLOAD_CALL = rf"(?:IntermediateTensors|PPProxyTensors){IDENT_TAIL}(?:{GAP}\))*{GAP}\("
# Led by the literal ``_`` (caseless, so ``re`` still jumps between its
# occurrences), the words checked behind it in any case: U+212A (Kelvin)
# matches ``k`` and U+0130 ``i``, as ``name_matches`` lower-cases them.
LAST_RANK_TEST = (
    r"_(?i:(?:rank(?<=is_last_rank)|stage(?<=last_stage)|rank(?<=last_pp_rank))"
    rf"{IDENT_TAIL}{GAP}(?:[:()]|and|or))"
)

PAYLOAD_NEEDLES = Needles(regex=f"{PAYLOAD_CALL}|{LAST_RANK_TEST}")
# A runner path's finding lies in a function that calls a tap setter
# (``paths.TAP_SETTERS``, compared in any case): its text holds one of these.
TAP_SETTER_CALL = "(?i:set_aux_hidden_state_layers|_layers_to_capture)"
# what the rule's file must hold: a payload return, or a runner path
RULE_NEEDLES = Needles(regex=f"{PAYLOAD_CALL}|{LAST_RANK_TEST}|{TAP_SETTER_CALL}")
# (the default method's name is part of the default factory's)
DEFINITION_NEEDLES = Needles(
    regex=f"{PAYLOAD_CALL}|{LAST_RANK_TEST}|make_empty_intermediate_tensors|{TAP_SETTER_CALL}"
)


# -- configured names ----------------------------------------------------------

# what ``fnmatch`` reads as other than a literal character: ``*``, ``?`` and a
# set (``[...]``, ``[!...]``, a ``]`` right after the opening a member of it)
_GLOB_META = re.compile(r"[*?]|\[!?\]?[^\]]*\]")


def caseless_words(globs: Iterable[str]) -> list[str] | None:
    """One caseless regex per glob (``fnmatch``'s syntax) for its longest
    literal part, which every name it matches in any case (``name_matches``)
    holds; None when a glob has no literal part or is not ASCII (a name could
    then be anything)."""
    out = []
    for glob in globs:
        parts = [p for p in _GLOB_META.split(glob.lower()) if p] if glob.isascii() else []
        if not parts:
            return None
        # (``re`` matches U+0130 and U+212A, which lower-case to ``i`` and
        # ``k`` as ``name_matches`` reads them, with those letters caseless)
        out.append(f"(?i:{re.escape(max(parts, key=len))})")
    return out


def payload_needles(options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
    """The (file, definition) needles under ``options``: the default ones
    for the default names (or some of them), else the configured payload
    classes (exact names) or accessors' literal parts (caseless), and for a
    definition the receiver names too; every text, and no definition gate,
    when an accessor glob has no literal part."""
    payloads = tuple(options.get("payload-classes", DEFAULT_PAYLOAD_CLASSES))
    accessors = tuple(options.get("last-rank-accessors", DEFAULT_LAST_RANK))
    receivers = (
        *options.get("receiver-factories", DEFAULT_RECEIVER_FACTORIES),
        *options.get("receiver-methods", DEFAULT_RECEIVER_METHODS),
    )
    if (
        set(payloads) <= set(DEFAULT_PAYLOAD_CLASSES)
        and set(accessors) <= set(DEFAULT_LAST_RANK)
        and set(receivers) <= {*DEFAULT_RECEIVER_FACTORIES, *DEFAULT_RECEIVER_METHODS}
    ):
        return RULE_NEEDLES, DEFINITION_NEEDLES
    words = caseless_words(accessors)
    if words is None:
        return Needles(), None
    # (a runner path's tap setter call is not configurable)
    found = [re.escape(p) for p in payloads if p] + words + [TAP_SETTER_CALL]
    file = Needles(regex="|".join(found))
    return file, Needles(regex="|".join([*found, *(re.escape(r) for r in receivers if r)]))
