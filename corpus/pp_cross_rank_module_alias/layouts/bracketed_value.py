"""Gate layout: a long right-hand side wrapped in brackets (black's style)."""


def attach_vocab(sketch_model_with_a_long_name, base_model_with_a_long_name):
    sketch_model_with_a_long_name.backbone.word_embeddings = (  # error: SHD302
        base_model_with_a_long_name.backbone.word_embeddings
    )
