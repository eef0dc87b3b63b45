def attach_vocab(sketch, base):
    sketch.set_input_embeddings(base.decoder.embed_tokens)  # error: SHD302
