"""Counts and other sizes left at None/-1 are not parallelism sentinels: a
speculative-decoding input whose optional counts the worker fills in, and
which runners construct directly with the counts they have. Silent, though
the shape (a paired resolver, direct constructions) is SHD201's."""

from dataclasses import dataclass

import torch


@dataclass
class DraftBatchInput:
    hidden: torch.Tensor
    accepted_per_request: torch.Tensor | None = None
    num_accepted_drafts: int | None = None
    num_draft_tokens: int | None = None
    page_size: int = -1


class DraftWorker:
    def extend(self, hidden: torch.Tensor) -> DraftBatchInput:
        batch = DraftBatchInput(hidden)
        if batch.num_accepted_drafts is None:
            batch.num_accepted_drafts = 0
            batch.num_draft_tokens = 4
        if batch.page_size == -1:
            batch.page_size = 16
        return batch


class GraphRunner:
    def capture(self, hidden: torch.Tensor) -> torch.Tensor:
        spec = DraftBatchInput(hidden, num_accepted_drafts=1, num_draft_tokens=4)
        return spec.hidden.new_empty(spec.num_draft_tokens * 2, spec.page_size)
