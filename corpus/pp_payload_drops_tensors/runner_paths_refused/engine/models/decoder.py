"""A decoder that leaves its taps behind, in a project whose only runner
refuses a draft that needs them under pipeline stages: silent."""

from torch import nn

from engine.models.tap_mixin import TapCollector
from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class StageLocalTaps(nn.Module, TapCollector):
    def forward(self, ids, positions, staged=None):
        state = self.embed(ids) if staged is None else staged["hidden_states"]
        stage_taps = []
        for index in range(self.first, self.last):
            if index in self.tap_layers:
                stage_taps.append(state)
            state = self.blocks[index](positions, state)
        if get_pp_group().is_last_rank:
            return state, stage_taps
        return IntermediateTensors({"hidden_states": state})
