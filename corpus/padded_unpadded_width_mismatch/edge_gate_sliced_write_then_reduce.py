"""Gate shape: an `empty` padded buffer filled in part by a slice assignment,
then reduced whole."""

import torch

from somewhere import round_up


def pool(x):
    width = x.shape[-1]
    buf = torch.empty(x.shape[0], round_up(width, 64))
    buf[:, :width] = x
    return buf.sum(dim=-1)  # error: SHD501
