"""Models that build the backend's implementation themselves, typed by the
interface: the fast backends keep -1 and reach the kernel with it."""

from typing import cast

from torch import nn

from .paged import PagedDecodeImpl


class InterfaceTypedAttention(nn.Module):
    def __init__(self, backend, num_heads: int, topk: int) -> None:
        super().__init__()
        impl_cls = cast(type[PagedDecodeImpl], backend.get_impl_cls())
        self.impl = impl_cls(num_heads, topk)  # error: SHD201


class InterfaceTypedNormalised(nn.Module):
    def __init__(self, backend, num_heads: int, topk: int) -> None:
        super().__init__()
        impl_cls = cast(type[PagedDecodeImpl], backend.get_impl_cls())
        self.impl = impl_cls(num_heads, topk)
        # context parallelism is off for this model: say so to the kernel
        if getattr(self.impl, "pcp_world_size", -1) < 1:
            self.impl.pcp_world_size = 1
            self.impl.pcp_rank = 0
