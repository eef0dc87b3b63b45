"""The older runner: it turns the target's taps on for the draft and never
asks whether they survive pipeline parallelism: the one finding of the models
it breaks is here, where the fix belongs."""


class LegacyStepRunner:
    def __init__(self, config):
        self.config = config
        self.wants_taps = config.draft_method in ("eagle3", "dflash")

    def prepare_draft_inputs(self):  # error: SHD301
        if not self.wants_taps:
            return
        layers = self.config.draft_tap_layers or self.model.default_tap_layers()
        self.model.set_aux_hidden_state_layers(tuple(layers))
