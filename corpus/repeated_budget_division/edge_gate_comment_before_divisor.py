"""The only split of this file puts its divisor on the line after a comment:
the text prefilter, reading backwards from `ep_size`, meets the comment
before the `(` and cannot tell whether the `#` starts one, so it assumes the
name may be a divisor (it used to stop there and let the file through
unread)."""


def shard_kv_pool(pool_cfg, dp_size, ep_size):
    per_dp = pool_cfg.num_gpu_blocks // dp_size
    return per_dp // (  # one share per replica # error: SHD401
        ep_size
    )


def count_kv_heads(model_cfg, tp_size):
    return model_cfg.num_kv_heads // (  # heads are not a budget
        tp_size
    )
