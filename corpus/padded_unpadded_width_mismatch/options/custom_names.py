"""Configured names replace the defaults: the padded widths are spelled differently here."""

import torch

from somewhere import pad_to_tile, round_up


def configured_rounding(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    buf = torch.empty(m, pad_to_tile(k, 64), device=x.device)
    buf.copy_(x)  # error: SHD501
    return buf


def configured_name(x: torch.Tensor, hidden_aligned: int) -> torch.Tensor:
    m, hidden = x.shape
    buf = torch.empty(m, hidden_aligned, device=x.device)
    buf.copy_(x)  # error: SHD501
    return buf


def default_rounding_not_configured(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    buf = torch.empty(m, round_up(k, 64), device=x.device)
    buf.copy_(x)
    return buf
