"""Gate layout: the init's first parameter is not named ``self``."""


class OtherSelfScanImpl:
    def __init__(this, heads: int) -> None:
        this.grid_world_size = -1
        this.heads_per_grid = heads // this.grid_world_size  # error: SHD201
