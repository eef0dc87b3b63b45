"""Gate shape: names match case-insensitively, so an upper-case module
constant divided in place is a finding (the facts gate must see the file)."""

MAX_NUM_SEQS = 256


def shard(DP_SIZE):
    global MAX_NUM_SEQS
    MAX_NUM_SEQS //= DP_SIZE  # error: SHD401
