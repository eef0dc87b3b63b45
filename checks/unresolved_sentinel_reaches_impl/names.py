"""What SHD201 counts as a parallelism sentinel's name, and as using an
attribute as a size."""

from __future__ import annotations

# What counts as a parallelism sentinel (see the rule's Options): the size or
# rank of a parallel group, from the dimensions (with any prefix before ``_``:
# ``attn_``, ``moe_``) and what of a group an engine leaves unresolved. Left
# out: other sizes (``block_size``, ``page_size``, quantisation ``group_size``),
# counts (``num_kv_splits``: a ``None`` there is an optional field) and matrix
# ranks (``kv_lora_rank``).
PARALLEL_DIMENSIONS = ("tp", "pp", "dp", "ep", "cp", "dcp", "pcp", "sp")
PARALLEL_QUANTITIES = ("size", "rank", "world_size", "group_size", "rank_in_group", "degree")
PARALLEL_SENTINEL_NAMES: tuple[str, ...] = (
    *"world_size *_world_size rank local_rank global_rank rank_in_group *_rank_in_group".split(),
    *"nranks num_ranks *_parallel_size *_parallel_rank *_parallel_rank_local".split(),
    "ulysses_degree",
    "ring_degree",
    *(
        f"{prefix}{dim}_{what}"
        for dim in PARALLEL_DIMENSIONS
        for what in PARALLEL_QUANTITIES
        for prefix in ("", "*_")
    ),
)

# Calls whose positional arguments are tensor shapes or loop bounds: a
# sentinel there is a wrong-sized buffer or an empty loop, not an error.
SIZE_CALLS = frozenset(
    "range empty zeros ones full randn rand view reshape expand new_empty new_zeros new_ones"
    " new_full arange split chunk".split()
)
# libcst operator class names
ARITHMETIC = frozenset("Divide FloorDivide Modulo Multiply Add Subtract Power LeftShift".split())
