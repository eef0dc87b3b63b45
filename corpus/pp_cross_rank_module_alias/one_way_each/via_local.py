def attach_vocab(sketch, base):
    vocab = base.backbone.word_embeddings
    borrowed = vocab
    sketch.backbone.word_embeddings = borrowed  # error: SHD302
