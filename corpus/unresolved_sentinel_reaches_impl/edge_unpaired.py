"""A None default that a later phase fills in (config/metadata style): the
resolver never constructs the class, so it is not a construct-then-resolve
contract and direct constructions stay silent."""

from dataclasses import dataclass


@dataclass
class CacheLayout:
    block_size: int = 16
    mamba_block_size: int | None = None


def finalize_layout(layout: CacheLayout, max_len: int) -> None:
    if layout.mamba_block_size is None:
        layout.mamba_block_size = max_len


def make_test_layout() -> CacheLayout:
    layout = CacheLayout(block_size=32)
    return layout


class Runner:
    def __init__(self) -> None:
        self.layout = CacheLayout()

    def pages(self, n: int) -> int:
        return n // self.layout.block_size
