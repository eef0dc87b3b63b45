"""A draft loader that wires the draft to the target's embedding and LM head
by reference, with no look at the pipeline layout."""

from vllm.model_executor.model_loader import get_model


def load_sketch_draft(target_model, draft_config):
    draft = get_model(model_config=draft_config)
    draft_inner = draft.model
    target_inner = target_model.model
    # the draft checkpoint ships neither table: borrow the target's
    draft_inner.embed_tokens = target_inner.embed_tokens  # error: SHD302
    draft.lm_head = target_model.lm_head
    return draft
