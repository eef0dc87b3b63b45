"""The family written other ways: fallback chains, module constants, SGLang
style, a raise in an ``or``, the kernel's own requirement."""

import torch
import triton
import triton.language as tl

ROW_TILE = 256


def fallback_chain(w: torch.Tensor) -> torch.Tensor:
    ffn_dim = w.shape[-1]
    # the chain ends in another power of two: 2880 still fails
    tile = 512 if ffn_dim % 512 == 0 else 128  # error: SHD102
    assert ffn_dim % tile == 0, "unsupported width"
    return w.view(-1, ffn_dim // tile, tile)


def statement_chain(x: torch.Tensor) -> int:
    hidden = x.size(-1)
    if hidden % 256 == 0:
        chunk = 256
    else:
        chunk = 128
    assert hidden % chunk == 0  # error: SHD102
    return hidden // chunk


def module_constant(x: torch.Tensor) -> int:
    hidden_dim = x.shape[1]
    assert hidden_dim % ROW_TILE == 0  # error: SHD102
    return hidden_dim // ROW_TILE


class SglangStyleNorm:
    def __init__(self, hidden_size: int) -> None:
        self.hidden_size = hidden_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        block_h = 1024  # error: SHD102
        if self.hidden_size % block_h or x.dim() != 2:
            raise RuntimeError("hidden size must be a multiple of the block")
        return x.view(x.shape[0], -1, block_h).float().pow(2).mean(-1)


def head_blocks(q: torch.Tensor) -> int:
    head_dim = q.shape[-1]
    HEAD_BLOCK = 64  # error: SHD102
    assert head_dim % HEAD_BLOCK == 0
    return head_dim // HEAD_BLOCK


@triton.jit
def _rms_chunk_kernel(x_ptr, out_ptr, HIDDEN: tl.constexpr, CHUNK: tl.constexpr):
    tl.static_assert(HIDDEN % CHUNK == 0)
    row = tl.program_id(0)
    acc = tl.zeros([CHUNK], dtype=tl.float32)
    for c in tl.static_range(HIDDEN // CHUNK):
        offs = c * CHUNK + tl.arange(0, CHUNK)
        v = tl.load(x_ptr + row * HIDDEN + offs).to(tl.float32)
        acc += v * v
    tl.store(out_ptr + row, tl.sum(acc) / HIDDEN)


def rms_by_kernel(x: torch.Tensor, out: torch.Tensor) -> None:
    _rms_chunk_kernel[(x.shape[0],)](x, out, HIDDEN=x.shape[1], CHUNK=512)  # error: SHD102


def gather_rows(src: torch.Tensor) -> torch.Tensor:
    hidden_size = src.shape[1]
    # the wide block only where it divides; every other width takes the
    # 128 fallback, which 2880 still breaks (2880 % 128 = 64)
    BLOCK_H = 128 if hidden_size % 2048 != 0 else 2048  # error: SHD102
    assert hidden_size % BLOCK_H == 0
    return src.view(src.shape[0], -1, BLOCK_H).sum(1)


# a module constant with a lower-case name: the requirement's function holds
# no binding of it
_pack_width = 256


def packed_rows(x: torch.Tensor) -> torch.Tensor:
    hidden_size = x.shape[-1]
    assert hidden_size % _pack_width == 0  # error: SHD102
    return x.view(x.shape[0], -1, _pack_width)


def long_requirement(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    intermediate_size = w.shape[0]
    WEIGHT_TILE = 512  # error: SHD102
    # the modulo sits lines below the assert, far past its first line
    assert (
        x.is_contiguous()
        and w.is_contiguous()
        and x.dtype == w.dtype
        and x.shape[-1] == w.shape[-1]
        and x.device == w.device
        and intermediate_size % WEIGHT_TILE == 0
    ), "the expert weight must be contiguous, of the input's dtype and device, and tiled"
    return x @ w.t()


class RowPacker:
    def pack(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        block_cols = 1024  # error: SHD102
        if (
            hidden % block_cols
        ):
            raise ValueError("width must be a multiple of the column block")
        return x.view(-1, block_cols)
