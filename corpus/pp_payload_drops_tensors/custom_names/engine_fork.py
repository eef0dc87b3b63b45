"""A fork with its own names for the payload, the last-stage test and the
capability flag (see pyproject.toml next to this file)."""

from torch import nn

from fork.pipeline import StageHandoff, stage_topology
from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class ForkDecoder(nn.Module):
    relays_draft_taps = True

    def forward(self, hidden):
        probes = []
        for block in self.blocks:
            hidden = block(hidden)
            probes.append(hidden)
        if not stage_topology().is_tail_stage:
            return StageHandoff({"hidden": hidden})  # error: SHD301
        return hidden, probes


class ForkDecoderWithoutFlag(nn.Module):
    # require-claim = false: reported even though nothing claims PP support
    def forward(self, hidden):
        probes = []
        for block in self.blocks:
            hidden = block(hidden)
            probes.append(hidden)
        if not stage_topology().is_tail_stage:
            return StageHandoff({"hidden": hidden})  # error: SHD301
        return hidden, probes


class ForkDecoderRefusing(nn.Module):
    relays_draft_taps = False

    def forward(self, hidden):
        probes = []
        for block in self.blocks:
            hidden = block(hidden)
            probes.append(hidden)
        if not stage_topology().is_tail_stage:
            return StageHandoff({"hidden": hidden})
        return hidden, probes


class UpstreamSpelling(nn.Module):
    # the default names are replaced in this project, not added to
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden):
        aux_hidden_states = []
        for block in self.blocks:
            hidden = block(hidden)
            aux_hidden_states.append(hidden)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden})
        return hidden, aux_hidden_states
