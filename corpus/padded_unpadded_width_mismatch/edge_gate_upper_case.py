"""Gate shape: padded names match case-insensitively, so an upper-case padded
width is a finding (the facts gate must see the file)."""

import torch


def stage(X: torch.Tensor, HIDDEN_PADDED: int) -> torch.Tensor:
    M, HIDDEN = X.shape
    OUT = torch.empty(M, HIDDEN_PADDED, device=X.device)
    OUT.copy_(X)  # error: SHD501
    return OUT
