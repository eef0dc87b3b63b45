"""A vision_lm model of a single-stage engine: the embedding is built on every rank."""

from torch import nn


class VisionLmBackbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab, cfg.width)
        self.blocks = nn.ModuleList(nn.Linear(cfg.width, cfg.width) for _ in range(cfg.depth))

    def forward(self, ids):
        h = self.embed_tokens(ids)
        for blk in self.blocks:
            h = blk(h)
        return h
