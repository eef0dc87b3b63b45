"""Relatives in another engine's style: sequence-parallel fields left at None
or -1, constructed by name, and a backend registry factory."""

import torch
from torch import nn

from engine.parallel import get_sp_group, get_tp_group


class SeqParallelAttnImpl:
    sp_world_size = None  # set by RadixSeqParallelAttn once groups exist
    sp_rank = None

    def __init__(self, head_dim: int) -> None:
        self.head_dim = head_dim


class ShardedKVImpl:
    def __init__(self, num_kv_heads: int) -> None:
        self.num_kv_heads = num_kv_heads
        self.tp_rank = -1
        self.tp_world_size = -1
        # A count, not a parallel group's size or rank: never SHD201's, even
        # sized before anything assigns it.
        self.num_kv_splits = -1
        self.lse_scratch = torch.empty(2, self.num_kv_splits)
        # Divided before anyone could have resolved it: -8 heads per rank.
        self.heads_per_rank = num_kv_heads // self.tp_world_size  # error: SHD201


class RadixSeqParallelAttn(nn.Module):
    """The normal path in this engine."""

    def __init__(self, head_dim: int) -> None:
        super().__init__()
        self.inner = SeqParallelAttnImpl(head_dim)
        if self.inner.sp_world_size is None:
            self.inner.sp_world_size = get_sp_group().world_size
            self.inner.sp_rank = get_sp_group().rank_in_group
        self.kv = ShardedKVImpl(8)
        if self.kv.tp_rank == -1:
            self.kv.tp_rank = get_tp_group().rank_in_group
            self.kv.tp_world_size = get_tp_group().world_size
            self.kv.num_kv_splits = 4


class EagleDraftAttn(nn.Module):
    def __init__(self, head_dim: int) -> None:
        super().__init__()
        self.inner = SeqParallelAttnImpl(head_dim)  # error: SHD201
        self.kv = ShardedKVImpl(2)  # error: SHD201

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        chunks = x.split(x.shape[0] // self.inner.sp_world_size)  # error: SHD201
        return torch.cat([c for c in chunks[: self.kv.num_kv_splits]])


def build_ragged_kv(num_kv_heads: int) -> ShardedKVImpl:
    kv = ShardedKVImpl(num_kv_heads)  # error: SHD201
    workspace = torch.empty(kv.num_kv_splits, num_kv_heads)
    return kv, workspace


def build_ragged_kv_checked(num_kv_heads: int) -> ShardedKVImpl:
    kv = ShardedKVImpl(num_kv_heads)
    if kv.tp_rank < 0:
        kv.tp_rank = get_tp_group().rank_in_group
        kv.tp_world_size = get_tp_group().world_size
    kv.num_kv_splits = 4
    return kv


def make_ragged_kv(num_kv_heads: int) -> ShardedKVImpl:
    # Returned, not kept: the caller owns resolution.
    return ShardedKVImpl(num_kv_heads)
