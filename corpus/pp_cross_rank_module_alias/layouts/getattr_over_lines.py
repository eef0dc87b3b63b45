"""Gate layout: a getattr call spread over lines, with a comment."""


def attach_vocab(sketch, base):
    table = getattr(
        base.core,  # the target's decoder
        "embed_tokens",
    )
    sketch.core.embed_tokens = table  # error: SHD302
