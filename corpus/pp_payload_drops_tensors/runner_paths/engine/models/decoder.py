"""Decoders behind both runners: one leaves its taps behind on the earlier
stages without claiming to carry them (the older runner still starts a
draft on it: reported once, at that runner, with the other such model of
``engine/models/router.py``), one carries them across, and one claims to
carry them but overrides ``forward`` without the packing (its own finding)."""

from torch import nn

from engine.models.tap_mixin import TapCollector
from vllm.distributed import get_pp_group
from vllm.sequence import IntermediateTensors


class ShortDecoder(nn.Module, TapCollector):
    def forward(self, ids, positions, staged=None):
        hidden, resid = (self.embed(ids), None) if staged is None else (staged["hidden_states"], staged["residual"])
        taps = []
        for depth, block in enumerate(self.blocks[self.first : self.last], start=self.first):
            if depth in self.tap_layers:
                taps.append(hidden if resid is None else hidden + resid)
            hidden, resid = block(positions, hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})
        return self.norm(hidden, resid)[0], taps


class CarryingDecoder(nn.Module, TapCollector):
    supports_aux_hidden_states_over_pp = True

    def forward(self, ids, positions, staged=None):
        hidden, resid = (self.embed(ids), None) if staged is None else (staged["hidden_states"], staged["residual"])
        upstream = [] if staged is None else [staged[k] for k in sorted(staged.tensors) if k.startswith("tap_")]
        taps = []
        for depth, block in enumerate(self.blocks[self.first : self.last], start=self.first):
            if depth in self.tap_layers:
                taps.append(hidden if resid is None else hidden + resid)
            hidden, resid = block(positions, hidden, resid)
        if not get_pp_group().is_last_rank:
            carried = {f"tap_{len(upstream) + i}": t for i, t in enumerate(taps)}
            return IntermediateTensors({"hidden_states": hidden, "residual": resid, **carried})
        return self.norm(hidden, resid)[0], upstream + taps


class TrimmedCarryingDecoder(CarryingDecoder):
    """Keeps the inherited claim, loses the carried taps."""

    def forward(self, ids, positions, staged=None):
        hidden, resid = self.embed(ids), None
        taps = []
        for depth, block in enumerate(self.blocks[self.first : self.last], start=self.first):
            if depth in self.tap_layers:
                taps.append(hidden)
            hidden, resid = block(positions, hidden, resid)
        if not get_pp_group().is_last_rank:
            return IntermediateTensors({"hidden_states": hidden, "residual": resid})  # error: SHD301
        return self.norm(hidden, resid)[0], taps
