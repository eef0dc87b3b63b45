"""The normal path of each layout: construct, then resolve the sentinel."""

from layouts.bracketed import BracketedScanImpl
from layouts.class_level import ClassLevelScanImpl
from layouts.continued import ContinuedScanImpl
from layouts.first_parameter import OtherSelfScanImpl
from layouts.spaced import SpacedScanImpl
from layouts.upper_case import UpperScanImpl


class LaneLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = ContinuedScanImpl(heads)
        if self.impl.lane_world_size == -1:
            self.impl.lane_world_size = group.size()


class RingLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = BracketedScanImpl(heads)
        if self.impl.ring_world_size == -1:
            self.impl.ring_world_size = group.size()


class TileLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = SpacedScanImpl(heads)
        if self.impl.tile_world_size == -1:
            self.impl.tile_world_size = group.size()


class ShardLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = UpperScanImpl(heads)
        if self.impl.SHARD_WORLD_SIZE == -1:
            self.impl.SHARD_WORLD_SIZE = group.size()


class MeshLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = ClassLevelScanImpl(heads)
        if self.impl.mesh_world_size == -1:
            self.impl.mesh_world_size = group.size()


class GridLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = OtherSelfScanImpl(heads)
        if self.impl.grid_world_size == -1:
            self.impl.grid_world_size = group.size()
