"""Look-alikes that scale once, or by two different factors."""

import torch


def scaled_once(rows: int, align: int, tp_size: int) -> int:
    pad = -rows % align
    return rows * tp_size + pad * tp_size


def two_meanings(inter: int, packed: bool) -> int:
    # gate/up fusion (x2) then FP4 packing (x2): literals are not factors
    w13_pad = 2 * (-inter % 256)
    if packed:
        w13_pad *= 2
    return w13_pad


def different_factors(n_pad: int, src: torch.Tensor, tp_size: int) -> int:
    pad_bytes = n_pad * src.element_size()
    return pad_bytes * tp_size


def rebound(rows: int, align: int, tp_size: int) -> int:
    pad = (-rows % align) * tp_size
    pad = -(rows // tp_size) % align
    return pad * tp_size


def not_a_pad(shard: int, tp_size: int, tp_rank: int) -> int:
    offset = tp_rank * shard
    full = shard * tp_size
    return offset + full * tp_size


def unpadded(width_unpadded: int, tp_size: int) -> int:
    total_unpadded = width_unpadded * tp_size
    return total_unpadded * tp_size


def consumer_takes_total(pad_total: int, rows: int) -> int:
    return rows + pad_total


def caller(rows: int, align: int, tp_size: int) -> int:
    pad_total = (-rows % align) * tp_size
    return consumer_takes_total(pad_total, rows)
