"""The kernel is imported through a package that re-exports it."""

import torch

from .ops import tiled_quant_kernel

SCALE_TILE = 128


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, hidden = x.shape
    y = torch.empty_like(x)
    s = torch.empty(rows, hidden // SCALE_TILE, device=x.device)
    grid = (rows, hidden // SCALE_TILE)
    tiled_quant_kernel[grid](x, y, s, hidden, TILE=SCALE_TILE)  # error: SHD102
    return y, s
