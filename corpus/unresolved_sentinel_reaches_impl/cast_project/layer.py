"""The normal path: the layer builds the implementation and resolves it."""

from typing import cast

from torch import nn

from engine.distributed import get_pcp_group

from .paged import PagedDecodeImpl


class PagedDecodeLayer(nn.Module):
    def __init__(self, backend, num_heads: int, topk: int) -> None:
        super().__init__()
        impl_cls = cast(type[PagedDecodeImpl], backend.get_impl_cls())
        self.impl = impl_cls(num_heads, topk)

    def forward(self, q):
        if self.impl.pcp_world_size == -1:
            group = get_pcp_group()
            self.impl.pcp_world_size = group.world_size
            self.impl.pcp_rank = group.rank_in_group
        return self.impl.decode(q)
