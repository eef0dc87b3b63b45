"""Gate shape: two splits of a budget that only appears as an attribute."""


def share(cache_cfg, dp_size, ep_size):
    per_replica = cache_cfg.num_gpu_blocks // dp_size
    return per_replica // ep_size  # error: SHD401
