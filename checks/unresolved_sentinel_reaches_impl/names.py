"""What SHD201 counts as a parallelism sentinel's name, and as using an
attribute as a size."""

from __future__ import annotations

# What counts as a parallelism sentinel: the size or rank of a parallel group
# (``dcp_world_size``, ``attn_tp_rank``, ``moe_ep_size``, ``tp_group_size``,
# ``data_parallel_rank``, ``world_size``, ``rank``), matched on the attribute's
# last name, any case. Built from the parallel dimensions (tensor, pipeline,
# data, expert, context -- decode and prefill -- and sequence parallelism,
# with any prefix before ``_``: ``attn_``, ``moe_``) and what of a group an
# engine leaves unresolved. Deliberately left out: other sizes
# (``block_size``, ``page_size``, quantisation ``group_size``, ``step_size``),
# counts (``num_kv_splits``, ``num_accept_tokens``: a ``None`` there is an
# optional field, not an unresolved group), and matrix ranks (``kv_lora_rank``).
PARALLEL_DIMENSIONS = ("tp", "pp", "dp", "ep", "cp", "dcp", "pcp", "sp")
PARALLEL_QUANTITIES = ("size", "rank", "world_size", "group_size", "rank_in_group", "degree")
PARALLEL_SENTINEL_NAMES: tuple[str, ...] = (
    "world_size",
    "*_world_size",
    "rank",
    "local_rank",
    "global_rank",
    "rank_in_group",
    "*_rank_in_group",
    "nranks",
    "num_ranks",
    "*_parallel_size",
    "*_parallel_rank",
    "*_parallel_rank_local",
    "ulysses_degree",
    "ring_degree",
    *(f"{prefix}{dim}_{what}" for dim in PARALLEL_DIMENSIONS for what in PARALLEL_QUANTITIES for prefix in ("", "*_")),
)

# Calls whose positional arguments are tensor shapes or loop bounds: a
# sentinel there is a wrong-sized buffer or an empty loop, not an error.
SIZE_CALLS = frozenset(
    {
        "range",
        "empty",
        "zeros",
        "ones",
        "full",
        "randn",
        "rand",
        "view",
        "reshape",
        "expand",
        "new_empty",
        "new_zeros",
        "new_ones",
        "new_full",
        "arange",
        "split",
        "chunk",
    }
)
# libcst operator class names
ARITHMETIC = frozenset(
    {"Divide", "FloorDivide", "Modulo", "Multiply", "Add", "Subtract", "Power", "LeftShift"}
)
