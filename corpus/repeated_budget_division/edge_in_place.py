"""A division stored back into shared state is wrong the second time it runs."""

import dataclasses

_POOL_BYTES = 1 << 30


def shard_config(cache_config, dp_size):
    cache_config.num_gpu_blocks = cache_config.num_gpu_blocks // dp_size  # error: SHD401


def shard_scheduler(scheduler_config, parallel_config):
    scheduler_config.max_num_seqs //= parallel_config.data_parallel_size  # error: SHD401


def apply_overrides(ctx, max_running_requests, attn_dp_size):
    ctx.override(max_running_requests=max_running_requests // attn_dp_size)  # error: SHD401


class Engine:
    def shard(self, dp_size):
        self.config = dataclasses.replace(
            self.config,
            kv_cache_memory_bytes=self.config.kv_cache_memory_bytes // dp_size,  # error: SHD401
        )

    def retry_profile(self, tp_size):
        self.max_num_batched_tokens = self.max_num_batched_tokens // tp_size  # error: SHD401


def shard_global(world_size):
    global _POOL_BYTES
    _POOL_BYTES //= world_size  # error: SHD401
