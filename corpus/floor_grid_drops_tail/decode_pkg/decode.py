"""The kernel lives in another module: the launch reads its facts (it takes
``tl.arange(0, HD)``, so only a power-of-two width compiles)."""

import torch

from .kernels import state_decode_kernel


def state_decode(q: torch.Tensor, kv: torch.Tensor, BLOCK_E: int = 64) -> torch.Tensor:
    batch_heads, head_dim = q.shape
    o = torch.empty_like(q)
    state_decode_kernel[(batch_heads, head_dim // BLOCK_E)](q, kv, o, head_dim, BLOCK_E=BLOCK_E)  # error: SHD103
    return o


def state_decode_wide(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
    # refused below the block: every power of two from 64 up is a multiple of 64
    batch_heads, head_dim = q.shape
    if head_dim < 64:
        raise ValueError("head_dim below 64 is not supported")
    o = torch.empty_like(q)
    state_decode_kernel[(batch_heads, head_dim // 64)](q, kv, o, head_dim, BLOCK_E=64)
    return o
