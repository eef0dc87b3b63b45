"""Gate shape: the first split reaches the second through a clamp and a copy."""


def share(cache_cfg, dp_size, ep_size):
    per_replica = max(1, cache_cfg.num_gpu_blocks // dp_size)
    per_rank = per_replica
    return -per_rank // ep_size  # error: SHD401
