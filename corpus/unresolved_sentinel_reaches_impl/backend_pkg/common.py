"""The shared implementation base: context-parallel fields start unresolved."""

import torch


class SparseDecodeImplBase:
    # Filled in by SparseDecodeLayer after construction; -1 means "unset".
    pcp_world_size: int = -1
    pcp_rank: int = -1

    def __init__(self, num_heads: int, topk: int) -> None:
        self.num_heads = num_heads
        self.topk = topk

    def decode(self, q: torch.Tensor) -> torch.Tensor:
        return sparse_decode_kernel(q, self.topk, cp_world_size=self.pcp_world_size, cp_rank=self.pcp_rank)
