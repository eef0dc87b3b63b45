"""Findings whose shape the former prefilter gates replayed exactly (the
rank context of a plain return, a receiver method in the same class)."""

from torch import nn

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class FallsThroughToThePayload(nn.Module):
    # ``if last: return`` makes the rest of the body the other ranks' path:
    # the plain ``return payload`` there is their payload, built without the
    # taps
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if get_pp_group().is_last_rank:
            return hidden, aux_hidden_states
        payload = {"hidden_states": hidden, "residual": resid}
        return payload  # error: SHD301


class ReceiverMethodMissesAKey(nn.Module):
    def make_empty_intermediate_tensors(self, batch_size, dtype, device):
        return IntermediateTensors({"hidden_states": self.zeros(batch_size, dtype, device)})

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if get_pp_group().is_last_rank:
            return hidden
        else:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
