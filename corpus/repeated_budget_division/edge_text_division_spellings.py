"""Text-gate shapes: a budget split twice where an older text prefilter saw
no budget word next to a division -- a product before the division, a
ceiling-division call with no `/` in the file, and a budget copied into a
local name on one line and split on later ones."""


def product_first(cache_cfg, ep_size):
    return (cache_cfg.num_blocks * 2) // get_dp_size() // ep_size  # error: SHD401


def ceil_calls(num_gpu_blocks, dp_size, ep_size):
    return ceildiv(div_round_up(num_gpu_blocks, dp_size), ep_size)  # error: SHD401


def through_locals(cache_cfg, dp_size, ep_size):
    total = cache_cfg.num_cpu_blocks
    per_replica = total // dp_size
    return per_replica // (  # error: SHD401
        ep_size
    )
