"""Gate layout: both ends from one call named otherwise than get_embed_and_head."""


def attach_vocab(sketch, base):
    embed, head = base.load_embed_with_head()
    sketch.core.embed_tokens = embed  # error: SHD302
