"""Look-alikes that are correct, or another rule's."""

import math

import torch

ALIGN = 64


def explicit_contract(x: torch.Tensor) -> None:
    # a literal in the requirement states the kernel's contract
    assert x.shape[-1] % 128 == 0


def derived_block(x: torch.Tensor) -> int:
    hidden_size = x.shape[1]
    block = math.gcd(hidden_size, 1024)
    assert hidden_size % block == 0
    return block


def capped_block(x: torch.Tensor) -> int:
    # min(X, C) is SHD101's family, reported there once
    hidden_size = x.shape[1]
    block = min(hidden_size, 1024)  # error: SHD101
    assert hidden_size % block == 0
    return block


def pinned_width(x: torch.Tensor) -> int:
    head_dim = x.shape[-1]
    assert head_dim == 128
    BLOCK = 128
    assert head_dim % BLOCK == 0
    return BLOCK


def fallback_path(x: torch.Tensor) -> torch.Tensor:
    hidden = x.shape[-1]
    BLOCK = 256
    if hidden % BLOCK != 0:
        return x.float().pow(2).mean(-1)
    assert hidden % BLOCK == 0
    return x.view(-1, hidden // BLOCK, BLOCK).float().pow(2).mean((-1, -2))


def chain_that_divides(x: torch.Tensor) -> int:
    hidden = x.shape[-1]
    tile = 256 if hidden % 256 == 0 else 64
    assert hidden % tile == 0
    return tile


def every_model_passes(x: torch.Tensor) -> int:
    hidden_size = x.shape[-1]
    assert hidden_size % ALIGN == 0
    return hidden_size // ALIGN


def block_is_a_parameter(x: torch.Tensor, block_size: int = 128) -> int:
    hidden_size = x.shape[-1]
    assert hidden_size % block_size == 0
    return block_size


def token_counts(num_tokens: int) -> int:
    BLOCK_M = 128
    assert num_tokens % BLOCK_M == 0
    return num_tokens // BLOCK_M


MXFP4_BLOCK = 32


def format_block(w: torch.Tensor) -> None:
    # the number format's own block: the width must be a multiple of it
    intermediate_size = w.shape[-1]
    assert intermediate_size % MXFP4_BLOCK == 0


def page_sized(kv: torch.Tensor) -> None:
    page_size = kv.shape[1]
    BLOCK_KV = 64
    assert page_size % BLOCK_KV == 0


def negated_chain_that_divides(src: torch.Tensor) -> torch.Tensor:
    # the wide block where it divides, a fallback every listed width is a
    # multiple of otherwise
    hidden_size = src.shape[1]
    BLOCK_H = 64 if hidden_size % 2048 != 0 else 2048
    assert hidden_size % BLOCK_H == 0
    return src.view(src.shape[0], -1, BLOCK_H).sum(1)
