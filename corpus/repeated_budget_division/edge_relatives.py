"""The same mistake under other names, in other engines' vocabulary."""

import math

from somewhere import cdiv, get_expert_parallel_world_size, get_tensor_model_parallel_world_size


def one_expression(num_blocks, dp_size, ep_size):
    return num_blocks // dp_size // ep_size  # error: SHD401


def sglang_token_pool(server_args, attn_dp_size, moe_ep_size):
    max_total_num_tokens = server_args.max_total_num_tokens
    per_dp = max(1, max_total_num_tokens // attn_dp_size)
    return per_dp // moe_ep_size  # error: SHD401


def memory_true_division(kv_cache_memory_bytes, tp_size, pp_size):
    per_stage = int(kv_cache_memory_bytes / pp_size)
    return int(per_stage / tp_size)  # error: SHD401


def ceil_splits(token_budget, parallel_config):
    share = cdiv(token_budget, parallel_config.data_parallel_size)
    return cdiv(share, get_expert_parallel_world_size())  # error: SHD401


def through_getters(max_num_batched_tokens, dcp_world_size):
    tokens = math.ceil(max_num_batched_tokens / get_tensor_model_parallel_world_size())
    return tokens // dcp_world_size  # error: SHD401


def local_in_place_twice(cfg, dp_size, ep_size):
    n = cfg.num_blocks // dp_size
    n //= ep_size  # error: SHD401
    return n


def through_units(available_memory, block_bytes, dp_size, ep_size):
    # Converting to blocks between the splits does not hide the second split.
    blocks = available_memory // dp_size // block_bytes
    return blocks // ep_size  # error: SHD401


class Worker:
    def init_cache(self, num_gpu_blocks, ep_size):
        self.blocks_per_dp = num_gpu_blocks // self.dp_size
        self.blocks_per_rank = self.blocks_per_dp // ep_size  # error: SHD401

    def in_branch(self, cfg, use_ep, ep_size):
        blocks = cfg.num_blocks // self.dp_size
        if use_ep:
            blocks = blocks // ep_size  # error: SHD401
        return blocks


def _expert_share(num_blocks, ep_size):
    return num_blocks // ep_size  # todo-error: SHD401 the first split happens in the caller (no inter-procedural tracking)


def across_functions(cache_config, dp_size, ep_size):
    return _expert_share(cache_config.num_gpu_blocks // dp_size, ep_size)
