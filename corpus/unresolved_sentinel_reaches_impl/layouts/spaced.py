"""Gate layout: a space between the minus and the digit."""


class SpacedScanImpl:
    def __init__(self, heads: int) -> None:
        self.tile_world_size = - 1
        self.heads_per_tile = heads // self.tile_world_size  # error: SHD201
