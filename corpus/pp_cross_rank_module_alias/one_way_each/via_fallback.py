def attach_vocab(sketch, base):
    sketch.embedding = getattr(base.inner, "embedding", None) or getattr(base, "embedding")  # error: SHD302
