"""A direct construction by name, with no factory call in the file."""

from edge_sized_impl import ShardedScanImpl


class FusedScan:
    def __init__(self, heads: int) -> None:
        self.impl = ShardedScanImpl(heads)  # error: SHD201
