"""Gate shape: the last-rank accessor spelled in capitals (accessor names
compare in any case)."""

from torch import nn

from engine.distributed import get_pp_group


class ShoutedRankTest(nn.Module):
    supports_aux_hidden_states_over_pp = True

    def forward(self, hidden, resid):
        aux_hidden_states = []
        for block in self.blocks:
            hidden, resid = block(hidden, resid)
            aux_hidden_states.append(hidden)
        if get_pp_group().IS_LAST_RANK:
            return hidden, aux_hidden_states
        payload = {"hidden_states": hidden, "residual": resid}
        return payload  # error: SHD301
