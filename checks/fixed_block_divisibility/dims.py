"""Real model dimensions, the counterexamples SHD102 and SHD103 name.

A fixed block is only wrong if a model someone serves has a width it does
not divide. Each table lists published sizes (from the models' own
``config.json``), in the order a message should prefer them: the first entry
no candidate block divides is the counterexample shown. Per-rank widths are
the published size divided by the tensor-parallel size stated in the entry
(hidden sizes are not split by TP; intermediate sizes are).

Deliberately left out: sizes only a test uses, and token or sequence counts
(their values come from the workload, not from a model; a floor over them
is judged without a table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Dim:
    value: int
    where: str  # the model and the config field (and TP size, for a per-rank width)


# widths a hidden-size-like value takes (not split by TP)
HIDDEN: tuple[Dim, ...] = (
    Dim(2880, "gpt-oss-20b/120b hidden_size"),
    Dim(384, "Kimi K3 latent MoE width per rank at TP=8 (vLLM PR #50458)"),
    Dim(7168, "DeepSeek-V3 / Kimi K2 hidden_size"),
    Dim(3584, "Qwen2.5-7B hidden_size"),
    Dim(5376, "Gemma 3 27B hidden_size"),
    Dim(2560, "Phi-2 / Qwen3-4B hidden_size"),
)

# per-rank intermediate (MLP / expert) widths
INTERMEDIATE: tuple[Dim, ...] = (
    Dim(2880, "gpt-oss-20b/120b intermediate_size (experts kept whole under EP)"),
    Dim(3696, "Qwen2.5-72B intermediate_size 29568 at TP=8"),
    Dim(2368, "Qwen2.5-7B intermediate_size 18944 at TP=8"),
    Dim(96, "Qwen3-30B-A3B moe_intermediate_size 768 at TP=8"),
    Dim(192, "Qwen3-235B-A22B moe_intermediate_size 1536 at TP=8"),
    Dim(1792, "Llama 3 8B intermediate_size 14336 at TP=8"),
)

# attention head dimensions
HEAD: tuple[Dim, ...] = (
    Dim(64, "gpt-oss head_dim"),
    Dim(80, "Phi-2 head_dim (2560 / 32 heads)"),
    Dim(96, "Phi-3-mini head_dim (3072 / 32 heads)"),
    Dim(192, "DeepSeek-V3 qk_head_dim (128 nope + 64 rope)"),
    Dim(576, "DeepSeek-V3 MLA cache width (kv_lora_rank 512 + rope 64)"),
    Dim(256, "Gemma 2/3 head_dim"),
)

# a width whose kind the name does not tell (``K``, ``N``, ``x.shape[-1]``)
# is judged by hidden sizes only, the widths every layer sees (a per-rank
# intermediate size or a head dimension would be a guess about which it is)
TABLES = {"hidden": HIDDEN, "intermediate": INTERMEDIATE, "head": HEAD, "width": HIDDEN}

# default globs (last name component, lower case) of names that hold a model
# dimension; ``x.shape[i]`` / ``x.size(i)`` with ``i`` other than 0 count too
DIMENSION_NAMES: tuple[str, ...] = (
    "*hidden*",
    "*intermediate*",
    "*ffn*",
    "*head_dim*",
    "*head_size*",
    "*headdim*",
    "d_model",
    "*model_dim*",
    "*embed_dim*",
    "dim",
    "*_dim",
    "k",
    "n",
    "size_k",
    "size_n",
    "in_features",
    "out_features",
    "n_cols",
    "num_cols",
)


# block sizes fixed by a number format, not chosen as tiles: MX formats
# (OCP MX: 32 elements per scale), NVFP4 (16), quantisation groups. Requiring
# a width to be a multiple of them is the format's contract, and a gcd would
# change the format: SHD102 leaves them alone.
FORMAT_BLOCK_NAMES: tuple[str, ...] = (
    "*mxfp*",
    "*mx_block*",
    "*scale_block*",
    "*nvfp*",
    "*fp4*",
    "*fp8*",
    "*int4*",
    "*group_size*",
    "*quant*",
)

# a dividend named like a block or a page is not a model width
NOT_DIMENSIONS: tuple[str, ...] = ("*block*", "*page*", "*tile*", "*chunk*", "*topk*", "*top_k*")


def kind_of(name: str) -> str:
    """Which table a dimension named ``name`` draws from."""
    low = name.lower()
    if "head" in low:
        return "head"
    if "intermediate" in low or "ffn" in low or "inter_size" in low:
        return "intermediate"
    if "hidden" in low or "model" in low or "embed" in low:
        return "hidden"
    return "width"


def counterexample(
    kind: str, blocks: Sequence[int], taken: Callable[[int], Sequence[int]] | None = None
) -> Dim | None:
    """The first real dimension of ``kind`` that none of ``blocks``
    divides (whichever the code picks, the requirement fails); None when
    every listed model passes. ``taken(width)``, when given, narrows the
    blocks to those the code can pick for that width (a fallback chain's
    tests)."""
    for d in TABLES[kind]:
        candidates = taken(d.value) if taken is not None else blocks
        if all(b > 0 and d.value % b for b in candidates):
            return d
    return None
