"""SHD301 and SHD302 as a user sees them: messages that name the real
variables, related locations in other files, options, editor buffers."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path
from typing import Any

from corpus_harness import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

import checks.pp_cross_rank_module_alias as alias_mod
import checks.pp_payload_drops_tensors as payload_mod
from checks._helpers import name_matches, walk
from checks.pp_cross_rank_module_alias import PpCrossRankModuleAlias
from checks.pp_payload_drops_tensors import PpPayloadDropsTensors
from linter.config import Config
from linter.engine import Engine, check_text
from linter.facts import ProjectFacts
from linter.registry import load_registry
from linter.types import Diagnostic, Severity

PAYLOAD = CORPUS / "pp_payload_drops_tensors"
ALIAS = CORPUS / "pp_cross_rank_module_alias"


def run(root: Path, code: str, **options: Any) -> list[Diagnostic]:
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    config = Config(root=root, select=(code,), rule_options=((code, opts),) if opts else ())
    result = Engine(config, load_registry(), jobs=1).run([root])
    assert not result.errors, result.errors
    return [d for d in result.diagnostics if d.code == code]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src), encoding="utf-8")


# -- SHD301 ----------------------------------------------------------------------


def test_inherited_claim_points_to_the_base_class_in_another_file() -> None:
    diags = run(PAYLOAD, "SHD301")
    variant = [d for d in diags if d.path == "stages/variant.py"]
    assert len(variant) == 1
    d = variant[0]
    assert "`ShortcutVariant.forward`" in d.message
    assert "`aux_hidden_states`" in d.message
    assert "supports_aux_hidden_states_over_pp = True" in d.message
    related = [n for n in d.notes if n.path is not None]
    assert len(related) == 1
    assert related[0].path == "stages/backbone.py"
    assert related[0].span is not None
    flag_line = (PAYLOAD / "stages/backbone.py").read_text().splitlines()[related[0].span.line - 1]
    assert flag_line.strip().startswith("supports_aux_hidden_states_over_pp = True")
    assert "stages.backbone.StageBackbone" in related[0].message


def test_claim_inherited_over_two_files_and_a_reexport() -> None:
    diags = run(PAYLOAD, "SHD301")
    deep = [d for d in diags if d.path == "stages/deep/vision_text.py"]
    assert [d.span.line for d in deep] == [18]
    assert "`kept_hidden`" in deep[0].message
    assert any(n.path == "stages/backbone.py" for n in deep[0].notes)
    lean = [d for d in diags if d.path == "stages/reexported.py"]
    assert len(lean) == 1 and "misses 'residual'" in lean[0].message
    assert "stages.backbone.StageBackbone" in lean[0].message


def test_receiver_mismatch_names_both_key_sets() -> None:
    diags = [d for d in run(PAYLOAD, "SHD301") if d.path == "edge_receiver.py"]
    by_line = {d.span.line: d.message for d in diags}
    assert "misses 'residual'" in by_line[22]
    assert "('hidden_states', 'residual')" in by_line[22]
    assert "misses 'router_state'" in by_line[40]


FORK_SOURCE = textwrap.dedent(
    """
    class Relay:
        carries_taps = True

        def forward(self, x):
            probes = []
            for b in self.blocks:
                x = b(x)
                probes.append(x)
            if not self.topo.is_tail:
                return Handoff({"x": x})
            return x, probes
    """
)


def check_one(text: str, code: str, **options: Any) -> list[Diagnostic]:
    """The rule on one text, past the raw-text prefilter (which only knows
    the default names; see the Options section of the rule docs)."""
    registry = load_registry()
    rule = registry.rules[code]
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    config = Config(root=Path("."), select=(code,), rule_options=((code, opts),) if opts else ())
    diags, errors = check_text(text, "m.py", "m", [rule], config, ProjectFacts())
    assert not errors, errors
    return diags


def test_options_replace_the_default_names() -> None:
    assert check_one(FORK_SOURCE, "SHD301") == []
    diags = check_one(
        FORK_SOURCE,
        "SHD301",
        **{
            "payload-classes": ["Handoff"],
            "last-rank-accessors": ["is_tail"],
            "capability-flags": ["carries_taps"],
            "accumulator-patterns": ["probes"],
        },
    )
    assert len(diags) == 1
    assert "`probes`" in diags[0].message and "`carries_taps = True`" in diags[0].message
    # each option is needed: drop one and the finding goes
    assert (
        check_one(
            FORK_SOURCE,
            "SHD301",
            **{
                "payload-classes": ["Handoff"],
                "last-rank-accessors": ["is_tail"],
                "capability-flags": ["carries_taps"],
            },
        )
        == []
    )


# a forward that taps every block and drops the taps on the non-last ranks
_DROPPING_FORWARD = """
    def forward(self, h):
        aux_hidden_states = []
        for b in self.blocks:
            h = b(h)
            aux_hidden_states.append(h)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": h})
        return h, aux_hidden_states
"""


def _dropping_method() -> str:
    """``_DROPPING_FORWARD`` as a method of a top-level class."""
    return textwrap.indent(textwrap.dedent(_DROPPING_FORWARD), "    ")


def test_unclaimed_drops_are_warnings_refused_ones_silent_and_require_claim_keeps_claims_only(tmp_path: Path) -> None:
    method = _dropping_method()
    src = (
        "class Unclaimed:\n" + method + "\n\nclass Refused:\n"
        "    supports_aux_hidden_states_over_pp = False\n" + method
    )
    (tmp_path / "m.py").write_text(src)
    assert run(tmp_path, "SHD301", **{"require-claim": True}) == []
    diags = run(tmp_path, "SHD301")
    payload_lines = [
        i for i, line in enumerate(src.splitlines(), 1) if "IntermediateTensors(" in line
    ]
    assert [d.span.line for d in diags] == payload_lines[:1]
    assert diags[0].severity == Severity.WARNING
    assert "supports_aux_hidden_states_over_pp" in diags[0].message


def test_capture_turned_on_for_the_last_rank_only_drops_nothing(tmp_path: Path) -> None:
    """SGLang captures taps on the last rank only (its capture setters return
    at once elsewhere): no warning there, in the module or in a model file
    that inherits the convention; a module whose setters capture everywhere
    is still reported."""
    model = """
        class Stack:
            def forward(self, h):
                aux_hidden_states = []
                for i, b in enumerate(self.blocks):
                    h = b(h)
                    if i in self.layers_to_capture:
                        aux_hidden_states.append(h)
                if not self.pp_group.is_last_rank:
                    return PPProxyTensors({"hidden_states": h})
                return h, aux_hidden_states
    """
    gated = """
        class Wrapper:
            def set_eagle3_layers_to_capture(self, ids):
                if not self.pp_group.is_last_rank:
                    return
                self.model.layers_to_capture = ids
    """
    open_setter = """
        class Wrapper:
            def set_eagle3_layers_to_capture(self, ids):
                self.capture_aux_hidden_states = True
                self.model.layers_to_capture = ids
    """
    write(tmp_path / "a", {"m.py": model + gated})
    assert run(tmp_path / "a", "SHD301") == []
    write(tmp_path / "b", {"llama_like.py": model + gated, "other.py": model})
    assert run(tmp_path / "b", "SHD301") == []
    write(tmp_path / "c", {"llama_like.py": model + gated, "other.py": model + open_setter})
    assert [d.path for d in run(tmp_path / "c", "SHD301")] == ["other.py"]


def test_editor_buffer_sees_the_base_class_on_disk(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Base:
                    supports_aux_hidden_states_over_pp = True
            """,
        },
    )
    buffer = textwrap.dedent(
        """
        from pkg.base import Base

        class Child(Base):
            def forward(self, h):
                aux_hidden_states = []
                for b in self.blocks:
                    h = b(h)
                    aux_hidden_states.append(h)
                if not self.pp_group.is_last_rank:
                    return PPProxyTensors({"hidden_states": h})
                return h, aux_hidden_states
        """
    )
    engine = Engine(Config(root=tmp_path, select=("SHD301",)), load_registry(), jobs=1)
    diags, errors = engine.lint_text(buffer, tmp_path / "pkg" / "child.py")
    assert not errors
    assert len(diags) == 1
    assert diags[0].notes[0].path == "pkg/base.py"
    # flipping the base's flag silences the subclass
    (tmp_path / "pkg" / "base.py").write_text(
        "class Base:\n    supports_aux_hidden_states_over_pp = False\n"
    )
    engine = Engine(Config(root=tmp_path, select=("SHD301",)), load_registry(), jobs=1)
    assert engine.lint_text(buffer, tmp_path / "pkg" / "child.py")[0] == []


def test_prefilter_skips_files_without_a_pipeline_payload() -> None:
    assert not PpPayloadDropsTensors.candidate("def f(x):\n    return x + 1\n")
    assert PpPayloadDropsTensors.candidate("return IntermediateTensors({})")


def _parsed(root: Path, code: str, **options: Any) -> tuple[int, list[Diagnostic]]:
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    config = Config(root=root, select=(code,), rule_options=((code, opts),) if opts else ())
    result = Engine(config, load_registry(), jobs=1).run([root])
    assert not result.errors, result.errors
    return result.stats.parsed, [d for d in result.diagnostics if d.code == code]


_DROPPING_CHILD = (
    "from pkg.base import Base\nfrom vllm.sequence import IntermediateTensors\n\n"
    "class Child(Base):\n" + _dropping_method()
)


def test_payload_facts_gate_reads_the_configured_flag(tmp_path: Path) -> None:
    # the claim sits in another file under a project-specific flag name: the
    # facts gate must use the configured name to let the subclass be parsed
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": "class Base:\n    relays_draft_taps = True\n",
            "pkg/child.py": _DROPPING_CHILD,
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD301", **{"require-claim": True})
    assert (parsed, diags) == (0, [])  # default flag: nothing claims, nothing parsed
    # (without require-claim the unclaimed drop is a warning)
    parsed, diags = _parsed(tmp_path, "SHD301")
    assert parsed == 1 and [d.severity for d in diags] == [Severity.WARNING]
    parsed, diags = _parsed(tmp_path, "SHD301", **{"capability-flags": ["relays_draft_taps"]})
    assert parsed == 1 and [d.path for d in diags] == ["pkg/child.py"]
    assert diags[0].notes[0].path == "pkg/base.py" and diags[0].severity == Severity.ERROR


def test_payload_facts_gate_sees_classes_defined_in_functions(tmp_path: Path) -> None:
    # the "classes" index skips classes defined in functions; the gate reads
    # the rule's own shape facts, which keep them
    write(
        tmp_path,
        {
            "m.py": """
                def build():
                    class Local:
                        supports_aux_hidden_states_over_pp = True

                        def forward(self, h):
                            taps = []
                            for b in self.blocks:
                                h = b(h)
                                taps.append(h)
                            if not get_pp_group().is_last_rank:
                                return IntermediateTensors({"hidden_states": h})
                            return h, taps
                    return Local
            """
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD301")
    assert parsed == 1 and len(diags) == 1


def test_payload_facts_gate_compares_receiver_keys(tmp_path: Path) -> None:
    model = """
        class Stage:
            def __init__(self):
                self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
                    ["hidden_states", "residual"], 16
                )

            def forward(self, h, r):
                if not get_pp_group().is_last_rank:
                    return IntermediateTensors({KEYS})
                return h
    """
    write(tmp_path, {"m.py": model.replace("KEYS", '"hidden_states": h, "residual": r')})
    assert _parsed(tmp_path, "SHD301") == (0, [])  # keys agree: cannot fire, not parsed
    write(tmp_path, {"m.py": model.replace("KEYS", '"hidden_states": h')})
    parsed, diags = _parsed(tmp_path, "SHD301")
    assert parsed == 1 and len(diags) == 1 and "misses 'residual'" in diags[0].message


def test_payload_ast_gate_needs_a_returned_accumulator_or_keyed_payload() -> None:
    import ast

    # helpers are configurable, so any call given ``h`` could add to it:
    # here nothing is added to what is returned
    plain = "class M:\n    def forward(self, h):\n        if x:\n            return Payload(h * 2)\n        return h\n"
    assert not PpPayloadDropsTensors.candidate_tree(ast.parse(plain), plain)
    taps = plain.replace("return h\n", "taps.append(h)\n        return h, taps\n")
    assert PpPayloadDropsTensors.candidate_tree(ast.parse(taps), taps)
    keyed = plain.replace("Payload(h * 2)", 'Payload({"h": h * 2})')
    # ``if x: return ...`` is the last rank's branch when ``x`` is an
    # accessor and no rank's otherwise: never the non-last payload compared
    assert not PpPayloadDropsTensors.candidate_tree(ast.parse(keyed), keyed)
    keyed = keyed.replace("if x:", "if not x:")
    assert PpPayloadDropsTensors.candidate_tree(ast.parse(keyed), keyed)


# -- SHD302 ----------------------------------------------------------------------


def test_alias_message_names_both_ends() -> None:
    diags = [d for d in run(ALIAS, "SHD302") if d.path == "bad.py"]
    assert len(diags) == 1
    msg = diags[0].message
    assert "`draft_inner.embed_tokens`" in msg and "`target_inner.embed_tokens`" in msg
    assert "`target_model.lm_head`" in msg and "no rank holds both" in msg
    assert "`load_sketch_draft`" in msg


def test_draft_rank_any_reports_the_head_alone(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": "def wire(draft, target):\n    draft.lm_head = target.lm_head\n"})
    assert run(tmp_path, "SHD302") == []
    diags = run(tmp_path, "SHD302", **{"draft-rank": "any"})
    assert (
        len(diags) == 1
        and "LM head" in diags[0].message
        and "last pipeline rank" in diags[0].message
    )


def test_guard_names_option(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target, topo):
                    if topo.n_stages > 1:
                        raise NotImplementedError
                    draft.model.embed_tokens = target.model.embed_tokens
            """
        },
    )
    assert len(run(tmp_path, "SHD302")) == 1
    assert run(tmp_path, "SHD302", **{"guard-names": ["n_stages"]}) == []


def test_alias_prefilter_ignores_ordinary_model_files() -> None:
    model_file = textwrap.dedent(
        """
        class M:
            def __init__(self, config):
                self.embed_tokens = VocabParallelEmbedding(config.vocab_size, config.hidden_size)
                self.num_heads = config.num_attention_heads
                self.lm_head = ParallelLMHead(config.vocab_size, config.hidden_size)

            def get_input_embeddings(self):
                return self.embed_tokens
        """
    )
    assert not PpCrossRankModuleAlias.candidate(model_file)
    assert PpCrossRankModuleAlias.candidate(
        "draft.model.embed_tokens = target.model.embed_tokens\n"
    )


def test_alias_gates_record_candidates_and_replay_them_with_the_options(tmp_path: Path) -> None:
    import ast

    from checks.pp_cross_rank_module_alias import PAIR, PP_GROUP_SIZE, alias_shapes

    def shapes(src: str) -> list[dict[str, Any]]:
        text = textwrap.dedent(src)
        return alias_shapes(ast.parse(text), text)["funcs"]

    # one model tying its own head to its own embedding: a candidate (were
    # ``lm_head`` not rank-placed, the receiver's owner would be
    # ``self.lm_head``), which the facts gate drops under the default names
    tie = shapes(
        """
        class M:
            def tie(self):
                self.lm_head.weight = self.embed_tokens.weight
        """
    )
    assert tie == [
        {"a": [["=", "self.lm_head.weight", ["self", "embed_tokens", "weight"]]], "g": []}
    ]
    # a chain within one object never crosses, whatever the options
    assert shapes("def f(self):\n    self.head = self.embed_tokens\n") == []
    # through two locals, in a nested function
    nested = shapes(
        """
        def outer(target):
            def wire(draft):
                emb = target.model.embed_tokens
                same = emb
                draft.model.embed_tokens = same
            return wire
        """
    )
    assert nested[0]["a"] == [
        ["=", "draft.model.embed_tokens", ["target", "model", "embed_tokens"]]
    ]
    pair = shapes(
        "def f(d, t):\n    e, h = t.get_embed_and_head()\n    d.set_embed_and_head(e, h)\n"
    )
    assert pair[0]["a"] == [
        ["set_embed_and_head", "d", [PAIR, "t", "first"]],
        ["set_embed_and_head", "d", [PAIR, "t", "last"]],
    ]
    # guards: names matching a default pattern in the function, in the
    # function around it and in the raising tests of the class; a
    # pipeline group's size whatever the options
    guarded = shapes(
        """
        class Drafter:
            def validate(self, cfg):
                if cfg.pp_rank_count:
                    raise ValueError

            def outer(self, pp_size):
                def wire(draft, target):
                    draft.embed_tokens = target.embed_tokens
                    return get_pp_group().world_size
                return wire
        """
    )
    assert guarded[0]["g"] == [PP_GROUP_SIZE, "pp_rank_count", "pp_size"]

    # the facts gate: a project-specific module name is matched with the
    # configured option (the raw-text gate still needs a default-looking line)
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target):
                    draft.token_table = target.token_table

                def tie(model):
                    model.lm_head.weight = model.embed_tokens.weight
            """
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD302")
    assert (parsed, diags) == (0, [])
    parsed, diags = _parsed(tmp_path, "SHD302", **{"first-rank-modules": ["token_table"]})
    assert parsed == 1 and [d.span.line for d in diags] == [3]


# -- the gates on the corpus's gate files -----------------------------------------


def _gate_passes(root: Path, rel: str, code: str, **options: Any) -> bool:
    """Whether ``rel`` in the project at ``root`` gets past every gate of
    ``code`` (text, ast, facts) under ``options``."""
    opts = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    config = Config(root=root, select=(code,), rule_options=((code, opts),) if opts else ())
    engine = Engine(config, load_registry(), jobs=1)
    facts = engine.project_facts()
    scan = engine.scan_one((root / rel).read_text(encoding="utf-8"), rel, True)
    return code in engine.facts_gate(rel, scan.rules or [], facts)


def test_gates_decide_the_corpus_gate_files() -> None:
    # every class or function in gate_lookalikes.py has what a finding
    # needs but for one reason the gates replay; gate_edges.py fires
    for root, code in ((PAYLOAD, "SHD301"), (ALIAS, "SHD302")):
        assert not _gate_passes(root, "gate_lookalikes.py", code)
        assert _gate_passes(root, "gate_edges.py", code)


def test_payload_gate_replays_the_rank_context_with_the_options(tmp_path: Path) -> None:
    # the payload is a plain ``return payload`` after ``if last: return``:
    # non-last only while ``is_last_rank`` is a last-rank accessor
    write(
        tmp_path,
        {
            "m.py": """
                class Stage:
                    supports_aux_hidden_states_over_pp = True

                    def forward(self, h):
                        aux_hidden_states = []
                        for b in self.blocks:
                            h = b(h)
                            aux_hidden_states.append(h)
                        if get_pp_group().is_last_rank:
                            return h, aux_hidden_states
                        payload = {"hidden_states": h}
                        return payload
            """
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD301")
    assert parsed == 1 and [d.span.line for d in diags] == [13]  # ``return payload``
    assert _parsed(tmp_path, "SHD301", **{"last-rank-accessors": ["is_tail"]}) == (0, [])
    # with the test negated the plain return is the last rank's and the
    # early one the other ranks' payload, which carries the taps
    (tmp_path / "m.py").write_text(
        (tmp_path / "m.py").read_text().replace("if get_pp_group()", "if not get_pp_group()")
    )
    assert _parsed(tmp_path, "SHD301") == (0, [])


def test_payload_gate_reads_a_receiver_method_in_the_class(tmp_path: Path) -> None:
    model = """
        class Stage:
            def make_empty_intermediate_tensors(self, n, dtype, device):
                return IntermediateTensors({RECV})

            def forward(self, h, r):
                if not get_pp_group().is_last_rank:
                    return IntermediateTensors({"hidden_states": h, "residual": r})
                return h
    """
    write(tmp_path, {"m.py": model.replace("RECV", '"residual": r, "hidden_states": h')})
    assert _parsed(tmp_path, "SHD301") == (0, [])  # the same keys: not parsed
    write(tmp_path, {"m.py": model.replace("RECV", '"hidden_states": h')})
    parsed, diags = _parsed(tmp_path, "SHD301")
    assert parsed == 1 and len(diags) == 1 and "adds 'residual'" in diags[0].message
    # under another name the method is not a receiver: nothing to compare
    assert _parsed(tmp_path, "SHD301", **{"receiver-methods": ["alloc_buffers"]}) == (0, [])


def test_alias_gate_replays_guards_with_the_options(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target, parallel):
                    pp_size = parallel.pipeline_parallel_size
                    if pp_size > 1:
                        raise NotImplementedError
                    draft.model.embed_tokens = target.model.embed_tokens
            """
        },
    )
    assert _parsed(tmp_path, "SHD302") == (0, [])  # guarded: not parsed
    parsed, diags = _parsed(tmp_path, "SHD302", **{"guard-names": ["n_stages"]})
    assert parsed == 1 and [d.span.line for d in diags] == [6]
    # a tensor-parallel group's size is no guard; a pipeline group's is,
    # whatever the options say
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target, tp_group):
                    if tp_group.world_size > 1:
                        raise NotImplementedError
                    draft.model.embed_tokens = target.model.embed_tokens
            """
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD302")
    assert parsed == 1 and len(diags) == 1
    (tmp_path / "m.py").write_text((tmp_path / "m.py").read_text().replace("tp_group", "pp_group"))
    assert _parsed(tmp_path, "SHD302", **{"guard-names": []}) == (0, [])


def test_alias_gate_sees_a_starred_end_of_the_pair(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target):
                    embed, *rest = target.get_embed_and_head()
                    draft.set_embed_and_head(embed, rest)
            """
        },
    )
    parsed, diags = _parsed(tmp_path, "SHD302")
    assert parsed == 1 and len(diags) == 1


def test_payload_gate_rank_contexts_equal_the_rules() -> None:
    # the ast replay of ``_block``/``_if``/``_classify`` gives every return
    # the context the rule gives it, under several accessor options
    import ast

    import libcst as cst

    from checks.pp_payload_drops_tensors import _path_context, _rank_paths, _test_leaves
    from linter.rule import RuleContext

    src = (PAYLOAD / "edge_guards.py").read_text() + textwrap.dedent(
        """
        class Shapes:
            def forward(self, h, aux):
                if not self.pp.is_last_rank and h:
                    return IntermediateTensors({"h": h})
                elif aux or self.is_last_pp_rank():
                    return h, aux
                else:
                    if self.is_first_rank:
                        return h
                for x in h:
                    if is_pipeline_last_stage:
                        return aux
                    while x:
                        if not (self.aux and not is_last_rank):
                            raise ValueError
                        return h
                with ctx:
                    try:
                        return 1
                    except E:
                        return 2
                    finally:
                        return 3
                return
        """
    )
    files = [p.read_text() for p in sorted(PAYLOAD.rglob("*.py"))] + [src]
    accessor_sets = [
        list(PpPayloadDropsTensors.options["last-rank-accessors"].default),
        ["*"],
        ["is_first_rank"],
        ["aux*", "is_last_rank"],
    ]
    compared = 0
    for text in files:
        module = cst.parse_module(text)
        tree = ast.parse(text)
        cst_classes = [n for n in walk(module) if isinstance(n, cst.ClassDef)]
        ast_classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        by_name = {c.name: c for c in ast_classes}
        for accessors in accessor_sets:
            ctx = RuleContext("m.py", "m", text, module, ProjectFacts())
            rule = PpPayloadDropsTensors(ctx, {"last-rank-accessors": accessors})
            for c in cst_classes:
                theirs = [[r.ctx for r in m.returns] for m in rule._methods(c)]
                fns = [
                    s
                    for s in by_name[c.name.value].body
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                ]
                ours = []
                for fn in fns:
                    contexts = []
                    for _, path in _rank_paths(fn.body):
                        leaves: list[str] = []
                        for _, test in path:
                            _test_leaves(test, leaves)
                        matched = frozenset(k for k in leaves if name_matches(k, accessors))
                        contexts.append(_path_context(path, matched))
                    ours.append(contexts)
                assert ours == theirs, (c.name.value, accessors)
                compared += sum(map(len, ours))
    assert compared > 100


def test_payload_gates_read_keywords_as_names_like_libcst(tmp_path: Path) -> None:
    # libcst reads ``None`` as a name: with every name an accumulator and
    # every call a helper, ``self.wait(None)`` "adds to" the ``None`` the
    # last rank returns; the gates (on ast, where it is a constant) agree
    write(
        tmp_path,
        {
            "m.py": """
                class Handler:
                    def recv(self, x):
                        if not get_pp_group().is_last_rank:
                            return dict(x=x)
                        self.wait(None)
                        return None
            """
        },
    )
    options = {
        "require-claim": False,
        "accumulator-patterns": ["*"],
        "accumulator-helpers": ["*"],
        "payload-classes": ["dict"],
    }
    parsed, diags = _parsed(tmp_path, "SHD301", **options)
    assert parsed == 1 and len(diags) == 1 and "returns `None`" in diags[0].message


# -- SHD302 text gate: every finding's source stands where ``_source`` looks ----------
# A draft wired to a first-rank module of the target, in the shapes the rule
# reads: the source (a chain, a getter, getattr, one end of a pair), how the
# value is written (layouts black, yapf and hand-written code use), and the
# site (an assignment, setattr, a setter). The rule decides (libcst, past the
# gates); the text gate must admit every text it reports in.
_ALIAS_SOURCES = [
    "base.model.{w}",
    "base.{w}.weight.data",
    "(base.model).{w}",
    "base.get_input_embeddings()",
    'getattr(base, "{w}")',
    'getattr(\n        base,  # the target\n        "{w}",\n    )',
    "(getattr)(base, '{w}')",
    "PAIR",
]
_ALIAS_VALUES = [
    "= {}",
    "= \\\n        {}",
    "= (\n        {}\n    )",
    "= (  # wrapped\n        # borrowed\n        {}\n    )",
    "= {} if base else None",
    "= None or {}",
]
_ALIAS_SITES = ["assign", "local", "local_semicolon", "setattr", "setter", "setter_keyword"]
_ALIAS_WORDS = ["embed_tokens", "wte", "Embed_Tokens", "WORD_EMBEDDINGS", "tok_embeddings"]


def _alias_snippet(source: str, value: str, site: str, word: str) -> str:
    lines = ["def attach(sketch, base):"]
    if source == "PAIR":
        lines.append("    emb, head = base.load_embed_and_head()")
        src = "emb"
    else:
        src = source.format(w=word)
    val = value.format(src)
    if site == "assign":
        lines.append(f"    sketch.model.{word} {val}")
    elif site == "local":
        lines += [f"    borrowed {val}", f"    sketch.model.{word} = borrowed"]
    elif site == "local_semicolon":
        lines.append(f"    borrowed {val}; sketch.model.{word} = borrowed")
    elif site == "setattr":
        lines += [f"    borrowed {val}", f'    setattr(\n        sketch.model,\n        "{word}",\n        borrowed,\n    )']
    elif site == "setter":
        lines += [f"    borrowed {val}", "    sketch.set_input_embeddings(\n        borrowed\n    )"]
    else:
        lines += [f"    borrowed {val}", "    sketch.set_embed(table=borrowed)"]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(
    source=st.sampled_from(_ALIAS_SOURCES),
    value=st.sampled_from(_ALIAS_VALUES),
    site=st.sampled_from(_ALIAS_SITES),
    word=st.sampled_from(_ALIAS_WORDS),
)
def test_alias_text_gate_admits_every_generated_finding(
    source: str, value: str, site: str, word: str
) -> None:
    text = _alias_snippet(source, value, site, word)
    ast.parse(text)
    if check_one(text, "SHD302"):
        assert PpCrossRankModuleAlias.candidate(text), text


def test_alias_text_gate_explicit_cases() -> None:
    # shapes an earlier gate (a chain at the end of its line after ``=``)
    # missed; each one fires
    cases = [
        ("base.model.{w}", "= \\\n        {}", "assign", "embed_tokens"),
        ("base.model.{w}", "= (\n        {}\n    )", "assign", "embed_tokens"),
        ("base.model.{w}", "= {}", "local_semicolon", "word_embeddings"),
        ("base.model.{w}", "= {}", "assign", "EMBED_TOKENS"),
        ("base.{w}.weight.data", "= {}", "assign", "wte"),
        ("base.model.{w}", "= {} if base else None", "assign", "wte"),
        ('getattr(\n        base,  # the target\n        "{w}",\n    )', "= {}", "local", "wte"),
        ("(getattr)(base, '{w}')", "= {}", "local", "tok_embeddings"),
        ("PAIR", "= {}", "assign", "embed_tokens"),
        ("base.model.{w}", "= {}", "setattr", "embed_tokens"),
    ]
    for source, value, site, word in cases:
        text = _alias_snippet(source, value, site, word)
        assert check_one(text, "SHD302"), text
        assert PpCrossRankModuleAlias.candidate(text), text
        assert PpCrossRankModuleAlias.candidate(text.replace("\n", "\r\n")), text


def test_alias_text_gate_drops_mentions_that_are_no_source() -> None:
    # a module called with arguments, subscripted, handed to a call that is
    # no setter, returned, compared, or a keyword argument of such a call
    for line in [
        "h = self.embed_tokens(input_ids)",
        "h = self.model.get_input_embeddings(input_ids)",
        "x = self.get_input_embeddings()(input_ids)",
        "w = self.lm_head.weight[0]",
        "logits = self.logits_processor(self.lm_head, hidden)",
        "logits = self.logits_processor(head=self.lm_head)",
        "return self.model.embed_tokens",
        "same = self.lm_head is self.model.embed_tokens",
        "x = self.pooler(hidden).embeddings",
        "t = layers[0].embed_tokens",
        "# self.draft.embed_tokens = self.embed_tokens (a comment)",
    ]:
        text = f"def f(self, input_ids, hidden, layers):\n    {line}\n"
        assert not PpCrossRankModuleAlias.candidate(text), line


def test_alias_text_gate_stays_linear_on_comment_banners() -> None:
    import time

    for head in ("x = (\n", "x = t.", "getattr(", "x = t.lm_head"):
        text = head + "#" * 5000 + "\n" + "x" * 10
        t = time.process_time()
        PpCrossRankModuleAlias.candidate(text)
        assert time.process_time() - t < 0.5


# -- the prefilter's shortcuts answer as the plain searches do ------------------------


_PAYLOAD_NAMES = (
    "IntermediateTensors",
    "PPProxyTensors",
    "is_last_rank",
    "last_stage",
    "last_pp_rank",
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["Tensors", "last_", "rank", "stage", "pp_", "is_", "Intermediate", "PPProxy", " "]
            + ["(", ")", ":", " and", "or", "#c\n", "\\\n", "\n", "x", "é", "LAST_", "Rank"]
        ),
        max_size=12,
    )
)
def test_payload_needles_answer_as_the_documented_search(bits: list[str]) -> None:
    # the fast path (names first, then the literal-led search plan) answers
    # as the plain regex over the text holding one of the names, or the
    # last-rank test over the lower-cased text (accessors match in any case)
    import re

    text = "".join(bits)
    low = text.lower()
    want = (
        any(n in text for n in _PAYLOAD_NAMES)
        and bool(re.search(payload_mod._TEXT_NEEDLES.regex or "", text, re.MULTILINE))
    ) or (
        any(n in low for n in _PAYLOAD_NAMES[2:])
        and bool(re.search(payload_mod._LAST_RANK_TEST, low, re.MULTILINE))
    )
    assert payload_mod._TEXT_NEEDLES.match(text) == want


# -- SHD301 text gate: every finding has a payload call or a last-rank test ------
# Payload and accessor names as a project may configure them: the defaults,
# names containing a default string, and names containing none (then the
# other of the two must contain one: see the rule's Options).
_GATE_PAYLOADS = ["IntermediateTensors", "PPProxyTensors", "MyIntermediateTensorsV2", "Handoff"]
_GATE_ACCESSORS = [
    "is_last_rank",
    "is_last_pp_rank",
    "is_pipeline_last_stage",
    "stage_is_last_rank_é",
    "is_tail",
]
# how the callee of ``P(...)`` may be written; ``{}``: the payload name
_GATE_CALLEES = [
    "{}",
    "vllm.sequence.{}",
    "({})",
    "(\n            pkg.{}  # the payload\n        )",
    "{} \\\n            ",
    "( ( {} ) )",
]
_GATE_ARGS = [
    '({{"h": h}})',
    "(h)",
    '(\n            # keys\n            {{"h": h}})',
    '(tensors={{"h": h}})',
    '(**{{"h": h}})',
    "()",
]
# an ``if`` test around the accessor leaf ``{}``; the flag: whether the body
# runs on the last rank
_GATE_LEAVES = ["g.{}", "{}", "g().{}()", "self.pp.{} ( )", "(\n            g.{}  # c\n        )"]
_GATE_TESTS = [
    ("not {}", False),
    ("{}", True),
    ("x and not {}", False),
    ("not ({}) or y", False),
    ("{} and x", True),
    ("not (x or {})", False),
    ("({}\n        and x)", True),
]


def _gate_snippet(
    payload: str,
    accessor: str,
    callee: str,
    args: str,
    leaf: str,
    test: tuple[str, bool],
    shape: int,
    keyed_receiver: bool,
) -> str:
    call = callee.format(payload) + args.format()
    cond = test[0].format(leaf.format(accessor))
    lines = [
        "class M(Base):",
        "    supports_aux_hidden_states_over_pp = True",
        "",
        "    def __init__(self):",
        (
            '        self.m = make_empty_intermediate_tensors_factory(["a", "b"], 8)'
            if keyed_receiver
            else "        self.m = None"
        ),
        "",
        "    def forward(self, h, x, y, g):",
        "        aux = []",
        "        aux.append(h)",
    ]
    payload_value = call if shape != 2 else '{"h": h}'
    if shape == 0:  # the payload returned with no rank test at all
        lines += ["        if x:", f"            return {payload_value}", "        return h, aux"]
    elif not test[1]:  # the body is the other ranks' path
        lines += [
            f"        if {cond}:",
            f"            return {payload_value}",
            "        return h, aux",
        ]
    else:  # the body is the last rank's; the rest of the block the others'
        lines += [
            f"        if {cond}:",
            "            return h, aux",
            f"        return {payload_value}",
        ]
    return "\n".join(lines) + "\n"


def _gate_case(**kw: Any) -> tuple[str, bool, dict[str, list[str]]]:
    text = _gate_snippet(**kw)
    opts = {"payload-classes": [kw["payload"]], "last-rank-accessors": [kw["accessor"]]}
    fires = bool(check_one(text, "SHD301", **opts))
    return text, fires, opts


def _words_kept(payload: str, accessor: str, shape: int) -> bool:
    """Whether the finding's payload is written with a documented string:
    the call (shape 0: no rank test), the last-rank test (shape 2: a plain
    dict on the other ranks' path) or either (shape 1)."""
    call = any(n in payload for n in _PAYLOAD_NAMES)
    test = any(n in accessor for n in _PAYLOAD_NAMES)
    return call if shape == 0 else test if shape == 2 else call or test


@settings(max_examples=400, deadline=None)
@given(
    payload=st.sampled_from(_GATE_PAYLOADS),
    accessor=st.sampled_from(_GATE_ACCESSORS),
    callee=st.sampled_from(_GATE_CALLEES),
    args=st.sampled_from(_GATE_ARGS),
    leaf=st.sampled_from(_GATE_LEAVES),
    test=st.sampled_from(_GATE_TESTS),
    shape=st.sampled_from([0, 1, 1, 2]),
    keyed_receiver=st.booleans(),
)
def test_payload_text_gate_admits_every_generated_finding(**kw: Any) -> None:
    # with configured payload and accessor names that contain the default
    # strings (the documented contract), a file the rule reports in is
    # admitted by the text gate
    if not _words_kept(kw["payload"], kw["accessor"], kw["shape"]):
        return
    text, fires, opts = _gate_case(**kw)
    if fires:
        assert PpPayloadDropsTensors.candidate(text), (opts, text)


def test_payload_text_gate_explicit_cases() -> None:
    base = {
        "callee": "{}",
        "args": '({{"h": h}})',
        "leaf": "g.{}",
        "test": ("not {}", False),
        "shape": 1,
        "keyed_receiver": True,
    }
    cases = [
        {},
        {"payload": "Handoff"},  # the non-last return, by the accessor test
        {"accessor": "is_tail"},  # the payload call
        {"shape": 2},  # a plain dict on the other ranks' path
        {"shape": 0},  # a payload call with no rank test
        {"callee": "(\n            pkg.{}  # the payload\n        )"},
        {"callee": "{} \\\n            ", "args": '(**{{"h": h}})'},
        {"leaf": "(\n            g.{}  # c\n        )", "payload": "Handoff"},
        {"leaf": "self.pp.{} ( )", "test": ("{} and x", True), "payload": "Handoff"},
        {"accessor": "stage_is_last_rank_é", "payload": "Handoff"},
        {"payload": "MyIntermediateTensorsV2", "accessor": "is_tail", "shape": 0},
    ]
    for extra in cases:
        kw = {"payload": "IntermediateTensors", "accessor": "is_last_rank", **base, **extra}
        text, fires, _ = _gate_case(**kw)
        assert fires, (extra, text)
        assert PpPayloadDropsTensors.candidate(text), (extra, text)


def test_payload_text_gate_admits_accessors_in_any_case() -> None:
    # ``name_matches`` compares the accessor names in any case: with the
    # default options ``IS_LAST_RANK`` is a last-rank test
    for accessor in ("IS_LAST_RANK", "Is_Last_Rank", "is_PIPELINE_last_STAGE", "IS_LAST_PP_RANK"):
        for test in (("not {}", False), ("{}", True)):
            kw = {
                "payload": "Handoff",
                "accessor": accessor,
                "callee": "{}",
                "args": '({{"h": h}})',
                "leaf": "g.{}",
                "test": test,
                "shape": 1,
                "keyed_receiver": True,
            }
            text = _gate_snippet(**kw)
            assert check_one(text, "SHD301"), (accessor, text)
            assert PpPayloadDropsTensors.candidate(text), (accessor, text)


def test_payload_text_gate_drops_mentions_that_cannot_be_a_finding() -> None:
    # corpus lookalikes of model files that only name the payload in
    # imports and annotations and read the rank into a variable (e.g. vLLM
    # 0.33.0 model_executor/models/llava.py); the ast gate may keep such a
    # file for calls that are payloads only under other names
    text = textwrap.dedent(
        """
        from vllm.sequence import IntermediateTensors
        from vllm.distributed import is_pipeline_last_stage_group

        class Wrapper(nn.Module):
            def forward(self, ids, intermediate_tensors: IntermediateTensors | None = None):
                last = get_pp_group().is_last_rank
                out = []
                out.append(self.proj(ids))
                if ids is None:
                    return self.proj(ids)
                return out  # an IntermediateTensors? no: a list

            def make_empty_intermediate_tensors(self, *a) -> "IntermediateTensors":
                return self.language_model.make_empty_intermediate_tensors(*a)
        """
    )
    assert not PpPayloadDropsTensors.candidate(text)
    assert PpPayloadDropsTensors.candidate(text + "if not last_pp_rank:\n    pass\n")
    assert PpPayloadDropsTensors.candidate(text + "x = IntermediateTensors(tensors)\n")


def test_payload_text_gate_stays_linear_on_comment_banners() -> None:
    import time

    for head in (
        "IntermediateTensors  ",
        "is_last_rank  ",
        "make_empty_intermediate_tensors_factory( ",
    ):
        text = head + "#" * 5000 + "\n" + "x" * 10
        t = time.process_time()
        PpPayloadDropsTensors.candidate(text)
        payload_mod._FACTORY_CALL.search(text)
        assert time.process_time() - t < 0.5


# Receiver calls in the shapes the line-pruned walks must still find: comments
# and continuations before the list, a parenthesised callee, a starred or
# keyword first argument, an f-string, nested classes, several per class.
_RECEIVER_SNIPPETS = [
    """
    class A:
        def __init__(self):
            self.m = make_empty_intermediate_tensors_factory(["hidden_states", "residual"], 8)
    """,
    """
    class A:
        def __init__(self):
            self.m = make_empty_intermediate_tensors_factory(  # keys
                # the first stage's
                ("hidden_states",), 8)
            if x:
                self.n = utils.make_empty_intermediate_tensors_factory \\
                    ([], 4)
    """,
    """
    class A:
        class B:
            f = (make_empty_intermediate_tensors_factory)(["a"], 1)
        g = f"{make_empty_intermediate_tensors_factory(['b'], 2)}"
        h = make_empty_intermediate_tensors_factory(*["c"], 3)
        k = make_empty_intermediate_tensors_factory(keys, 3)
        def f(self):
            return [make_empty_intermediate_tensors_factory(['d', 'e'], 1) for _ in x]
    class C(A):
        m = make_empty_intermediate_tensors_factory(["z"], 1)
    """,
    """
    def outer():
        class Hidden:
            m = make_empty_intermediate_tensors_factory(["a"], 1)
    class D:
        x = g(k=["a", "b"])
        y = g(*("c",), **{})
        z = g(
            # comment
            ["d"])
        def make_empty_intermediate_tensors(self, n):
            if n:
                return IntermediateTensors({"a": 1})
            return PPProxyTensors({"b": 2, "c": 3})
        def forward(self, h):
            if not get_pp_group().is_last_rank:
                return IntermediateTensors({"hidden_states": h})
            return h
    """,
]


def _unpruned(text: str) -> str:
    # a ``\\r`` turns the line pruning off: the same tree, every node walked
    return text.replace("\n", "\r\n")


def test_receiver_needle_and_pruned_walks_match_the_full_walks() -> None:
    from checks.pp_payload_drops_tensors import PpPayloadShapes, PpReceiverFacts

    for snippet in _RECEIVER_SNIPPETS:
        text = textwrap.dedent(snippet)
        full = _unpruned(text)
        for collector in (PpReceiverFacts, PpPayloadShapes):
            got = collector.collect(ast.parse(text), text, "m", "m.py")
            want = collector.collect(ast.parse(full), full, "m", "m.py")
            assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), snippet
        if PpReceiverFacts.collect(ast.parse(full), full, "m", "m.py"):
            assert PpReceiverFacts.needles.match(text), snippet
    # the call the collector can read is what the needle asks for
    assert not PpReceiverFacts.needles.match(
        "from x import make_empty_intermediate_tensors_factory\n"
    )
    assert not PpReceiverFacts.needles.match(
        "self.m = make_empty_intermediate_tensors_factory(keys, 8)\n"
    )
    assert not PpReceiverFacts.needles.match(
        "self.make_empty_intermediate_tensors = self.model.make_empty_intermediate_tensors\n"
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "x = f(['a'], 1)\n",
                "y = make_empty_intermediate_tensors_factory(['k', 'v'], 2)\n",
                "z = g(\n    # c\n    ('p',), 3)\n",
                "w = h(k=['q'])\n",
                "if c:\n    u = make_empty_intermediate_tensors_factory(\n        [], 1)\n",
                "def m(self):\n    return IntermediateTensors({'hidden_states': 1})\n",
                (
                    "def forward(self, h):\n    if not get_pp_group().is_last_rank:\n"
                    "        return IntermediateTensors({'hidden_states': h})\n    return h\n"
                ),
                "s = f'{f([1])}'\n",
                "pass\n",
            ]
        ),
        min_size=1,
        max_size=6,
    )
)
def test_pruned_receiver_walks_equal_full_walks_on_random_classes(stmts: list[str]) -> None:
    from checks.pp_payload_drops_tensors import PpPayloadShapes, PpReceiverFacts

    body = textwrap.indent("".join(stmts), "    ")
    text = f"class A:\n{body}\nclass B(A):\n    class C:\n{textwrap.indent(body, '        ')}"
    full = _unpruned(text)
    for collector in (PpReceiverFacts, PpPayloadShapes):
        got = collector.collect(ast.parse(text), text, "m", "m.py")
        want = collector.collect(ast.parse(full), full, "m", "m.py")
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    if PpReceiverFacts.collect(ast.parse(full), full, "m", "m.py"):
        assert PpReceiverFacts.needles.match(text)


# Accumulator sites the line-pruned method walk must still see: an append on
# a continuation line, a helper, a capture keyword, an f-string, a name
# written in a form that only NFKC-normalises to the returned one.
_ACCUMULATOR_SNIPPETS = [
    """
    class M:
        supports_aux_hidden_states_over_pp = True
        def forward(self, h):
            aux = []
            for b in self.blocks:
                h = b(h,
                      capture=aux.append if b.tap else None)
                self._record(
                    aux, h)
            (aux
                .append(h))
            ｔaps += [h]  # the only site of ``taps``
            s = f"{aux.append(h)}"
            if not get_pp_group().is_last_rank:
                return IntermediateTensors({"hidden_states": h})
            return h, aux, taps
    """,
    """
    class N:
        def forward(self, h):
            out = helper_collect(h)
            if get_pp_group().is_last_rank:
                return h, out
            return PPProxyTensors({"h": h})
    """,
]


def test_pruned_accumulator_walk_matches_the_full_walk() -> None:
    from checks.pp_payload_drops_tensors import PpPayloadShapes

    for snippet in _ACCUMULATOR_SNIPPETS:
        text = textwrap.dedent(snippet)
        full = _unpruned(text)
        got = PpPayloadShapes.collect(ast.parse(text), text, "m", "m.py")
        want = PpPayloadShapes.collect(ast.parse(full), full, "m", "m.py")
        assert got["classes"], snippet
        assert "taps" in got["classes"][0]["methods"][0]["acc"] or "ｔ" not in text
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), snippet


_GUARD_SNIPPETS = [
    """
    @needs(PP_SIZE)
    def load(draft, target):
        draft.model.embed_tokens = target.model.embed_tokens

    def load2(draft, target, pp_rank=0):
        draft.lm_head = target.lm_head

    def load3(draft, target):
        if (get_pp_group()
                .size) > 1:
            pass
        draft.wte = target.wte

    def load4(draft, target):
        ＰＰ_size = 1
        draft.wte = target.wte

    class Draft:
        def check(self):
            if self.cfg.Pipeline_Parallel_Size > 1:
                raise ValueError("no PP")
        def load(self, target):
            self.embed_tokens = target.embed_tokens
    """,
]


def test_alias_guard_lines_match_the_full_walk() -> None:
    for snippet in _GUARD_SNIPPETS:
        text = textwrap.dedent(snippet)
        full = _unpruned(text)
        got = alias_mod.alias_shapes(ast.parse(text), text)
        want = alias_mod.alias_shapes(ast.parse(full), full)
        assert got == want
        assert all(f["g"] for f in got["funcs"]), got


# -- SHD302 in an engine without pipeline parallelism ---------------------------

_MODEL = """
    from torch import nn


    class {name}Model(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
            self.layers = nn.ModuleList()
"""
_PROPOSER = """
    class SharedEmbeddingProposer:
        def build(self, target):
            self.draft.model.embed_tokens = target.model.embed_tokens
"""


def _engine(root: Path, models: int) -> None:
    files = {f"engine/models/m{i}.py": _MODEL.format(name=f"M{i}") for i in range(models)}
    files["engine/spec/proposer.py"] = _PROPOSER
    write(root, files)


def test_pipeline_layout_reads_markers_inside_identifiers_and_built_embeddings() -> None:
    got = alias_mod.pipeline_layout(
        "if get_pp_group().is_first_rank:\n"
        "    self.wte = VocabParallelEmbedding(v, h)\n"
        "else:\n"
        "    self.wte = PPMissingLayer()\n"
        "self.tok_embeddings: nn.Module = nn.Embedding(v, h)\n"
        "ok = mapping.is_first_pp_rank()\n"
        "note = 'an Embedding(' in a string is no construction'\n"
    )
    assert got == {
        "m": ["PPMissingLayer", "is_first_pp_rank", "is_first_rank"],
        "e": ["tok_embeddings", "wte"],
    }
    assert alias_mod.pipeline_layout("x = first_stage_model\n") is None


def test_an_engine_whose_models_never_place_modules_on_pipeline_ranks_is_not_reported(tmp_path: Path) -> None:
    """Every rank holds the whole model there (LMDeploy's PyTorch engine):
    borrowing the target's embedding is fine."""
    _engine(tmp_path, models=5)
    assert run(tmp_path, "SHD302") == []
    # the option restores the report; so does one file placing a module on a rank
    assert len(run(tmp_path, "SHD302", **{"assume-pipeline-parallel": True})) == 1
    write(tmp_path, {"engine/models/m0.py": _MODEL.format(name="M0") + "\n\nEMPTY = PPMissingLayer\n"})
    assert len(run(tmp_path, "SHD302")) == 1


def test_a_few_modules_are_no_evidence_of_an_engine_without_pipeline_parallelism(tmp_path: Path) -> None:
    """A draft model linted alone, or with a few neighbours, builds its own
    embedding and need not mention the pipeline: still reported."""
    _engine(tmp_path, models=4)
    assert len(run(tmp_path, "SHD302")) == 1


def test_an_engine_that_reads_the_flag_refuses_unclaimed_classes_so_they_are_not_reported(tmp_path: Path) -> None:
    """vLLM checks the capability flag at start-up (``getattr(model, flag,
    False)``): a class that never sets it is refused, not run. Before the
    flag existed nothing refused it: then the drop is a warning."""
    model = "class Stack:\n" + _dropping_method()
    write(tmp_path, {"models/stack.py": model})
    assert [d.severity for d in run(tmp_path, "SHD301")] == [Severity.WARNING]
    write(
        tmp_path,
        {
            "spec/check.py": """
                def verify(model):
                    if not getattr(model, "supports_aux_hidden_states_over_pp", False):
                        raise ValueError("this model cannot relay draft taps under PP")
            """
        },
    )
    assert run(tmp_path, "SHD301") == []
    # a flag of another name read elsewhere says nothing about this one
    assert [d.severity for d in run(tmp_path, "SHD301", **{"capability-flags": ["relays_taps"]})] == [
        Severity.WARNING
    ]


def test_shd302s_scan_scope_leaves_out_methods_and_reads_the_same() -> None:
    """SHD302's scan readers (its ast gate, ``pp_alias_shapes``) also leave
    out the methods of a kept class whose text names no rank-placed module
    (no literal part of a configured glob, no default word) and holds no
    ``raise`` (``scan_scope``). On every corpus file, with the default and
    with a fork's names, whether the text is compiled masked to the scan
    scope or whole (``scoped_tree``): the functions recorded are the
    top-level scope's, less only functions none of whose alias sources
    names a rank-placed module under those names (what the facts gate
    needs to let a function fire: ``resolve``); the guards are the same."""
    from corpus_harness import parsed_corpus_files

    from checks.pp_cross_rank_module_alias import (
        DEFAULT_FIRST_RANK,
        DEFAULT_LAST_RANK,
        PAIR,
        PpAliasShapes,
        _scan_scope,
        _scope,
    )
    from linter.facts import mask_text, scoped_tree

    def may_fire(func: dict, globs: list[str]) -> bool:
        return any(
            src[0] == PAIR or any(name_matches(seg.removesuffix("()"), globs) for seg in src[1:])
            for _, _, src in func["a"]
        )

    fork = {"SHD302": {"first-rank-modules": ["tok_emb*"], "last-rank-modules": ["*out_proj"]}}
    left_out = 0
    for path, text, tree in parsed_corpus_files():
        for options in ({}, fork):
            own = options.get("SHD302", {})
            globs = [*own.get("first-rank-modules", DEFAULT_FIRST_RANK), *own.get("last-rank-modules", DEFAULT_LAST_RANK)]
            spans, nested = _scope(text, options), _scan_scope(text, options)
            if spans is None:
                assert nested is None
                continue
            want = PpAliasShapes.collect(scoped_tree(tree, text, spans), text, "pkg.m", "pkg/m.py")["funcs"]
            masked = scoped_tree(ast.parse(mask_text(text, nested)), text, nested)
            for view in (masked, scoped_tree(tree, text, nested)):
                got = PpAliasShapes.collect(view, text, "pkg.m", "pkg/m.py")["funcs"]
                assert all(f in want for f in got), path.name
                assert [f for f in want if may_fire(f, globs)] == [f for f in got if may_fire(f, globs)], path.name
            left_out += len(nested) - len(spans)
    assert left_out >= 5, "the corpus must hold classes the scan scope narrows"


def test_shd301s_scan_scope_leaves_out_methods_and_reads_the_same() -> None:
    """SHD301's scan readers (its ast gate, ``pp_payload_shapes``,
    ``pp_receivers``) also leave out the methods of a kept class whose text
    holds no word its scope looks for and no configured receiver factory or
    method (``scan_scope``). On every corpus file, with the default and with
    a fork's names, whether the text is compiled masked to the scan scope or
    whole: the methods that may drop taps or return a keyed payload under
    those names, with their classes' bases, own flags and receiver layouts,
    the capture setters and the receivers recorded are the top-level
    scope's. (A method left out may have been recorded, for a context the
    record cannot enumerate: the gate erred towards a finding there, which
    the rule, reading payload calls and last-rank tests by name, cannot
    make without one of the words.)"""
    from corpus_harness import parsed_corpus_files

    from linter.facts import mask_text, scoped_tree

    fork = {
        "SHD301": {
            "payload-classes": ["StageHandoff"],
            "last-rank-accessors": ["is_tail_stage"],
            "receiver-methods": ["alloc_handoff"],
        }
    }

    def read(view: ast.Module, text: str, options: dict) -> tuple:
        """What the facts gate asks of the facts under these options: per
        class with a method that may drop taps or return a keyed payload,
        its bases, own flags, those methods and its receiver's layouts."""
        opts = {k: o.default for k, o in PpPayloadDropsTensors.options.items()}
        opts.update(options.get("SHD301", {}))
        shapes = payload_mod.PpPayloadShapes.collect(view, text, "pkg.m", "pkg/m.py")
        classes = []
        for c in shapes["classes"]:
            live = [m for m in c["methods"] if payload_mod._may_drop(m, opts) or payload_mod._payload_keys(m, opts)]
            if live:
                layouts = payload_mod._own_layouts(c["recv"], opts) if "recv" in c else None
                classes.append((c["bases"], c["own"], live, layouts))
        receivers = payload_mod.PpReceiverFacts.collect(view, text, "pkg.m", "pkg/m.py")
        return classes, shapes.get("cs"), receivers

    narrowed = 0
    for path, text, tree in parsed_corpus_files():
        for options in ({}, fork):
            spans, nested = payload_mod._scope(text, options), payload_mod._scan_scope(text, options)
            if spans is None:
                assert nested is None
                continue
            want = read(scoped_tree(tree, text, spans), text, options)
            masked = scoped_tree(ast.parse(mask_text(text, nested)), text, nested)
            for view in (masked, scoped_tree(tree, text, nested)):
                assert read(view, text, options) == want, path.name
            narrowed += len(nested) - len(spans)
    assert narrowed >= 5, "the corpus must hold classes the scan scope narrows"


def test_shd301s_scan_scope_keeps_a_configured_receiver_method() -> None:
    """A method named by ``receiver-methods`` holds no payload word and is
    still read: its returns tell the class's receiver (here opaque, so no
    key mismatch can be claimed), which the facts gate compares."""
    from linter.facts import mask_text, scoped_tree

    text = textwrap.dedent(
        """
        class Stage:
            def forward(self, x):
                if not self.pp.is_tail_stage:
                    return StageHandoff({"hidden": x, "residual": x})
                return x

            def alloc_handoff(self, batch):
                return self.buffers[batch]

            def unrelated(self):
                return 1
        """
    ).lstrip("\n")
    fork = {
        "SHD301": {
            "payload-classes": ["StageHandoff"],
            "last-rank-accessors": ["is_tail_stage"],
            "receiver-methods": ["alloc_handoff"],
        }
    }
    nested = payload_mod._scan_scope(text, fork)
    assert nested is not None
    kept = [text[a:b].strip().split("\n")[0] for a, b in nested]
    assert kept == ["class Stage:", "def forward(self, x):", "def alloc_handoff(self, batch):"]
    opts = {k: o.default for k, o in PpPayloadDropsTensors.options.items()}
    opts.update(fork["SHD301"])
    view = scoped_tree(ast.parse(mask_text(text, nested)), text, nested)
    [shape] = payload_mod.PpPayloadShapes.collect(view, text, "pkg.m", "pkg/m.py")["classes"]
    assert payload_mod._own_layouts(shape["recv"], opts) == []  # opaque: the receiver is read
