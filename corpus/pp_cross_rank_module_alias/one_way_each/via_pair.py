class SketchWiring:
    def share_ends(self, sketch, base):
        vocab, proj = base.get_embed_and_head()
        sketch.set_embed_and_head(vocab, proj)  # error: SHD302
