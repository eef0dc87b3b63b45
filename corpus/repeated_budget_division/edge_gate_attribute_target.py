"""Gate shape: one split, stored into the attribute it was read from."""


def shrink(cache_cfg, dp_size):
    share = cache_cfg.num_blocks // dp_size
    cache_cfg.num_blocks = share  # error: SHD401
