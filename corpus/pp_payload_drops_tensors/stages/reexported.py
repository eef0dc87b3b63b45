"""Subclasses that reach the base through the package's re-export."""

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors

from stages import StageBackbone


class FaithfulVariant(StageBackbone):
    def forward(self, hidden, resid, intermediate_tensors=None):
        upstream = self.unpack_taps(intermediate_tensors)
        aux_hidden_states = []
        for idx, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            self._maybe_add_tap(aux_hidden_states, idx, hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {"hidden_states": hidden, "residual": resid, **self.pack_taps(aux_hidden_states)}
            )
        return self.norm(hidden, resid), upstream + aux_hidden_states


class LeanHandoff(StageBackbone):
    # the base allocates hidden_states + residual for the next stage
    def forward(self, hidden, resid, intermediate_tensors=None):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden + resid})  # error: SHD301
        return self.norm(hidden, resid)
