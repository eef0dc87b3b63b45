"""The payload's keys against what the receiving stage allocates."""

import torch
from torch import nn

from vllm.distributed import get_pp_group
from vllm.model_executor.models.utils import make_empty_intermediate_tensors_factory
from vllm.sequence import IntermediateTensors


class ForgetsResidual(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
            ["hidden_states", "residual"], config.hidden_size
        )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden + resid})  # error: SHD301
        return self.norm(hidden + resid)


class HandWrittenReceiver(nn.Module):
    def make_empty_intermediate_tensors(self, batch_size, dtype, device):
        return IntermediateTensors(
            {
                "hidden_states": torch.zeros((batch_size, self.width), dtype=dtype, device=device),
                "residual": torch.zeros((batch_size, self.width), dtype=dtype, device=device),
                "router_state": torch.zeros((batch_size, 8), dtype=dtype, device=device),
            }
        )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return hidden


class KeysAgree(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
            ["residual", "hidden_states"], config.hidden_size
        )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden


class KeysComputed(nn.Module):
    # receiver keys built at run time: nothing to compare
    def __init__(self, config):
        super().__init__()
        self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
            self.stage_keys(config), config.hidden_size
        )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden})
        return hidden
