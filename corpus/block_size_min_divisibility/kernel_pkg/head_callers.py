"""Blocks capped with min() in one module, launched from another."""

import math

from kernel_pkg.head_launch import launch_heads_mean, launch_heads_mean_positional


def mean_over_heads(x, out):
    n_heads = x.shape[1]
    tile = min(n_heads, 16)  # error: SHD101
    launch_heads_mean(x, out, tile)


def mean_over_heads_gcd(x, out):
    n_heads = x.shape[1]
    tile = math.gcd(n_heads, 16)
    launch_heads_mean(x, out, tile)


def mean_over_heads_positional(x, out):
    n_heads = x.shape[1]
    tile = min(n_heads, 16)  # todo-error: SHD101 a block the launcher passes on by position is not followed
    launch_heads_mean_positional(x, out, tile)
