"""A per-rank pad scaled to the whole weight, then scaled again by the
loader that slices it (tensor parallelism)."""

import torch


def pad_rows_for_rank(weight: torch.Tensor, rows_per_rank: int, align: int, tp_size: int) -> torch.Tensor:
    pad_per_rank = -rows_per_rank % align
    pad_total = pad_per_rank * tp_size
    padded_rows = weight.shape[0] + pad_total * tp_size  # error: SHD503
    out = weight.new_zeros((padded_rows, weight.shape[1]))
    out[: weight.shape[0]] = weight
    return out
