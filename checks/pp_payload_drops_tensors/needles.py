"""What a file's text must hold for SHD301 to find anything in it.

Every finding reports a payload return: a call of a ``payload-classes``
name, or a return the rule puts on the other ranks' path, which takes an
``if`` whose test (through ``not``/``and``/``or``) is a
``last-rank-accessors`` name, bare, as an attribute or called with no
arguments. With configured names that contain one of the default strings,
the text then holds one of:

- ``...IntermediateTensors...(`` / ``...PPProxyTensors...(``: the call's
  leaf name (any identifier characters around the string), closing brackets
  of a parenthesised callee, then ``(``;
- ``...is_last_rank...`` / ``last_stage`` / ``last_pp_rank`` ending a test
  operand, in any case (accessors are compared in any case): followed by
  ``:`` (the test ends), ``)`` (a bracket closes), ``(`` (the no-argument
  call) or ``and``/``or``.

Between tokens: whitespace, comments, line continuations. (No definition
gate: configured names, which this search cannot see, may make a finding
in a definition that holds none of these; see ``custom_names/`` in the
corpus.)
"""

from __future__ import annotations

from linter.api import Needles

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
