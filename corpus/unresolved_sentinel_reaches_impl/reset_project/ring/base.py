"""Every implementation reads its decode context-parallel group when it is
created (``__new__`` runs before any subclass ``__init__``)."""

from ring.groups import get_dcp_group


class LatentImplBase:
    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.dcp_world_size = get_dcp_group().world_size
        self.dcp_rank = get_dcp_group().rank_in_group
        return self

    def __init__(self, heads: int) -> None:
        self.heads = heads


class EarlyLatentImpl(LatentImplBase):
    """Writes the sentinel first and lets its base's ``__init__`` fill it in:
    nothing reaches a caller unresolved."""

    def __init__(self, heads: int) -> None:
        self.tp_world_size = -1
        super().__init__(heads)


class TpBase:
    def __init__(self) -> None:
        self.tp_world_size = 4
