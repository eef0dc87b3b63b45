"""What the function says about the width: a power-of-two requirement (its
own assert or raise, or the kernel's ``tl.arange`` over it), a lower bound,
or the only widths it accepts. A floor over such a width loses nothing when
every block it can pick divides every width that gets through."""

import torch
import triton
import triton.language as tl


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@triton.jit
def _value_rows_kernel(state_ptr, out_ptr, HEAD_V: tl.constexpr, TILE_V: tl.constexpr):
    head = tl.program_id(1)
    rows = tl.program_id(0) * TILE_V + tl.arange(0, TILE_V)
    cols = tl.arange(0, HEAD_V)
    s = tl.load(state_ptr + head * HEAD_V * HEAD_V + rows[:, None] * HEAD_V + cols[None, :])
    tl.store(out_ptr + head * HEAD_V + rows, tl.sum(s, 1))


# -- fires ----------------------------------------------------------------------


def value_rows(state: torch.Tensor) -> torch.Tensor:
    # the kernel takes tl.arange(0, HEAD_V): only powers of two compile, and
    # 64 divides each of them from 64 up; a 32-wide head launches nothing
    heads, head_v = state.shape[0], state.shape[-1]
    out = state.new_empty(heads, head_v)
    TILE_V = 64
    _value_rows_kernel[(head_v // TILE_V, heads)](state, out, head_v, TILE_V)  # error: SHD103
    return out


@triton.jit
def _sum_chunks_kernel(x_ptr, out_ptr, WIDTH: tl.constexpr):
    row = tl.program_id(0)
    whole = tl.load(x_ptr + row * WIDTH + tl.arange(0, WIDTH))
    acc = tl.zeros([128], dtype=tl.float32)
    for c in tl.static_range(WIDTH // 128):  # error: SHD103
        acc += tl.load(x_ptr + row * WIDTH + c * 128 + tl.arange(0, 128))
    tl.store(out_ptr + row, tl.sum(acc) + 0.0 * tl.sum(whole))


def tiles_of_a_power_of_two(x: torch.Tensor) -> list[torch.Tensor]:
    # a power of two, but nothing keeps head_size >= 128: 64 takes no tile
    head_size = x.shape[-1]
    assert _is_pow2(head_size), "head size must be a power of two"
    TILE = 128
    return [x[..., t * TILE : (t + 1) * TILE].sum(-1) for t in range(head_size // TILE)]  # todo-error: SHD103 comprehension loops are not read


def tiles_asserted_power_of_two(x: torch.Tensor) -> torch.Tensor:
    head_size = x.shape[-1]
    if head_size & (head_size - 1):
        raise ValueError("head size must be a power of two")
    TILE = 128
    out = x.new_zeros(x.shape[:-1])
    for t in range(head_size // TILE):  # error: SHD103
        out += x[..., t * TILE : (t + 1) * TILE].sum(-1)
    return out


def admitted_width_not_a_multiple(x: torch.Tensor) -> torch.Tensor:
    # 1536 is accepted and is not a multiple of the 1024 block
    width = x.shape[-1]
    if width not in (1024, 1536):
        raise RuntimeError("width must be 1024 or 1536")
    BLOCK_W = 1024
    out = x.new_zeros(x.shape[:-1])
    for b in range(width // BLOCK_W):  # error: SHD103
        out += x[..., b * BLOCK_W : (b + 1) * BLOCK_W].sum(-1)
    return out


# -- silent ---------------------------------------------------------------------


def value_rows_refused_below(state: torch.Tensor, busy: bool) -> torch.Tensor:
    # a power of two of at least 64, and a tile of 32, 64 or the width itself
    heads, head_v = state.shape[0], state.shape[-1]
    assert head_v == triton.next_power_of_2(head_v) >= 64
    tile_v = 32 if busy else 64 if heads > 8 else head_v
    out = state.new_empty(heads, head_v)
    _value_rows_kernel[(head_v // tile_v, heads)](state, out, head_v, tile_v)
    return out


def value_rows_kernel_power_of_two(state: torch.Tensor) -> torch.Tensor:
    # the kernel's tl.arange makes head_v a power of two; the launcher
    # refuses anything below the tile
    heads, head_v = state.shape[0], state.shape[-1]
    if head_v < 64:
        raise ValueError("value head dim below 64")
    TILE_V = 64
    out = state.new_empty(heads, head_v)
    _value_rows_kernel[(head_v // TILE_V, heads)](state, out, head_v, TILE_V)
    return out


def tiles_refused_otherwise(x: torch.Tensor) -> torch.Tensor:
    head_size = x.shape[-1]
    if head_size & (head_size - 1) != 0 or head_size < 128:
        raise ValueError("head size must be a power of two, at least 128")
    TILE = 128
    out = x.new_zeros(x.shape[:-1])
    for t in range(head_size // TILE):
        out += x[..., t * TILE : (t + 1) * TILE].sum(-1)
    return out


def predicate_and_bound(x: torch.Tensor, wide: bool) -> torch.Tensor:
    dim = x.shape[-1]
    assert _is_pow2(dim)
    assert dim >= 256
    CHUNK = 256 if wide else 128
    out = x.new_zeros(x.shape[:-1])
    for c in range(dim // CHUNK):
        out += x[..., c * CHUNK : (c + 1) * CHUNK].sum(-1)
    return out


def only_two_widths(x: torch.Tensor) -> torch.Tensor:
    # both accepted widths are multiples of the 1024 chunk
    hidden = x.shape[-1]
    if hidden not in (2048, 4096):
        raise RuntimeError("hidden must be 2048 or 4096")
    out = x.new_zeros(x.shape[:-1])
    for c in range(hidden // 1024):
        out += x[..., c * 1024 : (c + 1) * 1024].sum(-1)
    return out


def pinned_by_assert(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    assert n_cols in [3072, 6144]
    BLOCK_N = 512
    out = x.new_zeros(x.shape[:-1])
    for c in range(n_cols // BLOCK_N):
        out += x[..., c * BLOCK_N : (c + 1) * BLOCK_N].sum(-1)
    return out
