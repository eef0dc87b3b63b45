"""SHD201 unresolved-sentinel-reaches-impl (seed 004): a class constructed
directly while a size/rank attribute it leaves at a sentinel, which its
usual wrapper resolves, stays unresolved. The rule and its libcst analysis;
the messages live in ``notes``, the project's sentinel facts in
``checks.facts.sentinels``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import libcst as cst

from checks.facts.sentinel_index import ClassRef, Resolver, SentinelIndex
from checks.unresolved_sentinel_reaches_impl.names import (
    ARITHMETIC,
    PARALLEL_SENTINEL_NAMES,
    SIZE_CALLS,
)
from checks.unresolved_sentinel_reaches_impl.notes import (
    Construction,
    SentinelAttr,
    consequence,
    construction_message,
    notes,
    real_value,
)
from linter.api import Needles, Note, Option, Rule, Severity
from linter.api import call_name, dotted, name_matches, walk_no_nested
from linter.imports import imports_from_cst, qualify
from linter.types import Span

_INIT = ("__init__", "__post_init__")
_INIT_FAMILY = frozenset({*_INIT, "__new__"})
_CAST = frozenset({"cast", "typing.cast", "t.cast"})
# a factory and the classes it may hand out (None: every class of its family)
Factory = tuple[str, tuple[str, ...] | None]


def _refs(node: cst.CSTNode) -> Iterator[tuple[str, str]]:
    """``(object, attr)`` for each ``obj.attr`` and ``getattr(obj, "attr",
    ...)`` below ``node``."""
    for n in walk_no_nested(node):
        if isinstance(n, cst.Attribute):
            obj = dotted(n.value)
            if obj is not None:
                yield obj, n.attr.value
        elif isinstance(n, cst.Call) and dotted(n.func) == "getattr" and len(n.args) >= 2:
            key = n.args[1].value
            obj = dotted(n.args[0].value)
            if obj is not None and isinstance(key, cst.SimpleString):
                yield obj, key.evaluated_value if isinstance(key.evaluated_value, str) else ""


def _targets(node: cst.Assign | cst.AugAssign | cst.AnnAssign) -> list[cst.BaseExpression]:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def _first_param(fn: cst.FunctionDef) -> str:
    params = fn.params.params
    return params[0].name.value if params else "self"


def _reset_base(
    bases: Sequence[ClassRef], attr: str, where: str, order: str
) -> tuple[tuple[str, str] | None, bool]:
    """The ``(class, method)`` of the first of ``bases`` (the rest of an MRO)
    giving ``attr`` a real value in its ``__init__`` family, if a sentinel
    written in ``where`` overwrites it (a re-set: written after
    ``super().__init__()``, or over a base's ``__new__``); and whether the
    sentinel is resolved instead (written before the base's initialiser
    runs)."""
    for ref in bases:
        given = ref.data.get("real", {})
        if isinstance(given, Mapping) and given.get(attr) in _INIT_FAMILY:
            base = (ref.qual, given[attr])
            if order == "before" and base[1] in _INIT:
                return None, True
            reset = where in _INIT and (order == "after" or base[1] == "__new__")
            return (base if reset else None), False
    return None, False


class UnresolvedSentinelReachesImpl(Rule):
    """## What it finds
    A class that leaves a *parallelism sentinel* -- the size or rank of a
    parallel group (`dcp_world_size`, `pcp_rank`, `attn_tp_size`,
    `moe_ep_rank`, `world_size`) at "not resolved yet" (`-1`, `None`) -- for
    its usual wrapper to resolve after construction, constructed somewhere
    that neither resolves nor checks it. The construction is found by name
    (through imports and aliases, including subclasses in other files that
    inherit the sentinel) or through an implementation factory
    (`impl_cls = backend.get_impl_cls(); self.impl = impl_cls(...)`).
    The sentinel may be the class's own or a *re-set*: a subclass's
    `__init__` writing `self.dcp_world_size = -1` after `super().__init__()`
    (or over a base's `__new__`) resolved it -- the note names both.

    Also reported: such an attribute of a directly constructed object used
    as a size (arithmetic, `range`, a shape, a `*_world_size=` keyword) in
    another method with no comparison against the sentinel; a class that
    uses its own sentinel as a size in `__init__`, before anything could
    resolve it; and a re-set that nothing in the project resolves again,
    used as a size by the class's own methods.

    A *resolver* is code that tests `obj.attr` against the sentinel
    (`== -1`, `is None`, `< 0`) and assigns `obj.attr` in that branch; it is
    the normal path when its class (or function) also constructs the class,
    or calls a factory that hands it out. A factory's result cast to a base
    class (`cast(type[MLAAttentionImpl], backend.get_impl_cls())`) may be any
    class of the factory below that base: reported when some of them keep
    the sentinel, even if others resolve it (the seed's Kimi-K3 model).

    Deliberately left out, for precision: attributes that are not a parallel
    group's size or rank (`block_size`, `num_kv_splits`, `num_accept_tokens`,
    `kv_lora_rank`: a `None` count is an optional field, not an unresolved
    group); a class that resolves the attribute itself (`__init__`,
    `__post_init__`, `__new__`, an `assert attr > 0`, or a base's `__init__`
    called after the sentinel was written); neutral defaults (`1`, `0`);
    sentinels nobody tests for (`-1` meaning "off"); `None` fields that a
    later phase fills in without testing them; a factory whose possible
    classes disagree (some resolve the attribute) unless an annotation, a
    cast or a typed receiver narrows it; constructions that are returned or
    passed on rather than kept (the caller owns resolution); uses of the
    attribute on objects of unknown provenance, and the implementation's own
    methods when a normal path resolves it (they rely on the wrapper's
    contract). Any comparison, assertion, assignment, `setattr`, normaliser
    call or late resolver method (`impl.bind_cp_group(...)`) on the object in
    the constructing function counts as handling it. A test of an object
    named `self` or `cls` is not a resolver (the class settling its own
    attribute in a closure of its method).

    Prefilter: libcst parses a module only when the project's facts say it
    constructs through a class keeping such a sentinel (or a subclass of
    one, by name), calls a configured factory method, or defines such a
    class (the facts gate, `candidate_facts`); on vLLM 0.33.0 that is 19 of
    3231 files.

    ## Why it breaks
    The sentinel is a private contract between the implementation and its
    usual wrapper. A model that builds the implementation itself (to fuse a
    layer, to skip the wrapper's overhead) inherits the sentinel and keeps it
    in every configuration -- with the parallelism *disabled* too, since the
    wrapper is what would have written the neutral 1/0. The kernel then
    receives `cp_world_size=-1`: FlashAttention's MLA path raises ("must be
    positive") at the first forward; a kernel that does not validate splits
    or indexes by -1 and computes garbage; a `None` size raises `TypeError`
    at the first arithmetic. It happens only for that model, on the platform
    whose code path constructs directly.

    ## Example
    ```python
    impl_cls = self.attn_backend.get_impl_cls()
    self.impl = impl_cls(num_heads=n, head_size=d, scale=s)   # SHD201
    ```

    ## Fix
    Resolve right after construction, as the wrapper does (vLLM):
    ```python
    self.impl = impl_cls(num_heads=n, head_size=d, scale=s)
    if getattr(self.impl, "dcp_world_size", -1) < 1:
        self.impl.dcp_world_size = get_dcp_group().world_size  # 1 where DCP is refused
        self.impl.dcp_rank = get_dcp_group().rank_in_group
    ```
    SGLang spells the group's values `get_dcp_world_size()` /
    `get_dcp_rank()`, `get_attention_tp_size()` / `get_attention_tp_rank()`,
    `get_tensor_model_parallel_world_size()`; the fix note uses the
    engine's spelling. Or construct through the wrapper, or drop the re-set
    (the base already resolved it), or make the class resolve the attribute
    itself (in `__init__`/`__new__`, then no construction site can forget).

    ## Options
    - `attribute-patterns` (list of globs, default `PARALLEL_SENTINEL_NAMES`):
      attribute names that count as a parallel group's size or rank, matched
      on the last name in any case. The default is built from the dimensions
      `tp pp dp ep cp dcp pcp sp` (with any prefix before `_`: `attn_tp_rank`)
      and the quantities `size rank world_size group_size rank_in_group
      degree`, plus `world_size`, `*_world_size`, `rank`, `local_rank`,
      `global_rank`, `*rank_in_group`, `nranks`, `num_ranks`,
      `*_parallel_size`, `*_parallel_rank[_local]`, `ulysses_degree`,
      `ring_degree`.
    - `sentinel-values` (list of strings, default `["-1", "None"]`): literal
      values that mean "not resolved yet". Negative integers and `None` are
      the values the fact collector records.
    - `factory-methods` (list of names, default `["get_impl_cls",
      "get_impl_class"]`): methods that return the implementation class to
      construct.
    - `impl-class-patterns` (list of globs, default `["*Impl", "*ImplBase"]`):
      when the project has no `type[...]` return or `return X` for a factory,
      the classes a factory may return are those whose name matches.
    - `normalizer-calls` (list of globs, default `["max", "*resolve*",
      "*normali[sz]e*"]`): calls that normalise an attribute passed to them
      (`max(impl.cp_size, 1)`) or resolve an object passed to them
      (`resolve_cp(impl)`).
    - `resolver-scope` (`"paired"`, `"any"` or `"none"`, default
      `"paired"`): which evidence makes a sentinel "resolved by the normal
      path": a resolver in a class or function that also constructs the class
      (default), any resolver in the project, or no resolver needed.

    The facts gate follows every option.
    """

    code = "SHD201"
    name = "unresolved-sentinel-reaches-impl"
    summary = "A class is constructed directly while a parallel group size or rank it leaves at a sentinel, which its wrapper resolves, stays unresolved"
    severity = Severity.ERROR
    facts = ("sentinels", "sentinel_outline")
    tags = ("correctness", "context-parallel")
    # Every finding is at an assignment (a construction, a sentinel set in
    # ``__init__``); the real filter is the facts gate (``candidate_facts``).
    needles = Needles(all_of=("=",))
    options = {
        "attribute-patterns": Option(
            PARALLEL_SENTINEL_NAMES, "list[str]", "Parallel group size/rank attribute names (globs)"
        ),
        "sentinel-values": Option(
            ("-1", "None"), "list[str]", "Literals meaning 'not resolved yet'"
        ),
        "factory-methods": Option(
            ("get_impl_cls", "get_impl_class"),
            "list[str]",
            "Methods returning the class to construct",
        ),
        "impl-class-patterns": Option(
            ("*Impl", "*ImplBase"),
            "list[str]",
            "Classes a factory may return when nothing else says",
        ),
        "normalizer-calls": Option(
            ("max", "*resolve*", "*normali[sz]e*"), "list[str]", "Calls that normalise or resolve"
        ),
        "resolver-scope": Option(
            "paired", "str", "paired | any | none", choices=("paired", "any", "none")
        ),
    }

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: Any, options: Mapping[str, Any]
    ) -> bool:
        index: SentinelIndex = facts.index("sentinels")
        patterns = tuple(options["attribute-patterns"])
        values = frozenset(options["sentinel-values"])
        # an attribute no resolver assigns never reaches ``effective``
        # (unless resolver-scope is "none"); a class's own attributes are
        # read by the re-set check whatever resolves them
        resolved = index.resolver_attrs() if options["resolver-scope"] != "none" else None

        def own(attr: str, value: str) -> bool:
            return value in values and name_matches(attr, patterns)

        def held(attr: str, value: str) -> bool:
            return own(attr, value) and (resolved is None or attr in resolved)

        key = (patterns, values, resolved is None)
        return index.may_report_in(module, held, own, options["factory-methods"], key)

    def __init__(self, ctx: Any, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)  # (resolver-scope's value is checked at config load)
        self.index: SentinelIndex = ctx.facts.index("sentinels")
        self._imports: dict[str, str] | None = None
        self._eff: dict[str, dict[str, SentinelAttr]] = {}
        # per class: the attributes it gives a real value (see effective)
        self._real: dict[str, set[str]] = {}
        self._members: dict[str, tuple[frozenset[str], bool]] = {}
        # per class being visited: its methods, the constructions reported in
        # them and kept on ``self.<x>``, and ``attr -> factory`` for its
        # ``self.attr = backend.get_impl_cls()``
        self._methods: list[list[cst.FunctionDef]] = []
        self._stored: list[dict[str, Construction]] = []
        self._class_factories: list[dict[str, Factory]] = []
        # narrowings that came from a cast to a base class (see _factory_of)
        self._cast_families: set[tuple[str, ...]] = set()

    # -- facts -------------------------------------------------------------------
    @property
    def imports(self) -> dict[str, str]:
        if self._imports is None:
            self._imports = imports_from_cst(self.ctx.module, self.ctx.module_name, self.ctx.path)
        return self._imports

    @property
    def engine(self) -> str:
        """``"vllm"`` or ``"sglang"`` when this module is (or imports) that
        engine's code: the fix is spelled in its API."""
        for name in (self.ctx.module_name or "", *self.imports.values()):
            head = name.split(".", 1)[0]
            if head in ("vllm", "sglang"):
                return head
        return ""

    def _qualify(self, name: str) -> str:
        return qualify(name, self.ctx.module_name, self.imports)

    def _tracked(self, attr: str, value: str) -> bool:
        """A parallel group's size or rank left at a sentinel value."""
        return value in self.opts["sentinel-values"] and name_matches(
            attr, self.opts["attribute-patterns"]
        )

    def effective(self, qualname: str) -> dict[str, SentinelAttr]:
        """Sentinel attributes an instance of ``qualname`` starts with and the
        normal path resolves (per ``resolver-scope``)."""
        q = self.index.resolve(qualname)
        if q is None:
            return {}
        if q in self._eff:
            return self._eff[q]
        mro = self.index.mro(q)
        # per attribute, the first class of the MRO that decides it: a
        # sentinel, or None for a real value
        decided: dict[str, SentinelAttr | None] = {}
        late: dict[str, list[str]] = {}
        refs = [self.index.classes[c] for c in mro]
        for i, ref in enumerate(refs):
            for attr, methods in ref.data.get("methods", {}).items():
                late.setdefault(attr, []).extend(methods)
            for attr in ref.data.get("real", ()):
                decided.setdefault(attr, None)
            for attr, (value, span, where, *rest) in ref.data.get("sentinel", {}).items():
                if attr in decided:
                    continue
                # (set before the inherited initialiser's call, which then
                # gives it a real value: resolved)
                base, resolved = _reset_base(refs[i + 1 :], attr, where, rest[0] if rest else "")
                if resolved or not self._tracked(attr, value):
                    decided[attr] = None
                else:
                    decided[attr] = SentinelAttr(attr, value, ref, tuple(span), where, (), (), base)
        self._real[q] = {a for a, sa in decided.items() if sa is None}
        out: dict[str, SentinelAttr] = {}
        for attr, sa in decided.items():
            if sa is None:
                continue
            resolvers = tuple(
                r for r in self.index.resolvers.get(attr, ()) if self._counts(r, mro, sa.value)
            )
            if resolvers or self.opts["resolver-scope"] == "none":
                out[attr] = replace(sa, resolvers=resolvers, late_methods=tuple(late.get(attr, ())))
        self._eff[q] = out
        return out

    def _counts(self, r: Resolver, mro: Sequence[str], value: str) -> bool:
        """Whether resolver ``r`` is the normal path for a class with ``mro``
        whose attribute starts at ``value``."""
        # The class's own alternative constructors (a ``create_from_handle``
        # staticmethod building ``Cls.__new__(Cls)``) give another role, not
        # a resolution that other constructions skip.
        if f"{r.module}.{r.scope}" in mro or r.scope in mro:
            return False
        # An unconditional assignment after construction fills an optional
        # None field (metadata dataclasses do this constantly); only a test
        # against None says "None means unresolved".
        if not r.test and value == "None":
            return False
        if self.opts["resolver-scope"] != "paired":
            return True
        factories = {"." + f for f in self.opts["factory-methods"]}
        for call in r.calls:
            if call in factories:
                # the wrapper's factory hands out this class (or a base of it)
                members, _ = self._factory_classes(call[1:])
                if not members or any(c in members for c in mro):
                    return True
            elif not call.startswith("."):
                target = self.index.resolve(call)
                if target is not None and any(c in mro for c in self.index.mro(target)):
                    return True
        return False

    def _factory_classes(self, factory: str) -> tuple[frozenset[str], bool]:
        """Classes a factory method of this name may hand out, and whether
        the project names them (else: the classes named like
        ``impl-class-patterns``)."""
        if factory not in self._members:
            found = (self.index.resolve(n) for n in self.index.factories.get(factory, ()))
            named = frozenset(q for q in found if q)
            guessed = named or frozenset(self.index.classes_named(self.opts["impl-class-patterns"]))
            self._members[factory] = (guessed, bool(named))
        return self._members[factory]

    def family(self, factory: str) -> list[str]:
        """Classes a factory method of this name may hand out (of those
        guessed by name, the ones keeping a sentinel)."""
        members, named = self._factory_classes(factory)
        return sorted(q for q in members if named or self.effective(q))

    # -- traversal ---------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stored.append({})
        self._methods.append([])
        # ``attr -> factory`` for ``self.attr = backend.get_impl_cls()`` in
        # any method: the class another method constructs through
        # (``self.impl = self.attr(...)``)
        factories: dict[str, Factory] = {}
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if not isinstance(stmt, cst.FunctionDef):
                continue
            params = self._typed_params(stmt)
            first = _first_param(stmt)
            for n in walk_no_nested(stmt.body):
                if not isinstance(n, (cst.Assign, cst.AnnAssign)) or n.value is None:
                    continue
                fac = self._factory_of(n.value, params)
                for t in _targets(n):
                    if fac and isinstance(t, cst.Attribute) and dotted(t.value) == first:
                        factories[t.attr.value] = fac
        self._class_factories.append(factories)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_factories.pop()
        stored = self._stored.pop()
        methods = self._methods.pop()
        for fn in methods:
            for target, c in stored.items():
                if any(n is c.call for n in walk_no_nested(fn.body)):
                    continue  # (the constructing method: reported there)
                for node, attr, how in self._size_uses(fn, target, c.attrs):
                    self.report(
                        node,
                        f"`{target}.{attr}` is used as a size ({how}) in `{fn.name.value}` but may "
                        f"still be the sentinel {c.attrs[attr].value}: `{target}` is constructed "
                        f"directly in `{c.func}` and nothing resolves `{attr}`",
                        notes=notes(target, {attr: c.attrs[attr]}, self.engine),
                    )
        self._check_own_init(original_node, methods)
        self._check_reset(original_node, methods)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        nodes = self.ctx.scope_nodes
        in_class = len(nodes) >= 2 and isinstance(nodes[-2], cst.ClassDef)
        if in_class:
            self._methods[-1].append(original_node)
        scope = ".".join(self.ctx.scope_names[:-1] if in_class else self.ctx.scope_names)
        for c in self._constructions(original_node, in_class):
            c.attrs = self._unhandled(original_node, c, scope)
            if c.attrs:
                self.report(
                    c.call, construction_message(c), notes=notes(c.target, c.attrs, self.engine)
                )
                if in_class and c.target.startswith("self."):
                    self._stored[-1][c.target] = c

    # -- constructions -------------------------------------------------------------
    def _type_name(self, expr: cst.BaseExpression | None) -> str | None:
        """The class named by ``C``, ``"C"``, ``type[C]`` or ``Optional[C]``."""
        if isinstance(expr, cst.Subscript) and expr.slice:
            inner = expr.slice[0].slice
            return self._type_name(inner.value) if isinstance(inner, cst.Index) else None
        if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
            return self._qualify(expr.evaluated_value)
        name = dotted(expr) if expr is not None else None
        return self._qualify(name) if name else None

    def _typed_params(self, fn: cst.FunctionDef) -> dict[str, str]:
        """``param -> class`` for the annotated parameters of ``fn``."""
        out: dict[str, str] = {}
        p = fn.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            if param.annotation is not None:
                t = self._type_name(param.annotation.annotation)
                if t:
                    out[param.name.value] = t
        return out

    def _factory_of(self, expr: cst.BaseExpression, params: Mapping[str, str]) -> Factory | None:
        """``(factory, classes)`` when ``expr`` is ``x.<factory>()`` or
        ``cast(type[C], x.<factory>())``; ``classes`` is what the cast or the
        receiver's type (``params``: the function's typed parameters) says it
        returns, None when nothing narrows it."""
        cast_to: str | None = None
        if isinstance(expr, cst.Call) and call_name(expr) in _CAST and len(expr.args) == 2:
            c = self._type_name(expr.args[0].value)
            if c and self.index.resolve(c):
                cast_to = c
            expr = expr.args[1].value
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
            return None
        factory = expr.func.attr.value
        if factory not in self.opts["factory-methods"]:
            return None
        if cast_to is not None:
            # ``cast(type[Base], x.get_impl_cls())`` says "some subclass of
            # Base": the factory's classes below it (Base itself when none is)
            base = self.index.resolve(cast_to)
            below = sorted({q for q in self.family(factory) if base in self.index.mro(q)})
            narrowed = tuple(below) if below else (cast_to,)
            self._cast_families.add(narrowed)
            return factory, narrowed
        # a receiver of a known class: a typed parameter or a class name
        recv = dotted(expr.func.value) or ""
        owner = params.get(recv)
        # (a class, by name: ``Backend.get_impl_cls()``, ``mod.Backend.get_impl_cls()``)
        if owner is None and (recv[:1].isupper() or recv.rpartition(".")[2][:1].isupper()):
            owner = self._qualify(recv)
        resolved = self.index.resolve(owner) if owner else None
        if resolved:
            found = (self.index.resolve(n) for n in self.index.factory_of(resolved, factory))
            return factory, tuple(sorted({q for q in found if q})) or None
        return factory, None

    def _constructions(self, fn: cst.FunctionDef, in_class: bool) -> list[Construction]:
        """``target = C(...)`` in ``fn`` for a project class ``C``, named or
        handed out by a factory (``impl_cls = x.get_impl_cls()``, or a
        factory's result another method kept on the instance)."""
        out: list[Construction] = []
        first = _first_param(fn)
        factory_vars: dict[str, Factory] = {}
        if in_class and self._class_factories:
            factory_vars = {f"{first}.{a}": fac for a, fac in self._class_factories[-1].items()}
        params = self._typed_params(fn)
        for node in walk_no_nested(fn.body):
            if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None:
                continue
            names = [n for n in (dotted(t) for t in _targets(node)) if n]
            fac = self._factory_of(node.value, params)
            if fac is not None:
                for n in names:
                    factory_vars[n] = fac
                continue
            call = node.value
            if not isinstance(call, cst.Call) or not names:
                continue
            callee = dotted(call.func)
            fac = factory_vars.get(callee) or self._factory_of(call.func, params)
            if fac is not None:
                factory, narrowed = fac
                ann = node.annotation.annotation if isinstance(node, cst.AnnAssign) else None
                annotation = self._type_name(ann)
                if annotation and self.index.resolve(annotation):
                    classes, cast = (annotation,), False
                elif narrowed is not None:
                    classes, cast = narrowed, narrowed in self._cast_families
                else:
                    classes, cast = tuple(self.family(factory)), False
                out.append(
                    Construction(call, names[0], classes, f"{factory}()", fn.name.value, cast=cast)
                )
            elif callee and callee.rsplit(".", 1)[-1][:1].isupper():
                q = self.index.resolve(self._qualify(callee))
                if q:
                    out.append(Construction(call, names[0], (q,), callee, fn.name.value))
        return out

    def _unhandled(
        self, fn: cst.FunctionDef, c: Construction, scope: str
    ) -> dict[str, SentinelAttr]:
        attrs: dict[str, SentinelAttr] = {}
        for q in c.classes:
            for attr, sa in self.effective(q).items():
                attrs.setdefault(attr, sa)
        # A family where some member gives the attribute a real value is
        # mixed: which class arrives is decided at run time, so stay silent
        # unless a cast or a typed receiver narrows it. A cast to a base
        # class says "any class below it": the members keeping the sentinel
        # are reason enough (the seed's Kimi-K3 construction).
        if not c.cast:
            for q in c.classes:
                for attr in self._real.get(self.index.resolve(q) or q, set()) & set(attrs):
                    del attrs[attr]
        # The normal path itself: a class/function holding a resolver for the
        # object's sentinels owns the contract.
        mod = self.ctx.module_name
        if not attrs or any(
            r.module == mod and r.scope == scope for sa in attrs.values() for r in sa.resolvers
        ):
            return {}
        aliases = {c.target}
        for node in walk_no_nested(fn.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                src, dst = dotted(node.value), dotted(node.targets[0].target)
                if src and dst and (src in aliases or dst in aliases):
                    aliases |= {src, dst}
        handled = self._handled(fn, aliases, attrs)
        return {a: sa for a, sa in attrs.items() if a not in handled and "*" not in handled}

    def _handled(
        self, fn: cst.FunctionDef, aliases: set[str], attrs: Mapping[str, SentinelAttr]
    ) -> set[str]:
        """Attributes of ``aliases`` this function compares, asserts, assigns,
        normalises or resolves (``"*"`` = the whole object was resolved)."""
        out: set[str] = set()
        for node in walk_no_nested(fn.body):
            if isinstance(node, (cst.Comparison, cst.Assert)):
                out |= {a for o, a in _refs(node) if o in aliases}
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                for t in _targets(node):
                    elems = (
                        [e.value for e in t.elements]
                        if isinstance(t, (cst.Tuple, cst.List))
                        else [t]
                    )
                    for e in elems:
                        if isinstance(e, cst.Attribute) and dotted(e.value) in aliases:
                            out.add(e.attr.value)
            elif isinstance(node, cst.Call):
                name = call_name(node) or ""
                args = [a.value for a in node.args]
                if name == "setattr" and len(args) >= 2 and dotted(args[0]) in aliases:
                    key = args[1]
                    if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
                        out.add(key.evaluated_value)
                elif name and name_matches(name, self.opts["normalizer-calls"]):
                    for a in args:
                        if dotted(a) in aliases:
                            out.add("*")
                        out |= {x for o, x in _refs(a) if o in aliases}
                elif isinstance(node.func, cst.Attribute) and dotted(node.func.value) in aliases:
                    meth = node.func.attr.value
                    out |= {a for a, sa in attrs.items() if meth in sa.late_methods}
        return out

    # -- uses ------------------------------------------------------------------
    def _size_uses(
        self, fn: cst.FunctionDef, obj: str, attrs: Mapping[str, SentinelAttr]
    ) -> Iterator[tuple[cst.CSTNode, str, str]]:
        """``(node, attr, how)`` where ``obj.attr`` is used as a size in
        ``fn`` and ``fn`` never compares it."""
        compared: set[str] = set()
        for node in walk_no_nested(fn.body):
            if isinstance(node, (cst.Comparison, cst.Assert)):
                compared |= {a for o, a in _refs(node) if o == obj}
            elif isinstance(node, cst.Call) and name_matches(
                call_name(node), self.opts["normalizer-calls"]
            ):
                for arg in node.args:
                    compared |= {a for o, a in _refs(arg.value) if o == obj}

        def hit(expr: cst.CSTNode) -> bool:
            return (
                isinstance(expr, cst.Attribute)
                and dotted(expr.value) == obj
                and expr.attr.value in attrs
                and expr.attr.value not in compared
            )

        for node in walk_no_nested(fn.body):
            if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in ARITHMETIC:
                for side in (node.left, node.right):
                    if hit(side):
                        yield side, side.attr.value, "arithmetic"
            elif isinstance(node, cst.Call):
                leaf = (call_name(node) or "").rsplit(".", 1)[-1]
                for arg in node.args:
                    kw = arg.keyword.value if arg.keyword is not None else None
                    if kw is not None and name_matches(kw, self.opts["attribute-patterns"]):
                        if hit(arg.value):
                            yield arg.value, arg.value.attr.value, f"keyword {kw}="
                    elif kw is None and leaf in SIZE_CALLS:
                        shape = isinstance(arg.value, (cst.Tuple, cst.List))
                        for e in [e.value for e in arg.value.elements] if shape else [arg.value]:
                            if hit(e):
                                yield e, e.attr.value, f"{leaf}() size"

    def _check_own_init(self, cls: cst.ClassDef, methods: Sequence[cst.FunctionDef]) -> None:
        """A class using its own sentinel attribute as a size in ``__init__``
        (nothing outside can have resolved it yet)."""
        eff = self.effective(self._class_qualname(cls))
        for fn in methods:
            if not eff or fn.name.value not in _INIT_FAMILY:
                continue
            self_name = _first_param(fn)
            for node, attr, how in self._size_uses(fn, self_name, eff):
                sa = eff[attr]
                self.report(
                    node,
                    f"`{self_name}.{attr}` is used as a size ({how}) in `{cls.name.value}.{fn.name.value}` "
                    f"while it still holds the sentinel {sa.value}; it is only resolved later, outside the class",
                    notes=notes(self_name, {attr: sa}, self.engine),
                )

    def _check_reset(self, cls: cst.ClassDef, methods: Sequence[cst.FunctionDef]) -> None:
        """A class whose ``__init__`` puts a parallelism sentinel back after a
        base class resolved it (``super().__init__()`` then
        ``self.dcp_world_size = -1``, or over a base's ``__new__``), with no
        resolver anywhere to undo it, and that passes the attribute on as a
        size in its own methods: every instance runs with the sentinel."""
        q = self.index.resolve(self._class_qualname(cls))
        if q is None:
            return
        own = self.index.classes[q]
        eff = self.effective(q)
        refs = [self.index.classes[c] for c in self.index.mro(q)[1:]]
        for attr, (value, span, where, *rest) in own.data.get("sentinel", {}).items():
            # (in ``eff``: a normal path resolves it after construction; the
            # constructions that skip it are what gets reported)
            if attr in eff or not self._tracked(attr, value):
                continue
            base, _ = _reset_base(refs, attr, where, rest[0] if rest else "")
            if base is None:
                continue
            sa = SentinelAttr(attr, value, own, tuple(span), where, (), (), base)
            uses = [
                (fn, node, how)
                for fn in methods
                if fn.name.value not in _INIT_FAMILY
                for node, a, how in self._size_uses(fn, _first_param(fn), {attr: sa})
            ]
            if not uses:
                continue
            fn, node, how = uses[0]
            others = [
                Note(f"also used as a size ({h}) in `{f.name.value}`") for f, _, h in uses[1:3]
            ]
            self.report(
                node,
                f"`self.{attr}` is used as a size ({how}) in `{cls.name.value}.{fn.name.value}`, but "
                f"`{cls.name.value}.{where}` re-sets it to the sentinel {value} after `{base[0]}.{base[1]}` "
                f"resolved it, and nothing in the project resolves it again: {consequence({attr: sa})}",
                notes=[
                    Note(
                        f"`{attr}` re-set to {value} here, overwriting the value {base[0]}.{base[1]} gave it",
                        own.path,
                        Span(*span),
                    ),
                    *others,
                    Note(
                        f"fix: drop the re-set (keep the base's value), or assign the real value "
                        f"(`self.{attr} = {real_value(attr, self.engine)}`)"
                    ),
                ],
            )

    def _class_qualname(self, cls: cst.ClassDef) -> str:
        qual = ".".join([*self.ctx.scope_names[:-1], cls.name.value])
        return f"{self.ctx.module_name}.{qual}" if self.ctx.module_name else qual
