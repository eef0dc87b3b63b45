"""Gate layout: attribute names compare in any case (``*world_size``)."""


class UpperScanImpl:
    def __init__(self, heads: int) -> None:
        self.SHARD_WORLD_SIZE = -1
        self.heads_per_shard = heads // self.SHARD_WORLD_SIZE  # error: SHD201
