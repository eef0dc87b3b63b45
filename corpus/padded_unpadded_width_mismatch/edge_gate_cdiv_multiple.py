"""Gate shape: the padded width is a ceiling division times the multiple."""

import torch

from somewhere import cdiv


def stage(x):
    rows, width = x.shape
    width_up = cdiv(width, 64) * 64
    out = torch.zeros(rows, width_up)
    out.copy_(x)  # error: SHD501
    return out
