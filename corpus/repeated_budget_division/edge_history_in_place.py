"""A launcher's arguments record resolved in place: the data-parallel split of
a per-batch token budget is stored back on the field it was read from, so a
second resolution (a record rebuilt with `dataclasses.replace`, a benchmark
that constructs it twice) halves the budget again. The shape SGLang shipped
from 0.4 to 0.5.16 (sglang#4599, sglang#35907); names here are original."""

import dataclasses


@dataclasses.dataclass
class LaunchArgs:
    prefill_chunk_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_state_cache_size: int | None = None
    dp_size: int = 1
    enable_dp_attention: bool = False

    def __post_init__(self):
        # A default filled in one branch only: on the other path the field
        # still holds what the caller passed (or the last resolution left).
        if self.chunked_prefill_size is None:
            if self.dp_size > 4:
                self.chunked_prefill_size = 4096
            else:
                self.chunked_prefill_size = 8192
        if self.enable_dp_attention:
            self.chunked_prefill_size = self.chunked_prefill_size // self.dp_size  # error: SHD401

    def resolve_state_pool(self):
        # The attention-DP size spelled as a conditional: the group when it is on.
        self.max_state_cache_size = self.max_state_cache_size // (  # error: SHD401
            self.dp_size if self.enable_dp_attention else 1
        )


def publish(settings, runtime, per_rank):
    # A setter reached through a call's result, reading the budget off another
    # call's result: the written value is read again by the next call.
    runtime().override("state_pool", max_state_cache_size=settings().max_state_cache_size // per_rank.attn_dp_size)  # error: SHD401


# -- correct look-alikes --------------------------------------------------------


@dataclasses.dataclass
class ResolvedOnce:
    chunked_prefill_size: int = 8192
    dp_size: int = 1

    def per_rank_chunk(self):
        # derived into a new name: the record keeps the operator's value
        return self.chunked_prefill_size // self.dp_size


class Pool:
    def __init__(self, cfg, dp_size):
        # set on every path in this constructor before the split: a fresh copy
        self.max_state_cache_size = cfg.max_state_cache_size
        self.max_state_cache_size //= dp_size


def declare(settings, declare_value, group):
    # a declaration (not an override of the value it reads) is made once
    declare_value("parallel", chunked_prefill_size=settings.chunked_prefill_size // group.attn_dp_size)


def maybe_shrink(args, flag):
    # not a parallel size when off: the other arm is 2, not 1
    return args.chunked_prefill_size // (args.dp_size if flag else 2)
