"""A tap mixin that says no by default: only the newer runner reads it."""


class TapCollector:
    supports_aux_hidden_states_over_pp = False
    tap_layers = ()

    def _set_aux_hidden_state_layers(self, layers):
        self.tap_layers = tuple(layers)
