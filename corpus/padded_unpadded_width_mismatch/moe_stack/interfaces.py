"""The interfaces the orchestrators hold their parts as."""

import torch


class ExpertsBase:
    def output_shape(self, tokens: int, hidden: int) -> tuple[int, ...]:
        raise NotImplementedError

    def output_width(self, hidden: int) -> int:
        return hidden

    def run(self, out: torch.Tensor, x: torch.Tensor) -> None:
        raise NotImplementedError


class ReduceBase:
    def finish(self, out: torch.Tensor, partial: torch.Tensor) -> None:
        out.copy_(partial)


class PlainBase:
    def output_shape(self, tokens: int, hidden: int) -> tuple[int, ...]:
        return (tokens, hidden)
