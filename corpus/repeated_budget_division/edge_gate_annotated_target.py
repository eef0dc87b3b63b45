"""Gate shape: one split, stored back through an annotated assignment."""


def shrink(sched_cfg, dp_size):
    share = sched_cfg.max_num_seqs // dp_size
    sched_cfg.max_num_seqs: int = share  # error: SHD401
