"""The family written other ways: inline grids, products, lambdas, kernel
loops, SGLang-style methods, tokens."""

import torch
import triton
import triton.language as tl

TILE_N = 128


@triton.jit
def _head_decay_kernel(q_ptr, o_ptr, D, BLOCK_SIZE: tl.constexpr):
    bh = tl.program_id(0)
    pd = tl.program_id(1)
    offs = pd * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < D
    tl.store(o_ptr + bh * D + offs, tl.exp(tl.load(q_ptr + bh * D + offs, mask=m)), mask=m)


def head_decay(q: torch.Tensor, BLOCK_SIZE: int = 32) -> torch.Tensor:
    B, H, D = q.shape
    o = torch.empty_like(q)
    _head_decay_kernel[(B * H, D // BLOCK_SIZE)](q, o, D, BLOCK_SIZE=BLOCK_SIZE)  # error: SHD103
    return o


@triton.jit
def _router_kernel(x_ptr, w_ptr, out_ptr, K, N, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k in range(K):
        acc += tl.load(x_ptr + k) * tl.load(w_ptr + k * N + cols)
    tl.store(out_ptr + cols, acc)


def router_logits(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    K, n_experts = w.shape
    out = x.new_empty(n_experts)
    grid = lambda meta: (n_experts // meta["BLOCK_N"],)  # noqa: E731  # error: SHD103
    _router_kernel[grid](x, w, out, K, n_experts, BLOCK_N=16)
    small = (n_experts // TILE_N,)  # error: SHD103
    _router_kernel[small](x, w, out, K, n_experts, BLOCK_N=TILE_N)
    return out


@triton.jit
def _rowsum_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_K], dtype=tl.float32)
    for kb in tl.static_range(N // BLOCK_K):  # error: SHD103
        acc += tl.load(x_ptr + row * N + kb * BLOCK_K + tl.arange(0, BLOCK_K))
    tl.store(out_ptr + row, tl.sum(acc))


class SglangStyleQuant:
    def quantize(self, x: torch.Tensor, row_block: int = 128) -> list[torch.Tensor]:
        hidden_size = x.shape[-1]
        scales = []
        for g in range(hidden_size // row_block):  # error: SHD103
            scales.append(x[..., g * row_block : (g + 1) * row_block].abs().amax(-1))
        return scales


def token_blocks(x: torch.Tensor, BLOCK_M: int = 64) -> list[torch.Tensor]:
    num_tokens = x.shape[0]
    return [x[i * BLOCK_M : (i + 1) * BLOCK_M].mean(0) for i in range(num_tokens // BLOCK_M)]  # todo-error: SHD103 comprehension loops are not read


def chunked_sums(x: torch.Tensor, CHUNK: int = 256) -> torch.Tensor:
    # the loop's end on a line of its own, below the ``range(``
    width = x.shape[-1]
    total = x.new_zeros(x.shape[0])
    for c in range(
        0,
        width // CHUNK,  # error: SHD103
    ):
        total += x[:, c * CHUNK : (c + 1) * CHUNK].sum(-1)
    return total
