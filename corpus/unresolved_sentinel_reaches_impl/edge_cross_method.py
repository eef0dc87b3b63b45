"""The factory's result kept on the instance by one method and constructed in
another, and a normal path that tests the sentinel with ``in``."""

from typing import cast

from engine.parallel import get_sp_group


class UlyssesRingImpl:
    def __init__(self, heads: int) -> None:
        self.heads = heads
        self.sp_rank = -1
        self.sp_world_size = -1


class UlyssesBackend:
    @staticmethod
    def get_impl_cls() -> type[UlyssesRingImpl]:
        return UlyssesRingImpl


class UlyssesAttention:
    """The normal path."""

    def __init__(self, backend: UlyssesBackend, heads: int) -> None:
        self.impl = cast(type[UlyssesRingImpl], backend.get_impl_cls())(heads)
        if self.impl.sp_rank in (-1, None):
            self.impl.sp_rank = get_sp_group().rank_in_group
            self.impl.sp_world_size = get_sp_group().world_size


class LazyVideoBlock:
    def __init__(self, backend: UlyssesBackend) -> None:
        self.impl_cls = cast(type[UlyssesRingImpl], backend.get_impl_cls())

    def build(self, heads: int) -> None:
        self.impl = self.impl_cls(heads)  # error: SHD201


class CheckedVideoBlock:
    def __init__(self, backend: UlyssesBackend) -> None:
        self.impl_cls = cast(type[UlyssesRingImpl], backend.get_impl_cls())

    def build(self, heads: int) -> None:
        self.impl = self.impl_cls(heads)
        if self.impl.sp_world_size < 1:
            self.impl.sp_world_size = 1
            self.impl.sp_rank = 0
