"""The receiving side is allocated by a base class; the subclass only
overrides ``forward`` (no receiver, no taps of its own)."""

from torch import nn

from vllm.distributed import get_pp_group
from vllm.model_executor.models.utils import make_empty_intermediate_tensors_factory
from vllm.sequence import IntermediateTensors


class StageBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
            ["hidden_states", "residual", "expert_bias"], config.hidden_size
        )


class StageWithoutBias(StageBase):
    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return self.norm(hidden + resid)


class StageWithBias(StageBase):
    def forward(self, hidden, resid, bias):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid, "expert_bias": bias})
        return self.norm(hidden + resid)
