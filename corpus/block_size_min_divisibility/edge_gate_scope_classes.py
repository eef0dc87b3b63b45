"""The ast gate reads every statement outside a class and the classes whose
methods may leave a finding (or hold an import): here a finding in a module
function, one in a method, and a class whose `min(` only clamps a count that
nothing divides or launches, which the gate leaves out."""


def rows_per_program(n_rows):
    block_rows = min(n_rows, 64)  # error: SHD101
    assert n_rows % block_rows == 0
    return block_rows


class ChunkPlanner:
    """Its `min(` caps a count: nothing divides by it, no kernel gets it."""

    def chunks(self, total, limit):
        return min(total, limit)

    def label(self):
        return "planner"


class Tiler:
    def tile(self, width):
        tile_w = min(width, 256)  # error: SHD101
        assert width % tile_w == 0
        return tile_w
