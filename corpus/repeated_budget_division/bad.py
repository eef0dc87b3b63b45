"""KV-cache planning for an MoE model served with data + expert parallelism."""


def plan_kv_cache(cache_config, parallel_config):
    dp_size = parallel_config.data_parallel_size
    ep_size = parallel_config.expert_parallel_size
    # The data-parallel replica owns a share of the global block budget ...
    blocks_per_replica = cache_config.num_gpu_blocks // dp_size
    # ... and the expert-parallel path splits it again: ranks now disagree.
    blocks_per_rank = blocks_per_replica // ep_size  # error: SHD401
    return [0] * blocks_per_rank


class CacheConfig:
    def __post_init__(self):
        # Correct the first time, wrong after `dataclasses.replace(cfg, ...)`.
        self.num_gpu_blocks //= self.dp_size  # error: SHD401
