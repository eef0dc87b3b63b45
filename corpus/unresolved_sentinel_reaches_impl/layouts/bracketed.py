"""Gate layout: the sentinel wrapped in brackets over lines."""


class BracketedScanImpl:
    def __init__(self, heads: int) -> None:
        self.ring_world_size = (
            -1
        )
        self.heads_per_ring = heads // self.ring_world_size  # error: SHD201
