"""A concrete backend in its own file: it inherits the unresolved fields."""

from .common import SparseDecodeImplBase


class FlashSparseImpl(SparseDecodeImplBase):
    def __init__(self, num_heads: int, topk: int, window: int) -> None:
        super().__init__(num_heads, topk)
        self.window = window


class FlashSparseBackend:
    @staticmethod
    def get_impl_cls() -> type[FlashSparseImpl]:
        return FlashSparseImpl
