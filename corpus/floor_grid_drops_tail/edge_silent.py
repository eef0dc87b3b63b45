"""Look-alikes that cover the tail, or that another rule reports."""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _stride_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _exact_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    tl.static_assert(n % BLOCK == 0)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs))


def ceil_grids(src: torch.Tensor, dst: torch.Tensor, BLOCK: int = 256) -> None:
    n = src.numel()
    _copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, BLOCK=BLOCK)
    _copy_kernel[((n + BLOCK - 1) // BLOCK,)](src, dst, n, BLOCK=BLOCK)
    _copy_kernel[(-(-n // BLOCK),)](src, dst, n, BLOCK=BLOCK)


def asserted(src: torch.Tensor, dst: torch.Tensor, BLOCK: int = 256) -> None:
    n = src.numel()
    assert n % BLOCK == 0
    _copy_kernel[(n // BLOCK,)](src, dst, n, BLOCK=BLOCK)


def grid_stride(src: torch.Tensor, dst: torch.Tensor, BLOCK: int = 256) -> None:
    n = src.numel()
    _stride_copy_kernel[(max(1, n // BLOCK),)](src, dst, n, BLOCK=BLOCK)
    _stride_copy_kernel[(n // BLOCK,)](src, dst, n, BLOCK=BLOCK)


def kernel_requires(src: torch.Tensor, dst: torch.Tensor, BLOCK: int = 256) -> None:
    n = src.numel()
    _exact_copy_kernel[(n // BLOCK,)](src, dst, n, BLOCK=BLOCK)


def tail_pass(x: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    n = x.shape[-1]
    total = x.new_zeros(x.shape[0])
    for i in range(n // chunk):
        total += x[:, i * chunk : (i + 1) * chunk].sum(-1)
    rest = n - (n // chunk) * chunk
    if rest:
        total += x[:, n - rest :].sum(-1)
    return total


def padded_extent(x: torch.Tensor, BLOCK: int = 128) -> int:
    padded_len = triton.cdiv(x.shape[0], BLOCK) * BLOCK
    return sum(1 for _ in range(padded_len // BLOCK))


def capped_block(x: torch.Tensor) -> int:
    width = x.shape[-1]
    block = min(width, 1024)  # error: SHD101
    return sum(1 for _ in range(width // block))


class Launcher:
    def run(self, src: torch.Tensor, dst: torch.Tensor) -> None:
        # the kernel behind an attribute is not known here
        n = src.numel()
        self.kernel[(n // 128,)](src, dst, n, BLOCK=128)


def not_a_block(x: torch.Tensor, world_size: int) -> list[torch.Tensor]:
    per_rank = x.shape[0] // world_size
    return [x[r * per_rank : (r + 1) * per_rank] for r in range(x.shape[0] // world_size)]
