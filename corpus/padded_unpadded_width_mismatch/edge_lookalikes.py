"""Safe idioms around padded buffers: all must stay silent."""

import torch
import triton.language as tl

from somewhere import cdiv, launch, round_up


def zero_init_sliced_write(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    k_padded = round_up(k, 128)
    a = torch.zeros(x.shape[0], k_padded, dtype=x.dtype, device=x.device)
    a[:, :k] = x
    return torch.matmul(a, w)


def resize_then_copy(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    out = torch.empty(m, round_up(k, 256), device=x.device)
    out.resize_(m, k)
    out.copy_(x)
    return out


def sliced_exchange(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    out = torch.empty(m, round_up(k, 256), device=x.device)
    out[:, :k].copy_(x)
    x.copy_(out[:, :k])
    out[..., :k] += x
    return out


def result_sliced_back(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    a = torch.empty(x.shape[0], cdiv(k, 64) * 64, device=x.device)
    a[:, :k] = x
    y = torch.matmul(a, w)[:, :k]
    z = torch.matmul(a, w)
    return y + z[:, :k]


def tail_zeroed(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    a = torch.empty(x.shape[0], round_up(k, 64), device=x.device)
    a[:, :k] = x
    a[:, k:].zero_()
    return torch.matmul(a, w)


def callee_knows_padding(x: torch.Tensor, hidden_padded: int) -> torch.Tensor:
    m, hidden = x.shape
    out = torch.empty(m, hidden_padded, device=x.device)
    launch(x, hidden_padded, out=out)
    return out


def unpadded_names(x: torch.Tensor, hidden_unpadded: int, non_padded_dim: int) -> torch.Tensor:
    m, hidden = x.shape
    a = torch.empty(m, hidden_unpadded, device=x.device)
    b = torch.empty(m, non_padded_dim, device=x.device)
    a.copy_(x)
    b.copy_(a)
    return b


def padded_to_padded(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    kp = round_up(k, 128)
    a = torch.zeros(m, kp, device=x.device)
    b = torch.empty(m, kp, device=x.device)
    b.copy_(a)
    b.mul_(a)
    return b


def broadcast_scale(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    a = torch.zeros(m, round_up(k, 128), device=x.device)
    scale = torch.ones(m, 1, device=x.device)
    a.mul_(scale)
    return a


def other_dimension(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    # Padded along the hidden width; the other tensor differs only in rows.
    a = torch.zeros(m, round_up(k, 128), device=x.device)
    rows = torch.empty(m, 4, device=x.device)
    rows.copy_(a[:, :4])
    return rows


def kernel_accumulator(p, v, BLOCK_M: tl.constexpr, HEAD_SIZE_PADDED: tl.constexpr):
    acc = tl.zeros([BLOCK_M, HEAD_SIZE_PADDED], dtype=tl.float32)
    acc += tl.dot(p, v)
    return acc


def rebound_after_padding(x: torch.Tensor) -> torch.Tensor:
    m, hidden = x.shape
    hidden_padded = round_up(hidden, 256)
    # `x` is padded itself from here on: both sides have the padded width.
    x = torch.nn.functional.pad(x, (0, hidden_padded - hidden))
    out = torch.empty(m, hidden_padded, device=x.device)
    out.copy_(x)
    return out


def custom_op_fills_padded_output(x: torch.Tensor, ops) -> torch.Tensor:
    m, k = x.shape
    # A custom kernel reads the padded width off the buffer it is given.
    q = torch.empty(m, round_up(k, 32), device=x.device)
    ops.quantize_rows(x, out=q)
    torch.ops.custom.quantize_rows(x, out=q)
    return q
