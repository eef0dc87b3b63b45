"""Gate layout: module names compare in any case (``WTE`` is a ``wte``)."""


def attach_vocab(sketch, base):
    sketch.core.WTE = base.core.WTE  # error: SHD302
