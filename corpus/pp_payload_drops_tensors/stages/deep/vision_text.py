"""Three levels down and two files away from the claim."""

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors

from ..variant import ShortcutVariant


class VisionTextStage(ShortcutVariant):
    def forward(self, hidden, resid, intermediate_tensors=None, extra_embeds=None):
        kept_hidden = []
        for idx, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            if idx in self.tap_layers:
                kept_hidden.append(hidden)
        if get_pp_group().is_last_rank:
            return self.norm(hidden, resid), kept_hidden
        return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301


class RefusingVisionTextStage(ShortcutVariant):
    # says no explicitly: the runtime refuses EAGLE-3 with PP for it
    supports_aux_hidden_states_over_pp = False

    def forward(self, hidden, resid, intermediate_tensors=None, extra_embeds=None):
        kept_hidden = []
        for idx, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            kept_hidden.append(hidden)
        if get_pp_group().is_last_rank:
            return self.norm(hidden, resid), kept_hidden
        return IntermediateTensors({"hidden_states": hidden, "residual": resid})
