"""The normal path: build the implementation, then resolve its CP fields."""

from torch import nn

from engine.distributed import get_pcp_group

from .common import SparseDecodeImplBase


class SparseDecodeLayer(nn.Module):
    def __init__(self, backend, num_heads: int, topk: int) -> None:
        super().__init__()
        impl_cls = backend.get_impl_cls()
        self.impl: SparseDecodeImplBase = impl_cls(num_heads, topk)
        self._resolve_cp()

    def _resolve_cp(self) -> None:
        if self.impl.pcp_world_size < 0:
            group = get_pcp_group()
            self.impl.pcp_world_size = group.world_size
            self.impl.pcp_rank = group.rank_in_group
