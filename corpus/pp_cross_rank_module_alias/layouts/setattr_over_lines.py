"""Gate layout: setattr with one argument a line."""


def attach_vocab(sketch, base):
    setattr(  # error: SHD302
        sketch.core,
        "embed_tokens",
        base.core.embed_tokens,
    )
