"""Same direct construction, normalised where it is built: silent."""

from torch import nn

from .flash import FlashSparseBackend, FlashSparseImpl


class NormalisedSparseAttention(nn.Module):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__()
        self.impl = FlashSparseImpl(num_heads, topk, window=128)
        # Prefill CP is off for this model.
        self.impl.pcp_world_size = max(self.impl.pcp_world_size, 1)
        self.impl.pcp_rank = max(self.impl.pcp_rank, 0)


class AssertingSparseAttention(nn.Module):
    def __init__(self, num_heads: int, topk: int) -> None:
        super().__init__()
        impl = FlashSparseBackend.get_impl_cls()(num_heads, topk, window=32)
        assert impl.pcp_world_size > 0 and impl.pcp_rank >= 0, "resolve CP before use"
        self.impl = impl
