"""The same orchestrator defined on two branches: the helper its forward
calls is followed in the class that holds that forward, although the
helpers match no gate needle (they are read from the module's ``ast``)."""

import os

import torch

from moe_stack.interfaces import ExpertsBase

if os.environ.get("MOE_EAGER"):

    class BranchRunner:
        def __init__(self, experts: ExpertsBase) -> None:
            self.experts = experts

        def _shape(self, x: torch.Tensor) -> tuple[int, ...]:
            return self.experts.output_shape(x.shape[0], x.shape[-1])

        def _run(self, x: torch.Tensor) -> torch.Tensor:
            return x.new_empty(self._shape(x))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            result = torch.empty_like(x)  # error: SHD501
            y = self._run(x)
            result.copy_(y)
            return result

else:

    class BranchRunner:
        def __init__(self, experts: ExpertsBase) -> None:
            self.experts = experts

        def _run(self, x: torch.Tensor) -> torch.Tensor:
            # reaches no part: silent
            return x * 2

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            result = torch.zeros_like(x)
            y = self._run(x)
            result.copy_(y)
            return result
