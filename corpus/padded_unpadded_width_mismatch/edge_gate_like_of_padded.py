"""Gate shape: `empty_like` of a padded buffer is padded, and exchanges
whole with the unpadded input."""

import torch

from somewhere import round_up


def stage(x: torch.Tensor) -> torch.Tensor:
    m, hidden = x.shape
    hp = round_up(hidden, 256)
    buf = torch.zeros(m, hp, device=x.device)
    out = torch.empty_like(buf)
    out.copy_(x)  # error: SHD501
    return out
