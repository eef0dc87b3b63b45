"""Gate shape: an `empty` padded buffer filled in part with an in-place copy,
then handed whole to a GEMM."""

import torch

from somewhere import round_up


def project(x, weight):
    width = x.shape[-1]
    buf = torch.empty(x.shape[0], round_up(width, 128))
    buf[:, :width].copy_(x)
    return torch.mm(buf, weight)  # error: SHD501
