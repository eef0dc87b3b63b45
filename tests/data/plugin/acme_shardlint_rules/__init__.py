"""ACME's own shardlint rules: a package a fork's team installs next to
shardlint. Its ``pyproject.toml`` declares the entry point:

    [project.entry-points."shardlint.rules"]
    acme = "acme_shardlint_rules"
"""

from __future__ import annotations

import libcst as cst

from linter.api import Applicability, Fixability, Needles, Option, PendingFix, Rule, Severity, dotted, name_matches


class HeadCountTrueDivision(Rule):
    """A head, expert or hidden count divided by a parallel size with `/`.

    ## What it finds
    `num_heads / tp_size` and the like: a per-model count split across ranks
    with true division, where a whole count per rank is meant.

    ## Why it breaks
    `/` always gives a `float`. Passed on as a size, it crashes at start-up:
    `torch.empty(num_heads / tp_size, ...)` and `range(...)` raise `TypeError`.
    Used in arithmetic, it silently computes with a fraction: with 14 heads on
    4 ranks each rank believes it holds 3.5 heads.

    ## Example
    ```python
    heads_per_rank = config.num_attention_heads / tp_size
    ```

    ## Fix
    Use floor division, and check the count divides first:
    `assert num_heads % tp_size == 0` then `num_heads // tp_size`. The fix
    offered writes `//`; it is unsafe, since for a count that does not divide
    it truncates where the code should have refused the configuration.

    ## Options
    `count-names`: globs of the counts (last name component, any case).
    `size-names`: globs of the parallel sizes.
    """

    code = "ACME001"
    name = "head-count-true-division"
    summary = "a per-model count divided by a parallel size with `/` (a float)"
    severity = Severity.ERROR
    fixable = Fixability.SOMETIMES
    # the file, and one top-level definition, must hold a true division; the
    # engine parses only the definitions that do
    needles = Needles(all_of=("/",))
    definition_needles = Needles(all_of=("/",))
    options = {
        "count-names": Option(
            ("num_*heads", "*_heads", "num_experts", "hidden_size", "intermediate_size"),
            "list[str]",
            "Globs of the per-model counts.",
        ),
        "size-names": Option(
            ("tp_size", "tp", "*world_size", "ep_size", "pp_size", "dp_size"),
            "list[str]",
            "Globs of the parallel sizes.",
        ),
    }

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Divide):
            return
        count, size = dotted(node.left), dotted(node.right)
        if not (name_matches(count, self.opts["count-names"]) and name_matches(size, self.opts["size-names"])):
            return
        floor = node.with_changes(
            operator=cst.FloorDivide(
                whitespace_before=node.operator.whitespace_before,
                whitespace_after=node.operator.whitespace_after,
            )
        )
        self.report(
            node,
            f"`{count} / {size}` is a float: a per-rank count needs `//` (and a divisibility check)",
            notes=[f"e.g. {count}=14, {size}=4 gives 3.5 per rank; `torch.empty(3.5)` raises TypeError"],
            fix=PendingFix(
                title=f"Use `{count} // {size}` (truncates when {size} does not divide {count})",
                applicability=Applicability.UNSAFE,
                replacements=[(node, floor)],
            ),
        )
