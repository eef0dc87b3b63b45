"""Gate layout: two statements on one line."""


def attach_vocab(sketch, base):
    table = base.backbone.tok_embeddings; sketch.backbone.tok_embeddings = table  # error: SHD302
