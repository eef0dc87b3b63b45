"""Taps dropped by a model that never says whether they survive pipeline
parallelism: reported as a warning (an engine that checks the flag refuses
the combination at start-up; nothing in this code does)."""

from torch import nn

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class NeverClaims(nn.Module):
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return hidden, aux_hidden_states


class RefusesOutright(nn.Module):
    # the runtime refuses a draft under pipeline parallelism for this model
    supports_aux_hidden_states_over_pp = False

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden, aux_hidden_states
