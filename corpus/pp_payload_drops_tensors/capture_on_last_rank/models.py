"""SGLang's convention: capture is turned on for the last rank only (the
setter returns at once elsewhere), so the other ranks collect no taps and
their payloads drop nothing: silent, although no flag is set."""

from torch import nn

from sglang.srt.model_executor.forward_batch_info import PPProxyTensors


class DecoderStack(nn.Module):
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for i, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            if i in self.layers_to_capture:
                aux_hidden_states.append(hidden)
        if not self.pp_group.is_last_rank:
            return PPProxyTensors({"hidden_states": hidden, "residual": resid})
        return hidden, aux_hidden_states


class DecoderForCausalLM(nn.Module):
    def set_eagle3_layers_to_capture(self, layer_ids):
        # capture only where the taps are returned: the other ranks collect
        # nothing, so their payloads drop nothing (SGLang's convention)
        if not self.pp_group.is_last_rank:
            return
        self.capture_aux_hidden_states = True
        self.model.layers_to_capture = list(layer_ids)
