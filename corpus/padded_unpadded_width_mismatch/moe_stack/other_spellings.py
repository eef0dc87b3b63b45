"""The same layout spelled otherwise: SGLang-style names, an optional
component, a shape tuple from the input, a copy instead of a finish step."""

from typing import Optional

import torch

import moe_stack.interfaces as itf
from moe_stack.interfaces import PlainBase


class FusedMoERunner:
    moe_impl: Optional["itf.ExpertsBase"]

    def _launch(self, x: torch.Tensor) -> torch.Tensor:
        out_shape = self.moe_impl.output_shape(x.shape[0], x.shape[-1])
        y = torch.empty(out_shape, device=x.device)
        self.moe_impl.run(y, x)
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        combined = x.new_zeros((*x.shape[:-1], x.size(-1)))  # error: SHD501
        y = self._launch(x)
        combined.copy_(y)
        return combined

    def forward_sized(self, x: torch.Tensor) -> torch.Tensor:
        # sized from the experts' own declaration: silent
        combined = x.new_zeros((x.shape[0], self.moe_impl.output_width(x.shape[-1])))
        y = self._launch(x)
        combined.copy_(y)
        return combined

    def forward_sliced_input(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        # the buffer meets a tensor the class did not compute through a part: silent
        combined = torch.empty_like(x)
        combined.copy_(residual)
        return combined


class PlainRunner:
    def __init__(self, part: PlainBase) -> None:
        self.part = part

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # no implementation of `PlainBase` declares an unpadded width: silent
        out = torch.empty_like(x)
        shape = self.part.output_shape(x.shape[0], x.shape[-1])
        out.copy_(shape)
        return out


class UntypedRunner:
    def __init__(self, experts) -> None:
        self.experts = experts

    def _compute(self, x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(self.experts.output_shape(x.shape[0], x.shape[-1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)  # todo-error: SHD501 the part's type is not declared, so its implementations are unknown
        y = self._compute(x)
        out.copy_(y)
        return out


class SpacedRunner:
    """The input's width read with blanks inside the spelling (the gate's
    input-width patterns allow them)."""

    moe_impl: "itf.ExpertsBase"

    def _launch(self, x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(self.moe_impl.output_shape(x.shape[0], x.shape[-1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        merged = x.new_empty(x . size ( ))  # error: SHD501
        y = self._launch(x)
        merged.copy_(y)
        return merged

    def forward_last(self, x: torch.Tensor) -> torch.Tensor:
        merged = torch.zeros(x.shape[0], x . shape [ - 1 ])  # error: SHD501
        y = self._launch(x)
        merged.copy_(y)
        return merged
