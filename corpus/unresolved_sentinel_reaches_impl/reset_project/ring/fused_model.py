"""A model that fuses its attention: it builds and calls the implementation
itself, bypassing the layer that resolves the sentinel (the seed)."""

from typing import cast

from ring.latent import CompactLatentImpl, PreparedLatentImpl, RingLatentImpl


class FusedLatentBlock:
    def __init__(self, backend, heads: int) -> None:
        impl_cls = cast(type[RingLatentImpl], backend.get_impl_cls())
        self.impl = impl_cls(heads, 512)  # error: SHD201

    def forward(self, q, cache):
        return self.impl.decode(q, cache)


class CompactBlock:
    """By name, a subclass that inherits the re-set."""

    def __init__(self, heads: int) -> None:
        self.impl = CompactLatentImpl(heads, 256)  # error: SHD201
        # No backend hands this class out, so no layer resolves it: no
        # contract for this construction to skip (its own users decide).
        self.prepared = PreparedLatentImpl(heads)


class CheckedBlock:
    """Resolves right after construction, as the layer does: silent."""

    def __init__(self, backend, heads: int) -> None:
        impl_cls = cast(type[RingLatentImpl], backend.get_impl_cls())
        self.impl = impl_cls(heads, 512)
        if getattr(self.impl, "dcp_world_size", -1) < 1:
            self.impl.dcp_world_size = 1
            self.impl.dcp_rank = 0
