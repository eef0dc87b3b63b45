"""Gate layout: the borrowed module as a branch of a conditional expression."""


def attach_vocab(sketch, base, share):
    sketch.core.embed_tokens = base.core.embed_tokens if share else None  # error: SHD302
