"""Correct code that looks alike: all must stay silent."""

import copy
import dataclasses


def topology(tp_size, moe_ep_size, moe_dp_size, attn_dp_size, attn_cp_size):
    # Numerators that are themselves parallel sizes: group arithmetic.
    moe_tp_size = tp_size // moe_ep_size // moe_dp_size
    attn_tp_size = tp_size // attn_dp_size // attn_cp_size
    return moe_tp_size, attn_tp_size


def heads_and_hidden(config, tp_size, cp_size):
    num_heads = config.num_attention_heads // tp_size
    head_chunk = num_heads // cp_size
    hidden = config.hidden_size // tp_size // cp_size
    return head_chunk, hidden


def reshard(full_slot_bytes, src_attn_tp_size, dst_attn_tp_size):
    # Two TP layouts, each a single split of the same total.
    src = full_slot_bytes // src_attn_tp_size
    dst = full_slot_bytes // dst_attn_tp_size
    ratio = src_attn_tp_size // dst_attn_tp_size
    return src, dst, ratio


def estimate_flops(num_activated_tokens, ffn_ep_size, dp_size):
    # A local estimate divided in place: no shared state is touched.
    num_activated_tokens //= ffn_ep_size
    return num_activated_tokens


def local_budget(cfg, dp_size):
    blocks = cfg.num_blocks
    blocks //= dp_size
    return blocks


def combined_group(num_blocks, dp_size, ep_size):
    # One deliberate split over the combined group.
    return num_blocks // (dp_size * ep_size)


def undone(num_blocks, dp_size, ep_size):
    per_dp = num_blocks // dp_size
    total = per_dp * dp_size
    return total // ep_size


def exclusive_branches(num_blocks, use_ep, dp_size, ep_size):
    if use_ep:
        blocks = num_blocks // ep_size
    else:
        blocks = num_blocks // dp_size
    return blocks


def renamed_then_reused(num_blocks, dp_size, ep_size, other):
    share = num_blocks // dp_size
    share = other.num_gpu_blocks
    return share // ep_size


def page_split(page_size, dcp_size, ring_size, state_page_bytes):
    local_page = page_size // dcp_size
    last_dim = state_page_bytes // ring_size // 2
    return local_page, last_dim


def private_copy(cache_config, dp_size):
    cfg = copy.deepcopy(cache_config)
    cfg.num_gpu_blocks //= dp_size
    return cfg


def per_rank_keyword(make_pool, num_blocks, dp_size):
    # A new object takes the per-rank share once; nothing is written back.
    return make_pool(num_blocks=num_blocks // dp_size)


def per_rank_copy(cache_config, dp_size):
    # Rebinding a local name to a per-rank copy leaves the caller's config intact.
    cache_config = dataclasses.replace(
        cache_config, num_gpu_blocks=cache_config.num_gpu_blocks // dp_size
    )
    return cache_config


class Proposer:
    def __init__(self, cpu_count, tp_size, cfg):
        # Assigned fresh in this constructor, then split once.
        self.max_num_threads = cpu_count // 2
        self.max_num_threads //= tp_size
        self.token_budget = cfg.token_budget
        self.token_budget //= tp_size
