"""The budget is split once, per the one dimension that owns a share of it,
into a new name; ranks agree on the result before the block table is built."""

import torch
import torch.distributed as dist


def plan_kv_cache(cache_config, parallel_config, group):
    dp_size = parallel_config.data_parallel_size
    # Expert parallelism shares the replica's view: no second split.
    blocks_per_replica = cache_config.num_gpu_blocks // dp_size
    agreed = torch.tensor([blocks_per_replica])
    dist.all_reduce(agreed, op=dist.ReduceOp.MIN, group=group)
    return [0] * int(agreed.item())


class CacheConfig:
    def __post_init__(self):
        # Derived, never written back over the global value.
        self.num_gpu_blocks_per_replica = self.num_gpu_blocks // self.dp_size
