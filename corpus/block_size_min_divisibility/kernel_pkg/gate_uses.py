"""What the facts gate must let through: a block whose only use is a launch
of a kernel whose name is imported inside the function. No function calling
``min`` here divides by a name or loops over a ``range``, and no launcher is
defined here: only that import can open the gate."""

import triton


def scale_with_a_local_import(x, out, scale):
    # the kernel's name is bound inside this function only
    from .kernels import fused_scale_kernel as _scale

    n_rows, n_cols = x.shape
    width = min(n_cols, 4096)  # error: SHD101
    _scale[(n_rows,)](x, out, scale, n_cols, TILE=width)


def untouched(x):
    # a min no kernel, launcher or host use can reach: silent either way
    n_cols = x.shape[1]
    tile = min(n_cols, 1024)
    print(tile, triton.cdiv(n_cols, tile))
