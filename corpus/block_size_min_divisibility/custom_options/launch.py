"""A project with its own power-of-two helper and kernel decorator, set in
pyproject.toml. Helpers are added to the built-in power-of-two calls;
kernel decorators replace the default."""

import torch
import triton
import triton.language as tl

from .helpers import round_up_pow2, tile_jit


@tile_jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def _plain_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def custom_helper_is_a_power_of_two(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(round_up_pow2(n), 1024)
    _scale_kernel[(1,)](x, n, BLOCK=blk)


def custom_decorator_is_a_kernel(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(n, 1024)  # error: SHD101
    _scale_kernel[(1,)](x, n, BLOCK=blk)


def builtin_helper_still_counts(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(triton.next_power_of_2(n), 1024)
    _scale_kernel[(1,)](x, n, BLOCK=blk)


def triton_jit_no_longer_a_kernel_here(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(n, 1024)
    _plain_kernel[(1,)](x, n, BLOCK=blk)


def custom_helper_makes_the_cap(x: torch.Tensor) -> None:
    # with the option, round_up_pow2(..) is a power-of-two cap: a site
    n = x.shape[-1]
    blk = min(n, round_up_pow2(x.shape[0]))  # error: SHD101
    _scale_kernel[(1,)](x, n, BLOCK=blk)
