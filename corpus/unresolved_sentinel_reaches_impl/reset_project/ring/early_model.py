"""Look-alikes that stay silent: a sentinel written before the base's
``__init__`` that resolves it, and a base that resolves it in ``__init__``
after a subclass wrote the sentinel first."""

from ring.base import EarlyLatentImpl, TpBase


class EarlyBlock:
    def __init__(self, heads: int) -> None:
        self.impl = EarlyLatentImpl(heads)


class TpSub(TpBase):
    def __init__(self) -> None:
        self.tp_world_size = -1
        super().__init__()


def build():
    sub = TpSub()
    return sub.tp_world_size * 2


def resolve(obj):
    if obj.tp_world_size == -1:
        obj.tp_world_size = 2
