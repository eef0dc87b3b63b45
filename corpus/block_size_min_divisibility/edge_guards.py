"""Look-alikes that repair or guard the block in the same function: silent."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _rows_kernel(x_ptr, n_cols, TILE: tl.constexpr, EVEN_COLS: tl.constexpr):
    cols = tl.program_id(1) * TILE + tl.arange(0, TILE)
    if EVEN_COLS:
        tl.store(x_ptr + cols, tl.load(x_ptr + cols) * 2)
    else:
        tl.store(x_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols) * 2, mask=cols < n_cols)


def halving_loop(x: torch.Tensor) -> int:
    feat = x.shape[-1]
    tile = min(feat, 512)
    while feat % tile:
        tile //= 2
    assert feat % tile == 0
    return feat // tile


def fallback_on_remainder(x: torch.Tensor) -> torch.Tensor:
    feat = x.shape[-1]
    tile = min(feat, 256)
    if feat % tile != 0:
        return x.sum(-1)
    return x.view(-1, feat // tile, tile).sum(-1).sum(-1)


def even_flag_for_masked_kernel(x: torch.Tensor) -> None:
    n_cols = x.shape[-1]
    tile = min(triton.next_power_of_2(n_cols), 1024)
    _rows_kernel[(x.shape[0], triton.cdiv(n_cols, tile))](
        x, n_cols, TILE=tile, EVEN_COLS=n_cols % tile == 0
    )


def cdiv_grid_next_to_a_count(x: torch.Tensor, step: int) -> int:
    n = x.shape[0]
    rows_per_prog = min(n, 4096)
    grid = (triton.cdiv(n, rows_per_prog),)
    full = n // rows_per_prog
    return full + len(grid)


def end_index_not_a_block(x: torch.Tensor, chunk: int) -> list[torch.Tensor]:
    n = x.shape[0]
    out = []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        out.append(x[start:stop])
    return out


def gcd_block(width: int) -> int:
    blk = math.gcd(width, 1024)
    assert width % blk == 0
    return width // blk


def rounded_after_min(count: int) -> int:
    blk = min(count, 1024)
    blk = triton.next_power_of_2(blk)
    return count // blk


def width_pinned_by_assert(x: torch.Tensor) -> int:
    head_dim = x.shape[-1]
    assert head_dim == 256, head_dim
    blk = min(head_dim, 64)
    assert head_dim % blk == 0
    return head_dim // blk


def width_pinned_by_membership(x: torch.Tensor) -> int:
    page = x.shape[1]
    if page not in (16, 32, 64):
        raise ValueError(page)
    blk = min(page, 48)
    return page // blk


def power_of_two_checked(n: int) -> int:
    blk = min(n, 128)
    assert blk & (blk - 1) == 0, "block must be a power of two"
    return blk
