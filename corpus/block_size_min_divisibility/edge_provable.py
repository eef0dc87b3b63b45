"""Both arguments provably powers of two, or the cap is a tuning knob: silent.
Plus what the rule deliberately does not judge."""

import torch
import triton
import triton.language as tl

MAX_TILE = 2048
SHIFTED = 1 << 9


@triton.jit
def _norm_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def module_constant_cap(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(MAX_TILE, triton.next_power_of_2(n))
    _norm_kernel[(1,)](x, n, BLOCK=blk)


def byte_budget_cap(x: torch.Tensor) -> None:
    # 64 KiB per row divided by the element width: a power of two as well
    limit = 65536 // x.element_size()
    n = x.shape[-1]
    blk = min(limit, triton.next_power_of_2(n))
    if n > blk:
        raise RuntimeError("row too wide")
    _norm_kernel[(1,)](x, n, BLOCK=blk)


def narrowed_later(x: torch.Tensor, slow_gpu: bool) -> None:
    n = x.shape[-1]
    blk = min(4096, triton.next_power_of_2(n))
    if slow_gpu:
        blk = min(512, blk)
    _norm_kernel[(1,)](x, n, BLOCK=blk)


def lowest_set_bit(width: int) -> int:
    blk = min(width & -width, SHIFTED)
    return width // blk


def knob_parameter(x: torch.Tensor, seg_len: int = 64) -> None:
    # seg_len is a tuning knob with a power-of-two default, not a model width
    SEG = seg_len
    sub = min(16, SEG)
    _norm_kernel[(1,)](x, SEG, BLOCK=sub)


def two_runtime_values(x: torch.Tensor, group: int, BLOCK_K: int) -> None:
    # no constant cap: neither argument is the author's choice; not judged
    BLOCK_K = min(BLOCK_K, group)
    _norm_kernel[(1,)](x, group, BLOCK=BLOCK_K)


def through_an_attribute(self_like, x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(n, 1024)
    # kernels reached through attributes are not resolved
    self_like.kernel[(1,)](x, n, BLOCK=blk)  # todo-error: SHD101 kernel behind an attribute


def _padded_width(n: int) -> int:
    # a helper of this file whose every return is a power of two
    if n <= 16:
        return 16
    return max(32, triton.next_power_of_2(n))


def helper_returns_a_power_of_two(x: torch.Tensor) -> None:
    n = x.shape[-1]
    blk = min(1024, _padded_width(n))
    _norm_kernel[(1,)](x, n, BLOCK=blk)


def imported_cap_over_a_power_of_two(x: torch.Tensor) -> None:
    # the cap's value is not visible here; the width side is a power of two,
    # so the block is one whenever the cap is: nothing to hold against the width
    from limits_elsewhere import FUSED_CAP

    n = x.shape[-1]
    blk = min(FUSED_CAP, triton.next_power_of_2(n))
    _norm_kernel[(1,)](x, n, BLOCK=blk)
    blk2 = min(triton.next_power_of_2(n), FUSED_CAP)
    _norm_kernel[(1,)](x, n, BLOCK=blk2)


class _Rotator:
    TILE = 256

    @staticmethod
    def rotate(x: torch.Tensor, is_pow2) -> torch.Tensor:
        n = x.shape[-1]
        if not is_pow2(n):
            return x  # the slow path takes any width
        # a power-of-two width and a power-of-two (or unseen) cap: the
        # block divides the width
        inner = min(n, _Rotator.TILE)
        outer = n // inner
        return x.reshape(-1, outer, inner)
