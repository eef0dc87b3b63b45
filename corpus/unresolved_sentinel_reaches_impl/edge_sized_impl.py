"""A class that sizes something with its own sentinel in ``__init__``,
before any wrapper could resolve it."""


class ShardedScanImpl:
    def __init__(self, heads: int) -> None:
        self.scan_world_size = -1
        self.heads_per_rank = heads // self.scan_world_size  # error: SHD201
