"""Direct constructions that normalise, check or resolve in place: silent."""

from engine.parallel import get_dcp_group


class PagedDecodeImpl:
    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.dcp_world_size = -1
        self.dcp_rank = -1

    def bind_cp_group(self, group) -> None:
        self.dcp_world_size = group.world_size
        self.dcp_rank = group.rank_in_group


class PagedDecodeLayer:
    def __init__(self) -> None:
        self.impl = PagedDecodeImpl(16)
        if self.impl.dcp_world_size == -1:
            self.impl.dcp_world_size = get_dcp_group().world_size
            self.impl.dcp_rank = get_dcp_group().rank_in_group


def resolve_cp_fields(impl: PagedDecodeImpl) -> None:
    if impl.dcp_world_size < 0:
        impl.dcp_world_size = 1
        impl.dcp_rank = 0


class WithMax:
    def __init__(self) -> None:
        self.impl = PagedDecodeImpl(16)
        self.impl.dcp_world_size = max(self.impl.dcp_world_size, 1)
        self.impl.dcp_rank = max(self.impl.dcp_rank, 0)


class WithAssert:
    def __init__(self) -> None:
        impl = PagedDecodeImpl(16)
        assert impl.dcp_world_size > 0 and impl.dcp_rank >= 0
        self.impl = impl


class WithLateMethod:
    def __init__(self) -> None:
        self.impl = PagedDecodeImpl(16)
        self.impl.bind_cp_group(get_dcp_group())


class WithResolverCall:
    def __init__(self) -> None:
        self.impl = PagedDecodeImpl(16)
        resolve_cp_fields(self.impl)


class WithSetattr:
    def __init__(self) -> None:
        impl = PagedDecodeImpl(16)
        setattr(impl, "dcp_world_size", 1)
        setattr(impl, "dcp_rank", 0)
        self.impl = impl


class LazyWrapper:
    """Constructs in __init__, resolves lazily in forward: the normal path."""

    def __init__(self) -> None:
        self.impl = PagedDecodeImpl(32)

    def forward(self, x):
        if self.impl.dcp_world_size == -1:
            self.impl.dcp_world_size = get_dcp_group().world_size
            self.impl.dcp_rank = get_dcp_group().rank_in_group
        return x
