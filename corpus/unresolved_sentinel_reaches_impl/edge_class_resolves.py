"""The class resolves its own sentinel (or never uses one): constructing it
directly is fine."""

from dataclasses import dataclass

from engine.parallel import get_cp_group


class ResolvesInNew:
    cp_world_size: int = -1
    cp_rank: int = -1

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.cp_world_size, self.cp_rank = get_cp_group().world_size, get_cp_group().rank_in_group
        return self


class ResolvesInInit:
    def __init__(self, enabled: bool) -> None:
        self.cp_world_size = -1
        self.cp_world_size = get_cp_group().world_size if enabled else 1
        self.cp_rank = -1
        assert self.cp_rank >= 0 or not enabled


@dataclass
class ResolvesInPostInit:
    cp_world_size: int = -1

    def __post_init__(self) -> None:
        self.cp_world_size = get_cp_group().world_size


class NeutralDefaults:
    cp_world_size = 1
    cp_rank = 0


class DisabledMeansMinusOne:
    """-1 is a real value here ("no fixed split"): nobody resolves it."""

    def __init__(self) -> None:
        self.fixed_split_size = -1


class Wrapper:
    def __init__(self) -> None:
        self.a = ResolvesInNew()
        self.b = ResolvesInInit(True)
        self.c = ResolvesInPostInit()
        self.d = NeutralDefaults()
        self.e = DisabledMeansMinusOne()
        if self.a.cp_world_size == -1:
            self.a.cp_world_size = 1
        if self.b.cp_world_size == -1:
            self.b.cp_world_size = 1
        if self.c.cp_world_size == -1:
            self.c.cp_world_size = 1
        if self.d.cp_world_size == -1:
            self.d.cp_world_size = 1


class Direct:
    def __init__(self) -> None:
        self.a = ResolvesInNew()
        self.b = ResolvesInInit(False)
        self.c = ResolvesInPostInit()
        self.d = NeutralDefaults()
        self.e = DisabledMeansMinusOne()

    def forward(self, n: int) -> int:
        return n // self.a.cp_world_size + n // self.e.fixed_split_size
