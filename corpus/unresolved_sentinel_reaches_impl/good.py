"""The fused layer normalises the backend's CP sentinel right after building
it (or goes through the wrapper): nothing to report."""

from typing import cast

import torch
from torch import nn

from engine.distributed import get_dcp_group


class MlaImplBase:
    def __init__(self, num_heads: int, head_dim: int) -> None:
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.dcp_world_size = -1
        self.dcp_rank = -1


class MlaBackend:
    @staticmethod
    def get_impl_cls() -> type["MlaImplBase"]:
        return MlaImplBase


class MlaWrapper(nn.Module):
    def __init__(self, backend: MlaBackend, num_heads: int, head_dim: int) -> None:
        super().__init__()
        self.impl = backend.get_impl_cls()(num_heads, head_dim)
        if self.impl.dcp_world_size == -1:
            self.impl.dcp_world_size = get_dcp_group().world_size
            self.impl.dcp_rank = get_dcp_group().rank_in_group


class FusedMla(nn.Module):
    def __init__(self, backend: MlaBackend, num_heads: int, head_dim: int) -> None:
        super().__init__()
        impl_cls = cast(type[MlaImplBase], backend.get_impl_cls())
        self.impl = impl_cls(num_heads, head_dim)
        # CP is disabled for this model: the kernel needs a positive size.
        if getattr(self.impl, "dcp_world_size", -1) < 1:
            self.impl.dcp_world_size = 1
            self.impl.dcp_rank = 0

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return q.new_empty((q.shape[0], self.impl.dcp_world_size * self.impl.num_heads))


class WrappedModelLayer(nn.Module):
    def __init__(self, backend: MlaBackend) -> None:
        super().__init__()
        # Through the wrapper: resolved there.
        self.attn = MlaWrapper(backend, 16, 128)
