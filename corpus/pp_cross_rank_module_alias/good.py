"""The same loader, refusing pipeline parallelism honestly until the
embedding can be broadcast to the draft's rank."""

from vllm.distributed import get_pp_group
from vllm.model_executor.model_loader import get_model


def load_sketch_draft(target_model, draft_config):
    if get_pp_group().world_size > 1:
        raise NotImplementedError(
            "the sketch draft borrows the target's embedding and LM head; "
            "pipeline parallelism is not supported yet"
        )
    draft = get_model(model_config=draft_config)
    draft.model.embed_tokens = target_model.model.embed_tokens
    draft.lm_head = target_model.lm_head
    return draft
