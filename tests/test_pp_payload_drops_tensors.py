"""SHD301 pp-payload-drops-tensors as a user sees it: messages that name the
real variables, related locations in other files, options, editor buffers,
and the text its files must hold (``Rule.needles``)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

from corpus_harness import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from pp_rule_runs import check_one, run, write

from checks.pp_payload_drops_tensors import PpPayloadDropsTensors
from checks.pp_payload_drops_tensors.capability import capability_reads
from linter.config import Config
from linter.engine import Engine
from linter.registry import load_registry
from linter.scan import check_source, gate_of
from linter.types import Severity

PAYLOAD = CORPUS / "pp_payload_drops_tensors"
NEEDLES = PpPayloadDropsTensors.needles



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
    assert not NEEDLES.match("def f(x):\n    return x + 1\n")
    assert NEEDLES.match("return IntermediateTensors({})")


# the fork of corpus custom_names/ without its class spelled with the default
# names (nor their import), and a function that holds no name at all
_FORK_ONLY = (PAYLOAD / "custom_names" / "engine_fork.py").read_text(encoding="utf-8")
_FORK_ONLY = _FORK_ONLY[: _FORK_ONLY.index("class UpstreamSpelling")].replace(
    "from vllm.sequence import IntermediateTensors\n", ""
) + "def unrelated(x):\n    return x + 1\n"
_FORK_ERRORS = [n for n, line in enumerate(_FORK_ONLY.splitlines(), 1) if "# error: SHD301" in line]
_FORK_OPTIONS = {
    "payload-classes": ["StageHandoff"],
    "last-rank-accessors": ["IS_TAIL_*"],
    "capability-flags": ["relays_draft_taps"],
    "accumulator-patterns": ["*probe*"],
}


def test_configured_names_open_the_gates_of_a_file_without_a_default_name(tmp_path: Path) -> None:
    write(tmp_path, {"fork.py": _FORK_ONLY})
    assert not NEEDLES.match(_FORK_ONLY)
    assert run(tmp_path, "SHD301") == []
    diags = run(tmp_path, "SHD301", **_FORK_OPTIONS)
    assert [d.span.line for d in diags] == _FORK_ERRORS and len(_FORK_ERRORS) == 2
    # the accessor alone (its literal part, in any case) is enough too
    alone = run(tmp_path, "SHD301", **{**_FORK_OPTIONS, "payload-classes": []})
    assert [d.span.line for d in alone] == _FORK_ERRORS


def test_the_check_reads_the_definitions_that_hold_a_configured_name() -> None:
    file, definition = PpPayloadDropsTensors.declared_needles(_FORK_OPTIONS)
    assert file.match(_FORK_ONLY) and definition is not None
    source = check_source(_FORK_ONLY, "fork.py", [gate_of(PpPayloadDropsTensors, _FORK_OPTIONS)])
    assert "class ForkDecoder(" in source and "import" in source and "x + 1" not in source
    # an accessor glob with no literal part: every file, every definition
    file, definition = PpPayloadDropsTensors.declared_needles({**_FORK_OPTIONS, "last-rank-accessors": ["*"]})
    assert file.match("x = 1\n") and definition is None


_DROPPING_CHILD = (
    "from pkg.base import Base\nfrom vllm.sequence import IntermediateTensors\n\n"
    "class Child(Base):\n" + _dropping_method()
)


def test_a_claim_under_a_configured_flag_name_in_another_file(tmp_path: Path) -> None:
    # the claim sits in another file under a project-specific flag name
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": "class Base:\n    relays_draft_taps = True\n",
            "pkg/child.py": _DROPPING_CHILD,
        },
    )
    assert run(tmp_path, "SHD301", **{"require-claim": True}) == []  # default flag: nothing claims
    # (without require-claim the unclaimed drop is a warning)
    assert [d.severity for d in run(tmp_path, "SHD301")] == [Severity.WARNING]
    diags = run(tmp_path, "SHD301", **{"capability-flags": ["relays_draft_taps"]})
    assert [d.path for d in diags] == ["pkg/child.py"]
    assert diags[0].notes[0].path == "pkg/base.py" and diags[0].severity == Severity.ERROR


def test_a_class_defined_in_a_function_is_checked(tmp_path: Path) -> None:
    # (the "classes" index skips classes defined in functions: the claim is
    # read from the class itself)
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
    assert len(run(tmp_path, "SHD301")) == 1


def test_payload_keys_are_compared_with_the_receivers(tmp_path: Path) -> None:
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
    assert run(tmp_path, "SHD301") == []  # the keys agree
    write(tmp_path, {"m.py": model.replace("KEYS", '"hidden_states": h')})
    diags = run(tmp_path, "SHD301")
    assert len(diags) == 1 and "misses 'residual'" in diags[0].message


def test_the_rank_context_follows_the_accessor_option(tmp_path: Path) -> None:
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
    assert [d.span.line for d in run(tmp_path, "SHD301")] == [13]  # ``return payload``
    assert run(tmp_path, "SHD301", **{"last-rank-accessors": ["is_tail"]}) == []
    # with the test negated the plain return is the last rank's and the
    # early one the other ranks' payload, which carries the taps
    (tmp_path / "m.py").write_text(
        (tmp_path / "m.py").read_text().replace("if get_pp_group()", "if not get_pp_group()")
    )
    assert run(tmp_path, "SHD301") == []


def test_a_receiver_method_in_the_class_allocates_the_keys(tmp_path: Path) -> None:
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
    assert run(tmp_path, "SHD301") == []  # the same keys
    write(tmp_path, {"m.py": model.replace("RECV", '"hidden_states": h')})
    diags = run(tmp_path, "SHD301")
    assert len(diags) == 1 and "adds 'residual'" in diags[0].message
    # under another name the method is not a receiver: nothing to compare
    assert run(tmp_path, "SHD301", **{"receiver-methods": ["alloc_buffers"]}) == []


def test_keywords_are_names_as_libcst_reads_them(tmp_path: Path) -> None:
    # libcst reads ``None`` as a name: with every name an accumulator and
    # every call a helper, ``self.wait(None)`` "adds to" the ``None`` the
    # last rank returns
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
    diags = run(tmp_path, "SHD301", **options)
    assert len(diags) == 1 and "returns `None`" in diags[0].message


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
    # read as an attribute it counts too; assigned, it is no read
    write(tmp_path, {"spec/check.py": "def verify(model):\n    model.supports_aux_hidden_states_over_pp = False\n"})
    assert [d.severity for d in run(tmp_path, "SHD301")] == [Severity.WARNING]
    write(tmp_path, {"spec/check.py": "def verify(model):\n    return model.supports_aux_hidden_states_over_pp\n"})
    assert run(tmp_path, "SHD301") == []
    # a flag of another name read elsewhere says nothing about this one
    assert [d.severity for d in run(tmp_path, "SHD301", **{"capability-flags": ["relays_taps"]})] == [
        Severity.WARNING
    ]


# -- the prefilter's shortcuts answer as the plain searches do ------------------------


_PAYLOAD_NAMES = (
    "IntermediateTensors",
    "PPProxyTensors",
    "is_last_rank",
    "last_stage",
    "last_pp_rank",
)


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
        assert NEEDLES.match(text), (opts, text)


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
        assert NEEDLES.match(text), (extra, text)


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
            assert NEEDLES.match(text), (accessor, text)


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
    assert not NEEDLES.match(text)
    assert NEEDLES.match(text + "if not last_pp_rank:\n    pass\n")
    assert NEEDLES.match(text + "x = IntermediateTensors(tensors)\n")


def test_payload_text_gate_stays_linear_on_comment_banners() -> None:
    import time

    for head in (
        "IntermediateTensors  ",
        "is_last_rank  ",
    ):
        text = head + "#" * 5000 + "\n" + "x" * 10
        t = time.process_time()
        NEEDLES.match(text)
        assert time.process_time() - t < 0.5


def test_a_base_class_in_the_same_file_gives_its_claim(tmp_path: Path) -> None:
    # the base's flag comes from the class facts (read on the file's ast)
    base = "class Base:\n    supports_aux_hidden_states_over_pp = True\n\n\n"
    write(tmp_path, {"m.py": base + "class Child(Base):\n" + _dropping_method()})
    diags = run(tmp_path, "SHD301")
    assert [d.severity for d in diags] == [Severity.ERROR]
    assert diags[0].notes[0].path == "m.py" and diags[0].notes[0].span.line == 2


def test_a_syntax_error_outside_the_definitions_read_is_still_reported(tmp_path: Path) -> None:
    text = "class Model:\n" + _dropping_method() + "\n\ndef broken(:\n    pass\n"
    write(tmp_path, {"model.py": text})
    result = Engine(Config(root=tmp_path, select=("SHD000", "SHD301")), load_registry(), jobs=1).run([tmp_path])
    line = text.splitlines().index("def broken(:") + 1
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("SHD000", line)]


def test_capability_reads_are_reads_of_the_code() -> None:
    text = textwrap.dedent(
        """
        # model.supports_in_a_comment is no read
        def verify(model, inner):
            model.supports_assigned = True
            ok = getattr(model, "supports_by_getattr", False) and inner.supports_read
            return ok, "model.supports_in_a_string"
        """
    )
    assert capability_reads(ast.parse(text)) == ["supports_by_getattr", "supports_read"]


# -- reachability per runner path ------------------------------------------------


RUNNERS = PAYLOAD / "runner_paths"


def _marked(root: Path, rel: str, text: str) -> int:
    """The line of ``root/rel`` that holds ``text``."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_an_open_runner_path_is_one_finding_with_every_model_it_breaks_as_a_note() -> None:
    diags = run(RUNNERS, "SHD301")
    at_path = [d for d in diags if d.path.endswith("legacy_runner.py")]
    assert len(at_path) == 1
    d = at_path[0]
    assert d.severity == Severity.ERROR
    assert d.span.line == _marked(RUNNERS, "engine/worker/legacy_runner.py", "def prepare_draft_inputs")
    assert "`LegacyStepRunner.prepare_draft_inputs`" in d.message and "2 models" in d.message
    assert "`supports_aux_hidden_states_over_pp`" in d.message and "crashes" in d.message
    # each model's dropping return is a related location
    located = {(n.path, n.span.line) for n in d.notes if n.path and n.span}
    short = 'return IntermediateTensors({"hidden_states": hidden, "residual": resid})'  # (its first)
    assert located == {
        ("engine/models/decoder.py", _marked(RUNNERS, "engine/models/decoder.py", short)),
        ("engine/models/router.py", _marked(RUNNERS, "engine/models/router.py", "IntermediateTensors({")),
    }
    # the fix is at the path, like the path that does check
    fix = d.notes[-1].message
    assert "`LegacyStepRunner.prepare_draft_inputs`" in fix and "`enable_draft_taps`" in fix and "raise" in fix


def test_a_model_that_claims_the_flag_keeps_its_own_finding_and_the_unclaimed_ones_none() -> None:
    models = [d for d in run(RUNNERS, "SHD301") if "/models/" in d.path]
    assert [d.message.split("`")[1] for d in models] == ["TrimmedCarryingDecoder.forward"]
    assert "inherited from `engine.models.decoder.CarryingDecoder`" in models[0].message
    assert not any("legacy_runner.py" in (n.path or "") for n in models[0].notes)


def test_files_checked_apart_give_each_root_cause_once() -> None:
    """However the project's files are split between runs (an editor, a
    pre-commit hook on the changed files), the union is the whole run's
    findings: the model file never repeats what the path's file reports."""
    whole = {(d.path, d.span.line) for d in run(RUNNERS, "SHD301")}
    apart = set()
    for f in sorted(RUNNERS.rglob("*.py")):
        result = Engine(Config(root=RUNNERS, select=("SHD301",)), load_registry(), jobs=1).run([f])
        assert not result.errors
        apart |= {(d.path, d.span.line) for d in result.diagnostics}
    assert apart == whole and len(whole) == 2


def test_the_path_finding_follows_the_models_on_disk(tmp_path: Path) -> None:
    """The models a path's finding names are read from their files (cached
    per file): fixing one model drops its note, fixing the last one the finding."""
    from linter.cache import Cache

    for f in RUNNERS.rglob("*"):
        if f.is_file():
            dest = tmp_path / f.relative_to(RUNNERS)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")

    def at_path() -> list[str]:
        engine = Engine(Config(root=tmp_path, select=("SHD301",)), load_registry(), jobs=1, cache=Cache(tmp_path / ".c"))
        diags = [d for d in engine.run([tmp_path]).diagnostics if d.path.endswith("legacy_runner.py")]
        return [n.path for d in diags for n in d.notes if n.path]

    assert at_path() == ["engine/models/decoder.py", "engine/models/router.py"]
    router = tmp_path / "engine/models/router.py"
    router.write_text(
        router.read_text().replace('{"hidden_states": h}', '{"hidden_states": h, **self.pack(collected_aux)}')
    )
    assert at_path() == ["engine/models/decoder.py"]
    decoder = tmp_path / "engine/models/decoder.py"
    # (the unclaimed decoder now claims: its finding is its own)
    decoder.write_text(decoder.read_text().replace("class ShortDecoder(nn.Module, TapCollector):", "class ShortDecoder(nn.Module, TapCollector):\n    supports_aux_hidden_states_over_pp = True"))
    assert at_path() == []


def test_a_project_without_the_path_warns_at_the_model(tmp_path: Path) -> None:
    """A model file linted in a project that holds no runner (a vendored
    copy): the model's own warning, as nothing shows the combination refused."""
    write(tmp_path, {"decoder.py": (RUNNERS / "engine/models/router.py").read_text()})
    diags = run(tmp_path, "SHD301")
    assert [d.severity for d in diags] == [Severity.WARNING]
    assert "`RoutedStack.forward`" in diags[0].message


def test_configured_names_report_each_model_with_the_path_as_a_note() -> None:
    """Under configured names (the facts are read with the default ones)
    each unclaimed model keeps its own finding, the open path a note."""
    diags = run(RUNNERS, "SHD301", **{"accumulator-patterns": ["*aux*", "*hidden*", "*tap*", "*captur*", "probes"]})
    models = sorted(d.path for d in diags if "/models/" in d.path)
    assert models == ["engine/models/decoder.py", "engine/models/decoder.py", "engine/models/router.py"]
    assert not any(d.path.endswith("legacy_runner.py") for d in diags)
    unclaimed = [d for d in diags if "ShortDecoder" in d.message]
    assert any(n.path == "engine/worker/legacy_runner.py" for n in unclaimed[0].notes)


def test_every_runner_path_refusing_keeps_an_unclaimed_drop_silent() -> None:
    assert run(PAYLOAD / "runner_paths_refused", "SHD301") == []


def test_the_consequence_is_a_crash_not_a_silent_accuracy_loss() -> None:
    diags = run(PAYLOAD / "stages", "SHD301")
    assert diags
    for d in diags:
        text = " ".join([d.message, *(n.message for n in d.notes)])
        assert "shape mismatch" in text and "missing keys" in text
        assert "silently dropped" not in text


def test_sglang_code_gets_the_sglang_fix(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "runner.py": """
                def configure_capture(model, layers):
                    model.set_eagle3_layers_to_capture(layers)
            """,
            "model.py": """
                from sglang.srt.model_executor.forward_batch_info import PPProxyTensors

                class Stage:
                    def forward(self, hidden, resid):
                        aux_hidden_states = []
                        for block in self.blocks:
                            aux_hidden_states.append(hidden)
                            hidden, resid = block(hidden, resid)
                        if not self.pp_group.is_last_rank:
                            return PPProxyTensors({"hidden_states": hidden, "residual": resid})
                        return hidden, aux_hidden_states
            """,
        },
    )
    diags = run(tmp_path, "SHD301")
    assert len(diags) == 1
    fix = diags[0].notes[-1].message
    assert "PPProxyTensors" in fix and "`configure_capture`" in fix
    assert "pack_local_aux_hidden_states" not in fix and "IntermediateTensors" not in fix
