"""Gate shape: one split, written back through an override call's keyword."""


def apply(cfg, dp_size):
    share = cfg.num_blocks // dp_size
    cfg.override(num_blocks=share)  # error: SHD401
