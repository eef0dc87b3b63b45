"""SGLang spelling: the stage group lives on the model, the payload is a
proxy-tensor bundle, and layers capture through a keyword."""

import torch
from torch import nn

from sglang.srt.model_executor.forward_batch_info import PPProxyTensors


class CapturingStack(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, input_ids, positions, forward_batch, pp_proxy_tensors=None):
        if self.pp_group.is_first_rank:
            hidden = self.embed_tokens(input_ids)
        else:
            hidden = pp_proxy_tensors["hidden_states"]
        captured = self.new_capture_list()
        for i in range(self.start_layer, self.end_layer):
            hidden = self.layers[i](
                positions,
                hidden,
                forward_batch,
                capture_output=captured.capture if i in self.layers_to_capture else None,
            )
        if not self.pp_group.is_last_rank:
            return PPProxyTensors({"hidden_states": hidden})  # error: SHD301
        hidden = self.norm(hidden)
        if len(captured) == 0:
            return hidden
        return hidden, captured

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.layers_to_capture = [i + 1 for i in layer_ids]


class CapturingStackThatRelays(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, input_ids, positions, forward_batch, pp_proxy_tensors=None):
        if self.pp_group.is_first_rank:
            hidden = self.embed_tokens(input_ids)
        else:
            hidden = pp_proxy_tensors["hidden_states"]
        captured = self.new_capture_list()
        if not self.pp_group.is_first_rank and "relayed_taps" in pp_proxy_tensors.tensors:
            captured.append(pp_proxy_tensors["relayed_taps"])
        for i in range(self.start_layer, self.end_layer):
            hidden = self.layers[i](
                positions,
                hidden,
                forward_batch,
                capture_output=captured.capture if i in self.layers_to_capture else None,
            )
        if not self.pp_group.is_last_rank:
            proxy = self.boundary.to_proxy(hidden, forward_batch)
            if captured:
                proxy.tensors["relayed_taps"] = torch.cat(list(captured), dim=-1)
            return proxy
        hidden = self.norm(hidden)
        return hidden, captured
