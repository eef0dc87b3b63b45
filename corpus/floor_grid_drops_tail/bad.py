import torch
import triton
import triton.language as tl


@triton.jit
def _scale_cols_kernel(x_ptr, out_ptr, width, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK + tl.arange(0, BLOCK)
    mask = offs < width
    v = tl.load(x_ptr + row * width + offs, mask=mask)
    tl.store(out_ptr + row * width + offs, v * scale, mask=mask)


def scale_cols(x: torch.Tensor, scale: float, BLOCK: int = 64) -> torch.Tensor:
    rows, width = x.shape
    out = torch.empty_like(x)
    grid = (rows, width // BLOCK)  # error: SHD103
    _scale_cols_kernel[grid](x, out, width, scale, BLOCK=BLOCK)
    return out


def chunked_sum(x: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    total = x.new_zeros(x.shape[0])
    n = x.shape[-1]
    for i in range(n // chunk):  # error: SHD103
        total += x[:, i * chunk : (i + 1) * chunk].sum(-1)
    return total
