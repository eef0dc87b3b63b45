"""A fork that runs its draft on the first stage, with its own module names
and its own pipeline-size spelling (see pyproject.toml)."""


def wire_draft(draft, target):
    draft.token_table = target.token_table
    draft.vocab_proj = target.vocab_proj  # error: SHD302


def wire_draft_checked(draft, target, topo):
    if topo.stage_count > 1:
        raise NotImplementedError("single stage only")
    draft.vocab_proj = target.vocab_proj


def upstream_names_are_replaced(draft, target):
    draft.lm_head = target.lm_head
    draft.model.embed_tokens = target.model.embed_tokens
