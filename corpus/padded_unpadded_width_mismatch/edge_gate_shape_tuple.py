"""Gate shape: a padded name inside a shape tuple."""

import torch


def stage(x, hidden_padded):
    rows, hidden = x.shape
    out = torch.zeros((rows, hidden_padded))
    out.copy_(x)  # error: SHD501
    return out
