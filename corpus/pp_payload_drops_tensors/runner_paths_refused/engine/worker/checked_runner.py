"""The newer runner: under pipeline parallelism it refuses a model whose
decoder does not claim to carry its taps."""


def _decoder_of(model):
    return getattr(getattr(model, "language_model", model), "model", None)


def refuse_unless_taps_cross_stages(model, method):
    if not getattr(_decoder_of(model), "supports_aux_hidden_states_over_pp", False):
        raise ValueError(f"{type(model).__name__} cannot run {method} with pipeline stages")


def enable_draft_taps(model, config, stages):
    model.set_aux_hidden_state_layers(tuple(config.draft_tap_layers))
    if stages > 1:
        refuse_unless_taps_cross_stages(model, config.draft_method)
