"""A subclass puts the parallelism sentinel back after its base resolved it,
nothing anywhere resolves it again, and the class passes it on as a size:
every instance runs with -1. Look-alikes: the same re-set compared before
use, a count re-set the same way, and a re-set of a value the base never
gives."""

from engine.parallel import get_pcp_group


def prefill_kernel(q, cp_world_size, cp_rank):
    return q


class PrefillImplBase:
    def __init__(self, heads: int) -> None:
        self.heads = heads
        self.pcp_world_size = get_pcp_group().world_size
        self.pcp_rank = get_pcp_group().rank_in_group
        self.num_splits = 4


class ChunkedPrefillImpl(PrefillImplBase):
    def __init__(self, heads: int) -> None:
        super().__init__(heads)
        self.pcp_world_size = -1  # "not used by this backend"
        self.num_splits = -1

    def forward(self, q):
        return prefill_kernel(q, cp_world_size=self.pcp_world_size, cp_rank=self.pcp_rank)  # error: SHD201

    def split(self, q):
        # a count, not a parallel group: never SHD201's
        return q.chunk(self.num_splits)


class GuardedPrefillImpl(PrefillImplBase):
    def __init__(self, heads: int) -> None:
        super().__init__(heads)
        self.pcp_world_size = -1

    def forward(self, q):
        if self.pcp_world_size < 1:
            return prefill_kernel(q, cp_world_size=1, cp_rank=0)
        return prefill_kernel(q, cp_world_size=self.pcp_world_size, cp_rank=self.pcp_rank)


class FreshPrefillImpl:
    """Nothing to re-set: no base gave the attribute a value (a sentinel of
    its own, left for the class's users to settle)."""

    def __init__(self) -> None:
        self.pcp_world_size = -1

    def forward(self, q):
        return prefill_kernel(q, cp_world_size=self.pcp_world_size, cp_rank=0)
