import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_rows_kernel(src_ptr, dst_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    offs = block * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    vals = tl.load(src_ptr + row * n_cols + offs)
    tl.store(dst_ptr + row * n_cols + offs, vals)


def copy_rows(src: torch.Tensor, dst: torch.Tensor) -> None:
    width = src.shape[1]
    # the largest block not above 1024 that divides the width
    BLOCK_COLS = math.gcd(width, 1024)
    assert width % BLOCK_COLS == 0
    grid = (src.shape[0], width // BLOCK_COLS)
    _copy_rows_kernel[grid](src, dst, width, BLOCK_COLS=BLOCK_COLS)


@triton.jit
def _copy_rows_masked_kernel(src_ptr, dst_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    offs = block * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    mask = offs < n_cols
    vals = tl.load(src_ptr + row * n_cols + offs, mask=mask)
    tl.store(dst_ptr + row * n_cols + offs, vals, mask=mask)


def copy_rows_masked(src: torch.Tensor, dst: torch.Tensor) -> None:
    width = src.shape[1]
    # a power of two covering the width, capped; the kernel masks the tail
    BLOCK_COLS = min(triton.next_power_of_2(width), 1024)
    grid = (src.shape[0], triton.cdiv(width, BLOCK_COLS))
    _copy_rows_masked_kernel[grid](src, dst, width, BLOCK_COLS=BLOCK_COLS)


def chunk_sums(x: torch.Tensor) -> torch.Tensor:
    chunk = math.gcd(4096, x.shape[-1])
    n_chunks = x.shape[-1] // chunk
    return x.reshape(*x.shape[:-1], n_chunks, chunk).sum(-1)
