"""Gate shape: a padded buffer handed to a torch function as `out=`."""

import torch

from somewhere import round_up


def combine(a, b):
    rows, width = a.shape
    buf = torch.empty(rows, round_up(width, 64))
    torch.add(a, b, out=buf)  # error: SHD501
    return buf
