"""Gate look-alikes: a budget, parallel sizes and divisions in one function,
but no split can reach a second split or a write-back. The ast gate rejects
the whole file; all must stay silent."""


def unrelated_splits(num_blocks, num_heads, dp_size, tp_size):
    # two splits, of two different values
    blocks = num_blocks // dp_size
    heads = num_heads // tp_size
    return blocks // 2, heads


def split_hidden_in_a_call(buffer, world_size, data_parallel_size, query):
    # the split feeds an opaque call; its result is not a share of the budget
    ranks = world_size // data_parallel_size
    num_rdma_bytes = query(num_ranks=ranks)
    buffer.update_buffers(num_rdma_bytes=num_rdma_bytes)


def stored_from_another_budget(self, total_bytes, tp_size):
    # stored into an attribute, but not the one it was read from
    self.staging_bytes = total_bytes // tp_size


def override_names_another_budget(cfg, total_blocks, dp_size):
    # the keyword names a budget the split was not read from
    cfg.update(num_blocks=total_blocks // dp_size)


def second_division_of_an_unsplit_value(num_blocks, dp_size, ep_size):
    # the second division divides a value that was never split
    per_dp = num_blocks // dp_size
    other = num_blocks - 1
    return per_dp, other // ep_size
