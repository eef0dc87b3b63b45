"""Gate layout: the sentinel set on the class, without an annotation."""


class ClassLevelScanImpl:
    mesh_world_size = -1

    def __init__(self, heads: int) -> None:
        self.heads_per_mesh = heads // self.mesh_world_size  # error: SHD201
