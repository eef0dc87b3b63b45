"""Look-alikes that once stopped at the prefilter gates (now all read by
the check): each one has the words and the shape a finding needs, and a
reason the rule gives up."""

from torch import nn

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class PacksItsTaps(nn.Module):
    # the non-last payload unpacks a helper's dict (``**``): whatever it
    # holds may carry the taps; the plain ``return hidden`` after the early
    # return is on the last rank, not a payload
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {
                    "hidden_states": hidden,
                    "residual": resid,
                    **self.pack_local_aux_hidden_states(aux_hidden_states),
                }
            )
        if aux_hidden_states:
            return hidden, aux_hidden_states
        return hidden


class ReceiverMethodAgrees(nn.Module):
    # a hand-written receiver allocating exactly the keys sent
    def make_empty_intermediate_tensors(self, batch_size, dtype, device):
        return IntermediateTensors(
            {
                "residual": self.zeros(batch_size, dtype, device),
                "hidden_states": self.zeros(batch_size, dtype, device),
            }
        )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden


class ReceiverMethodOpaque(nn.Module):
    # the receiver's keys are computed: nothing to compare
    def make_empty_intermediate_tensors(self, batch_size, dtype, device):
        return IntermediateTensors(self.stage_buffers(batch_size, dtype, device))

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden})
        return hidden


class KeyedPayloadOnTheLastRank(nn.Module):
    # a keyed payload in the last rank's branch is never compared
    def make_empty_intermediate_tensors(self, batch_size, dtype, device):
        return IntermediateTensors({"hidden_states": self.zeros(batch_size, dtype, device)})

    def forward(self, hidden, resid):
        if get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden
