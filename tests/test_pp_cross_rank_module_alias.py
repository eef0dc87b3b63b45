"""SHD302 pp-cross-rank-module-alias as a user sees it: messages that name
both ends, options, projects without pipeline ranks, and the text its files
must hold (``Rule.needles``)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from corpus_harness import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from pp_rule_runs import check_one, run, write

from checks.pp_cross_rank_module_alias import PpCrossRankModuleAlias
from checks.pp_cross_rank_module_alias.pipeline_layout import pipeline_layout
from linter.scan import check_source, gate_of

ALIAS = CORPUS / "pp_cross_rank_module_alias"
NEEDLES = PpCrossRankModuleAlias.needles



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

            def forward(self, input_ids):
                return self.lm_head(self.embed_tokens(input_ids))
        """
    )
    assert not NEEDLES.match(model_file)
    assert NEEDLES.match(
        "draft.model.embed_tokens = target.model.embed_tokens\n"
    )


def test_configured_module_names_open_the_gates_of_a_file_without_a_default_name(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "m.py": """
                def wire(draft, target):
                    draft.token_table = target.Token_Table

                def tie(model):
                    model.lm_head.weight = model.embed_tokens.weight

                def count(x):
                    return x + 1
            """
        },
    )
    assert run(tmp_path, "SHD302") == []
    options = {"first-rank-modules": ["token_tab*"]}
    assert [d.span.line for d in run(tmp_path, "SHD302", **options)] == [3]
    # libcst reads the definitions that hold a name's literal part (any case)
    # and the module-level code
    text = (tmp_path / "m.py").read_text()
    file, definition = PpCrossRankModuleAlias.declared_needles(options)
    assert file.match(text) and definition is not None
    source = check_source(text, "m.py", [gate_of(PpCrossRankModuleAlias, options)])
    assert "def wire" in source and "x + 1" not in source
    # a getattr key spelled with an escape holds no literal part
    escaped = 'def wire(d, t):\n    d.vocab = getattr(t, "token\\x5ftable")\n'
    assert check_one(escaped, "SHD302", **options) and file.match(escaped)
    # a glob with no literal part: every file, every definition
    file, definition = PpCrossRankModuleAlias.declared_needles({"first-rank-modules": ["*"]})
    assert file.match("x = 1\n") and definition is None


def test_guards_follow_the_guard_names_option(tmp_path: Path) -> None:
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
    assert run(tmp_path, "SHD302") == []  # guarded
    assert [d.span.line for d in run(tmp_path, "SHD302", **{"guard-names": ["n_stages"]})] == [6]
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
    assert len(run(tmp_path, "SHD302")) == 1
    (tmp_path / "m.py").write_text((tmp_path / "m.py").read_text().replace("tp_group", "pp_group"))
    assert run(tmp_path, "SHD302", **{"guard-names": []}) == []


def test_a_starred_end_of_the_pair_is_borrowed(tmp_path: Path) -> None:
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
    assert len(run(tmp_path, "SHD302")) == 1


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
        assert NEEDLES.match(text), text


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
        assert NEEDLES.match(text), text
        assert NEEDLES.match(text.replace("\n", "\r\n")), text


def test_alias_text_gate_drops_mentions_that_are_no_source() -> None:
    # a module called with arguments, subscripted, constructed, compared,
    # read for a value (``.dtype``), or an operand
    for line in [
        "h = self.embed_tokens(input_ids)",
        "h = self.model.get_input_embeddings(input_ids)",
        "x = self.get_input_embeddings()(input_ids)",
        "w = self.lm_head.weight[0]",
        "self.embed_tokens = VocabParallelEmbedding(v, h)",
        "same = self.lm_head is not self.model.embed_tokens.weight.data.T",
        "dtype = self.model.embed_tokens.weight.dtype",
        "n = self.lm_heads + 1",
        "# self.draft.embed_tokens = self.embed_tokens (a comment)",
    ]:
        text = f"def f(self, input_ids, hidden, layers):\n    {line}\n"
        assert not NEEDLES.match(text), line


def test_alias_text_gate_stays_linear_on_comment_banners() -> None:
    import time

    for head in ("x = (\n", "x = t.", "getattr(", "x = t.lm_head"):
        text = head + "#" * 5000 + "\n" + "x" * 10
        t = time.process_time()
        NEEDLES.match(text)
        assert time.process_time() - t < 0.5


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
    got = pipeline_layout(
        ast.parse(
            "if get_pp_group().is_first_rank:\n"
            "    self.wte = VocabParallelEmbedding(v, h)\n"
            "else:\n"
            "    self.wte = PPMissingLayer()\n"
            "self.tok_embeddings: nn.Module = nn.Embedding(v, h)\n"
            "ok = mapping.is_first_pp_rank()\n"
            "note = 'an Embedding(v) in a string is no construction, is_last_rank no marker'\n"
            "# nor is last_pp_rank in a comment\n"
        )
    )
    assert got == {
        "m": ["PPMissingLayer", "is_first_pp_rank", "is_first_rank"],
        "e": ["tok_embeddings", "wte"],
    }
    assert pipeline_layout(ast.parse("x = first_stage_model\n")) is None


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


def test_a_method_that_refuses_pipeline_parallelism_guards_the_class(tmp_path: Path) -> None:
    # the validator holds no alias: the check still reads it (the gate keeps
    # the definitions that may refuse), so the alias in another method is
    # excused, as with every gate closed
    source = """
        class Drafter:
            def validate(self, config):
                if config.parallel_config.pipeline_parallel_size > 1:
                    raise NotImplementedError("no PP for this drafter")

            def load(self, target):
                self.model.embed_tokens = target.model.embed_tokens
        """
    write(tmp_path, {"m.py": source})
    assert run(tmp_path, "SHD302") == []
    assert check_one(textwrap.dedent(source), "SHD302") == []
    unguarded = source.replace("raise NotImplementedError", "print")
    write(tmp_path, {"m.py": unguarded})
    assert [d.span.line for d in run(tmp_path, "SHD302")] == [8]


def test_one_finding_per_borrowed_module_with_the_other_sites_as_notes() -> None:
    diags = [d for d in run(ALIAS, "SHD302") if d.path == "edge_relatives.py" and "one_cause" in d.message]
    assert len(diags) == 1
    d = diags[0]
    sites = sorted(n.span.line for n in d.notes if n.span is not None)
    assert len(sites) == 2 and all(line > d.span.line for line in sites)
    # the statement reported installs both ends; the others only the embedding
    assert "together with" in d.message
    assert not any("together with" in n.message for n in d.notes if n.span is not None)


def test_the_head_is_named_only_where_it_is_borrowed(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "m.py": """
                def wire(worker):
                    table, head = worker.target.get_embed_and_head()
                    worker.draft.set_embed(table)
            """
        },
    )
    diags = run(tmp_path, "SHD302")
    assert len(diags) == 1
    assert "[1]" not in diags[0].message and "LM head" not in diags[0].message
