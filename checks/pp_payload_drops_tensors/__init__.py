"""SHD301 pp-payload-drops-tensors: a pipeline stage's hand-off payload that
silently leaves behind tensors the forward collected for the last rank. The
rule is here, its analysis of one class in ``analysis``, the project facts
only it reads beside it (``receivers``, ``capture``, ``capability``,
``paths``, ``drops``), and what a file's text must hold in ``needles``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, ClassVar

import libcst as cst

from checks.facts.classes import ClassIndex, ClassInfo
from checks.pp_payload_drops_tensors import messages
from checks.pp_payload_drops_tensors.analysis import (
    ANALYSIS_DEFAULTS,
    DEFAULT_ACCUMULATORS,
    DEFAULT_FLAGS,
    DEFAULT_HELPERS,
    NONLAST,
    Drop,
    DropAnalysis,
    Return,
    base_names,
    own_flags,
    statements,
)
from checks.pp_payload_drops_tensors.capture import capture_gated
from checks.pp_payload_drops_tensors.drops import Claim, TapDrop, TapDropIndex, claim_of, claim_state
from checks.pp_payload_drops_tensors.locate import is_sglang, note_at
from checks.pp_payload_drops_tensors.needles import (
    DEFAULT_LAST_RANK,
    DEFAULT_PAYLOAD_CLASSES,
    DEFAULT_RECEIVER_FACTORIES,
    DEFAULT_RECEIVER_METHODS,
    DEFINITION_NEEDLES,
    RULE_NEEDLES,
    payload_needles,
)
from checks.pp_payload_drops_tensors.paths import TapPathIndex
from linter.api import Needles, Option, Rule, Severity, call_name, last_name, name_matches, walk


class PpPayloadDropsTensors(Rule):
    """## What it finds
    A model's `forward` that collects extra tensors for the last pipeline rank
    (auxiliary hidden states tapped for an EAGLE-3 / DSpark draft: an
    `aux_hidden_states` list filled with `.append`, a helper, or a `capture=`
    keyword) and returns them there, while the other ranks' early return --
    `if not get_pp_group().is_last_rank: return IntermediateTensors({...})`
    (SGLang: `self.pp_group.is_last_rank`, `PPProxyTensors`) -- hands only
    `hidden_states`/`residual` on. Whether a draft with pipeline parallelism
    reaches the class is judged per *runner path*: a function of the project
    that turns a model's taps on for a draft (calls
    `set_aux_hidden_state_layers` or a `set_*_layers_to_capture` method and is
    no such setter itself). A path *checks* when it, or a function it calls,
    reads a capability flag (`getattr(inner,
    "supports_aux_hidden_states_over_pp", False)`); it *refuses* when it, a
    method of its class, or every caller raises under a pipeline-size test in
    the draft's block. It is an error:
    - when the class claims the combination works: a flag such as
      `supports_aux_hidden_states_over_pp = True` on the class or inherited
      from a base class in any file of the project (the typical live bug: a
      subclass overriding `forward` loses its base's packing but inherits the
      claim) -- the checking path admits it;
    - when the class does not claim it (no flag, or a false one) and some
      path neither checks nor refuses: that path starts the draft anyway. One
      root cause per path, whatever the number of models it breaks, and the
      fix belongs to the path: **one finding per open path**, at the path
      function, naming the models, each model's dropping return a related
      location (vLLM 0.33: the V1 runner's
      `_setup_eagle3_aux_hidden_state_outputs`, reached with no environment
      variable when EAGLE-3 asks for parallel drafting, breaks 32 models; the
      V2 runner's `set_eagle3_aux_hidden_state_layers` checks the flag). It is
      made when the path's file is checked, from the `pp_tap_drops` facts (the
      same analysis on every module that hands a payload on, under the
      default names), and the model's file reports nothing for it: the
      project's facts alone decide which file reports, so a file's findings
      never depend on which other files are linted with it (a model file in a
      project without any path warns on its own, below). Under configured
      names (`payload-classes`, `last-rank-accessors`, `accumulator-patterns`,
      `accumulator-helpers`, `capability-flags`), which the facts do not
      know, each model is reported instead, the open path a note.

    It is silent when every path checks or refuses (an unclaimed class is
    refused, not run), and a warning when the project shows no path and reads
    no flag (a model file linted alone, a vendored copy): safe only while the
    engine refuses the combination. A refusal outside the paths (a
    configuration validator) is not seen: the triage names it. A project that
    turns tap capture on for the last rank only (SGLang:
    `set_eagle3_layers_to_capture` returns at once unless
    `self.pp_group.is_last_rank`, or raises under a pipeline test) collects
    nothing on the other ranks to drop: silent (read per module, or for the
    project when the module has no capture setter). The other ranks' layers
    then give no tap, a different bug (SGLang PR 39644) not reported here.

    It also fires when a payload's keys differ from the keys the receiving
    stage allocates (`make_empty_intermediate_tensors_factory([...], ...)` or
    a `make_empty_intermediate_tensors` method) in the same class or a base.

    ## Why it breaks
    With pipeline parallelism each rank runs a slice of the layers, and the
    draft runs on the last rank. The taps of layers on ranks 0..N-2 never
    reach it: the taps it concatenates come out narrower than the draft's
    input projection (EAGLE-3's `combine_hidden_states`, DFlash/DSpark's
    `fc`) was trained for, and its first step fails with a shape mismatch
    (`mat1 and mat2 shapes cannot be multiplied`, the seed's own error); when
    the last rank holds no tap layer the forward returns no taps and the
    runner's unpacking fails; a receiving rank that reserved their slots
    (`make_empty_intermediate_tensors`) fails on the missing keys (`KeyError`,
    vLLM's "Missing aux_hidden_states_0"). Pipeline size 1 is unaffected,
    which is why single-GPU tests pass. A payload whose keys differ from the
    receiver's allocation fails on the receiving rank (`KeyError`, or a
    shape/recv mismatch in CUDA-graph capture).

    ## Example
    Below, the decoder appends its taps in every layer and returns them on
    the last rank, but the other ranks' `IntermediateTensors` carries only
    the hidden states and residual, while the class claims PP support. The
    same shape with the flag on a base class in another module (the subclass
    overriding `forward`) is reported with a related location on the flag
    (`corpus/pp_payload_drops_tensors/stages/`).

    ## Fix
    Carry the taps in the payload and collect them on the receiving ranks
    (vLLM: `**self.pack_local_aux_hidden_states(aux_hidden_states)` and
    `self.collect_remote_aux_hidden_states(intermediate_tensors)`; SGLang: a
    `PPProxyTensors` key per tap), then claim the flag; or refuse the
    combination honestly: set the flag to `False` on a subclass that claims
    it wrongly. At an open path: make it read the flag and raise under
    pipeline parallelism, as the checking path does (SGLang: raise in it when
    `pp_size > 1` and the model does not carry its taps); every model it
    names is then refused at start-up instead of crashing.

    ## Options
    - `payload-classes` (list[str], default `["IntermediateTensors",
      "PPProxyTensors"]`): constructors of the inter-stage payload.
    - `last-rank-accessors` (list[str], default `["is_last_rank",
      "is_last_pp_rank", "is_pipeline_last_stage"]`): attribute (or
      no-argument call) names that test for the last pipeline rank.
    - `capability-flags` (list[str], default
      `["supports_aux_hidden_states_over_pp"]`): class attributes whose truthy
      value claims the collected tensors survive pipeline parallelism.
    - `require-claim` (bool, default `false`): `true` reports only classes
      that claim the capability (errors), dropping the warnings on classes
      that never set a flag: for an engine that gates the combination at
      start-up and wants no word on models it refuses.
    - `accumulator-patterns` (list[str], default `["*aux*", "*hidden*",
      "*tap*", "*captur*"]`): globs for local lists that collect tensors.
    - `accumulator-helpers` (list[str], default `["*add*", "*captur*",
      "*collect*", "*record*", "*append*", "*tap*"]`): globs for helper calls
      that add to an accumulator passed to them.
    - `receiver-factories` (list[str], default
      `["make_empty_intermediate_tensors_factory"]`) and `receiver-methods`
      (list[str], default `["make_empty_intermediate_tensors"]`): where the
      receiving stage's payload keys are allocated. Receivers in base classes
      of other files are read for the default factory name only.

    Severity: errors for claimed drops, open paths and receiver-key
    mismatches, warnings for unclaimed drops no path is known to reach (as
    RULES.md asks).

    Prefilter: a file is parsed only when its text holds a call of a name
    containing `IntermediateTensors` or `PPProxyTensors`
    (`IntermediateTensors(`, `seq.IntermediateTensors (`,
    `(IntermediateTensors)(`), a name containing `is_last_rank`, `last_stage`
    or `last_pp_rank`, in any case, that can end an `if` test's operand
    (followed by `:`, `)`, `(`, `and` or `or`), or a tap setter's call
    (`set_aux_hidden_state_layers`, `*_layers_to_capture`, any case: a
    runner path's finding): every other finding reports a payload return, a
    `payload-classes` call or one on the other ranks' path of a
    `last-rank-accessors` test. Under configured names the text must hold a
    configured payload class, or the literal part of a configured accessor
    in any case (an accessor glob with none, such as `*`, reads every file).
    Of such a file libcst reads the module-level code and only the
    definitions that hold the same or a receiver name (`receiver-factories`,
    `receiver-methods`): a finding is made from one class (its methods
    holding a payload return, its own flag and receiver) or one path
    function, and the project's facts.
    """

    code = "SHD301"
    name = "pp-payload-drops-tensors"
    summary = "A non-last pipeline rank's payload drops tensors the forward collected"
    severity = Severity.ERROR
    needles = RULE_NEEDLES
    definition_needles = DEFINITION_NEEDLES
    # a finding reads the definitions the needles match (and their classes'
    # headers) and the project facts, never a definition they only name
    follows_definitions = False
    facts = ("classes", "pp_receivers", "pp_capture_setters", "capability_reads", "aux_tap_paths", "pp_tap_drops")
    tags = ("correctness", "pipeline-parallel", "speculative-decoding")
    options: ClassVar[Mapping[str, Option]] = {
        "payload-classes": Option(DEFAULT_PAYLOAD_CLASSES, "list[str]", "payload constructors"),
        "last-rank-accessors": Option(DEFAULT_LAST_RANK, "list[str]", "last-rank tests"),
        "capability-flags": Option(DEFAULT_FLAGS, "list[str]", "class flags claiming PP support"),
        "require-claim": Option(False, "bool", "report only classes that claim the capability"),
        "accumulator-patterns": Option(DEFAULT_ACCUMULATORS, "list[str]", "accumulator names"),
        "accumulator-helpers": Option(DEFAULT_HELPERS, "list[str]", "helpers that add to lists"),
        "receiver-factories": Option(DEFAULT_RECEIVER_FACTORIES, "list[str]", "receiver factories"),
        "receiver-methods": Option(DEFAULT_RECEIVER_METHODS, "list[str]", "receiver methods"),
    }

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        return payload_needles(options)

    # -- traversal -----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # (the claim and the receiver are looked up once per class, if needed)
        claim: Claim | None = None
        claim_done = receiver_done = False
        receiver: tuple[list[set[str]], str] | None = None
        for m, payloads, dropped in self._analysis.drops(node):
            if dropped:
                if not claim_done:
                    claim, claim_done = self._claim(node), True
                self._report_drops(node, m, dropped, claim)
            keyed = [k for k in map(self._payload_keys, payloads) if k is not None]
            if not keyed:
                continue  # (nothing to compare with a receiver)
            if not receiver_done:
                receiver, receiver_done = self._receiver(node), True
            if receiver:
                self._report_key_mismatch(node, m, keyed, receiver)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """An open runner path of this module: one finding for the models it
        breaks (``pp_tap_drops``), each a related location."""
        paths = self._paths()
        if paths is None or not self._one_finding_per_path():
            return
        scope = self.ctx.scope_nodes
        if any(isinstance(n, cst.FunctionDef) and n is not node for n in scope):
            return  # (a nested function is no path: the facts skip them)
        qual = ".".join(n.name.value for n in scope if isinstance(n, cst.ClassDef) or n is node)
        flags = self.opts["capability-flags"]
        mine = [p for p in paths.open_paths(flags) if (p.module, p.qualname) == (self.ctx.module_name, qual)]
        broken = self._broken_models() if mine else []
        if not broken:
            return
        # (SGLang's runner, or a runner of SGLang's models)
        sglang = is_sglang(self.ctx) or any(d.payload and "PPProxy" in d.payload for d in broken)
        self.report(
            node.name,
            messages.path_message(qual, broken, flags, sglang=sglang),
            notes=[
                *messages.model_notes(broken, flags, sglang=sglang),
                messages.CONSEQUENCE,
                messages.path_fix(qual, flags[0], paths.checked_paths(flags), sglang=sglang),
            ],
        )

    @cached_property
    def _analysis(self) -> DropAnalysis:
        return DropAnalysis(self.opts)

    def _one_finding_per_path(self) -> bool:
        """Whether an unclaimed drop an open path reaches is reported once, at
        the path (the ``pp_tap_drops`` facts list the drops under the default
        names: under configured ones each model is reported)."""
        if self.opts["require-claim"] or tuple(self.opts["capability-flags"]) != DEFAULT_FLAGS:
            return False
        return all(tuple(self.opts[k]) == tuple(v) for k, v in ANALYSIS_DEFAULTS.items())

    def _broken_models(self) -> list[TapDrop]:
        """The drops of the project an open path runs: collected on every rank
        and unclaimed (no flag or a false one along the class's bases)."""
        drops = self.ctx.facts.index("pp_tap_drops")
        if not isinstance(drops, TapDropIndex):
            return []
        index = self._index()
        flags = self.opts["capability-flags"]
        return [
            d
            for d in drops.drops()
            if claim_state(claim_of(index, d.module, d.flags, d.bases, flags)) == "unclaimed"
        ]

    def _index(self) -> ClassIndex | None:
        idx = self.ctx.facts.index("classes")
        return idx if isinstance(idx, ClassIndex) else None

    def _paths(self) -> TapPathIndex | None:
        idx = self.ctx.facts.index("aux_tap_paths")
        return idx if isinstance(idx, TapPathIndex) else None

    def _mro(self, node: cst.ClassDef) -> list[tuple[str, ClassInfo]]:
        """The class's bases along the project (qualified name, class facts)."""
        index = self._index()
        return index.mro_of_bases(self.ctx.module_name, base_names(node)) if index is not None else []

    # -- the claim -------------------------------------------------------------
    def _claim(self, node: cst.ClassDef) -> Claim | None:
        flags = self.opts["capability-flags"]
        return claim_of(self._index(), self.ctx.module_name, own_flags(node, flags), base_names(node), flags)

    def _report_drops(self, node: cst.ClassDef, m: cst.FunctionDef, dropped: list[Drop], claim: Claim | None) -> None:
        reach = self._reach(claim)
        if reach is None or (reach.open_path is not None and self._one_finding_per_path()):
            return  # (silent, or reported once at the open path: ``visit_FunctionDef``)
        cls = ".".join(n.name.value for n in self.ctx.scope_nodes if isinstance(n, cst.ClassDef))
        flags = self.opts["capability-flags"]
        paths = self._paths()
        first = dropped[0][0].node
        payload = self._analysis.payload_call(first.value)
        payload_name = call_name(payload) if payload is not None else None
        sglang = is_sglang(self.ctx) or (payload_name is not None and "PPProxy" in payload_name)
        fix = messages.fix_note(
            sglang=sglang,
            cls=cls,
            flag=claim[1] if claim is not None else flags[0],
            reach=reach,
            has_packer=self._has_packer(node),
            checked=paths.checked_paths(flags) if paths is not None else (),
        )
        # (one finding per method: its other payload returns drop the same taps)
        others = [
            note_at(self.ctx, o.node, "this return of the other ranks leaves them behind too")
            for o, _ns in dropped[1:]
        ]
        names = sorted({n for _r, ns in dropped for n in ns})
        self.report(
            payload or first,
            messages.message(cls, m.name.value, names, payload_name, reach),
            notes=[*reach.notes, *others, messages.CONSEQUENCE, fix],
            severity=Severity.WARNING if reach.warning else None,
        )

    def _reach(self, claim: Claim | None) -> messages.Reach | None:
        """Why a draft with pipeline parallelism reaches the class, or None
        when every way the project starts one refuses it (silent)."""
        flags = self.opts["capability-flags"]
        state = claim_state(claim)
        if state == "silent":
            return None
        if claim is not None and state == "claimed":
            value, flag, note, owner = claim
            return messages.claimed(flag, value, owner, note)
        if self.opts["require-claim"] or self._capture_gated:
            return None
        paths = self._paths()
        if paths is not None:
            open_paths = paths.open_paths(flags)
            if open_paths:
                return messages.open_path(open_paths, flags)
            if paths.paths:
                return None  # every path reads the flag or refuses the combination
        read = self.ctx.facts.index("capability_reads")
        if claim is not None or (isinstance(read, frozenset) and any(f in read for f in flags)):
            # a false flag, or an unset one the engine reads: refused at start-up
            return None
        return messages.unknown(flags)

    def _has_packer(self, node: cst.ClassDef) -> bool:
        """Whether the class or a base defines ``pack_local_aux_hidden_states``
        (vLLM 0.30 on): the fix can name it."""
        packer = "pack_local_aux_hidden_states"
        if any(isinstance(s, cst.FunctionDef) and s.name.value == packer for s in statements(node.body)):
            return True
        return any(packer in info.methods for _q, info in self._mro(node))

    @cached_property
    def _capture_gated(self) -> bool:
        """Whether the other ranks collect no taps (``capture.capture_gated``),
        asked once per file."""
        return capture_gated(self.ctx.text, self.ctx.ast_tree, self.ctx.facts)

    # -- receiver keys -----------------------------------------------------------
    def _receiver(self, node: cst.ClassDef) -> tuple[list[set[str]], str] | None:
        """The key layouts the receiving side may allocate, and where."""
        own = self._own_receiver(node)
        if own is not None:
            return (own, f"`{node.name.value}`") if own else None
        # (the collector reads the default factory names only: it cannot see
        # per-project options)
        facts = self.ctx.facts.raw("pp_receivers")
        defaults = set(DEFAULT_RECEIVER_FACTORIES) <= set(self.opts["receiver-factories"])
        for q, info in self._mro(node):
            if any(name_matches(mm, self.opts["receiver-methods"]) for mm in info.methods):
                return None  # (a hand-written allocator we did not read: cannot compare)
            got = (facts.get(info.module) or {}).get(info.name)
            if got is not None and defaults:
                return [set(k) for k in got["layouts"]], f"`{q}`"
        return None

    def _own_receiver(self, node: cst.ClassDef) -> list[set[str]] | None:
        """Layouts allocated in the class itself; ``[]`` when it has a
        receiver we cannot read (nothing to compare), ``None`` when it has none."""
        layouts: list[list[str] | None] = []
        for n in walk(node.body):
            if isinstance(n, cst.Call) and last_name(call_name(n)) in self.opts["receiver-factories"] and n.args:
                layouts.append(_str_list(n.args[0].value))
            elif isinstance(n, cst.FunctionDef) and n.name.value in self.opts["receiver-methods"]:
                for r in walk(n.body):
                    if isinstance(r, cst.Return):
                        call = self._analysis.payload_call(r.value)
                        layouts.append(_dict_keys(call.args[0].value) if call and call.args else None)
        if None in layouts:
            return []
        return [set(keys) for keys in layouts if keys is not None] or None

    def _payload_keys(self, r: Return) -> tuple[cst.Call, list[str]] | None:
        """A payload returned on non-last ranks and its literal keys (None:
        another rank's, or keys not all string literals)."""
        call = self._analysis.payload_call(r.node.value)
        if call is None or not call.args or r.ctx != NONLAST:
            return None
        keys = _dict_keys(call.args[0].value)
        return (call, keys) if keys is not None else None

    def _report_key_mismatch(
        self,
        node: cst.ClassDef,
        m: cst.FunctionDef,
        keyed: list[tuple[cst.Call, list[str]]],
        receiver: tuple[list[set[str]], str],
    ) -> None:
        layouts, where = receiver
        for call, keys in keyed:
            if set(keys) in layouts:
                continue
            # a class may allocate one layout per mode; compare with the
            # closest so the message names the smallest difference
            want = min(layouts, key=lambda w: (len(w ^ set(keys)), sorted(w)))
            missing = sorted(want - set(keys))
            extra = sorted(set(keys) - want)
            parts = []
            if missing:
                parts.append("misses " + ", ".join(f"'{k}'" for k in missing))
            if extra:
                parts.append("adds " + ", ".join(f"'{k}'" for k in extra))
            self.report(
                call,
                f"`{call_name(call)}` returned by `{node.name.value}.{m.name.value}` on non-last "
                f"ranks {' and '.join(parts)} compared with the keys the receiving rank allocates in "
                f"{where} ({', '.join(repr(k) for k in sorted(want))})",
                notes=[
                    (
                        "The next stage allocates its receive buffers from that key list; a missing key "
                        "fails there with KeyError, an extra one is never received (or breaks CUDA-graph "
                        "capture)."
                    ),
                    "Keep the payload keys and the allocation in one place.",
                ],
            )


def _str_list(node: cst.BaseExpression) -> list[str] | None:
    """The strings of a list or tuple display of string literals only."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.SimpleString) for e in node.elements):
        return None
    return [str(e.value.evaluated_value) for e in node.elements]


def _dict_keys(node: cst.BaseExpression) -> list[str] | None:
    """Keys of a dict display with only string-literal keys (no splat)."""
    if not isinstance(node, cst.Dict):
        return None
    if not all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in node.elements):
        return None
    return [str(e.key.evaluated_value) for e in node.elements]
