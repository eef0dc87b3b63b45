def attach_vocab(sketch, base):
    sketch.core.embed_tokens = base.core.get_input_embeddings()  # error: SHD302
