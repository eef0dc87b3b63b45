"""The normal path: construct, then resolve the sentinel."""

from edge_sized_impl import ShardedScanImpl


class ScanLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = ShardedScanImpl(heads)
        if self.impl.scan_world_size == -1:
            self.impl.scan_world_size = group.size()
