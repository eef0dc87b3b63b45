"""The same mistake spelled other ways and in other engines."""

import torch


def share_through_setattr(draft, target):
    setattr(draft.model, "embed_tokens", target.model.embed_tokens)  # error: SHD302


def share_through_locals(draft, target):
    inner = target.model
    table = getattr(inner, "embed_tokens", None) or getattr(inner, "embedding", None)
    if table is not None:
        draft.model.embed_tokens = table  # error: SHD302


def share_through_getter(draft, target):
    draft.set_input_embeddings(target.get_input_embeddings())  # error: SHD302


def share_weights_only(draft, target):
    with torch.no_grad():
        draft.lm_head.weight = target.model.embed_tokens.weight  # error: SHD302


def share_gpt_style(student, teacher):
    student.transformer.wte = teacher.transformer.wte  # error: SHD302


def share_neox_style(student, teacher):
    student.gpt_neox.embed_in = teacher.gpt_neox.embed_in  # error: SHD302


class SglangStyleWorker:
    def init_draft_head(self):
        # the getter hands out both ends of the pipeline at once
        embed, head = self.target_runner.model.get_embed_and_head()
        self.draft_runner.model.set_embed_and_head(embed, head)  # error: SHD302


class ProposerStyle:
    def load_model(self, target_model):
        self.model = self._build_draft()

        def _wire():
            self.model.model.embed_tokens = target_model.model.embed_tokens  # error: SHD302

        _wire()


class TiesTheDraftsHeadToTheTarget:
    def __init__(self, target):
        # a parameter of the draft's own head, taken from another model
        self.draft.vocab_out.weight = target.backbone.embed_in.weight  # error: SHD302


def head_built_here_for_the_draft(draft, target, make_linear):
    # a module built here takes the target's embedding, then goes to the draft
    head = make_linear()
    head.weight = target.model.embed_tokens.weight  # error: SHD302
    draft.lm_head = head


def share_the_embedding_storage(draft, target):
    # the tensor itself, not a value read from it
    draft.model.embed_tokens.weight.data = target.model.embed_tokens.weight.data  # error: SHD302


class PerStepDrafts:
    def bind_shared_tables(self):
        # one draft runner per step, reached through a subscript
        table, head = self.target_runner.model.get_embed_and_head()
        for step in range(self.num_steps):
            self.step_runners[step].model.set_embed_and_head(table, head)  # error: SHD302


class OwnStageDraft:
    def __init__(self, target_runner, stages, build):
        # the draft's own layout says one stage; where the target's
        # embedding lives is not checked
        self.runner = build(stages=replace(stages, pp_rank=0, pp_size=1))
        table, head = target_runner.model.get_embed_and_head()
        self.runner.model.set_embed_and_head(table, head)  # error: SHD302


def one_cause_three_sites(worker, keep_head):
    # one borrowed embedding installed three ways: one finding, the other
    # sites as related locations
    table, head = worker.target.get_embed_and_head()
    if keep_head:
        worker.draft.set_embed_and_head(table, head)  # error: SHD302
    else:
        worker.draft.set_embed(table)
    worker.shadow_draft.set_embed(table)
