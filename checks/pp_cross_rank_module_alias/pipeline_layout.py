"""The ``pipeline_layout`` facts: whether the project places modules on
pipeline ranks at all.

What an engine that partitions its models across pipeline ranks writes
somewhere: the placeholder class, or a test of the rank (vLLM and SGLang:
``get_pp_group().is_first_rank``, ``PPMissingLayer``; Megatron:
``is_pipeline_first_stage``; DeepSpeed: ``is_first_stage``; TensorRT-LLM:
``mapping.is_first_pp_rank()``), as part of an identifier. An engine without
it (every rank holds the whole model, as in LMDeploy's PyTorch engine) still
builds input embeddings in its model files.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from linter.astwalk import ast_dotted, ast_walk
from linter.api import FactCollector, Needles, name_matches

PIPELINE_MARKERS = (
    "PPMissingLayer",
    "first_rank",
    "last_rank",
    "is_first_stage",
    "is_last_stage",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
    "first_pp_rank",
    "last_pp_rank",
    "pp_rank",
)

# How many modules must build an input embedding before a project without a
# pipeline marker counts as an engine without pipeline parallelism: a draft
# model file linted alone (or with a few neighbours) builds its own embedding
# and need not mention the pipeline, while a whole engine has many models.
MIN_EMBEDDING_MODULES = 5


def _identifiers(tree: ast.Module) -> set[str]:
    """Every identifier the module's code names: names, attributes,
    definitions, parameters, keywords and the parts of imported names."""
    out: set[str] = set()
    for n in ast_walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.keyword) and n.arg is not None:
            out.add(n.arg)
        elif isinstance(n, ast.alias):
            out.update(n.name.split("."))
            if n.asname:
                out.add(n.asname)
        elif isinstance(n, ast.ImportFrom) and n.module:
            out.update(n.module.split("."))
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return out


def _built_embeddings(tree: ast.Module) -> set[str]:
    """The names and attributes assigned an ``*Embedding*(...)`` construction
    (``self.embed_tokens = VocabParallelEmbedding(...)``, ``self.wte =
    nn.Embedding(...)``: the callee's last part holds ``Embedding``)."""
    out: set[str] = set()
    for n in ast_walk(tree):
        if not isinstance(n, (ast.Assign, ast.AnnAssign)) or not isinstance(n.value, ast.Call):
            continue
        if "Embedding" not in (ast_dotted(n.value.func) or "").rpartition(".")[2]:
            continue
        for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
            if isinstance(t, ast.Attribute):
                out.add(t.attr)
            elif isinstance(t, ast.Name):
                out.add(t.id)
    return out


def pipeline_layout(tree: ast.Module, text: str | None = None) -> dict[str, list[str]] | None:
    """The pipeline markers (whole identifiers holding one) and the names
    assigned an embedding construction in the module (``tree``, parsed from
    ``text``: a part whose word the text lacks is not looked for)."""
    markers: set[str] = set()
    if text is None or any(m in text for m in PIPELINE_MARKERS):
        markers = {i for i in _identifiers(tree) if any(m in i for m in PIPELINE_MARKERS)}
    embeds = _built_embeddings(tree) if text is None or "Embedding" in text else set()
    if not markers and not embeds:
        return None
    return {"m": sorted(markers), "e": sorted(embeds)}


@dataclass(frozen=True)
class PipelineLayoutIndex:
    markers: frozenset[str]
    # per module, the attributes it assigns an embedding construction
    embeds: tuple[frozenset[str], ...]

    def without_pipeline(self, first_rank_modules: Sequence[str]) -> bool:
        """Whether the project is an engine without pipeline parallelism,
        where every rank holds the whole model: several of its modules build
        a first-rank module (an embedding) and none places anything on a
        pipeline rank."""
        if self.markers:
            return False
        building = sum(any(name_matches(e, first_rank_modules) for e in es) for es in self.embeds)
        return building >= MIN_EMBEDDING_MODULES


class PipelineLayout(FactCollector):
    """Per module, the pipeline markers and the embeddings built (see
    :func:`pipeline_layout`)."""

    name = "pipeline_layout"
    version = 2  # 2: read on ast (identifiers of the code, not of comments or strings)
    needles = Needles(any_of=((*PIPELINE_MARKERS, "Embedding"),))

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return pipeline_layout(tree, text)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> PipelineLayoutIndex:
        data = [d for d in per_module.values() if d]
        markers = frozenset(m for d in data for m in d.get("m", ()))
        return PipelineLayoutIndex(markers, tuple(frozenset(d["e"]) for d in data if d.get("e")))
