"""A second model the older runner breaks, written otherwise: the taps go
through a capture keyword, the rank test is a stage accessor with an else
branch, and the mixin's ``False`` claims nothing."""

from engine.models.tap_mixin import TapCollector
from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class RoutedStack(TapCollector):
    def forward(self, ids, staged=None):
        h = self.embed(ids) if staged is None else staged["hidden_states"]
        collected_aux = []
        for i, layer in enumerate(self.layers):
            h = layer(h, capture=collected_aux.append if i in self.tap_layers else None)
        if get_pp_group().is_pipeline_last_stage:
            return self.norm(h), collected_aux
        else:
            return IntermediateTensors({"hidden_states": h})
