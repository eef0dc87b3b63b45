"""The base model: claims its taps survive pipeline parallelism, and its own
forward does carry them."""

import torch
from torch import nn

from vllm.distributed import get_pp_group
from vllm.model_executor.models.utils import make_empty_intermediate_tensors_factory
from vllm.sequence import IntermediateTensors


class StageBackbone(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def __init__(self, config):
        super().__init__()
        self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
            ["hidden_states", "residual"], config.hidden_size
        )

    def _maybe_add_tap(self, taps, layer_idx, hidden, resid):
        if layer_idx in self.tap_layers:
            taps.append(hidden + resid)
        return taps

    def forward(self, hidden, resid, intermediate_tensors=None):
        upstream = self.unpack_taps(intermediate_tensors)
        aux_hidden_states: list[torch.Tensor] = []
        for idx, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            self._maybe_add_tap(aux_hidden_states, idx, hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {"hidden_states": hidden, "residual": resid, **self.pack_taps(aux_hidden_states)}
            )
        return self.norm(hidden, resid), upstream + aux_hidden_states
