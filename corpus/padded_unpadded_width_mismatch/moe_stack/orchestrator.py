"""The seed's layout: the output copies the input's (padded) width in one
method, the experts' result comes from another, a third step receives both."""

import torch

from moe_stack.interfaces import ExpertsBase, ReduceBase


class ModularMoE:
    def __init__(self, experts: ExpertsBase, reduce: ReduceBase) -> None:
        self.experts = experts
        self.reduce = reduce

    def _buffers(self, x: torch.Tensor) -> torch.Tensor:
        shape = self.experts.output_shape(x.shape[0], x.shape[-1])
        return x.new_empty(shape)

    def _experts(self, x: torch.Tensor) -> torch.Tensor:
        partial = self._buffers(x)
        self.experts.run(partial, x)
        return partial

    def _finish(self, out: torch.Tensor, partial: torch.Tensor) -> torch.Tensor:
        self.reduce.finish(out, partial)
        return out

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        output = torch.empty_like(hidden_states)  # error: SHD501
        partial = self._experts(hidden_states)
        return self._finish(output, partial)


class ModularMoEFixed(ModularMoE):
    """The fix: the output's width is the one the experts declare."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        output = hidden_states.new_empty(
            (*hidden_states.shape[:-1], self.experts.output_width(hidden_states.size(-1)))
        )
        partial = self._experts(hidden_states)
        return self._finish(output, partial)
