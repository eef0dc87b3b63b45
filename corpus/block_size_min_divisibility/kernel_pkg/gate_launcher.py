"""What the facts gate must let through: a block whose only use is a call
of a launcher defined beside it (no host use in any function calling
``min``; the launcher imports its kernel's module itself)."""


def _norm_launcher(x, out, n_cols, group):
    # hands its own parameter to the kernel by keyword: a launcher
    import kernel_pkg.kernels as k

    k.tile_norm_kernel[(x.shape[0],)](x, out, n_cols, GROUP=group, EPS=1e-5)


def norm_through_the_launcher(x, out):
    n_cols = x.shape[1]
    group = min(n_cols, 256)  # error: SHD101
    _norm_launcher(x, out, n_cols, group)
