import triton
import triton.language as tl


@triton.jit
def fused_scale_kernel(x_ptr, out_ptr, scale, n_cols, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    x = tl.load(x_ptr + row * n_cols + cols)
    tl.store(out_ptr + row * n_cols + cols, x * scale)


@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n_cols"])
@triton.jit
def tile_norm_kernel(x_ptr, out_ptr, n_cols, GROUP: tl.constexpr, EPS: tl.constexpr):
    tl.static_assert(n_cols % GROUP == 0)
    row = tl.program_id(0)
    acc = tl.zeros([GROUP], dtype=tl.float32)
    tl.store(out_ptr + row, tl.sum(acc) + EPS)


@triton.jit
def masked_scale_kernel(x_ptr, out_ptr, scale, n_cols, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x * scale, mask=mask)
