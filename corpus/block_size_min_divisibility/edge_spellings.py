"""Spellings the text gate once dropped although the rule fires on them
(parenthesised callees, walrus aliases), next to look-alikes it rejects and
the rule is silent on too."""

import torch


def parenthesised_min(x: torch.Tensor) -> None:
    n = x.shape[-1]
    chunk = (min)(n, 1024)  # error: SHD101
    assert n % chunk == 0


def walrus_alias_in_a_call(x: torch.Tensor) -> None:
    n = x.shape[0]
    rows = min(n, 512)  # error: SHD101
    print(step := rows, n)
    assert n % step == 0


def parenthesised_range(x: torch.Tensor) -> None:
    n = x.numel()
    span = min(n, 4096)  # error: SHD101
    for start in (range)(0, n, span):
        x.narrow(0, start, span).zero_()


def clamped_below_too(x: torch.Tensor) -> None:
    # the binding is max(), not min(): no block size is capped here
    n = x.shape[-1]
    chunk = max(1, min(n, 1024))
    assert n % chunk == 0


def end_index_not_a_block(x: torch.Tensor) -> None:
    # an offset inside min(): an end index, not a block width
    n = x.shape[-1]
    stop = min(n - 1, 1024)
    assert n % stop == 0
