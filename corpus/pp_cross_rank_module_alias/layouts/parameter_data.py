"""Gate layout: the chain goes on past the module (its parameter's data)."""


def attach_vocab(sketch, base):
    sketch.core.embed_table = base.core.embed_tokens.weight.data  # error: SHD302
