"""The older runner refuses a draft that needs taps under pipeline stages
outright (a raise under a pipeline-size test, in the draft's block)."""


class LegacyStepRunner:
    def __init__(self, config):
        self.config = config
        self.wants_taps = False
        if config.draft_method in ("eagle3", "dflash"):
            self.wants_taps = True
            if config.pipeline_stages > 1:
                raise NotImplementedError(f"{config.draft_method} with pipeline stages is not supported")

    def prepare_draft_inputs(self):
        if self.wants_taps:
            self.model.set_aux_hidden_state_layers(tuple(self.config.draft_tap_layers))
