"""The same mismatch with other roundings, names and exchange operations."""

import torch
import torch.nn.functional as F

from somewhere import align, cdiv


def ceil_div_times(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    k_pad = cdiv(k, 64) * 64
    buf = torch.empty(m, k_pad, dtype=x.dtype, device=x.device)
    buf.copy_(x)  # error: SHD501
    return buf


def add_one_less(x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
    width = x.size(-1)
    padded_width = (width + 127) // 128 * 128
    acc = torch.zeros(x.shape[0], padded_width, device=x.device)
    acc += x  # error: SHD501
    acc.add_(residual)
    return acc


def out_keyword(a: torch.Tensor, b: torch.Tensor, hidden_size: int) -> torch.Tensor:
    y = torch.empty(a.shape[0], hidden_size, device=a.device)
    res = torch.empty(a.shape[0], align(hidden_size, 128), device=a.device)
    torch.mul(y, b, out=res)  # error: SHD501
    return res


class SglangStyleMoE:
    def combine(self, hidden_states: torch.Tensor, num_tokens: int) -> torch.Tensor:
        combined = hidden_states.new_zeros((num_tokens, self.padded_hidden_size))
        partial = torch.empty((num_tokens, self.hidden_size), device=hidden_states.device)
        combined.mul_(partial)  # error: SHD501
        return combined

    def staged(self, x: torch.Tensor) -> torch.Tensor:
        tokens, hidden_dim = x.shape
        staging = torch.empty((tokens, self.hidden_dim_padded), device=x.device)
        staging2 = torch.empty_like(staging)
        x.copy_(staging2)  # error: SHD501
        return x


def padded_rows(x: torch.Tensor, block_m: int) -> torch.Tensor:
    # Padding the token dimension is the same mistake in another dimension.
    n, hidden = x.shape
    rows = torch.empty(cdiv(n, block_m) * block_m, hidden, device=x.device)
    rows.copy_(x)  # error: SHD501
    return rows


def uninitialised_tail_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    k_padded = (k + 63) // 64 * 64
    a = torch.empty(x.shape[0], k_padded, dtype=x.dtype, device=x.device)
    a[:, :k] = x
    return torch.matmul(a, w)  # error: SHD501


def uninitialised_tail_reduction(x: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    buf = x.new_empty((x.shape[0], align(k, 32)))
    buf[..., :k].copy_(x)
    return buf.sum(dim=-1)  # error: SHD501


def uninitialised_tail_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    h = torch.empty(x.shape[0], cdiv(k, 16) * 16, device=x.device)
    h[:, :k] = x
    return F.linear(h, w)  # error: SHD501


class PrepareFinalize:
    def workspace(self, num_tokens: int, hidden: int) -> torch.Tensor:
        return torch.empty(num_tokens, round_up(hidden, 256))

    def finalize(self, expert_out: torch.Tensor) -> torch.Tensor:
        out = self.workspace(expert_out.shape[0], expert_out.shape[-1])
        out.copy_(expert_out)  # todo-error: SHD501 the padded buffer is allocated in another method
        return out
