"""Relatives of the seed written differently: all fire."""

import torch
import triton
import triton.language as tl

HEAD_CAP = 64


@triton.jit
def _heads_kernel(q_ptr, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr):
    h = tl.arange(0, GROUP)
    acc = tl.zeros([GROUP, HEAD_DIM], dtype=tl.float32)
    tl.store(q_ptr + h, tl.sum(acc, 1))


@triton.jit
def _split_kernel(x_ptr, n_cols, SPLIT: tl.constexpr):
    tl.static_assert(n_cols % SPLIT == 0)
    tl.store(x_ptr, n_cols // SPLIT)


def heads_per_program(q: torch.Tensor, num_kv_heads: int) -> None:
    group = q.shape[1] // num_kv_heads
    block_h = min(8, group)  # error: SHD101
    _heads_kernel[(q.shape[0],)](q, GROUP=block_h, HEAD_DIM=128)


def inline_keyword(q: torch.Tensor) -> None:
    width = q.shape[-1]
    _heads_kernel[(1,)](q, GROUP=min(width, 32), HEAD_DIM=64)  # error: SHD101


def through_an_alias(q: torch.Tensor) -> None:
    width = q.shape[-1]
    BLOCK = min(width, HEAD_CAP)  # error: SHD101
    tile = BLOCK
    _heads_kernel[(1,)](q, tile, 64)


def static_assert_in_kernel(x: torch.Tensor) -> None:
    n_cols = x.shape[-1]
    split = min(n_cols, 256)  # error: SHD101
    _split_kernel[(1,)](x, n_cols, SPLIT=split)


def range_without_tail(x: torch.Tensor, out: torch.Tensor) -> None:
    n = x.shape[0]
    step = min(n, 1024)  # error: SHD101
    for start in range(0, n, step):
        out.narrow(0, start, step).copy_(x.narrow(0, start, step))


def raise_instead_of_assert(x: torch.Tensor) -> int:
    d = x.shape[-1]
    chunk = min(2048, d)  # error: SHD101
    if d % chunk:
        raise ValueError(f"width {d} is not a multiple of {chunk}")
    return d // chunk


def annotated_and_walrus(x: torch.Tensor) -> int:
    d = x.shape[-1]
    chunk: int = min(d, 4096)  # error: SHD101
    return d // chunk


def _width_of(x: torch.Tensor) -> int:
    # a helper of this file that may return any width
    if x.dim() == 1:
        return 16
    return x.shape[-1]


def helper_returns_any_width(x: torch.Tensor, out: torch.Tensor) -> None:
    split = min(_width_of(x), 256)  # error: SHD101
    _split_kernel[(1,)](x, x.shape[-1], SPLIT=split)


def pow2_width_odd_cap(x: torch.Tensor, is_power_of_two) -> torch.Tensor:
    n = x.shape[-1]
    if not is_power_of_two(n):
        raise ValueError("width must be a power of two")
    # a power-of-two width still meets a cap that is not one
    inner = min(n, 96)  # error: SHD101
    return x.reshape(-1, n // inner, inner)
