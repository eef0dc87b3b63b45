"""Launches of kernels defined in kernels.py: through a relative import,
through the package's re-export, and through a module alias."""

import triton

import kernel_pkg.kernels as kmod
from kernel_pkg import tile_norm_kernel
from .kernels import fused_scale_kernel


def scale_rows(x, out, scale):
    n_rows, n_cols = x.shape
    tile = min(n_cols, 2048)  # error: SHD101
    fused_scale_kernel[(n_rows,)](x, out, scale, n_cols, TILE=tile)


def norm_groups(x, out, group_size):
    n_rows, n_cols = x.shape
    group = min(128, group_size)  # error: SHD101
    tile_norm_kernel[(n_rows,)](x, out, n_cols, GROUP=group, EPS=1e-6)


def scale_rows_positional(x, out, scale):
    n_rows, n_cols = x.shape
    TILE = min(n_cols, 512)  # error: SHD101
    kmod.masked_scale_kernel[(n_rows,)](x, out, scale, n_cols, TILE)


def scale_rows_rounded(x, out, scale):
    n_rows, n_cols = x.shape
    tile = min(triton.next_power_of_2(n_cols), 2048)
    kmod.masked_scale_kernel[(n_rows,)](x, out, scale, n_cols, TILE=tile)
