"""Gate look-alikes: an allocation with a padded width, an exchange and a
consumer in one function, but never on the same tracked tensor, or with an
unpadded side whose names cannot pair with the padded width. The facts gate
rejects the whole file under the default options; all must stay silent."""

import torch

from somewhere import round_up


def stems_do_not_pair(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, hidden = x.shape
    n, k = y.shape
    buf = torch.empty(n, round_up(hidden, 256), device=x.device)
    buf.copy_(y)  # `y`'s width is `k`, not `hidden`: nothing pairs
    return buf


def padded_name_does_not_pair(x: torch.Tensor, hidden_padded: int) -> torch.Tensor:
    m, k = x.shape
    out = torch.empty(m, hidden_padded, device=x.device)
    out.copy_(x)  # `hidden_padded` pairs with `hidden`, not `k`
    return out


def allocation_not_bound(x: torch.Tensor) -> torch.Tensor:
    m, hidden = x.shape
    return torch.zeros(m, round_up(hidden, 128), device=x.device).copy_(x)


def exchange_between_untracked(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, hidden = x.shape
    scratch = torch.zeros(m, round_up(hidden, 128), device=x.device)
    x.copy_(y)
    return scratch


def consumed_buffer_never_written(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    k = x.shape[-1]
    a = torch.empty(x.shape[0], round_up(k, 64), device=x.device)
    b = torch.zeros(x.shape[0], round_up(k, 64), device=x.device)
    b[:, :k] = x
    return torch.matmul(a, w) + b.sum()
