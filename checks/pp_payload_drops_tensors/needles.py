"""What a file's text, and each definition's, must hold for SHD301 to
find anything in it.

Every finding reports a payload return: a call of a ``payload-classes``
name, or a return the rule puts on the other ranks' path, which takes an
``if`` whose test (through ``not``/``and``/``or``) is a
``last-rank-accessors`` name, bare, as an attribute or called with no
arguments. Under the default names the text then holds one of:

- ``...IntermediateTensors...(`` / ``...PPProxyTensors...(``: the call's
  leaf name (any identifier characters around the string), closing brackets
  of a parenthesised callee, then ``(``;
- ``...is_last_rank...`` / ``last_stage`` / ``last_pp_rank`` ending a test
  operand, in any case (accessors are compared in any case): followed by
  ``:`` (the test ends), ``)`` (a bracket closes), ``(`` (the no-argument
  call) or ``and``/``or``.

A runner path's finding (one per open path, at the function that turns
the taps on) lies in a function whose text calls a tap setter:
``set_aux_hidden_state_layers`` or ``..._layers_to_capture``, in any case
(``TAP_SETTER_CALL``); the file and definition needles admit it too.

Between tokens: whitespace, comments, line continuations. Under other
names (``payload_needles``) the text holds one of the configured payload
classes, or the literal part of a configured accessor in any case.

The definition gate: the rule reads one class at a time -- the methods
holding a payload return (which hold the same text), the class-level
statements (its flag) and, for the keys, the receiver anywhere in its body
(a ``receiver-factories`` call, a ``receiver-methods`` definition: their
names) -- and otherwise the project's facts and the whole file's text
(``capture.capture_gated``). So a definition is needed when its own text
holds the file needles or a receiver name (``definition_needles``).
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

# Source text that may separate tokens inside brackets: whitespace, a
# comment, a line continuation. A comment runs to the end of its line (the
# lookahead): read any shorter, a line of ``#`` could be split into comments
# in exponentially many ways before a failing match gives up.
GAP = r"(?:\s|\\|#[^\r\n]*(?=[\r\n]|\Z))*"
# identifier characters (ASCII word characters or any non-ASCII one), one
# class so that a failing match backtracks linearly (written as the ASCII
# characters it excludes: a class spanning every character outside ASCII
# costs ``re`` ~2 ms to compile, per pattern)
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


def glob_literal(glob: str) -> str | None:
    """The longest literal part of ``glob`` (``fnmatch``'s syntax), lower-cased:
    every name the glob matches in any case (``name_matches``) holds it, in
    any case; None when the glob has none or is not ASCII."""
    if not glob.isascii():
        return None
    parts = [p for p in _GLOB_META.split(glob.lower()) if p]
    return max(parts, key=len) if parts else None


def caseless_words(globs: Iterable[str]) -> list[str] | None:
    """One caseless regex per glob, its literal part (``glob_literal``), for
    a search of any of them; None when a glob has no literal part (a name
    could then be anything)."""
    out = []
    for glob in globs:
        word = glob_literal(glob)
        if word is None:
            return None
        # (``re`` matches U+0130 and U+212A, which lower-case to ``i`` and
        # ``k`` as ``name_matches`` reads them, with those letters caseless)
        out.append(f"(?i:{re.escape(word)})")
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
