"""Every spelling of "not the last stage" and every way of collecting taps
the rule recognises; each class claims the taps survive PP."""

import torch
from torch import nn

from vllm.distributed import get_pp_group
from vllm.distributed.utils import is_pipeline_last_stage
from vllm.sequence import IntermediateTensors


class ElseBranch(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        feature_taps = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            feature_taps.append(hidden)
        if get_pp_group().is_last_rank:
            return self.norm(hidden), feature_taps
        else:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301


class LastRankReturnsFirst(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        feature_taps = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            feature_taps.append(hidden)
        pp = get_pp_group()
        if pp.is_last_rank:
            hidden = self.norm(hidden)
            return hidden, feature_taps
        return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301


class HelperAddsTaps(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        layer_taps: list[torch.Tensor] = []
        for i, block in enumerate(self.blocks):
            hidden, resid = block(hidden, resid)
            self._maybe_record_tap(layer_taps, i, hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return hidden, layer_taps


class ConcatenatedTaps(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid, intermediate_tensors):
        upstream = self.receive_taps(intermediate_tensors)
        taps = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            taps += [hidden]
        if not is_pipeline_last_stage():
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return hidden, upstream + taps


class CompoundCondition(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden):
        aux_states = []
        for block in self.blocks:
            hidden = block(hidden)
            aux_states.append(hidden)
        if self.pp_world_size > 1 and not self.pp_group.is_last_rank:
            return IntermediateTensors({"hidden_states": hidden})  # error: SHD301
        return hidden, aux_states


class CarriesTapsUnderKeys(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {"hidden_states": hidden, "residual": resid, "taps": torch.stack(aux_states)}
            )
        return hidden, aux_states


class CarriesTapsInTheBranch(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_states.append(hidden)
        if not get_pp_group().is_last_rank:
            payload = {"hidden_states": hidden, "residual": resid}
            for i, t in enumerate(aux_states):
                payload[f"tap_{self.slot_base + i}"] = t
            return IntermediateTensors(payload)
        return hidden, aux_states


class CarriesTapsThroughUpdate(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_states.append(hidden)
        handoff = {"hidden_states": hidden, "residual": resid}
        handoff.update(self.pack_taps(aux_states))
        if get_pp_group().is_last_rank:
            return hidden, aux_states
        return IntermediateTensors(handoff)
