"""A model that skips SparseDecodeLayer and builds the backend itself."""

from torch import nn

from backend_pkg import FlashSparseImpl

from .flash import FlashSparseBackend


class ToyModelSparseAttention(nn.Module):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__()
        # The subclass lives in flash.py, the sentinel in common.py, the
        # resolver in wrapper.py.
        self.impl = FlashSparseImpl(num_heads, topk, window=128)  # error: SHD201


class ToyModelSparseAttentionViaFactory(nn.Module):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__()
        impl_cls = FlashSparseBackend.get_impl_cls()
        attn_impl = impl_cls(num_heads, topk, window=64)  # error: SHD201
        self.impl = attn_impl
