def attach_vocab(sketch, base):
    sketch.tok_embeddings = getattr(base, "tok_embeddings")  # error: SHD302
