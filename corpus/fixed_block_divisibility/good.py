import math

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_rows_kernel(src_ptr, dst_ptr, n_cols, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK_D + tl.arange(0, BLOCK_D)
    tl.store(dst_ptr + row * n_cols + offs, tl.load(src_ptr + row * n_cols + offs))


def gather_rows(src: torch.Tensor, dst: torch.Tensor) -> None:
    hidden_size = src.shape[1]
    # the largest block not above 1024 that divides the width
    BLOCK_D = math.gcd(hidden_size, 1024)
    assert hidden_size % BLOCK_D == 0
    grid = (src.shape[0], hidden_size // BLOCK_D)
    _gather_rows_kernel[grid](src, dst, hidden_size, BLOCK_D=BLOCK_D)


def split_rows(x: torch.Tensor) -> torch.Tensor:
    intermediate = x.shape[-1]
    tile = math.gcd(intermediate, 128)
    if intermediate % tile != 0:
        raise ValueError(f"{intermediate} is not a multiple of {tile}")
    return x.view(*x.shape[:-1], intermediate // tile, tile).amax(-1)
