def attach_head(sketch, base, name="lm_head"):
    setattr(sketch, "embed_in", base.gpt.embed_in)  # error: SHD302
