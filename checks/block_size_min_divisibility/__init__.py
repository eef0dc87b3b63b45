"""SHD101 block-size-min-divisibility: ``B = min(X, C)`` used as a block that
must divide ``X`` or be a power of two.

The rule's modules: ``values`` (bindings, constant folding, power-of-two
proofs), ``sites`` (the ``min`` sites, their consumers and guards),
``text`` (what a finding says), ``uses`` (the facts gate's collector) and
this one (one libcst traversal gathers each function's pieces, then each
function is analysed as it is left). Kernels in other files come from the
``triton_kernels`` and ``facade_imports`` facts (``checks.facts.kernels``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import ClassVar

import libcst as cst

from checks.block_size_min_divisibility.sites import (
    CDIV_NAMES,
    Consumer,
    MinSite,
    SameX,
    Scope,
    aliases,
    call_text,
    has_offset_arith,
    host_consumers,
    kernel_consumer,
    launch_args,
    live,
    names_block,
    pinned,
    tensor_dim,
)
from checks.block_size_min_divisibility.text import describe, finding_text
from checks.block_size_min_divisibility.uses import SITE_NEEDLES
from checks.block_size_min_divisibility.values import (
    OTHER,
    Env,
    Values,
    bind,
    code,
    constant_like,
    is_pow2,
    knobs,
    matches,
    module_functions,
    top_level_bindings,
)
from checks.facts import divisible_inputs
from checks.facts.kernels import KernelFacts, KernelIndex, Need, collect_text
from checks.facts.launchers import Launcher, find_launcher, launcher_facts
from linter.facts import ProjectFacts
from linter.imports import follow_reexports, imports_from_cst, qualify
from linter.positions import positions
from linter.rule import Option, PendingFix, Rule
from linter.syntax import call_name, dotted, function_params, globs_matcher, raises_only
from linter.types import Applicability, Fixability, Note, Severity, Span

# Always power-of-two calls, whatever the option says (see its doc).
BUILTIN_POW2 = ("triton.next_power_of_2", "next_power_of_2", "next_power_of_two")

# Triton-Ascend (Huawei NPUs) lifts CUDA Triton's power-of-two rule for
# ``tl.arange`` ranges (its ``arange`` documentation); vllm-ascend's and
# SGLang's NPU kernels live in packages named so.
NPU_PACKAGES = ("npu", "npu_*", "*_npu", "*_npu_*", "*ascend*")


class BlockSizeMinDivisibility(Rule):
    """## What it finds
    A block or tile size computed as `min(X, C)` (either argument order, also through a plain alias
    such as `tile = BLOCK`) where `X` is not provably a power of two, used where the block must
    divide `X` or be a power of two:

    - on the host: `assert X % B == 0` (or `if X % B: raise`), `X // B` as a grid size or count,
      `for i in range(0, X, B)` whose body has no remainder handling;
    - in a kernel: `B` passed (by keyword or position) to a `@triton.jit` function, possibly
      autotuned and possibly defined in another module and imported or re-exported, whose parameter
      is
      - a block shape (`tl.arange(0, P)`, `tl.zeros([P])`, `tl.full`, `tl.reshape`, `block_shape=`):
        a power of two is needed;
      - the divisor of `tl.static_assert(A % P == 0)` (a compile error), of an `assert A % P == 0`
        inside the kernel (checked only in Triton's debug mode), or a tile of a group: a program's
        group index computed as `pid // tl.cdiv(G, P)` with `G` given the width that was capped (a
        tile that straddles two groups is computed with the wrong group's data);
      - required to be a multiple of a literal (`tl.static_assert(P % 16 == 0)`);
      also when the kernel hands the parameter to another jitted function of its module that needs
      it;
    - through a launcher: `B` passed (by position or keyword) to a function, in this module or
      another, that hands that parameter by keyword to such a kernel launch
      (`_launch(x, out, block)` with `K[grid](..., BLOCK=block)` inside).

    A block narrowed to the width (`T = min(T, block_size)`, where `T` was a constant or a power of
    two) is a site too, and a block that may reach the use under another name (`tile = T_PREFILL` in
    one branch, `tile = T_DECODE` in the other) is followed. Sites of one function that cap the same
    width and reach the same uses are one finding, the others notes.

    Provably a power of two: a power-of-two literal, `triton.next_power_of_2` (see the option),
    `1 << k`, `x & -x`, products and min/max of such, names bound only to such values in this file
    (module constants too), and calls of a function defined at the top of this file whose every
    `return` is such a value (`def _block(n): return max(16, triton.next_power_of_2(n))`).

    Deliberately silent: when the block is repaired or the case is guarded in the same function (a
    halving loop `while X % B: B //= 2`, any rebinding of `B`, an `if X % B` fallback, a
    power-of-two test of `X` itself (`if not is_pow2(X): return ...`) with a cap that is a power of
    two or not visible here, an `EVEN_K = X % B == 0` flag for a masked kernel, a `cdiv` grid next
    to an `X // B` count); `min(off + B, n)` and other end-index arithmetic; `min` of two runtime
    values with no constant cap (`min(BLOCK_K, group_size)`); a width known to be a multiple of the
    cap where the use is reached: a test or assert `X % D == 0` in the function (`C` dividing `D`),
    or, for `X = t.shape[k]` of a parameter `t`, every caller in the module passing `None` or a
    tensor proven to satisfy `t.shape[k] % D == 0` (`t if ok else None` with
    `ok = ... and t.shape[-1] % 2048 == 0`, also through a `ContextVar` whose every `set` does so);
    a block narrowed to a constant or to a power of two (`B = min(B, 32)`); a group kernel whose
    group parameter is not given the capped width; blocks handed to a launcher that passes them on
    by position; an UPPER_CASE cap whose value is not visible here facing a power of two
    (`min(MAX_FUSED_SIZE, triton.next_power_of_2(n))` with the cap imported: the cap is `C`, the
    width side is a power of two); kernels reached through attributes (`self.kernel[grid]`); a
    kernel's power-of-two needs when the kernel or its launch sits in a package of NPU code (option
    `npu-packages`: Triton-Ascend builds `tl.arange` ranges of any length; divisibility needs still
    count).

    Prefilter: libcst parses a module only when a function (or the module-level code) binding a
    `min(...)` has a host use (`%` or `//` by a name, a `range` loop) or a launch or call that may
    name a kernel, a re-export of one or a launcher (the facts gate, `candidate_facts`, over the
    `block_min_uses` facts); on vLLM 0.33.0 that is 280 of the 460 files holding a site.

    ## Why it breaks
    `min(X, C)` equals `C` whenever `X >= C`, and divides `X` only when `X` is a multiple of `C`;
    below `C` it is `X` itself, a power of two only if `X` is. `X` is usually a per-rank width
    (hidden size, head dimension, intermediate size divided by TP or EP) and changes with the model
    and the parallel layout: a width of 3584 or 1536 under `C = 1024`, or of 384 or 768 reaching
    `tl.arange`, crashes at start-up on that model only, after every test with the usual 4096-wide
    shapes passed. On the kernel side the outcome depends on the need: a block shape or a
    `tl.static_assert` stops the kernel from compiling at its first launch; an `assert` inside the
    kernel is compiled to a `device_assert`, checked only in debug mode, so the kernel runs on with
    the remainder unhandled; a group tile that does not divide the group (8 query heads against
    groups of 10 or 12 per KV head) silently computes part of the second group with the first
    group's data. The finding says where `X` comes from: a per-rank width (divided by a TP/EP size),
    a model-configuration value, a tensor dimension or a parameter.

    ## Example
    See the corpus files below: `BLOCK_D = min(hidden_size, 1024)` followed by
    `assert hidden_size % BLOCK_D == 0` and a kernel launch with `BLOCK_D=BLOCK_D`.

    ## Fix
    Where divisibility is what the consumer needs, use `math.gcd(X, C)`: the largest block not above
    `C` that divides `X` (a power of two when `C` is). This is an *unsafe* fix (applied with
    `--unsafe-fixes`): it changes the block for widths that are not multiples of `C` (384 → 128
    instead of 384), which is the point but may cost speed. Where the kernel only needs a power of
    two, round up with `triton.next_power_of_2(X)` (capped at `C`) and mask the tail in the kernel:
    a suggestion, not an edit.

    ## Options
    - `power-of-two-functions` (list[str]): calls whose result is a power of two. Default
      `["triton.next_power_of_2", "next_power_of_2", "next_power_of_two"]`; a name matches the
      call's dotted name or its trailing components (`next_power_of_2` matches
      `utils.next_power_of_2`). The three defaults always count (they are facts, not preferences,
      and the prefilter relies on them); setting the option adds your helpers.
    - `kernel-decorators` (list[str]): decorators that make a function a kernel whose parameters are
      checked. Default `["triton.jit", "jit"]`; other decorators on the same function
      (`triton.autotune`, `triton.heuristics`) do not matter.
    - `npu-packages` (list[str]): package names (case-insensitive globs, matched against each
      package of the launching module and of the kernel's module) of code built by Triton-Ascend for
      Huawei NPUs, whose `tl.arange` has no power-of-two rule: kernels there keep only their
      divisibility needs. Default `["npu", "npu_*", "*_npu", "*_npu_*",
      "*ascend*"]` (vllm-ascend's `vllm_ascend/`, SGLang's `hardware_backend/npu/`); set `[]` to
      apply CUDA Triton's rule everywhere.
    """

    code = "SHD101"
    name = "block-size-min-divisibility"
    summary = "Block size min(X, C) used as a divisor of X or as a power-of-two block shape"
    severity = Severity.ERROR
    fixable = Fixability.SOMETIMES
    # Every site is a ``min(`` call bound by ``=``, ``:=`` or a launch keyword
    # inside one top-level definition (or module-level code); what its
    # analysis reads elsewhere in the file -- a power-of-two helper it
    # calls, a kernel it launches -- is named from it, and the engine keeps
    # what kept code names (never a method through ``self``).
    needles = SITE_NEEDLES
    definition_needles = needles
    follows_definitions = "top-level"
    # the facts gate (``candidate_facts``): a module none of whose scopes
    # calling ``min`` has a host use (``%``, ``//``, a ``range`` loop) is
    # parsed only when one of their calls may reach a kernel or a launcher
    facts = ("triton_kernels", "facade_imports", "kernel_launchers", "block_min_uses")
    tags = ("correctness", "triton")
    options: ClassVar[Mapping[str, Option]] = {
        "power-of-two-functions": Option(
            BUILTIN_POW2, "list[str]", "Calls whose result is a power of two."
        ),
        "kernel-decorators": Option(
            ("triton.jit", "jit"),
            "list[str]",
            "Decorators that make a function a kernel whose parameters are checked.",
        ),
        "npu-packages": Option(
            NPU_PACKAGES,
            "list[str]",
            "Package names (globs) of code built by Triton-Ascend, where block shapes need "
            "no power of two.",
        ),
    }

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, object]
    ) -> bool:
        """False when no scope calling ``min`` has a host use and no module
        its launches and calls may name has kernel, re-export or launcher
        facts: the block has no consumer."""
        uses = facts.raw("block_min_uses").get(module)
        if not isinstance(uses, Mapping) or uses.get("host", True):
            return True

        def known(names: Sequence[str], *tables: Mapping[str, object]) -> bool:
            modules = {q.rpartition(".")[0] for q in names} - {""}
            return any(m in t for m in modules for t in tables)

        kernels, facades = facts.raw("triton_kernels"), facts.raw("facade_imports")
        return known(uses.get("launches", ()), kernels, facades) or known(
            uses.get("calls", ()), facts.raw("kernel_launchers")
        )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._module_bindings: dict[str, list[object]] = {}
        self._module_functions: dict[str, cst.FunctionDef] = {}
        self._scopes: list[Scope] = []
        # where the node being visited sits: "check" (assert test), "raise"
        # (the test of ``if ...: raise``), "test" (another condition) or ""
        self._where: list[str] = [""]
        # read on demand
        self._imports: dict[str, str] | None = None
        self._local_kernels: dict[str, KernelFacts] | None = None
        self._local_launchers: dict[str, Launcher] | None = None
        self._divisible: dict[str, dict[str, list[list[object]]]] | None = None

    # -- traversal: one pass records what each scope holds -------------------
    def _top(self) -> Scope:
        # a method, not a property: libcst's get_visitors() reads every
        # attribute of the visitor, properties included
        return self._scopes[-1]

    def visit_Module(self, node: cst.Module) -> None:
        self._module_bindings = top_level_bindings(node)
        self._module_functions = module_functions(node)
        self._scopes.append(Scope())

    def leave_Module(self, node: cst.Module) -> None:
        scope = self._scopes.pop()
        if scope.has_min:
            self._analyse(scope, Env(scope.bindings, frozenset(), scope.bindings, True))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(Scope(frozenset(function_params(node)), knobs(node)))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        # analysed here, while the engine's scope names still include the
        # function, so that fingerprints carry the qualified name
        scope = self._scopes.pop()
        if scope.has_min:
            env = Env(scope.bindings, scope.params, self._module_bindings, knobs=scope.knobs)
            self._analyse(scope, env)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(Scope())

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        for t in node.targets:
            target = t.target
            if (
                isinstance(target, (cst.Tuple, cst.List))
                and isinstance(value, (cst.Tuple, cst.List))
                and len(target.elements) == len(value.elements)
                and not any(
                    isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)
                )
            ):
                # ``n, pad = 32, 8``: each name its own value
                for te, ve in zip(target.elements, value.elements):
                    bind(self._top().bindings, te.value, ve.value)
            else:
                bind(self._top().bindings, target, value)

    def visit_AnnAssign(self, node: cst.AnnAssign | cst.NamedExpr) -> None:
        if node.value is not None:
            bind(self._top().bindings, node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign | cst.CompFor) -> None:
        bind(self._top().bindings, node.target, OTHER)

    visit_NamedExpr = visit_AnnAssign
    visit_CompFor = visit_AugAssign

    def visit_For(self, node: cst.For) -> None:
        bind(self._top().bindings, node.target, OTHER)
        it = node.iter
        if isinstance(it, cst.Call) and call_name(it) == "range" and len(it.args) == 3:
            self._top().loops.append(node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            bind(self._top().bindings, node.asname.name, OTHER)

    def visit_Assert_test(self, node: cst.Assert) -> None:
        self._where.append("check")

    def visit_If_test(self, node: cst.If) -> None:
        self._where.append("raise" if raises_only(node.body) else "test")

    def visit_While_test(self, node: cst.While | cst.IfExp) -> None:
        self._where.append("test")

    def leave_Assert_test(self, node: cst.CSTNode) -> None:
        self._where.pop()

    visit_IfExp_test = visit_While_test
    leave_If_test = leave_While_test = leave_IfExp_test = leave_Assert_test

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._where[-1] in ("check", "raise"):
            self._top().pins.append((node, self._where[-1] == "check"))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        op = node.operator
        if isinstance(op, (cst.Modulo, cst.FloorDivide)) and isinstance(
            node.right, (cst.Name, cst.Integer)
        ):
            self._top().ops.append((node, self._where[-1]))
        elif isinstance(op, cst.BitAnd) and self._where[-1]:
            self._top().pow2_checks.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        scope = self._top()
        if name == "min":
            scope.has_min = True
        elif isinstance(node.func, cst.Subscript):
            scope.launches.append(node)
        elif matches(name, CDIV_NAMES):
            scope.cdiv_calls.append(node)
        elif name and self._where[-1] and ("pow" in name.lower()):
            scope.pow2_checks.append(node)
        elif name and any(isinstance(a.value, cst.Name) for a in node.args):
            scope.calls.append(node)

    # -- analysis ------------------------------------------------------------
    def _analyse(self, scope: Scope, env: Env) -> None:
        pow2_functions = (*BUILTIN_POW2, *self.opts["power-of-two-functions"])
        values = Values(env, pow2_functions, self._module_functions)
        found: list[tuple[MinSite, list[Consumer]]] = []
        for name, binds in env.local.items():
            for i, b in enumerate(binds):
                site = self._min_site(b, name, values, binds[:i])
                if site is None:
                    continue
                site.family = aliases({name}, env.local, maybe=False)
                if self._repaired(site, env.local) or pinned(site, scope, env, values):
                    continue
                if self._divisible_input(site, env, values):
                    continue
                reach = aliases(site.family, env.local, maybe=True)
                consumers = host_consumers(site, scope, env)
                consumers += self._kernel_consumers(site, scope.launches, env, reach)
                consumers += self._launcher_consumers(site, scope.calls, reach)
                if got := live(site, consumers, scope, env):
                    found.append((site, got))
        for call in scope.launches:
            # ``KERNEL[grid](BLOCK=min(...))``
            for a in call.args:
                if a.keyword is None or call_name(a.value) != "min":
                    continue
                site = self._min_site(a.value, a.keyword.value, values, [])
                if site is None or self._divisible_input(site, env, values):
                    continue
                site.inline = True
                consumers = self._kernel_consumers(site, [call], env, set())
                if got := live(site, consumers, None, env):
                    found.append((site, got))
        self._report_all(found, env)

    def _min_site(
        self, value: object, name: str, values: Values, before: Sequence[object]
    ) -> MinSite | None:
        """The ``min(X, C)`` of ``name = value`` as a block site; ``before``:
        the bindings of ``name`` that precede it, the cap's value where the
        block narrows itself (``T = min(T, block_size)``)."""
        if not isinstance(value, cst.Call) or call_name(value) != "min":
            return None
        if len(value.args) != 2 or any(a.keyword or a.star for a in value.args):
            return None
        args = [a.value for a in value.args]
        if any(has_offset_arith(e) for e in args):
            return None
        narrows = [isinstance(e, cst.Name) and e.value == name for e in args]
        narrowing = any(narrows) and bool(before)
        if narrowing:
            env = dataclasses.replace(values.env, local={**values.env.local, name: list(before)})
            values = Values(env, values.pow2_functions, values.functions)
        consts = [values.const(e) for e in args]
        pow2 = [values.pow2(e) for e in args]
        if None not in consts:
            return None
        if narrowing:
            # ``T = min(T, n)``: the block's own earlier value is the cap,
            # provided it is known (a constant or a power of two)
            cap: int | None = narrows.index(True)
            if not consts[cap] and not pow2[cap]:
                return None
        else:
            # a literal is the cap; then an UPPER_CASE name facing a runtime
            # value (``min(MAX_FUSED_SIZE, triton.next_power_of_2(n))``: the
            # imported cap, whose value is not visible here, is not the
            # width); then a power of two facing something that is not one
            named = [constant_like(e, values.env) for e in args]
            known = [v is not None for v in consts]
            cap = next((p.index(True) for p in (known, named, pow2) if p[0] != p[1]), None)
        if cap is None or pow2[1 - cap] or consts[1 - cap] is not None:
            return None
        least = consts[cap] if consts[cap] is not None else values.least(args[cap])
        return MinSite(value, args[1 - cap], args[cap], consts[cap], pow2[cap], name, least)

    def _repaired(self, site: MinSite, local: Mapping[str, list[object]]) -> bool:
        """Any other kind of binding of the block after the ``min`` (``B //=
        2`` in a halving loop, ``B = gcd(...)``, ``B = next_power_of_2(B)``)
        means the function adjusts it: silence rather than guess which value
        reaches the use. Bindings before it (the cap's own value, in ``T =
        min(T, n)``) do not."""
        for n in site.family:
            binds = local.get(n, [])
            if n == site.name:
                binds = binds[next((i for i, b in enumerate(binds) if b is site.call), -1) + 1 :]
            for b in binds:
                if not (
                    isinstance(b, cst.Integer)
                    or call_name(b) == "min"
                    or names_block(b, site.family)
                ):
                    return True
        return False

    def _divisible_input(self, site: MinSite, env: Env, values: Values) -> bool:
        """Every value ``X`` can take makes ``min(X, C)`` a divisor of ``X``
        (and a power of two, with a power-of-two cap): a constant, or
        ``t.shape[k]`` of a parameter ``t`` whose every caller in this module
        proves ``t.shape[k] % D == 0`` with ``C`` dividing ``D``."""
        c = site.c_value
        if c is None or c <= 0 or not isinstance(site.x, cst.Name) or env.is_module:
            return False
        binds = env.local.get(site.x.value)
        if not binds or site.x.value in env.params:
            return False
        function = self.ctx.current_function
        if function is None or len(self.ctx.scope_names) != 1:
            return False  # (the facts know the module's own functions)
        if self._divisible is None:
            self._divisible = divisible_inputs.collect_text(self.ctx.text, self.ctx.ast_tree)
        proven = self._divisible.get(function.name.value, {})
        for b in binds:
            v = values.const(b) if b is not OTHER else None
            if v is not None:
                if v > 0 and v % min(v, c) == 0 and (is_pow2(min(v, c)) or not site.c_pow2):
                    continue
                return False
            dim = tensor_dim(b)
            if dim is None or dim[0] not in env.params:
                return False
            if not any(
                d == dim[1] and isinstance(k, int) and k % c == 0 for d, k in proven.get(dim[0], ())
            ):
                return False
        return True

    def _kernel_consumers(
        self, site: MinSite, launches: Sequence[cst.Call], env: Env, reach: set[str]
    ) -> list[Consumer]:
        """The needs of the kernels ``launches`` pass the block to: a name in
        ``reach``, or the site's own ``min`` written in the launch."""
        out: list[Consumer] = []
        same_x = SameX(site.x, env)
        for call in launches:
            kname = dotted(call.func.value) if isinstance(call.func, cst.Subscript) else None
            facts = self._kernel(self._qualify(kname)) if kname else None
            if facts is None:
                continue
            args = dict(launch_args(call, facts.params))
            for param, value in args.items():
                if value is not site.call and not names_block(value, reach):
                    continue
                for need in self._needs(facts, param):
                    passed = args.get(need.other) if need.other else None
                    if need.group and (passed is None or not same_x(passed)):
                        # the tiles cover another width than the one capped
                        continue
                    shown = code(passed) if passed is not None else None
                    out.append(kernel_consumer(kname, param, need, facts, shown))
        return out

    def _launcher_consumers(
        self, site: MinSite, calls: Sequence[cst.Call], reach: set[str]
    ) -> list[Consumer]:
        """The block handed to a function (here or in another module) that
        passes that parameter on to a kernel launch."""
        out: list[Consumer] = []
        for call in calls:
            fname = dotted(call.func)
            launcher = self._launcher(self._qualify(fname)) if fname else None
            if launcher is None:
                continue
            for param, value in launch_args(call, launcher.params):
                if not names_block(value, reach):
                    continue
                for fwd in launcher.forwards:
                    facts = self._kernel(fwd.kernel) if fwd.param == param else None
                    if facts is None:
                        continue
                    kname = fwd.kernel.rsplit(".", 1)[-1]
                    for need in self._needs(facts, fwd.arg):
                        if not need.group:
                            out.append(kernel_consumer(kname, fwd.arg, need, facts, via=fname))
        return out

    def _qualify(self, name: str) -> str | None:
        """The qualified name ``name`` stands for here (None for ``self.``
        and ``cls.`` attributes, which are not followed)."""
        if name.split(".", 1)[0] in ("self", "cls"):
            return None
        if self._imports is None:
            self._imports = imports_from_cst(self.ctx.module, self.ctx.module_name, self.ctx.path)
        return qualify(name, self.ctx.module_name, self._imports)

    def _launcher(self, qual: str | None) -> Launcher | None:
        if qual is None:
            return None
        mod = self.ctx.module_name
        if qual.rpartition(".")[0] != mod:
            found = find_launcher(self.ctx.facts.raw("kernel_launchers"), qual)
            return found[1] if found is not None else None
        if self._local_launchers is None:
            tree = self.ctx.ast_tree()
            data = launcher_facts(tree, mod, self.ctx.path) if tree is not None else None
            self._local_launchers = {
                n: Launcher.from_json(f, self.ctx.path)
                for n, f in (data or {}).get("functions", {}).items()
            }
        return self._local_launchers.get(qual.rpartition(".")[2])

    def _kernel(self, qual: str | None) -> KernelFacts | None:
        """The kernel ``qual`` names, followed through re-exports; None when
        it is not one whose decorator makes a kernel."""
        if qual is None:
            return None
        index = self.ctx.facts.index("triton_kernels")
        if not isinstance(index, KernelIndex):
            index = KernelIndex()
        facades = self.ctx.facts.raw("facade_imports")
        if self._local_kernels is None:
            self._local_kernels = collect_text(
                self.ctx.text, self.ctx.module_name, self.ctx.path, self.ctx.ast_tree
            )
        local = self._local_kernels

        def defined(q: str) -> bool:
            return q in local or q in index.kernels

        def imports(m: str) -> Mapping[str, str] | None:
            return index.imports.get(m) or facades.get(m)

        qual = follow_reexports(qual, defined, imports)
        facts = local.get(qual) or index.kernels.get(qual)
        decorators = self.opts["kernel-decorators"]
        if facts is None or not any(matches(d, decorators) for d in facts.decorators):
            return None
        return facts

    def _needs(self, kernel: KernelFacts, param: str) -> list[Need]:
        """``kernel``'s needs of ``param``, less the power-of-two ones where
        the launch or the kernel lives in a package of NPU code (option
        ``npu-packages``, case-insensitive globs): Triton-Ascend builds
        ``tl.arange`` and block shapes of any size."""
        match = globs_matcher(tuple(self.opts["npu-packages"]))
        kernel_module = kernel.path.replace("/", ".").removesuffix(".py")
        npu = any(
            match(part) is not None
            for module in (self.ctx.module_name, kernel_module)
            for part in module.lower().split(".")[:-1]
        )
        return [n for n in kernel.needs.get(param, ()) if not (npu and n.kind == "pow2")]

    # -- reporting -------------------------------------------------------------
    def _report_all(self, found: list[tuple[MinSite, list[Consumer]]], env: Env) -> None:
        """One finding per root cause: sites of one function that cap the
        same width and reach the same consumers are reported once, the
        others as notes."""
        groups: dict[tuple[str, tuple[str, ...]], list[tuple[MinSite, list[Consumer]]]] = {}
        for site, consumers in found:
            key = (code(site.x), tuple(sorted({c.where for c in consumers})))
            groups.setdefault(key, []).append((site, consumers))
        fn = self.ctx.current_function
        for (site, consumers), *rest in groups.values():
            also = []
            for s, _ in rest:
                where = positions(self.ctx.module, [s.call]).get(s.call)
                text = f"also `{s.name} = {call_text(s.call)}` reaches the same uses"
                also.append(Note(text, self.ctx.path, Span(*where)) if where else Note(text))
            origin = describe(site.x, env, fn.name.value if fn is not None else None)
            message, notes = finding_text(site, consumers, origin)
            fix = self._fix(site, {k.kind for k in consumers})
            self.report(site.call, message, notes=[*notes, *also], fix=fix)

    def _fix(self, site: MinSite, kinds: set[str]) -> PendingFix:
        x, c = code(site.x), code(site.c)
        # gcd(X, C) divides X by construction and is a power of two when C is,
        # so it satisfies both kinds of consumer; with a cap that is not a
        # power of two it would not satisfy a block shape.
        if "div" in kinds and ("pow2" not in kinds or site.c_pow2):
            return PendingFix(
                title=(
                    f"Use `math.gcd({x}, {c})`: the largest block not above {c} that divides "
                    f"{x} (changes the block for widths that are not multiples of {c})"
                ),
                applicability=Applicability.UNSAFE,
                replacements=[(site.call, f"math.gcd({x}, {c})")],
                add_imports=["math"],
            )
        return PendingFix(
            title=(
                f"Round up with `triton.next_power_of_2({x})` (capped at {c}) and mask the "
                f"tail in the kernel (`offs < {x}`)"
            ),
            applicability=Applicability.DISPLAY_ONLY,
        )
