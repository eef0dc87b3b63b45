"""Gate shape: ceiling-division calls whose callee is in brackets."""

from somewhere import cdiv


def share(num_blocks, dp_size, ep_size):
    per_replica = (cdiv)(num_blocks, dp_size)
    return (cdiv)(per_replica, ep_size)  # error: SHD401
