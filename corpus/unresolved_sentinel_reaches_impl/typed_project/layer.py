"""The normal path: build the kernel, then resolve its ring size."""

from engine.distributed import get_ring_group

from .kernels import RingDecodeKernel


class RingLayer:
    def __init__(self, backend, heads: int) -> None:
        kernel_cls = backend.get_impl_cls()
        self.kernel: RingDecodeKernel = kernel_cls(heads)
        if self.kernel.ring_world_size == -1:
            self.kernel.ring_world_size = get_ring_group().world_size
