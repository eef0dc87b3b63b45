"""SHD101 block-size-min-divisibility: ``B = min(X, C)`` used as a block that
must divide ``X`` or be a power of two.

The rule's modules: ``values`` (bindings, constant folding, power-of-two
proofs), ``sites`` (the ``min`` sites, their consumers and guards, the
texts of a finding) and this one (the rule: one libcst traversal gathers
each function's pieces, then each function is analysed as it is left).
Kernels in other files come from the ``triton_kernels`` and
``facade_imports`` facts (``checks.facts.kernels``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import ClassVar

import libcst as cst

from linter.syntax import call_name, dotted, function_params
from linter.imports import follow_reexports, imports_from_cst, qualify
from checks.block_size_min_divisibility.sites import (
    CDIV_NAMES,
    Consumer,
    MinSite,
    Scope,
    SameX,
    call_text,
    cap_side,
    div_example,
    family_of,
    guards,
    has_offset_arith,
    inline_mins,
    kernel_consumer,
    launch_args,
    loop_handles_tail,
    names_block,
    pinned,
    pow2_example,
    raise_only,
    short,
)
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
from checks.facts.kernels import KernelFacts, KernelIndex, collect_text
from linter.needles import Needles
from linter.rule import Option, PendingFix, Rule
from linter.types import Applicability, Fixability, Note, Severity

# Always power-of-two calls, whatever the option says (see its doc).
BUILTIN_POW2 = ("triton.next_power_of_2", "next_power_of_2", "next_power_of_two")

# Triton-Ascend (Huawei NPUs) lifts CUDA Triton's power-of-two rule for
# ``tl.arange`` ranges (its ``arange`` documentation); vllm-ascend's and
# SGLang's NPU kernels live in packages named so.
NPU_PACKAGES = ("npu", "npu_*", "*_npu", "*_npu_*", "*ascend*")


def on_npu_package(dotted_path: str, patterns: Sequence[str]) -> bool:
    """Whether a package component of ``dotted_path`` (a module name, or a
    path with dots) matches one of ``patterns`` (case-insensitive globs)."""
    parts = dotted_path.lower().split(".")[:-1]
    return any(fnmatch.fnmatchcase(part, p.lower()) for part in parts for p in patterns)


class BlockSizeMinDivisibility(Rule):
    """## What it finds
    A block or tile size computed as `min(X, C)` (either argument order, also
    through a plain alias such as `tile = BLOCK`) where `X` is not provably a
    power of two, used where the block must divide `X` or be a power of two:

    - on the host: `assert X % B == 0` (or `if X % B: raise`), `X // B` as a
      grid size or count, `for i in range(0, X, B)` whose body has no
      remainder handling;
    - in a kernel: `B` passed (by keyword or position) to a `@triton.jit`
      function, possibly autotuned and possibly defined in another module and
      imported or re-exported, whose parameter is a block shape
      (`tl.arange(0, P)`, `tl.zeros([P])`, `tl.full`, `tl.reshape`,
      `block_shape=`) or appears in `tl.static_assert(... % P == 0)`.

    Provably a power of two: a power-of-two literal, `triton.next_power_of_2`
    (see the option), `1 << k`, `x & -x`, products and min/max of such,
    names bound only to such values in this file (module constants too), and
    calls of a function defined at the top of this file whose every `return`
    is such a value (`def _block(n): return max(16, triton.next_power_of_2(n))`).

    Deliberately silent: when the block is repaired or the case is guarded in
    the same function (a halving loop `while X % B: B //= 2`, any rebinding
    of `B`, an `if X % B` fallback, a power-of-two test of `X` itself
    (`if not is_pow2(X): return ...`) with a cap that is a power of two or
    not visible here, an `EVEN_K = X % B == 0` flag for a
    masked kernel, a `cdiv` grid next to an `X // B` count); `min(off + B, n)`
    and other end-index arithmetic; `min` of two runtime values with no
    constant cap (`min(BLOCK_K, group_size)`); an UPPER_CASE cap whose value
    is not visible here facing a power of two (`min(MAX_FUSED_SIZE,
    triton.next_power_of_2(n))` with the cap imported: the cap is `C`, the
    width side is a power of two); kernels reached through attributes
    (`self.kernel[grid]`); a kernel's power-of-two needs when the kernel or
    its launch sits in a package of NPU code (option `npu-packages`:
    Triton-Ascend builds `tl.arange` ranges of any length; divisibility
    needs still count).

    ## Why it breaks
    `min(X, C)` equals `C` whenever `X >= C`, and divides `X` only when `X` is
    a multiple of `C`; below `C` it is `X` itself, a power of two only if `X`
    is. `X` is usually a per-rank width (hidden size, head dimension,
    intermediate size divided by TP or EP) and changes with the model and the
    parallel layout: a width of 3584 or 1536 under `C = 1024`, or of 384 or
    768 reaching `tl.arange`, crashes at start-up on that model only, after
    every test with the usual 4096-wide shapes passed.

    ## Example
    See the corpus files below: `BLOCK_D = min(hidden_size, 1024)` followed by
    `assert hidden_size % BLOCK_D == 0` and a kernel launch with
    `BLOCK_D=BLOCK_D`.

    ## Fix
    Where divisibility is what the consumer needs, use `math.gcd(X, C)`: the
    largest block not above `C` that divides `X` (a power of two when `C`
    is). This is an *unsafe* fix (applied with `--unsafe-fixes`): it changes
    the block for widths that are not multiples of `C` (384 → 128 instead of
    384), which is the point but may cost speed. Where the kernel only needs a
    power of two, round up with `triton.next_power_of_2(X)` (capped at `C`)
    and mask the tail in the kernel: a suggestion, not an edit.

    ## Options
    - `power-of-two-functions` (list[str]): calls whose result is a power of
      two. Default `["triton.next_power_of_2", "next_power_of_2",
      "next_power_of_two"]`; a name matches the call's dotted name or its
      trailing components (`next_power_of_2` matches `utils.next_power_of_2`).
      The three defaults always count (they are facts, not preferences, and
      the prefilter relies on them); setting the option adds your helpers.
    - `kernel-decorators` (list[str]): decorators that make a function a
      kernel whose parameters are checked. Default `["triton.jit", "jit"]`;
      other decorators on the same function (`triton.autotune`,
      `triton.heuristics`) do not matter.
    - `npu-packages` (list[str]): package names (case-insensitive globs,
      matched against each package of the launching module and of the
      kernel's module) of code built by Triton-Ascend for Huawei NPUs, whose
      `tl.arange` has no power-of-two rule: kernels there keep only their
      divisibility needs. Default `["npu", "npu_*", "*_npu", "*_npu_*",
      "*ascend*"]`
      (vllm-ascend's `vllm_ascend/`, SGLang's `hardware_backend/npu/`); set
      `[]` to apply CUDA Triton's rule everywhere.
    """

    code = "SHD101"
    name = "block-size-min-divisibility"
    summary = "Block size min(X, C) used as a divisor of X or as a power-of-two block shape"
    severity = Severity.ERROR
    fixable = Fixability.SOMETIMES
    # Every site is a ``min(`` call bound by ``=``, ``:=`` or a launch keyword
    # (``B = min(``, ``B: int = (min(``, ``(B := min(``, ``BLOCK=min(``), with
    # whitespace, brackets, backslashes or comments between the tokens.
    needles = Needles(all_of=("min",), regex=r"=(?:[\s(\\]|#[^\n]*)*min(?:[\s)\\]|#[^\n]*)*\(")
    # every site is a ``min(...)`` binding inside one top-level definition (or
    # module-level code); what a site's analysis reads elsewhere in the file
    # -- a power-of-two helper it calls, a kernel it launches -- is named
    # from it, and the engine keeps what kept code names
    definition_needles = needles
    # Not ``definition_needles``: a site's power-of-two proof may call
    # another top-level function of the file (``_block(n)``).
    facts = ("triton_kernels", "facade_imports")
    tags = ("correctness", "triton")
    options: ClassVar[Mapping[str, Option]] = {
        "power-of-two-functions": Option(
            BUILTIN_POW2,
            "list[str]",
            "Calls whose result is a power of two.",
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

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._module_bindings: dict[str, list[object]] = {}
        self._module_functions: dict[str, cst.FunctionDef] = {}
        self._scopes: list[Scope] = []
        # where the node being visited sits: "check" (assert test), "raise"
        # (the test of ``if ...: raise``, a check with the opposite polarity),
        # "test" (another condition) or "" (plain code)
        self._where: list[str] = [""]
        self._imports: dict[str, str] | None = None
        self._local_kernels: dict[str, KernelFacts] | None = None

    # -- traversal: one pass records what each scope holds -------------------
    def _top(self) -> Scope:
        # a method, not a property: libcst's get_visitors() reads every
        # attribute of the visitor, properties included
        return self._scopes[-1]

    def visit_Module(self, node: cst.Module) -> None:
        self._module_bindings = top_level_bindings(node)
        self._module_functions = module_functions(node)
        self._scopes.append(Scope(node, frozenset()))

    def leave_Module(self, node: cst.Module) -> None:
        scope = self._scopes.pop()
        if scope.has_min:
            env = Env(scope.bindings, frozenset(), scope.bindings, True)
            self._analyse(scope, env)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(Scope(node, frozenset(function_params(node)), knobs(node)))
        self._where.append("")

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        # analysed here, while the engine's scope names still include the
        # function, so that fingerprints carry the qualified name
        scope = self._scopes.pop()
        self._where.pop()
        if scope.has_min:
            env = Env(scope.bindings, scope.params, self._module_bindings, knobs=scope.knobs)
            self._analyse(scope, env)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(Scope(node, frozenset()))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            bind(self._top().bindings, t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            bind(self._top().bindings, node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        bind(self._top().bindings, node.target, OTHER)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        bind(self._top().bindings, node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        bind(self._top().bindings, node.target, OTHER)
        it = node.iter
        if isinstance(it, cst.Call) and call_name(it) == "range" and len(it.args) == 3:
            self._top().loops.append(node)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        bind(self._top().bindings, node.target, OTHER)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            bind(self._top().bindings, node.asname.name, OTHER)

    def visit_Assert_test(self, node: cst.Assert) -> None:
        self._where.append("check")

    def leave_Assert_test(self, node: cst.Assert) -> None:
        self._where.pop()

    def visit_If_test(self, node: cst.If) -> None:
        self._where.append("raise" if raise_only(node.body) else "test")

    def leave_If_test(self, node: cst.If) -> None:
        self._where.pop()

    def visit_While_test(self, node: cst.While) -> None:
        self._where.append("test")

    def leave_While_test(self, node: cst.While) -> None:
        self._where.pop()

    def visit_IfExp_test(self, node: cst.IfExp) -> None:
        self._where.append("test")

    def leave_IfExp_test(self, node: cst.IfExp) -> None:
        self._where.pop()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._where[-1] in ("check", "raise"):
            self._top().pins.append((node, self._where[-1] == "check"))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        op = node.operator
        if isinstance(op, (cst.Modulo, cst.FloorDivide)) and isinstance(node.right, cst.Name):
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

    # -- analysis ------------------------------------------------------------
    def _analyse(self, scope: Scope, env: Env) -> None:
        pow2_functions = (*BUILTIN_POW2, *self.opts["power-of-two-functions"])
        values = Values(env, pow2_functions, self._module_functions)
        sites: list[MinSite] = []
        for name, binds in env.local.items():
            for b in binds:
                site = self._min_site(b, name, values)
                if site is not None:
                    sites.append(site)
        for site in sites:
            site.family = family_of(site.name, env.local)
            if self._repaired(site, env.local) or pinned(site, scope, env, values):
                continue
            consumers = self._host_consumers(site, scope, env)
            consumers += self._kernel_consumers(site, scope.launches)
            self._decide(site, consumers, scope)
        for call in scope.launches:
            for kw, m in inline_mins(call):
                site = self._min_site(m, kw, values)
                if site is None:
                    continue
                site.inline = True
                consumers = self._kernel_consumers(site, [call], inline=kw)
                self._decide(site, consumers, None)

    def _min_site(self, value: object, name: str, values: Values) -> MinSite | None:
        if not isinstance(value, cst.Call) or call_name(value) != "min":
            return None
        if len(value.args) != 2 or any(a.keyword or a.star for a in value.args):
            return None
        a, b = value.args[0].value, value.args[1].value
        if has_offset_arith(a) or has_offset_arith(b):
            return None
        va, vb = values.const(a), values.const(b)
        if va is not None and vb is not None:
            return None
        pa, pb = values.pow2(a), values.pow2(b)
        cap = cap_side(va, vb, pa, pb, constant_like(a, values.env), constant_like(b, values.env))
        if cap == 0:
            c, x, cv, cp = a, b, va, pa
        elif cap == 1:
            c, x, cv, cp = b, a, vb, pb
        else:
            return None
        if values.pow2(x) or values.const(x) is not None:
            return None
        return MinSite(value, x, c, cv, cp, name, {name})

    def _repaired(self, site: MinSite, local: Mapping[str, list[object]]) -> bool:
        """Any other kind of binding of the block (``B //= 2`` in a halving
        loop, ``B = gcd(...)``, ``B = next_power_of_2(B)``) means the function
        adjusts it: silence rather than guess which value reaches the use."""
        for n in site.family:
            for b in local.get(n, ()):
                if b is OTHER:
                    return True
                if isinstance(b, cst.Call) and call_name(b) == "min":
                    continue
                if isinstance(b, cst.Name) and b.value in site.family:
                    continue
                if isinstance(b, cst.Integer):
                    continue
                return True
        return False

    def _host_consumers(self, site: MinSite, scope: Scope, env: Env) -> list[Consumer]:
        out: list[Consumer] = []
        same_x = SameX(site.x, env)
        for node, where in scope.ops:
            if not names_block(node.right, site.family) or not same_x(node.left):
                continue
            if isinstance(node.operator, cst.Modulo) and where in ("check", "raise"):
                verb = "is asserted" if where == "check" else "is required (else it raises)"
                out.append(Consumer("div", f"`{short(code(node))} == 0` {verb}"))
            elif isinstance(node.operator, cst.FloorDivide) and where != "test":
                out.append(
                    Consumer("div", f"`{short(code(node))}` drops the remainder", floor=True)
                )
        for loop in scope.loops:
            it = loop.iter
            assert isinstance(it, cst.Call)
            if (
                same_x(it.args[1].value)
                and names_block(it.args[2].value, site.family)
                and not loop_handles_tail(loop)
            ):
                out.append(Consumer("div", f"`{short(code(it))}` has no tail handling"))
        return out

    def _kernel_consumers(
        self, site: MinSite, launches: Sequence[cst.Call], inline: str | None = None
    ) -> list[Consumer]:
        out: list[Consumer] = []
        for call in launches:
            kname = dotted(call.func.value) if isinstance(call.func, cst.Subscript) else None
            if not kname:
                continue
            facts = self._kernel(kname)
            if facts is None:
                continue
            for param, value in launch_args(call, facts.params):
                if inline is not None:
                    if value is not site.call:
                        continue
                elif not names_block(value, site.family):
                    continue
                for need in facts.needs.get(param, ()):
                    if need.kind == "pow2" and self._on_npu(facts):
                        continue
                    out.append(kernel_consumer(kname, param, need, facts))
        return out

    def _on_npu(self, kernel: KernelFacts) -> bool:
        """Whether the launch or the kernel lives in a package of NPU code
        (option ``npu-packages``): Triton-Ascend builds ``tl.arange`` and
        block shapes of any size, so only divisibility needs remain."""
        pats = self.opts["npu-packages"]
        return on_npu_package(self.ctx.module_name, pats) or on_npu_package(
            kernel.path.replace("/", ".").removesuffix(".py"), pats
        )

    def _kernel(self, name: str) -> KernelFacts | None:
        head = name.split(".", 1)[0]
        if head in ("self", "cls"):
            return None
        if self._imports is None:
            self._imports = imports_from_cst(self.ctx.module, self.ctx.module_name, self.ctx.path)
        mod = self.ctx.module_name
        qual = qualify(name, mod, self._imports)
        index = self.ctx.facts.index("triton_kernels")
        kernels = index.kernels if isinstance(index, KernelIndex) else {}
        kernel_imports = index.imports if isinstance(index, KernelIndex) else {}
        facades = self.ctx.facts.raw("facade_imports")

        def imports(m: str) -> Mapping[str, str] | None:
            return kernel_imports.get(m) or facades.get(m)

        if self._local_kernels is None:
            self._local_kernels = collect_text(self.ctx.text, mod, self.ctx.path)
        local = self._local_kernels

        def defined(q: str) -> bool:
            return q in local or q in kernels

        qual = follow_reexports(qual, defined, imports)
        facts = local.get(qual) or kernels.get(qual)
        if facts is None or not any(
            matches(d, self.opts["kernel-decorators"]) for d in facts.decorators
        ):
            return None
        return facts

    # -- reporting -------------------------------------------------------------
    def _decide(self, site: MinSite, consumers: list[Consumer], scope: Scope | None) -> None:
        div_guard, cdiv, pow2_guard = guards(site, scope) if scope else (False, False, False)
        live: list[Consumer] = []
        for c in consumers:
            if c.kind == "div":
                if div_guard or (cdiv and c.floor):
                    continue
                if site.c_value is not None and site.c_value <= 1:
                    continue
            else:
                if pow2_guard:
                    continue
                if site.c_value is not None and is_pow2(site.c_value) and site.c_value <= 2:
                    continue
            live.append(c)
        if not live:
            return
        x, c, b = code(site.x), code(site.c), site.name
        div = [k for k in live if k.kind == "div"]
        pow2 = [k for k in live if k.kind == "pow2"]
        call = call_text(site.call)
        head = f"`{b}={call}`" if site.inline else f"`{b} = {call}`"
        if div:
            first = div[0]
            message = (
                f"block size {head} need not divide `{x}`, as {first.where}: "
                f"{div_example(x, b, c, site.c_value)}"
            )
        else:
            first = pow2[0]
            message = (
                f"block size {head} need not be a power of two, as {first.where}: "
                f"{pow2_example(x, b, c, site.c_value, site.c_pow2)}"
            )
        notes: list[Note] = []
        if div:
            notes.append(
                Note(
                    f"`{x}` is a per-model, per-layout width (a hidden, head or intermediate "
                    f"size divided by the TP/EP size); `{call}` is `{c}` whenever "
                    f"`{x}` >= `{c}`, and divides `{x}` only when `{x}` is a multiple of it: "
                    f"a model whose width is not fails at start-up (or silently loses the "
                    f"tail), while the usual power-of-two widths pass every test."
                )
            )
        if pow2:
            notes.append(
                Note(
                    f"Triton block shapes must be powers of two; `{call}` is `{x}` "
                    f"itself whenever `{x}` < `{c}` and widths such as 384, 768 or 96 are "
                    f"not powers of two: the kernel fails to compile for such a model "
                    f"({pow2_example(x, b, c, site.c_value, site.c_pow2)})."
                )
            )
        for k in live:
            if k.note is not None:
                notes.append(k.note)
            elif k is not first:
                notes.append(Note(f"also: {k.where}"))
        fix = self._fix(site, bool(div), bool(pow2))
        self.report(site.call, message, notes=notes, fix=fix)

    def _fix(self, site: MinSite, div: bool, pow2: bool) -> PendingFix:
        x, c = code(site.x), code(site.c)
        # gcd(X, C) divides X by construction and is a power of two when C is,
        # so it satisfies both kinds of consumer; with a cap that is not a
        # power of two it would not satisfy a block shape.
        if div and (not pow2 or site.c_pow2):
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

