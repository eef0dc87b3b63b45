"""Paged decode backends behind one interface: most keep the context-parallel
size unresolved until the layer fills it in, one sets it itself."""

import torch


class PagedDecodeImpl:
    """The interface every backend's factory hands out."""

    def __init__(self, num_heads: int, topk: int) -> None:
        self.num_heads = num_heads
        self.topk = topk


class PagedCommonImpl(PagedDecodeImpl):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__(num_heads, topk)
        # PagedDecodeLayer fills these in after construction; -1 means "unset"
        self.pcp_world_size: int = -1
        self.pcp_rank: int = -1

    def decode(self, q: torch.Tensor) -> torch.Tensor:
        return q.new_empty(self.pcp_world_size, q.shape[-1])


class PagedFastImpl(PagedCommonImpl):
    pass


class PagedPortableImpl(PagedDecodeImpl):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__(num_heads, topk)
        self.pcp_world_size = 1
        self.pcp_rank = 0


class PagedFastBackend:
    @staticmethod
    def get_impl_cls() -> type[PagedFastImpl]:
        return PagedFastImpl


class PagedPortableBackend:
    @staticmethod
    def get_impl_cls() -> type[PagedPortableImpl]:
        return PagedPortableImpl
