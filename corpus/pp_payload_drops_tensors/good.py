"""The same decoder, carrying its own taps to the next stage and taking the
upstream ones from the payload it received."""

import torch
from torch import nn

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class TapDecoder(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, input_ids, positions, intermediate_tensors=None):
        if get_pp_group().is_first_rank:
            hidden, resid = self.embed(input_ids), None
        else:
            hidden = intermediate_tensors["hidden_states"]
            resid = intermediate_tensors["residual"]
        upstream = self.unpack_taps(intermediate_tensors)
        aux_hidden_states: list[torch.Tensor] = []
        for idx in range(self.first_layer, self.last_layer):
            hidden, resid = self.blocks[idx](positions, hidden, resid)
            if idx in self.tap_layers:
                aux_hidden_states.append(hidden + resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {
                    "hidden_states": hidden,
                    "residual": resid,
                    **self.pack_taps(aux_hidden_states),
                }
            )
        hidden, _ = self.final_norm(hidden, resid)
        aux_hidden_states = upstream + aux_hidden_states
        if aux_hidden_states:
            return hidden, aux_hidden_states
        return hidden
