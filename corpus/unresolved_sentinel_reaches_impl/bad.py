"""A latent-attention backend leaves its decode-CP fields at -1; the shared
wrapper resolves them, a fused model layer builds the backend directly and
forgets to."""

from typing import cast

import torch
from torch import nn

from engine.distributed import get_dcp_group


class LatentAttnImplBase:
    def __init__(self, num_heads: int, head_dim: int, scale: float) -> None:
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.scale = scale
        # -1 = "not resolved yet"; LatentAttention fills these in.
        self.dcp_world_size = -1
        self.dcp_rank = -1


class FlashLatentImpl(LatentAttnImplBase):
    def forward(self, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
        return flash_latent_decode(q, kv, cp_world_size=self.dcp_world_size, cp_rank=self.dcp_rank)


class FlashLatentBackend:
    @staticmethod
    def get_impl_cls() -> type["FlashLatentImpl"]:
        return FlashLatentImpl


class LatentAttention(nn.Module):
    """The normal path: construct, then resolve the sentinel."""

    def __init__(self, backend: FlashLatentBackend, num_heads: int, head_dim: int) -> None:
        super().__init__()
        impl_cls = backend.get_impl_cls()
        self.impl = impl_cls(num_heads=num_heads, head_dim=head_dim, scale=head_dim**-0.5)
        if self.impl.dcp_world_size == -1:
            self.impl.dcp_world_size = get_dcp_group().world_size
            self.impl.dcp_rank = get_dcp_group().rank_in_group


class FusedLatentAttention(nn.Module):
    """A model's own attention layer that skips the wrapper."""

    def __init__(self, backend: FlashLatentBackend, num_heads: int, head_dim: int) -> None:
        super().__init__()
        impl_cls = cast(type[LatentAttnImplBase], backend.get_impl_cls())
        self.impl = impl_cls(  # error: SHD201
            num_heads=num_heads,
            head_dim=head_dim,
            scale=head_dim**-0.5,
        )
        self.q_pad_heads = getattr(self.impl, "q_pad_num_heads", None)

    def forward(self, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
        lse = q.new_empty((q.shape[0], self.impl.dcp_world_size * self.impl.num_heads))  # error: SHD201
        return self.impl.forward(q, kv), lse
