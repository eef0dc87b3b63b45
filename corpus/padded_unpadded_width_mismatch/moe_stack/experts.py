"""Experts implementations: one pads the hidden width for its kernel and
writes the logical (unpadded) width back."""

from moe_stack.interfaces import ExpertsBase, PlainBase


class PaddedFp4Experts(ExpertsBase):
    def __init__(self, hidden_size: int) -> None:
        self.hidden_size_unpadded = hidden_size
        self.hidden_size = (hidden_size + 255) // 256 * 256

    def output_shape(self, tokens: int, hidden: int) -> tuple[int, ...]:
        return (tokens, self.hidden_size_unpadded)

    def output_width(self, hidden: int) -> int:
        return self.hidden_size_unpadded


class DenseExperts(ExpertsBase):
    def output_shape(self, tokens: int, hidden: int) -> tuple[int, ...]:
        return (tokens, hidden)


class PlainOnly(PlainBase):
    """No implementation of ``PlainBase`` declares an unpadded width."""
