"""A Fixit 2 rule equivalent to the heart of SHD101's candidate search:
``min(x, <int>)`` in either order. Used only by bench/speed.py as the peer."""

import libcst as cst
from fixit import LintRule


class MinWithIntLiteral(LintRule):
    MESSAGE = "min() with an integer literal"

    def visit_Call(self, node: cst.Call) -> None:
        if (
            isinstance(node.func, cst.Name)
            and node.func.value == "min"
            and len(node.args) == 2
            and any(isinstance(a.value, cst.Integer) for a in node.args)
        ):
            self.report(node)
