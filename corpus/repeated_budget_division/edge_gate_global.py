"""Gate shape: a module-level budget divided in place through `global`."""

max_num_seqs = 256


def shard(dp_size):
    global max_num_seqs
    max_num_seqs //= dp_size  # error: SHD401
