"""Gate shape: the padded width is `(x + n - 1) // n * n`."""

import torch


def stage(x):
    rows, width = x.shape
    width_up = (width + 63) // 64 * 64
    out = torch.zeros(rows, width_up)
    out.copy_(x)  # error: SHD501
    return out
