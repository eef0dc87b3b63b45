"""Text-gate shapes: the text gate looks for a finding's words within one
function, delimiting bodies as Python does -- a dedented argument list, a
docstring with column-0 lines (one of them reading like a `def`), a
backslash continuation and an f-string with nested fields do not end a
body early. Below them, a lookalike: a budget in one function and two
divisions in another (no finding)."""


class Pool:
    def shrink(
self, dp_size, ep_size
    ):
        """Divide the pool.
def not_a_function():
Text at column 0 does not end the method.
"""
        label = f"{self.name!r:>{10}} {{dp}}"
        total = self.num_gpu_blocks + \
0
        per_dp = total // dp_size
        return per_dp // ep_size, label  # error: SHD401


def budget_only(num_blocks):
    return num_blocks


def sizes_only(tokens, dp_size, ep_size):
    return tokens // dp_size // ep_size
