"""Gate shape: a split inside a keyword of a copy stored over the original."""

from dataclasses import replace


class Holder:
    def rebuild(self, dp_size):
        self.cfg = replace(self.cfg, num_blocks=self.cfg.num_blocks // dp_size)  # error: SHD401
