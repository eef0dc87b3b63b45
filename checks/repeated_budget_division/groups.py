"""Which parallel group a size names, what kind of budget a name is, and which
groups own a share of which kind: what tells a budget split twice over one
group (or over a group that owns none of it) from a correct nested split.

Engines spell one group many ways (`dp_size`, `attn_dp_size`,
`data_parallel_size`, `get_dp_world_size()`, `self.dp_size if
enable_dp_attention else 1`); the group is what two splits are compared on.
"""

from __future__ import annotations

import re

DEFAULT_BUDGETS = tuple(
    "num_blocks num_gpu_blocks num_cpu_blocks *_budget *memory* *_bytes max_num_* max_total_*"
    " max_running_requests"
    # per-batch token budgets split over attention-DP ranks (SGLang's
    # `chunked_prefill_size // dp_size`), state-pool sizes, capacities
    " chunked_prefill_size max_prefill_tokens *cache_size *_capacity".split()
)

# Parallel-group sizes. `*_tp_size`-style prefixes cover SGLang's `attn_tp_size`,
# `moe_ep_size`, `attn_dp_size`. Sizes that are not parallel groups (`page_size`,
# `block_size`, `ring_size`) are deliberately absent.
DEFAULT_SIZES = tuple(
    "dp_size ep_size tp_size pp_size cp_size dcp_size pcp_size *_dp_size *_ep_size *_tp_size"
    " *_pp_size *_cp_size world_size *_world_size *_parallel_size".split()
)

# The group a size names, from its words: `attn_dp_size`, `dp_world_size`,
# `data_parallel_size` are all the data-parallel group. Context parallelism
# (prefill `cp`, decode `dcp`, `pcp`) splits a sequence: one group here.
_GROUP_WORDS = (
    ("dp", re.compile(r"(^|_)(dp|data_parallel|data)(_|$)")),
    ("ep", re.compile(r"(^|_)(ep|expert_parallel|expert_model_parallel|expert)(_|$)")),
    ("pp", re.compile(r"(^|_)(pp|pipeline_parallel|pipeline_model_parallel|pipeline)(_|$)")),
    ("cp", re.compile(r"(^|_)(cp|dcp|pcp|context_parallel|decode_context_parallel)(_|$)")),
    ("tp", re.compile(r"(^|_)(tp|tensor_parallel|tensor_model_parallel|tensor)(_|$)")),
)

# The groups that own a share of each kind of budget: each data-parallel
# replica keeps its own KV cache and serves its own requests; pipeline stages
# run micro-batches (SGLang's `max_running_requests // pp_size`) and, in vLLM
# V0, one KV cache per virtual engine; context-parallel ranks hold a slice of
# every sequence's tokens. Tensor and expert ranks hold the same number of
# blocks, slots and tokens as their peers: a split over them is never a share.
OWNERS = {
    "kv": frozenset({"dp", "pp", "cp"}),
    "requests": frozenset({"dp", "pp"}),
    "tokens": frozenset({"dp", "cp"}),
}


def group_of(size_name: str) -> str:
    """The parallel group a size name stands for (`dp`, `ep`, `pp`, `cp`,
    `tp`, `world`), else the name itself (a configured size: a group of its
    own that owns no share)."""
    name = size_name.lower().removeprefix("get_").removesuffix("()")
    for group, words in _GROUP_WORDS:
        if words.search(name):
            return group
    if name.endswith("world_size"):
        return "world"
    return name


def budget_kind(budget_name: str) -> str:
    """`tokens`, `requests` or `kv` (blocks, memory, bytes, pools)."""
    leaf = budget_name.rsplit(".", 1)[-1].lower()
    if "token" in leaf or "prefill" in leaf:
        return "tokens"
    if any(w in leaf for w in ("seq", "req", "request", "batch")):
        return "requests"
    return "kv"


def wrong_groups(budget: str, groups: list[str]) -> tuple[str, str] | None:
    """Why splits over ``groups`` (in order) are not one share per owning
    group: ``("repeat", group)`` when one group splits it twice (the world
    group covers every other), ``("owns-none", group)`` when a group owns no
    share of this kind of budget; None for a correct nested split."""
    seen: list[str] = []
    for g in groups:
        if g in seen or (seen and (g == "world" or "world" in seen)):
            return ("repeat", g)
        seen.append(g)
    owners = OWNERS[budget_kind(budget)]
    for g in groups:
        if g not in owners:
            return ("owns-none", g)
    return None
