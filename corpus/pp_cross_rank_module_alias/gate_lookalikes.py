"""Look-alikes that once stopped at the prefilter gates (now all read by
the check): each one borrows a module across objects or looks like it, and
a reason the rule stays silent."""

from vllm.distributed import get_pp_group


class TiesItsOwnHead:
    def tie(self):
        # ``lm_head`` is rank-placed: the receiver's owner is ``self``, which
        # holds ``self.model``: one model
        self.lm_head.weight = self.model.embed_tokens.weight


def share_on_one_stage(draft, target):
    # a pipeline group's size is a guard whatever ``guard-names`` says
    if get_pp_group().world_size != 1:
        raise NotImplementedError("draft embedding sharing needs one stage")
    draft.model.embed_tokens = target.model.embed_tokens


def make_wiring(pp_size):
    # the function around the alias looks at the pipeline layout
    def wire(draft, target):
        draft.model.embed_tokens = target.model.embed_tokens

    return wire if pp_size == 1 else None


class RefusesPipelinesUpFront:
    def check(self, parallel):
        if parallel.pipeline_parallel_size > 1:
            raise ValueError("no pipeline parallelism for this drafter")

    def load(self, target):
        self.draft.set_input_embeddings(target.get_input_embeddings())


def copy_config(draft, target):
    # not a module at all under the default names
    draft.config.hidden_size = target.config.hidden_size
    draft.set_dtype(target.model.dtype)
