"""Gate layout: the sentinel on a backslash-continued line."""


class ContinuedScanImpl:
    def __init__(self, heads: int) -> None:
        self.lane_world_size = \
            -1
        self.heads_per_lane = heads // self.lane_world_size  # error: SHD201
