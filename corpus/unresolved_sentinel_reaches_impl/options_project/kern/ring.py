"""Configured names: `*_degree` attributes, sentinel -2, factory
`make_kernel_cls`, normaliser `clamp_*`."""


def clamp_degree(kernel) -> None:
    kernel.ring_degree = max(kernel.ring_degree, 1)


class RingKernelImpl:
    def __init__(self) -> None:
        self.ring_degree = -2
        # -1 and a `*_world_size` name are not configured here: not a sentinel.
        self.dcp_world_size = -1


class RingBackend:
    @staticmethod
    def make_kernel_cls() -> type[RingKernelImpl]:
        return RingKernelImpl

    @staticmethod
    def get_impl_cls() -> type[RingKernelImpl]:
        return RingKernelImpl


class RingLayer:
    def __init__(self, backend: RingBackend) -> None:
        self.k = backend.make_kernel_cls()()
        if self.k.ring_degree == -2:
            self.k.ring_degree = 2
        if self.k.dcp_world_size == -1:
            self.k.dcp_world_size = 1


class DirectRing:
    def __init__(self, backend: RingBackend) -> None:
        kernel_cls = backend.make_kernel_cls()
        self.k = kernel_cls()  # error: SHD201


class ClampedRing:
    def __init__(self, backend: RingBackend) -> None:
        self.k = backend.make_kernel_cls()()
        clamp_degree(self.k)


class ThroughUnconfiguredFactory:
    def __init__(self, backend: RingBackend) -> None:
        impl_cls = backend.get_impl_cls()
        self.k = impl_cls()
