"""SHD503 double-scaled-padding: a pad or delta already multiplied by a
factor (a parallel size, an element size) and multiplied by the same factor
again -- in the same function, by the caller of a helper that returns it
scaled, or by the callee it is passed to. One libcst analysis per module
(``DoubleScaledPadding``): helpers and consumers are read in the same file."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import libcst as cst

from linter.needles import Needles
from linter.rule import Option, Rule, RuleContext
from linter.syntax import call_name, dotted, function_params, name_matches, walk_no_nested
from linter.types import Severity

DEFAULT_FACTORS = (
    "tp_size",
    "*_tp_size",
    "tp_world_size",
    "world_size",
    "*_world_size",
    "*_parallel_size",
    "ep_size",
    "*_ep_size",
    "num_ranks",
    "element_size",
    "itemsize",
    "*dtype_size*",
    "*bytes_per_*",
    "get_*_world_size",
)
# A pad, a delta, a slack: what a padding computation produces. Offsets and
# sizes are left out: `tp_rank * shard_size` scaled again is usually a
# stride, not a mistake.
DEFAULT_VALUES = ("*pad*", "*delta*", "*slack*")
_NOT_VALUES = ("*unpad*", "*non_pad*")


def _needles(options: Mapping[str, Any], definition: bool = False) -> Needles:
    """The file must hold a `*` and the longest literal part of a value
    name's glob; a top-level definition only the part (a caller passing a
    scaled pad multiplies nothing itself). A glob with no literal part: no
    part needed."""
    every = () if definition else ("*",)
    globs = options.get("value-names", DEFAULT_VALUES)
    parts = {max(re.split(r"[*?\[\]]", g), key=len) for g in globs}
    if "" in parts:
        return Needles(all_of=every)
    return Needles(all_of=every, regex=f"(?i:{'|'.join(sorted({re.escape(p) for p in parts}))})")


@dataclass(frozen=True)
class Scaled:
    factor: str  # the factor as written (`self.tp_size`), compared by its key
    key: str  # last name component, lower case
    site: cst.CSTNode  # where it was first multiplied
    code: str


class DoubleScaledPadding(Rule):
    """## What it finds
    A pad or delta (a name matching `*pad*`, `*delta*`, `*slack*`) that is
    multiplied by a factor -- a parallel size such as `tp_size`, an element
    size -- and then multiplied by the same factor again:
    - in one function (`pad_total = pad * tp_size`, later `pad_total * tp_size`,
      or `pad *= tp_size` twice);
    - by the caller of a helper of the same module that already returns it
      scaled (`def padding(): return pad * tp_size` and `padding() * tp_size`);
    - by the callee it is passed to, when that function multiplies the
      parameter by the same factor (`consumer(pad_total)` with
      `def consumer(pad): ... pad * tp_size`).

    ## Why it breaks
    The second multiplication makes the pad `factor` times too large. A
    padding of a per-rank shard scaled to the whole tensor and scaled again
    under tensor parallelism (`tp_size` > 1) writes or reads that many rows
    past the shard: the loader overwrites live rows of the next shard or of
    the next weight, or `narrow` raises `RuntimeError: start (...) + length
    (...) exceeds dimension size`. A byte delta multiplied by the element size
    twice lands 2-4x too far (an out-of-bounds copy or a silently wrong
    slice). With `tp_size == 1` (or 1-byte elements) nothing happens, so
    single-GPU tests pass.

    ## Example
    See the flagged and correct corpus examples below.

    ## Fix
    Scale once: keep the per-rank value and the scaled one under distinct
    names (`pad_per_rank`, `pad_total`) and multiply only the per-rank one;
    or make the consumer take the scaled value as it is. No automatic fix:
    which of the two multiplications is wrong depends on what the consumer
    expects.

    ## Options
    - `factor-names` (list of globs, last name component, any case): the
      factors. Default: `tp_size`, `*_tp_size`, `tp_world_size`, `world_size`,
      `*_world_size`, `*_parallel_size`, `ep_size`, `*_ep_size`, `num_ranks`,
      `element_size`, `itemsize`, `*dtype_size*`, `*bytes_per_*`,
      `get_*_world_size` (a call's name counts: `x.element_size()`).
    - `value-names` (list of globs, last name component, any case): the pads
      and deltas. Default: `*pad*`, `*delta*`, `*slack*`; names containing
      `unpad` or `non_pad` never count.
    A file is analysed only if it holds a `*` and the longest literal part
    of one `value-names` glob (any case), and in it only the top-level
    functions and classes holding that part, with those such code names; a
    glob with no literal part opens the gate to every file.

    Off by default (turn it on with `extend-select = ["SHD503"]`): no
    public bug of this exact shape was found in vLLM or SGLang history
    (`bench/history/cases/double_scaled_padding.toml` lists the searches),
    and it reports nothing on vLLM 0.33.0 and SGLang 0.5.23, so a default
    run does not pay for it.

    Left out on purpose: integer literals as factors (`2 * inter` then `* 2`
    is how a fused gate/up weight meets FP4 packing: two different meanings),
    helpers and consumers in other modules, values carried through `+`/`-`.
    """

    code = "SHD503"
    name = "double-scaled-padding"
    summary = "A pad or delta multiplied again by the factor it was already scaled by"
    severity = Severity.WARNING
    # (see "Off by default" above)
    default_enabled = False
    tags = ("correctness", "shapes", "parallelism")
    options = {
        "factor-names": Option(DEFAULT_FACTORS, "list[str]", "Globs naming scale factors."),
        "value-names": Option(DEFAULT_VALUES, "list[str]", "Globs naming pads and deltas."),
    }
    needles = _needles({})
    # Every function a finding involves holds a pad's name (the one that
    # scales it, the one that scales it again, the caller passing it), but
    # a consumer's parameter may be named anything: that consumer is kept
    # because the caller, kept, names it.
    definition_needles = _needles({}, definition=True)

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        return _needles(options), _needles(options, definition=True)

    def __init__(self, ctx: RuleContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._factors = tuple(self.opts["factor-names"])
        self._values = tuple(self.opts["value-names"])
        # locals bound to a factor in the function being read
        self._aliases: dict[str, str] = {}
        # the module's functions by bare name; those returning a scaled pad;
        # those scaling a parameter (by parameter)
        self._functions: dict[str, cst.FunctionDef] = {}
        self._returns: dict[str, Scaled] = {}
        self._consumers: dict[str, dict[str, Scaled]] = {}

    # -- vocabulary -----------------------------------------------------------------
    def _factor_key(self, e: cst.BaseExpression) -> str | None:
        """The factor's name (last component, lower case; a local bound to a
        factor stands for it: `world = get_tp_world_size()`)."""
        if isinstance(e, cst.Call):
            e = e.func
        name = dotted(e)
        if name in self._aliases:
            return self._aliases[name]
        leaf = (name or "").rsplit(".", 1)[-1].lower()
        return leaf if name_matches(leaf, self._factors) else None

    def _is_value(self, name: str | None) -> bool:
        return name_matches(name, self._values) and not name_matches(name, _NOT_VALUES)

    def _factors_of(
        self, e: cst.BaseExpression
    ) -> Iterator[tuple[cst.BaseExpression, list[cst.BaseExpression]]]:
        """(factor, other operands) of each factor in a product ``a * b * c``."""
        operands = list(_product(e))
        if len(operands) < 2:
            return
        for i, op in enumerate(operands):
            if self._factor_key(op) is not None:
                yield op, operands[:i] + operands[i + 1 :]

    def _scaled(self, factor: cst.BaseExpression, site: cst.CSTNode) -> Scaled:
        return Scaled(
            self.ctx.code_for(factor), self._factor_key(factor) or "", site, self.ctx.code_for(site)
        )

    # -- the module --------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        self._functions = dict(_functions(original_node))
        # (the helpers' returns are read with no helper known yet)
        returns: dict[str, Scaled] = {}
        for name, fn in self._functions.items():
            got = self._returns_scaled(fn)
            if got is not None:
                returns[name] = got
            scales = self._params_scaled(fn)
            if scales:
                self._consumers[name] = scales
        self._returns = returns
        for fn in self._functions.values():
            self._analyse(fn)

    def _returns_scaled(self, fn: cst.FunctionDef) -> Scaled | None:
        scaled: dict[str, Scaled] = {}
        self._aliases = {}
        for n in _statements(fn):
            self._bind(n, scaled, report=False)
            if isinstance(n, cst.Return) and n.value is not None:
                k = dotted(n.value)
                if k in scaled:
                    return scaled[k]
                s = self._scaling(n.value, scaled)
                if s is not None:
                    return s
        return None

    def _params_scaled(self, fn: cst.FunctionDef) -> dict[str, Scaled]:
        params = set(function_params(fn))
        out: dict[str, Scaled] = {}
        self._aliases = {}
        for n in _expressions(fn):
            for factor, others in self._factors_of(n):
                for o in others:
                    k = dotted(o)
                    if k in params and k not in out:
                        out[k] = self._scaled(factor, n)
        return out

    def _scaling(
        self, e: cst.BaseExpression, scaled: dict[str, Scaled], into_value: bool = False
    ) -> Scaled | None:
        """How ``e`` scales a pad: a product of a factor and a pad-named
        operand, or any product with a factor bound to a pad-named target."""
        for factor, others in self._factors_of(e):
            if into_value or any(self._is_value(dotted(o)) or dotted(o) in scaled for o in others):
                return self._scaled(factor, e)
        return None

    def _bind(self, n: cst.CSTNode, scaled: dict[str, Scaled], report: bool) -> None:
        if isinstance(n, cst.Assign) and len(n.targets) == 1:
            key = dotted(n.targets[0].target)
            if key is None:
                return
            src = dotted(n.value)
            self._aliases.pop(key, None)
            if src in scaled:
                scaled[key] = scaled[src]
                return
            if isinstance(n.value, cst.Call) and _callee(n.value) in self._returns:
                scaled[key] = self._returns[_callee(n.value) or ""]
                return
            fk = self._factor_key(n.value)
            if fk is not None:
                self._aliases[key] = fk
            s = self._scaling(n.value, scaled, into_value=self._is_value(key))
            rescaled = any(dotted(o) in scaled for o in _product(n.value))
            if s is not None and (self._is_value(key) or rescaled):
                scaled[key] = s
            else:
                scaled.pop(key, None)
        elif isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.MultiplyAssign):
            key = dotted(n.target)
            fk = self._factor_key(n.value)
            if key is None or fk is None:
                return
            prior = scaled.get(key)
            if prior is not None and prior.key == fk:
                if report:
                    self._report_twice(n, key, prior, self.ctx.code_for(n.value))
            elif self._is_value(key):
                scaled[key] = self._scaled(n.value, n)

    def _analyse(self, fn: cst.FunctionDef) -> None:
        scaled: dict[str, Scaled] = {}
        reported: set[int] = set()
        self._aliases = {}
        for n in _statements(fn):
            for e in _expressions(n):
                if id(e) in reported:
                    continue
                again = self._scaled_again(e, scaled)
                if again is not None:
                    self._report_twice(e, *again)
                    reported.update(id(x) for x in _expressions(e))
                elif isinstance(e, cst.Call):
                    self._passed_to_consumer(e, scaled)
            self._bind(n, scaled, report=True)

    def _scaled_again(
        self, e: cst.BaseExpression, scaled: dict[str, Scaled]
    ) -> tuple[str, Scaled, str] | None:
        """(what, how it was scaled, the factor) when the product ``e``
        multiplies a scaled pad (a name, or a helper's call returning one)
        by the same factor again."""
        for factor, others in self._factors_of(e):
            fk = self._factor_key(factor)
            for o in others:
                prior, what = scaled.get(dotted(o) or ""), dotted(o) or ""
                if prior is None and isinstance(o, cst.Call):
                    prior, what = self._returns.get(_callee(o) or ""), f"{call_name(o)}(...)"
                if prior is not None and prior.key == fk and prior.site is not e:
                    return what, prior, self.ctx.code_for(factor)
        return None

    def _passed_to_consumer(self, call: cst.Call, scaled: dict[str, Scaled]) -> None:
        callee = _callee(call)
        if callee not in self._consumers:
            return
        params = [p for p in function_params(self._functions[callee]) if p not in ("self", "cls")]
        for i, a in enumerate(call.args):
            if a.star:
                return
            named = params[i] if i < len(params) else None
            param = a.keyword.value if a.keyword is not None else named
            prior = scaled.get(dotted(a.value) or "")
            again = self._consumers[callee].get(param or "")
            if prior is not None and again is not None and prior.key == again.key:
                self._report_twice(
                    call,
                    dotted(a.value) or "",
                    prior,
                    again.factor,
                    consumer=f"`{callee}` multiplies its parameter `{param}` by `{again.factor}` "
                    f"(`{_flat(again.code)}`)",
                )
                return

    def _report_twice(
        self, site: cst.CSTNode, what: str, prior: Scaled, factor: str, consumer: str | None = None
    ) -> None:
        again = consumer or f"`{_flat(self.ctx.code_for(site))}` multiplies it by `{factor}` again"
        self.report(
            site,
            f"`{what}` is already scaled by `{prior.factor}` (`{_flat(prior.code)}`); {again}",
            notes=[
                f"with `{prior.key}` = 2 the result is twice the intended pad (4 ranks: 4x): "
                "a loader writes past its shard into live rows, or `narrow`/a copy raises "
                "`RuntimeError` (start + length exceeds the dimension); with 1 it is correct, so "
                "single-GPU runs hide it",
                "scale once: keep the per-rank and the scaled value under distinct names, and "
                "multiply only the per-rank one",
            ],
        )


def _flat(code: str) -> str:
    return " ".join(code.split())


def _product(e: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of ``a * b * c`` (parentheses see through)."""
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        yield from _product(e.left)
        yield from _product(e.right)
    else:
        yield e


def _functions(module: cst.Module) -> Iterator[tuple[str, cst.FunctionDef]]:
    """Module-level functions and methods (by bare name: ``self.helper()``
    and ``helper()`` both reach it)."""
    for st in module.body:
        if isinstance(st, cst.FunctionDef):
            yield st.name.value, st
        elif isinstance(st, cst.ClassDef):
            for m in st.body.body:
                if isinstance(m, cst.FunctionDef):
                    yield m.name.value, m


def _callee(call: cst.Call) -> str | None:
    name = call_name(call) or ""
    head, _, leaf = name.rpartition(".")
    if head in ("", "self", "cls"):
        return leaf or name
    return None


def _statements(fn: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """Simple statements and ``return``s of ``fn`` in source order, not
    entering nested definitions."""
    return (n for n in walk_no_nested(fn.body) if isinstance(n, cst.BaseSmallStatement))


def _expressions(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """Products and calls in ``node``, outermost first, not entering lambdas
    or nested definitions."""
    kinds = (cst.BinaryOperation, cst.Call)
    return (n for n in walk_no_nested(node) if isinstance(n, kinds))  # type: ignore[misc]
