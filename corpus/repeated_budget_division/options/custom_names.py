"""Configured names replace the defaults."""


def configured(kv_pool_blocks, dp_size, replica_count):
    return kv_pool_blocks // dp_size // replica_count  # error: SHD401


def default_budget_not_configured(num_gpu_blocks, dp_size, replica_count):
    return num_gpu_blocks // dp_size // replica_count


def default_size_not_configured(kv_pool_blocks, dp_size, ep_size):
    return kv_pool_blocks // dp_size // ep_size
