"""Kernels of an NPU plugin: the power-of-two rule of CUDA Triton does not
apply here, the divisibility one does."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_rms_kernel(x_ptr, out_ptr, n_rows, WIDTH: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, WIDTH)
    offs = rows[:, None] * WIDTH + cols[None, :]
    mask = rows[:, None] < n_rows
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * tl.rsqrt(tl.sum(x * x, 1)[:, None] / WIDTH), mask=mask)


@triton.jit
def _grouped_kernel(x_ptr, width, GROUP: tl.constexpr):
    tl.static_assert(width % GROUP == 0)
    tl.store(x_ptr, width // GROUP)


def row_rms(x: torch.Tensor, cores: int) -> torch.Tensor:
    # a row block of 12 is fine for Triton-Ascend's tl.arange: silent here
    n_rows, width = x.shape
    rows_per_core = triton.cdiv(n_rows, cores)
    rows = min(16, rows_per_core)
    out = torch.empty_like(x)
    _row_rms_kernel[(cores,)](x, out, n_rows, WIDTH=width, ROWS=rows)
    return out


def grouped(x: torch.Tensor) -> None:
    # divisibility is a property of the numbers, not of the compiler
    width = x.shape[-1]
    group = min(width, 512)  # error: SHD101
    _grouped_kernel[(1,)](x, width, GROUP=group)


def host_split(x: torch.Tensor) -> int:
    width = x.shape[-1]
    tile = min(width, 256)  # error: SHD101
    assert width % tile == 0
    return width // tile
