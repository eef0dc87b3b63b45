"""Look-alikes that must stay silent."""

from vllm.distributed import get_pp_group
from vllm.model_executor.models.utils import PPMissingLayer


class TiedHead:
    def __init__(self, config):
        # one model tying its own head to its own embedding
        if config.tie_word_embeddings:
            self.lm_head = self.model.embed_tokens
        self.transformer = self.build(config)
        self.lm_head.weight = self.transformer.wte.weight


class TiedHeadOtherNames:
    def __init__(self, config):
        # the same tying, with the head named as GPT-NeoX or InternLM2 name it
        self.vocab_out = self.make_head(config)
        if config.tie_word_embeddings:
            self.vocab_out.weight = self.backbone.embed_in.weight
            self.output.weight = self.model.tok_embeddings.weight


def rebuild_tied_head(model, make_linear):
    # a head built here, tied to the model's own embedding, then placed in
    # that same model: one model
    head = make_linear()
    head.weight = model.model.embed_tokens.weight
    model.lm_head = head


def record_the_embedding_dtype(layer, decoder):
    # values read from the embedding (its dtype, its width): nothing aliased
    layer.boundary_dtype = decoder.embed_tokens.weight.dtype
    layer.vocab = decoder.embed_tokens.num_embeddings


def delegate_the_getters(wrapper, core):
    # the getter methods themselves (not called): no module changes hands
    wrapper.get_input_embeddings = core.get_input_embeddings
    wrapper.get_output_embeddings = getattr(core, "get_output_embeddings")


class Wrapper:
    def __init__(self, config):
        # a wrapper exposing its own submodule
        self.language_model = self.build(config)
        self.embed_tokens = self.language_model.model.embed_tokens


def share_head_only(draft, target):
    # the draft runs on the last rank, where the head lives
    draft.lm_head = target.lm_head


def share_when_single_stage(draft, target):
    if get_pp_group().world_size == 1:
        draft.model.embed_tokens = target.model.embed_tokens


def share_on_last_rank_only(draft, target, pp_group):
    if pp_group.is_last_rank and not pp_group.is_first_rank:
        return
    draft.model.embed_tokens = target.model.embed_tokens


def share_unless_placeholder(draft, target):
    table = target.model.embed_tokens
    if isinstance(table, PPMissingLayer):
        return
    draft.model.embed_tokens = table


def share_after_validating(draft, target, expected_cls):
    table = getattr(target.model, "embed_tokens", None)
    if not isinstance(table, expected_cls):
        raise ValueError("the target's embedding is not on this rank")
    draft.model.embed_tokens = table


def share_with_size_variable(draft, target, parallel_config):
    pp_size = parallel_config.pipeline_parallel_size
    if pp_size > 1:
        raise NotImplementedError("draft embedding sharing needs a single stage")
    draft.model.embed_tokens = target.model.embed_tokens


class RefusesPipelines:
    def validate(self, cfg):
        if cfg.pp_size > 1:
            raise ValueError("this algorithm does not support pipeline parallelism")

    def run(self, runner):
        self.embed_tokens = runner.model.get_input_embeddings()


class Installer:
    def set_embed_and_head(self, embed, head):
        # installs what the caller passes: the caller decides
        self.model.embed_tokens.weight = embed
        self.lm_head.weight = head


def guarded_outside(draft, target):
    if get_pp_group().world_size != 1:
        raise NotImplementedError("single stage only")

    def wire():
        draft.model.embed_tokens = target.model.embed_tokens

    wire()
