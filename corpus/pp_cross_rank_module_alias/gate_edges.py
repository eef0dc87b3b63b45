"""Aliases whose guards only look like guards, and spellings the former
prefilter gates replayed exactly."""

import logging

logger = logging.getLogger(__name__)


class WarnsButWires:
    def check(self, parallel):
        # a pipeline test that only warns does not refuse anything
        if parallel.pipeline_parallel_size > 1:
            logger.warning("pipeline parallelism is experimental here")

    def load(self, target):
        self.draft.set_input_embeddings(target.get_input_embeddings())  # error: SHD302


def share_per_tensor_group(draft, target, tp_group):
    # the tensor-parallel group's size says nothing about pipeline stages
    if tp_group.world_size > 1:
        draft.shard_vocab = True
    draft.model.embed_tokens = target.model.embed_tokens  # error: SHD302


def share_pair_with_rest(draft, target):
    # a starred name still receives the second end of the pair
    embed, *rest = target.model.get_embed_and_head()
    draft.model.set_embed_and_head(embed, rest)  # error: SHD302
