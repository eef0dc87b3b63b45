"""Splits stored on `self` by one method and split again by another, with the
group spelled differently each time; and the nested splits that are correct
(each group owns a share of the budget)."""

import math


class ReplicaPlanner:
    def __init__(self, cache_config, parallel_config, attn_dp_size, pp_size):
        self.ep_size = parallel_config.expert_parallel_size
        self.attn_dp_size = attn_dp_size
        self.pp_size = pp_size
        self.blocks_per_replica = cache_config.num_gpu_blocks // parallel_config.data_parallel_size
        self.slots_per_dp = math.ceil(cache_config.max_num_seqs / attn_dp_size)

    def allocate(self):
        # expert-parallel ranks own no share of the KV blocks
        return [0] * (self.blocks_per_replica // self.ep_size)  # error: SHD401

    def admission_limit(self):
        # `attn_dp_size` and `dp_size` are one group: split twice
        return int(self.slots_per_dp / self.attn_dp_size)  # error: SHD401

    def micro_batch_slots(self):
        # correct: pipeline micro-batches share a data-parallel replica's slots
        return max(self.slots_per_dp // self.pp_size, 1)

    def other_budget(self, cache_config):
        # a different budget divided once: no chain through the stored split
        return cache_config.num_cpu_blocks // self.ep_size


class TokenBudget:
    def __init__(self, sched, dcp_world_size, world_size):
        self.tokens_per_rank = sched.max_num_batched_tokens // dcp_world_size
        self.world_size = world_size

    def per_worker(self):
        # the world group contains the context-parallel one
        return self.tokens_per_rank // self.world_size  # error: SHD401


class Topology:
    def __init__(self, tp_size, dp_size):
        self.attn_tp_size = tp_size // dp_size

    def heads(self, num_heads):
        # topology arithmetic: a parallel size divided, never a budget
        return num_heads // self.attn_tp_size
