"""Look-alikes that must stay silent."""

import torch
from torch import nn

from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


def _probe_flag():
    return False


class HonestlyRefuses(nn.Module):
    # the runtime reads the flag and refuses EAGLE-3 with PP for this model
    supports_aux_hidden_states_over_pp = False

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden, aux_hidden_states


class ClaimDecidedAtImport(nn.Module):
    supports_aux_hidden_states_over_pp = _probe_flag()

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden, aux_hidden_states


class ClaimingBase(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors(
                {"hidden_states": hidden, "residual": resid, **self.pack_taps(aux_hidden_states)}
            )
        return hidden, aux_hidden_states


class OverrideWithoutTaps(ClaimingBase):
    # inherits the claim but collects nothing: nothing to drop
    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden + resid


class TapsUsedLocally(ClaimingBase):
    # the collected states are reduced on every rank, never returned
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden.norm())
        self.stats.observe(torch.stack(aux_hidden_states))
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden


class OpaqueSplat(ClaimingBase):
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid, **self.extra})
        return hidden, aux_hidden_states


class PayloadHelperGetsTaps(ClaimingBase):
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return self.to_stage_payload(hidden, resid, aux_hidden_states)
        return hidden, aux_hidden_states


class DelegatesToFusedPath(ClaimingBase):
    # the list is handed to a helper that owns both returns
    def forward(self, hidden, resid):
        aux_hidden_states = []
        if self.fused:
            return self._forward_fused(hidden, resid, aux_hidden_states)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden


class CountersAreNotTaps(ClaimingBase):
    # per-layer expert loads: not named like taps
    def forward(self, hidden, resid):
        expert_loads = []
        for block in self.blocks:
            hidden, resid, load = block(hidden, resid)
            expert_loads.append(load)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden, expert_loads


class FirstRankOnly(ClaimingBase):
    # the guard tests the first rank: no last-rank return to compare with
    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if get_pp_group().is_first_rank:
            return hidden, aux_hidden_states
        return hidden


class TwoLayouts(nn.Module):
    # one receive layout per mode; each payload matches one of them
    def __init__(self, config):
        super().__init__()
        self.folded = config.folded
        if self.folded:
            self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
                ["hidden_states"], config.hidden_size * 2
            )
        else:
            self.make_empty_intermediate_tensors = make_empty_intermediate_tensors_factory(
                ["hidden_states", "residual"], config.hidden_size
            )

    def forward(self, hidden, resid):
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
        if not get_pp_group().is_last_rank:
            if self.folded:
                return IntermediateTensors({"hidden_states": torch.cat([hidden, resid], -1)})
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return hidden + resid


def make_empty_intermediate_tensors_factory(keys, hidden_size):
    return keys, hidden_size
