import triton


def round_up_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def tile_jit(fn):
    return triton.jit(fn)
