"""Project facts shared by several rules: one collector per fact kind, built
on CPython's ``ast`` (class hierarchy, Triton kernels, sentinels, ...). A fact
only one rule reads lives in that rule's folder instead."""
