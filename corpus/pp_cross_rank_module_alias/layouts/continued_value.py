"""Gate layout: the borrowed module read on a backslash-continued line."""


def attach_vocab(sketch, base):
    borrowed = \
        base.backbone.embed_tokens
    sketch.backbone.embed_tokens = borrowed  # error: SHD302
