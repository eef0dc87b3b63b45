"""SHD401 repeated-budget-division (seed 002): one libcst analysis per
function, or per class for the methods that share splits through `self`
(``RepeatedBudgetDivision``), gated by the text its findings need."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import libcst as cst

from linter.api import Applicability, Needles, Option, PendingFix, Rule, RuleContext, Severity
from linter.api import call_name, dotted, last_name, name_matches, walk, walk_no_nested
from linter.syntax import child_nodes

from checks.repeated_budget_division.chains import (
    Chain,
    Step,
    bare_code,
    dedupe,
    in_method,
    leaf_of_call,
    named_steps,
    target_names,
    why_note,
)
from checks.repeated_budget_division.groups import (
    DEFAULT_BUDGETS,
    DEFAULT_SIZES,
    group_of,
    wrong_groups,
)

__all__ = ["DEFAULT_BUDGETS", "DEFAULT_SIZES", "RepeatedBudgetDivision"]

# Calls that keep the value of their one budget-derived argument (clamps,
# conversions, roundings): `max(1, num_blocks // dp_size)` is still a share.
_PASS_THROUGH = frozenset(
    {"int", "max", "min", "floor", "ceil", "round", "abs", "round_up", "round_down", "align"}
)
# Ceiling divisions written as calls: `cdiv(num_blocks, dp_size)`.
_DIV_CALLS = frozenset({"cdiv", "ceil_div", "ceildiv", "div_ceil", "div_round_up"})
# Calls that write a value back into shared configuration. A budget divided
# into one of their keywords of the same name is divided again on every call.
_OVERRIDE_CALL = re.compile(r"(^|_)(override|overrides|update|set|patch)($|_)|^setattr$", re.I)
# Calls whose result is a private object: dividing its fields in place is a
# one-time derivation, not a mutation of shared state.
_FRESH_CALLS = frozenset({"deepcopy", "copy", "replace", "clone", "dict", "list"})


# -- the text a finding needs (the docstring's Options) -------------------------
# Every finding divides by a parallel size (`/`, `//`, their augmented forms or
# ``_DIV_CALLS``), whose name holds a default size word; its budget, divisions
# and store lie in one function body, so in one top-level definition.
_SIZE_WORD = r"(?i)_size(?:(?<=[detpc]p_size)|(?<=world_size)|(?<=parallel_size))"
_NEEDLES = Needles(any_of=(("/", *sorted(_DIV_CALLS)),), regex=_SIZE_WORD)


class RepeatedBudgetDivision(Rule):
    """## What it finds
    A global budget (KV-cache blocks, memory bytes, request or token slots) that
    is split over parallel groups more than once along one path, or that is
    divided in place and stored back into shared state:

    - `num_blocks // dp_size // ep_size`, or `per_dp = num_blocks // dp_size`
      followed by `per_dp // ep_size` in the same function, or in another
      method of the same class through `self.per_dp` (simple local derivations,
      clamps such as `max(1, ...)`, `int(x / s)`, `math.ceil`, `cdiv` and
      `(x + s - 1) // s` are followed);
    - `cfg.num_blocks = cfg.num_blocks // dp_size`, `self.max_num_seqs //= dp_size`,
      `override(num_blocks=num_blocks // dp_size)` (also through a call's
      result: `ctx().override(..., x=limits().x // dp_size)`), including a
      field given a default in one branch only (`if self.x is None: self.x =
      8192`), whose other path still holds the caller's value.

    A size is matched by name (below) or as `dp_size if enable_dp_attention
    else 1`. Sizes are compared by the group they name: `dp_size`,
    `attn_dp_size`, `data_parallel_size` are one data-parallel group, and
    `world_size` contains every group. Two splits are reported when one group
    splits the budget twice, or when a group owns no share of it: tensor and
    expert ranks hold the same blocks, slots and tokens as their peers. A
    nested split over groups that each own a share stays silent: data-parallel
    replicas then pipeline micro-batches for request slots, data-parallel then
    context-parallel for KV blocks and tokens.

    ## Why it breaks
    A budget must be split exactly once per parallel dimension that owns a share
    of it. With expert + data parallelism, one code path divides the KV-cache
    blocks by `dp_size` and another divides the result again by `ep_size`; the
    ranks then disagree on the block table's shape and start-up fails with
    `RuntimeError: shape mismatch` at KV-cache init (or, worse, some ranks run
    with a fraction of their memory). An in-place division of shared state is
    correct the first time and wrong the second: a re-run `__post_init__`
    (`dataclasses.replace`), a second engine in the process, or a retry after
    profiling divides the already-divided budget again. SGLang shipped this
    from 0.4 to 0.5.16: its DP-attention setup stored `chunked_prefill_size //
    dp_size` back on `ServerArgs`, and a record resolved twice halved the
    prefill budget again (sglang#4599, #35907; fixed in 0.5.20 by declaring the
    per-rank value once behind `ServerArgs.resolve_once`).

    ## Example
    See the flagged and correct corpus examples below.

    ## Fix
    Split the global budget once per parallel dimension that owns a share of it,
    in one place, into a new name (`blocks_per_dp_rank`), and make the ranks agree
    (a min all-reduce or an equality assert) before sizing shared structures.
    Never divide a configuration field in place: on SGLang, declare the
    per-rank value once (`declare_resolution` behind `ServerArgs.resolve_once`,
    0.5.20+); on vLLM, keep the config field as configured and derive the
    per-rank value where it is used. The rule offers this as a suggestion only:
    which division is the extra one depends on ownership.

    Not reached: a split in a caller and again in a callee, a split in one
    class read by another (SGLang's scheduler reads the worker's per-DP
    `max_running_requests`), a division by a product of sizes (one split over
    the combined group), and a record made idempotent elsewhere with the same
    text (a declaration call whose name is not `override`/`update`/`set`/
    `patch` is not a write-back).

    ## Options
    - `budget-names` (list of globs, case-insensitive, matched against the last
      name component): names of global budgets. Default: `num_blocks`,
      `num_gpu_blocks`, `num_cpu_blocks`, `*_budget`, `*memory*`, `*_bytes`,
      `max_num_*`, `max_total_*`, `max_running_requests`, `chunked_prefill_size`,
      `max_prefill_tokens`, `*cache_size`, `*_capacity`. The budget's kind
      (tokens, request slots, else KV blocks and memory) decides which groups
      own a share of it.
    - `parallel-size-names` (list of globs): names of parallel-group sizes,
      also matched on the attribute of `parallel_config.data_parallel_size` and
      on getters such as `get_tensor_model_parallel_world_size()`. Default:
      `dp_size`, `ep_size`, `tp_size`, `pp_size`, `cp_size`, `dcp_size`,
      `pcp_size`, `*_dp_size`, `*_ep_size`, `*_tp_size`, `*_pp_size`,
      `*_cp_size`, `world_size`, `*_world_size`, `*_parallel_size`.
    A name matching both lists is treated as a parallel size (topology
    arithmetic such as `tp_size // dp_size // cp_size` is never a budget).
    Only the text prefilter runs before the options are known: a file, and
    in it a top-level function or class, is analysed only if its text holds a
    division (`/`, `cdiv`, `ceil_div`, `ceildiv`, `div_ceil`, `div_round_up`)
    and one of the default size words `dp_size`, `ep_size`, `tp_size`,
    `pp_size`, `cp_size`, `world_size`, `parallel_size` (any case). So a
    configured size name should contain one of these words.
    """

    code = "SHD401"
    name = "repeated-budget-division"
    summary = (
        "A global budget is split over parallel groups twice, or divided in place in shared state"
    )
    severity = Severity.ERROR
    tags = ("correctness", "parallelism")
    options = {
        "budget-names": Option(DEFAULT_BUDGETS, "list[str]", "Globs naming global budgets."),
        "parallel-size-names": Option(
            DEFAULT_SIZES, "list[str]", "Globs naming parallel-group sizes."
        ),
    }
    needles = _NEEDLES
    definition_needles = _NEEDLES
    # (a finding reads only the definitions the needles match and their
    # classes' headers: not a helper or method they name)
    follows_definitions = False

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._budgets: tuple[str, ...] = tuple(self.opts["budget-names"])
        self._sizes: tuple[str, ...] = tuple(self.opts["parallel-size-names"])
        self._reported: set[int] = set()
        # per function being visited: 0 no division, 1 a division, 2 one by a parallel size
        self._divides: list[int] = []
        # per class being visited: its dividing methods, with whether one divides by a size
        self._classes: list[list[tuple[cst.FunctionDef, bool]]] = []
        # set while a class's methods are read for the splits they store on
        # `self` (nothing is reported then; see _read_methods)
        self._silent = False

    # -- classification -------------------------------------------------------
    def _leaf(self, node: cst.CSTNode) -> str | None:
        """The last name of a name, attribute (also on a call result) or getter call."""
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return node.attr.value
        if isinstance(node, cst.Call) and not node.args:
            return last_name(dotted(node.func))
        return None

    def _is_size(self, node: cst.CSTNode) -> bool:
        return self._size_leaf(node) is not None

    def _size_leaf(self, node: cst.CSTNode) -> str | None:
        """The size name ``node`` divides by, if it is a parallel size: a name,
        attribute or getter, or a conditional size whose other arm is `1`
        (`dp_size if enable_dp_attention else 1`: the group when it is on)."""
        if isinstance(node, cst.IfExp):
            arms = (node.body, node.orelse)
            sizes = [a for a in arms if self._is_size(a)]
            ones = [a for a in arms if isinstance(a, cst.Integer) and a.value == "1"]
            if len(sizes) == 1 and len(ones) == 1:
                return self._size_leaf(sizes[0])
            return None
        leaf = self._leaf(node)
        return leaf if leaf and name_matches(leaf.removeprefix("get_"), self._sizes) else None

    def _step(self, size: cst.CSTNode, code: str) -> Step:
        if isinstance(size, cst.IfExp):  # named by its size arm; the path shows the test
            size = size.body if self._is_size(size.body) else size.orelse
        return Step(bare_code(self.ctx, size), code, group_of(self._size_leaf(size) or ""))

    def _is_budget_name(self, name: str | None) -> bool:
        return name_matches(name, self._budgets) and not name_matches(name, self._sizes)

    # -- the walk ---------------------------------------------------------------
    # The traversal only notes which functions divide at all (every chain
    # step, and so every finding, needs a division by a size in the function
    # it is made in); the statement walk runs on those alone, when the
    # function is left, and on a class's methods when the class is left: a
    # method without a division by a size can still complete a chain another
    # method of its class stored on `self`.
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append([])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._divides.append(0)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        divides = self._divides.pop()
        scopes = self.ctx.scope_nodes
        if not divides:
            return
        if len(scopes) > 1 and isinstance(scopes[-2], cst.ClassDef):
            self._classes[-1].append((original_node, divides == 2))
        elif divides == 2:
            self._block(original_node.body, {}, set(), set())

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        """Each dividing method of the class (with whether it divides by a
        parallel size), knowing the splits the others store on `self`
        (`self.per_dp = num_blocks // dp_size` in `__init__`, `self.per_dp //
        self.ep_size` in `allocate`). A split a method stores is not fed back
        into that method: its own order of statements already says what it
        reads. Only a method dividing by a size stores a split."""
        methods = self._classes.pop()
        cls = original_node.name.value
        stored: dict[str, tuple[Chain, cst.FunctionDef]] = {}
        if len(methods) > 1:
            self._silent = True
            try:
                for m in (m for m, by_size in methods if by_size):
                    env: dict[str, Chain] = {}
                    self._block(m.body, env, set(), set())
                    for key, chain in env.items():
                        old = stored.get(key)
                        if (
                            key.startswith("self.")
                            and chain.steps
                            and (old is None or len(chain.steps) > len(old[0].steps))
                        ):
                            stored[key] = (in_method(chain, f"{cls}.{m.name.value}"), m)
            finally:
                self._silent = False
        for m, by_size in methods:
            seeded = {k: c for k, (c, owner) in stored.items() if owner is not m}
            if by_size or seeded:
                self._block(m.body, seeded, set(), set())

    def _mark(self, by_size: bool) -> None:
        if self._divides:
            self._divides[-1] = max(self._divides[-1], 2 if by_size else 1)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.FloorDivide, cst.Divide)):
            self._mark(self._is_size(node.right))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.FloorDivideAssign, cst.DivideAssign)):
            self._mark(self._is_size(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if leaf_of_call(node) in _DIV_CALLS:
            self._mark(any(self._is_size(a.value) for a in node.args))

    # -- statements ---------------------------------------------------------------
    # ``env``: what each name or attribute holds (a chain of splits of a
    # budget); ``fresh``: locals holding an object made here (a copy, a
    # construction), whose fields are private; ``assigned``: what this path
    # has already set (``"<shared>" + name`` for a global or nonlocal).
    def _block(
        self, body: cst.BaseSuite, env: dict[str, Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        for s in body.body:
            self._stmt(s, env, fresh, assigned)

    def _stmt(
        self, s: cst.CSTNode, env: dict[str, Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                self._small(small, env, fresh, assigned)
        elif isinstance(s, cst.BaseSmallStatement):
            self._small(s, env, fresh, assigned)
        elif isinstance(s, cst.If):
            self._scan_expr(s.test, env)
            # A field set in one branch only (`if cfg.x is None: cfg.x = 8192`)
            # still holds the caller's value on the other path: it counts as
            # set here only when every branch sets it.
            e1, a1 = dict(env), set(assigned)
            self._block(s.body, e1, fresh, a1)
            e2, a2 = dict(env), set(assigned)
            if isinstance(s.orelse, cst.If):
                self._stmt(s.orelse, e2, fresh, a2)
            elif s.orelse is not None:
                self._block(s.orelse.body, e2, fresh, a2)
            assigned |= a1 & a2
            # After the branches a name holds whichever derivation its branch
            # made; keep the longer one so a later split is seen.
            env.clear()
            for k, v in (*e1.items(), *e2.items()):
                if k not in env or len(v.steps) > len(env[k].steps):
                    env[k] = v
        elif isinstance(s, (cst.For, cst.While)):
            self._scan_expr(s.iter if isinstance(s, cst.For) else s.test, env)
            self._block(s.body, env, fresh, set(assigned))  # the body may not run
            if s.orelse is not None:
                self._block(s.orelse.body, env, fresh, assigned)
        elif isinstance(s, cst.With):
            for item in s.items:
                self._scan_expr(item.item, env)
            self._block(s.body, env, fresh, assigned)
        elif isinstance(s, (cst.Try, cst.TryStar)):
            self._block(s.body, env, fresh, assigned)
            for h in s.handlers:
                self._block(h.body, dict(env), fresh, assigned)
            for part in (s.orelse, s.finalbody):
                if part is not None:
                    self._block(part.body, env, fresh, assigned)
        # Nested functions and classes are visited on their own.

    def _small(
        self, s: cst.BaseSmallStatement, env: dict[str, Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        if isinstance(s, cst.Global | cst.Nonlocal):
            for n in s.names:
                fresh.discard(n.name.value)
                assigned.add("<shared>" + n.name.value)
        elif isinstance(s, (cst.Assign, cst.AnnAssign)):
            if s.value is not None:
                chain = self._scan_expr(s.value, env)
                targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target]
                for t in targets:
                    self._assign(t, s, chain, env, fresh, assigned)
        elif isinstance(s, cst.AugAssign):
            self._aug(s, env, fresh, assigned)
        else:
            for child in child_nodes(s):
                if isinstance(child, cst.BaseExpression):
                    self._scan_expr(child, env)

    def _assign(
        self,
        target: cst.BaseAssignTargetExpression,
        stmt: cst.Assign | cst.AnnAssign,
        chain: Chain | None,
        env: dict[str, Chain],
        fresh: set[str],
        assigned: set[str],
    ) -> None:
        key = dotted(target)
        if key is None:
            for n in target_names(target):
                env.pop(n, None)
                fresh.discard(n)
            return
        value = stmt.value
        attribute = isinstance(target, cst.Attribute)
        # (an attribute of an object made here is private, not shared state)
        shared = attribute and key.split(".", 1)[0] not in fresh
        if (
            chain is not None
            and chain.steps
            and shared
            and chain.budget == key
            and key not in assigned
        ):
            self._report_in_place(stmt, key, chain)
        # `self.cfg = replace(self.cfg, num_blocks=self.cfg.num_blocks // dp_size)`:
        # stored back into shared state (rebinding a local name is not: the
        # caller's object keeps the global value)
        if isinstance(value, cst.Call) and (attribute or "<shared>" + key in assigned):
            first = next((a.value for a in value.args if a.keyword is None), None)
            if key not in fresh and dotted(first) == key:
                self._keyword_splits(value, force=True)
        assigned.add(key)
        if isinstance(target, cst.Name):
            leaf = leaf_of_call(value) if isinstance(value, cst.Call) else None
            if leaf and (leaf in _FRESH_CALLS or (leaf[:1].isupper() and not leaf.isupper())):
                fresh.add(key)
            else:
                fresh.discard(key)
        # Rebinding a name forgets what was derived through it.
        for k in [k for k in env if k == key or k.startswith(key + ".")]:
            del env[k]
        if chain is not None:
            if chain.steps:
                chain = named_steps(chain, self.ctx.code_for(stmt).strip())
            env[key] = chain

    def _aug(
        self, s: cst.AugAssign, env: dict[str, Chain], fresh: set[str], assigned: set[str]
    ) -> None:
        self._scan_expr(s.value, env)
        key = dotted(s.target)
        if key is None or not isinstance(s.operator, (cst.FloorDivideAssign, cst.DivideAssign)):
            if key is not None:
                env.pop(key, None)
            return
        if not self._is_size(s.value):
            return
        before = env.get(key)
        if before is None:
            if not self._is_budget_name(key):
                return
            before = Chain(key, (), frozenset())
        chain = before.plus(self._step(s.value, self.ctx.code_for(s).strip()), s)
        shared = (isinstance(s.target, cst.Attribute) and key.split(".", 1)[0] not in fresh) or (
            "<shared>" + key
        ) in assigned
        if shared and key not in assigned and not before.steps:
            self._report_in_place(s, key, chain)
        else:
            self._report_chain(s, chain)
        env[key] = chain

    # -- expressions ----------------------------------------------------------------
    def _scan_expr(self, expr: cst.BaseExpression, env: dict[str, Chain]) -> Chain | None:
        """Report every split chain in ``expr``; return the chain ``expr`` itself
        carries (if any)."""
        memo: dict[int, Chain | None] = {}
        top = self._chain(expr, env, memo)
        for n in () if isinstance(expr, cst.Lambda) else walk_no_nested(expr):
            # A chain is reported at the division that completes it, so only
            # divisions need their chain computed here.
            c = None
            if isinstance(n, cst.Call):
                self._keyword_splits(n, force=False, env=env)
                if leaf_of_call(n) in _DIV_CALLS:
                    c = self._chain(n, env, memo)
            elif isinstance(n, cst.BinaryOperation) and isinstance(
                n.operator, (cst.FloorDivide, cst.Divide)
            ):
                c = self._chain(n, env, memo)
            if c is not None and id(n) in c.nodes and not (c.nodes & self._reported):
                self._report_chain(n, c)
        return top

    def _chain(
        self, n: cst.CSTNode, env: dict[str, Chain], memo: dict[int, Chain | None]
    ) -> Chain | None:
        """The chain of splits of a budget that ``n`` carries (memoised by node)."""
        if id(n) not in memo:
            memo[id(n)] = self._derive(n, env, memo)
        return memo[id(n)]

    def _derive(
        self, n: cst.CSTNode, env: dict[str, Chain], memo: dict[int, Chain | None]
    ) -> Chain | None:
        if isinstance(n, (cst.Name, cst.Attribute)):
            key = dotted(n)
            if key is not None and key in env:
                return env[key]
            # (a budget read off a call's result, `get_schedule().max_num_reqs`,
            # is named by its text)
            if self._is_budget_name(self._leaf(n)):
                return Chain(key or self.ctx.code_for(n), (), frozenset())
            return None
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Minus):
            return self._chain(n.expression, env, memo)
        if isinstance(n, cst.BinaryOperation):
            op = n.operator
            left = self._chain(n.left, env, memo)
            if isinstance(op, (cst.FloorDivide, cst.Divide)):
                if left is None:
                    return None
                if self._is_size(n.right):
                    return left.plus(self._step(n.right, self.ctx.code_for(n)), n)
                if self._mentions_size(n.right):
                    return None  # divided by an expression of sizes: a deliberate split
                return left
            right = self._chain(n.right, env, memo)
            if isinstance(op, (cst.Add, cst.Subtract)) and (left is None or right is None):
                return left or right
            if isinstance(op, cst.Multiply) and (left is None) != (right is None):
                # Multiplying by a parallel size undoes a split: not a share any more.
                return (
                    None
                    if self._mentions_size(n.left if left is None else n.right)
                    else left or right
                )
            return None
        if isinstance(n, cst.Call):
            leaf = last_name(call_name(n))
            args = [a.value for a in n.args if a.keyword is None and not a.star]
            if leaf in _DIV_CALLS and len(args) == 2:
                base = self._chain(args[0], env, memo)
                if base is not None and self._is_size(args[1]):
                    return base.plus(self._step(args[1], self.ctx.code_for(n)), n)
                return None
            if leaf in _PASS_THROUGH:
                found = [c for a in args if (c := self._chain(a, env, memo)) is not None]
                if len(found) == 1:
                    return found[0]
        return None

    def _mentions_size(self, n: cst.CSTNode) -> bool:
        return any(
            isinstance(x, (cst.Name, cst.Attribute, cst.Call)) and self._is_size(x) for x in walk(n)
        )

    def _keyword_splits(
        self, call: cst.Call, force: bool, env: dict[str, Chain] | None = None
    ) -> None:
        """`override(num_blocks=num_blocks // dp_size)`: the divided value is
        written back under the name it was read from."""
        leaf = leaf_of_call(call)
        if not force and (leaf is None or not _OVERRIDE_CALL.search(leaf)):
            return
        for a in call.args:
            if a.keyword is None:
                continue
            c = self._chain(a.value, env or {}, {})
            if c is None or not c.steps or last_name(c.budget) != a.keyword.value:
                continue
            if not self._claim(id(a.value), c):
                continue
            sizes = ", ".join(f"`{st.size}`" for st in c.steps)
            self.report(
                a,
                f"budget `{c.budget}` is divided by {sizes} and written back as "
                f"`{a.keyword.value}=` through `{leaf}(...)`: every further call divides "
                "the already-divided value again",
                notes=[
                    f"path: `{self.ctx.code_for(a).strip()}` inside `{leaf}(...)`",
                    "the override is applied again on re-initialisation, on a second engine "
                    "in the process or on a retry, each time shrinking the budget",
                ],
                fix=self._suggestion(in_place=True),
            )

    # -- reporting -------------------------------------------------------------------
    def _claim(self, node_id: int, chain: Chain) -> bool:
        """Whether a finding at ``node_id`` is new and may be reported (not in
        the silent pass); if so, it and the chain's divisions count as reported."""
        if node_id in self._reported or self._silent:
            return False
        self._reported.add(node_id)
        self._reported |= chain.nodes
        return True

    def _suggestion(self, in_place: bool = False) -> PendingFix:
        title = (
            "Split the global budget once per parallel dimension that owns a share of "
            "it, into a new name, and make all ranks agree on the result (min all-reduce "
            "or equality assert); do not divide shared configuration in place"
        )
        if in_place and self.ctx.module_name.split(".", 1)[0] == "sglang":
            title += (
                " (SGLang: keep the operator's value on `ServerArgs` and declare the per-rank "
                "value once, as 0.5.20+ does with `declare_resolution` behind "
                "`ServerArgs.resolve_once`)"
            )
        elif in_place:
            title += (
                " (vLLM: keep the config field as configured and derive the per-rank value "
                "where it is used; `dataclasses.replace` on a config re-runs `__post_init__`)"
            )
        return PendingFix(title=title, applicability=Applicability.DISPLAY_ONLY)

    def _report_chain(self, node: cst.CSTNode, chain: Chain) -> None:
        """A chain of two or more splits that ``wrong_groups`` finds wrong."""
        why = (
            wrong_groups(chain.budget, [st.group for st in chain.steps])
            if chain.steps[1:]
            else None
        )
        if why is None or not self._claim(id(node), chain):
            return
        sizes = [st.size for st in chain.steps]
        path = " → ".join(
            f"`{st.code}`" + (f" (in `{st.where}`)" if st.where else "")
            for st in dedupe(chain.steps)
        )
        self.report(
            node,
            f"budget `{chain.budget}` is split over parallel groups {len(sizes)} times "
            f"(by {', '.join(f'`{s}`' for s in sizes)}) along one path",
            notes=[f"path: {path}", why_note(chain, why)],
            fix=self._suggestion(),
        )

    def _report_in_place(self, node: cst.CSTNode, key: str, chain: Chain) -> None:
        if not self._claim(id(node), chain):
            return
        sizes = ", ".join(f"`{st.size}`" for st in chain.steps)
        self.report(
            node,
            f"budget `{key}` is divided by {sizes} and stored back into shared state: "
            f"with {sizes} > 1, running this twice divides it twice",
            notes=[
                f"path: `{self.ctx.code_for(node).strip()}`",
                "a re-run `__post_init__` (`dataclasses.replace`), a second engine in the "
                "process or a retry divides the already-divided budget again: ranks then "
                "run with a fraction of the configured budget, silently",
            ],
            fix=self._suggestion(in_place=True),
        )
