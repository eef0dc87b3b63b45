"""SHD201 unresolved-sentinel-reaches-impl (seed 004): a class constructed
directly while a size/rank attribute it leaves at a sentinel, which its
usual wrapper resolves, stays unresolved. The rule and its libcst analysis;
the messages live in ``notes``, the project's sentinel facts in
``checks.facts.sentinels``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import libcst as cst

from linter.syntax import call_name, dotted, name_matches, walk_no_nested
from linter.imports import imports_from_cst, qualify
from checks.facts.sentinel_index import ClassRef, Resolver, SentinelIndex
from checks.unresolved_sentinel_reaches_impl.names import ARITHMETIC, PARALLEL_SENTINEL_NAMES, SIZE_CALLS
from checks.unresolved_sentinel_reaches_impl.notes import (
    Construction,
    SentinelAttr,
    consequence,
    construction_message,
    notes,
    real_value,
)
from linter.needles import Needles
from linter.rule import Option, Rule
from linter.types import Note, Severity, Span

_INIT_FAMILY = frozenset({"__init__", "__post_init__", "__new__"})

_DEFAULT_FACTORIES = ("get_impl_cls", "get_impl_class")
_CAST = frozenset({"cast", "typing.cast", "t.cast"})
def _refs(node: cst.CSTNode) -> Iterator[tuple[str, str, cst.CSTNode]]:
    """``(object, attr, node)`` for each ``obj.attr`` and
    ``getattr(obj, "attr", ...)`` below ``node``."""
    for n in walk_no_nested(node):
        if isinstance(n, cst.Attribute):
            obj = dotted(n.value)
            if obj is not None:
                yield obj, n.attr.value, n
        elif isinstance(n, cst.Call) and dotted(n.func) == "getattr" and len(n.args) >= 2:
            key = n.args[1].value
            obj = dotted(n.args[0].value)
            if obj is not None and isinstance(key, cst.SimpleString):
                yield obj, key.evaluated_value if isinstance(key.evaluated_value, str) else "", n



def _base_giving(bases: Sequence[ClassRef], attr: str) -> tuple[str, str] | None:
    """``(class, method)`` of the first of ``bases`` (the rest of an MRO)
    that gives ``attr`` a real value in its ``__init__`` family."""
    for ref in bases:
        where = ref.data.get("real", {})
        if isinstance(where, Mapping) and where.get(attr) in _INIT_FAMILY:
            return ref.qual, where[attr]
    return None


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
    # Every finding is at an assignment (a construction ``x = Impl(...)``, a
    # sentinel set in ``__init__``): the file gate asks for an ``=``. The real
    # filter is the facts gate (``candidate_facts``): a module is parsed only
    # when it constructs through a class keeping a parallelism sentinel (or
    # inheriting one) or a factory method, or defines such a class.
    needles = Needles(all_of=("=",))
    options = {
        "attribute-patterns": Option(
            PARALLEL_SENTINEL_NAMES, "list[str]", "Parallel group size/rank attribute names (globs)"
        ),
        "sentinel-values": Option(("-1", "None"), "list[str]", "Literals meaning 'not resolved yet'"),
        "factory-methods": Option(
            _DEFAULT_FACTORIES, "list[str]", "Methods returning the class to construct"
        ),
        "impl-class-patterns": Option(
            ("*Impl", "*ImplBase"), "list[str]", "Classes a factory may return when nothing else says"
        ),
        "normalizer-calls": Option(
            ("max", "*resolve*", "*normali[sz]e*"), "list[str]", "Calls that normalise or resolve"
        ),
        "resolver-scope": Option("paired", "str", "paired | any | none", choices=("paired", "any", "none")),
    }


    @classmethod
    def candidate_facts(cls, module: str, path: str, facts: Any, options: Mapping[str, Any]) -> bool:
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
        self._real: dict[str, set[str]] = {}
        self._members: dict[str, frozenset[str]] = {}
        self._params: dict[str, str] = {}
        # per class being visited: self.<x> -> constructions stored there
        self._stored: list[dict[str, Construction]] = []
        # narrowings that came from a cast to a base class (see _factory_of)
        self._cast_families: set[tuple[str, ...]] = set()
        self._methods: list[list[cst.FunctionDef]] = []
        self._class_factories: list[dict[str, tuple[str, tuple[str, ...] | None]]] = []
        self._func_name = ""

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

    def _is_sentinel(self, value: str) -> bool:
        return value in self.opts["sentinel-values"]

    def effective(self, qualname: str) -> dict[str, SentinelAttr]:
        """Sentinel attributes an instance of ``qualname`` starts with and the
        normal path resolves (per ``resolver-scope``)."""
        q = self.index.resolve(qualname)
        if q is None:
            return {}
        if q in self._eff:
            return self._eff[q]
        mro = self.index.mro(q)
        decided: dict[str, SentinelAttr | None] = {}
        late: dict[str, list[str]] = {}
        refs = [self.index.classes[c] for c in mro]
        for i, ref in enumerate(refs):
            data = ref.data
            for attr, methods in data.get("methods", {}).items():
                late.setdefault(attr, []).extend(methods)
            for attr in data.get("real", ()):
                decided.setdefault(attr, None)
            for attr, (value, span, where, *rest) in data.get("sentinel", {}).items():
                if attr in decided:
                    continue
                if not (self._is_sentinel(value) and name_matches(attr, self.opts["attribute-patterns"])):
                    decided[attr] = None
                    continue
                order = rest[0] if rest else ""
                base = _base_giving(refs[i + 1 :], attr)
                # set before the inherited initialiser's call, which then
                # gives it a real value: resolved
                if order == "before" and base is not None and base[1] in ("__init__", "__post_init__"):
                    decided[attr] = None
                    continue
                overrides = None
                if base is not None and where in ("__init__", "__post_init__") and (
                    order == "after" or base[1] == "__new__"
                ):
                    overrides = base
                decided[attr] = SentinelAttr(attr, value, ref, tuple(span), where, (), (), overrides)
        self._real[q] = {a for a, sa in decided.items() if sa is None}
        out: dict[str, SentinelAttr] = {}
        for attr, sa in decided.items():
            if sa is None:
                continue
            resolvers = tuple(
                r for r in self.index.resolvers.get(attr, ()) if self._counts(r, mro, sa.value)
            )
            if not resolvers and self.opts["resolver-scope"] != "none":
                continue
            out[attr] = SentinelAttr(
                attr, sa.value, sa.origin, sa.init_span, sa.init_where, resolvers, tuple(late.get(attr, ())),
                sa.overrides,
            )
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
        scope = self.opts["resolver-scope"]
        if scope != "paired":
            return True
        factories = {"." + f for f in self.opts["factory-methods"]}
        for call in r.calls:
            if call in factories:
                # the wrapper's factory hands out this class (or a base of it)
                members = self._factory_classes(call[1:])
                if not members or any(c in members for c in mro):
                    return True
                continue
            if call.startswith("."):
                continue
            target = self.index.resolve(call)
            if target is not None and any(c in mro for c in self.index.mro(target)):
                return True
        return False

    def _factory_classes(self, factory: str) -> frozenset[str]:
        """Classes a factory of this name may hand out, before asking which
        keep a sentinel (what pairs a wrapper's resolver with a class)."""
        got = self._members.get(factory)
        if got is None:
            named = {q for q in (self.index.resolve(n) for n in self.index.factories.get(factory, ())) if q}
            got = frozenset(named or self.index.classes_named(self.opts["impl-class-patterns"]))
            self._members[factory] = got
        return got

    def family(self, factory: str) -> list[str]:
        """Classes a factory method of this name may hand out."""
        named = [q for q in (self.index.resolve(n) for n in self.index.factories.get(factory, ())) if q]
        if named:
            return sorted(set(named))
        pats = self.opts["impl-class-patterns"]
        return sorted({q for q in self.index.classes_named(pats) if self.effective(q)})

    # -- traversal ---------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stored.append({})
        self._methods.append([])
        self._class_factories.append(self._factory_attributes(node))

    def _factory_attributes(self, cls: cst.ClassDef) -> dict[str, tuple[str, tuple[str, ...] | None]]:
        """``attr -> factory`` for ``self.attr = backend.get_impl_cls()`` in any
        method of ``cls``: the class another method constructs through
        (``self.impl = self.attr(...)``)."""
        out: dict[str, tuple[str, tuple[str, ...] | None]] = {}
        for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
            if not isinstance(stmt, cst.FunctionDef):
                continue
            self._params = self._typed_params(stmt)
            first = _first_param(stmt)
            for node in walk_no_nested(stmt.body):
                if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None:
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                fac = self._factory_of(node.value)
                for t in targets:
                    if fac is not None and isinstance(t, cst.Attribute) and dotted(t.value) == first:
                        out[t.attr.value] = fac
        return out

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_factories.pop()
        stored = self._stored.pop()
        methods = self._methods.pop()
        if stored:
            for fn in methods:
                self._check_uses(fn, stored, exclude_fn=True)
        self._check_own_init(original_node, methods)
        self._check_reset(original_node, methods)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        nodes = self.ctx.scope_nodes
        in_class = len(nodes) >= 2 and isinstance(nodes[-2], cst.ClassDef) and nodes[-1] is original_node
        if in_class and self._methods:
            self._methods[-1].append(original_node)
        scope = ".".join(self.ctx.scope_names[:-1]) if in_class else ".".join(self.ctx.scope_names)
        self._func_name = original_node.name.value
        constructions = self._constructions(original_node)
        for c in constructions:
            unhandled = self._unhandled(original_node, c, scope)
            if unhandled:
                c.attrs = unhandled
                self._report_construction(c)
                if in_class and c.target.startswith("self.") and self._stored:
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

    def _factory_of(self, expr: cst.BaseExpression) -> tuple[str, tuple[str, ...] | None] | None:
        """``(factory, classes)`` when ``expr`` is ``x.<factory>()`` or
        ``cast(type[C], x.<factory>())``; ``classes`` is what the cast or the
        receiver's type says it returns, None when nothing narrows it."""
        narrowed: tuple[str, ...] | None = None
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
        if narrowed is None:
            recv = dotted(expr.func.value)
            owner = self._params.get(recv) if recv else None
            if owner is None and recv and recv[:1].isupper() or (recv and "." in recv and recv.rsplit(".", 1)[1][:1].isupper()):
                owner = self._qualify(recv)
            if owner and self.index.resolve(owner):
                names = self.index.factory_of(self.index.resolve(owner) or owner, factory)
                found = tuple(sorted({q for q in (self.index.resolve(n) for n in names) if q}))
                narrowed = found or None
        return factory, narrowed

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

    def _constructions(self, fn: cst.FunctionDef) -> list[Construction]:
        out: list[Construction] = []
        # a factory's result kept on the instance by another method
        nodes = self.ctx.scope_nodes
        in_class = len(nodes) >= 2 and isinstance(nodes[-2], cst.ClassDef) and self._class_factories
        first = _first_param(fn)
        factory_vars: dict[str, tuple[str, tuple[str, ...] | None]] = (
            {f"{first}.{a}": fac for a, fac in self._class_factories[-1].items()} if in_class else {}
        )
        self._params = self._typed_params(fn)
        for node in walk_no_nested(fn.body):
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                targets = (
                    [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                )
                names = [n for n in (dotted(t) for t in targets) if n]
                fac = self._factory_of(node.value)
                if fac is not None:
                    for n in names:
                        factory_vars[n] = fac
                    continue
                if not isinstance(node.value, cst.Call) or not names:
                    continue
                ann = self._type_name(node.annotation.annotation) if isinstance(node, cst.AnnAssign) else None
                c = self._construction(node.value, names[0], factory_vars, ann)
                if c is not None:
                    out.append(c)
        return out

    def _construction(
        self,
        call: cst.Call,
        target: str,
        factory_vars: Mapping[str, tuple[str, tuple[str, ...] | None]],
        annotation: str | None,
    ) -> Construction | None:
        callee = dotted(call.func)
        fac = factory_vars.get(callee) if callee else None
        if fac is None:
            fac = self._factory_of(call.func)
        if fac is not None:
            factory, narrowed = fac
            cast = False
            if annotation and self.index.resolve(annotation):
                classes = [annotation]
            elif narrowed is not None:
                classes = list(narrowed)
                cast = narrowed in self._cast_families
            else:
                classes = self.family(factory)
            return Construction(call, target, tuple(classes), f"{factory}()", self._func_name, cast=cast)
        if callee is None or not callee.rsplit(".", 1)[-1][:1].isupper():
            return None
        q = self.index.resolve(self._qualify(callee))
        if q is None:
            return None
        return Construction(call, target, (q,), callee, self._func_name)

    def _unhandled(self, fn: cst.FunctionDef, c: Construction, scope: str) -> dict[str, SentinelAttr]:
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
                real = self._real.get(self.index.resolve(q) or q, set())
                for attr in real & set(attrs):
                    del attrs[attr]
        if not attrs:
            return {}
        # The normal path itself: a class/function holding a resolver for the
        # object's sentinels owns the contract.
        mod = self.ctx.module_name
        if any(r.module == mod and r.scope == scope for sa in attrs.values() for r in sa.resolvers):
            return {}
        aliases = {c.target}
        for node in walk_no_nested(fn.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                src, dst = dotted(node.value), dotted(node.targets[0].target)
                if src and dst and (src in aliases or dst in aliases):
                    aliases |= {src, dst}
        handled = self._handled(fn, aliases, attrs)
        return {a: sa for a, sa in attrs.items() if a not in handled}

    def _handled(
        self, fn: cst.FunctionDef, aliases: set[str], attrs: Mapping[str, SentinelAttr]
    ) -> set[str]:
        """Attributes of ``aliases`` this function compares, asserts, assigns,
        normalises or resolves (``"*"`` = the whole object was resolved)."""
        out: set[str] = set()
        norm = self.opts["normalizer-calls"]
        for node in walk_no_nested(fn.body):
            if isinstance(node, (cst.Comparison, cst.Assert)):
                out |= {a for o, a, _ in _refs(node) if o in aliases}
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = (
                    [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                )
                for t in targets:
                    elems = [e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]
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
                elif name and name_matches(name, norm):
                    for a in args:
                        if dotted(a) in aliases:
                            out.add("*")
                        out |= {x for o, x, _ in _refs(a) if o in aliases}
                elif isinstance(node.func, cst.Attribute) and dotted(node.func.value) in aliases:
                    meth = node.func.attr.value
                    out |= {a for a, sa in attrs.items() if meth in sa.late_methods}
        if "*" in out:
            return set(attrs)
        return out

    # -- uses ------------------------------------------------------------------
    def _size_uses(self, fn: cst.FunctionDef, obj: str, attrs: Mapping[str, SentinelAttr]) -> Iterator[tuple[cst.CSTNode, str, str]]:
        """``(node, attr, how)`` where ``obj.attr`` is used as a size in
        ``fn`` and ``fn`` never compares it."""
        compared: set[str] = set()
        for node in walk_no_nested(fn.body):
            if isinstance(node, (cst.Comparison, cst.Assert)):
                compared |= {a for o, a, _ in _refs(node) if o == obj}
            elif isinstance(node, cst.Call) and name_matches(call_name(node), self.opts["normalizer-calls"]):
                for arg in node.args:
                    compared |= {a for o, a, _ in _refs(arg.value) if o == obj}

        def hit(expr: cst.CSTNode) -> str | None:
            if isinstance(expr, cst.Attribute) and dotted(expr.value) == obj:
                a = expr.attr.value
                if a in attrs and a not in compared:
                    return a
            return None

        for node in walk_no_nested(fn.body):
            if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in ARITHMETIC:
                for side in (node.left, node.right):
                    a = hit(side)
                    if a:
                        yield side, a, "arithmetic"
            elif isinstance(node, cst.Call):
                leaf = (call_name(node) or "").rsplit(".", 1)[-1]
                for arg in node.args:
                    kw = arg.keyword.value if arg.keyword is not None else None
                    if kw is not None and name_matches(kw, self.opts["attribute-patterns"]):
                        a = hit(arg.value)
                        if a:
                            yield arg.value, a, f"keyword {kw}="
                    elif kw is None and leaf in SIZE_CALLS:
                        elems = (
                            [e.value for e in arg.value.elements]
                            if isinstance(arg.value, (cst.Tuple, cst.List))
                            else [arg.value]
                        )
                        for e in elems:
                            a = hit(e)
                            if a:
                                yield e, a, f"{leaf}() size"

    def _check_uses(self, fn: cst.FunctionDef, stored: Mapping[str, Construction], exclude_fn: bool) -> None:
        for target, c in stored.items():
            if exclude_fn and any(n is c.call for n in walk_no_nested(fn.body)):
                continue
            for node, attr, how in self._size_uses(fn, target, c.attrs):
                sa = c.attrs[attr]
                self.report(
                    node,
                    f"`{target}.{attr}` is used as a size ({how}) in `{fn.name.value}` but may still be "
                    f"the sentinel {sa.value}: `{target}` is constructed directly in `{c.func}` "
                    f"and nothing resolves `{attr}`",
                    notes=notes(target, {attr: sa}, self.engine),
                )

    def _check_own_init(self, cls: cst.ClassDef, methods: Sequence[cst.FunctionDef]) -> None:
        """A class using its own sentinel attribute as a size in ``__init__``
        (nothing outside can have resolved it yet)."""
        eff = self.effective(self._class_qualname(cls))
        if not eff:
            return
        for fn in methods:
            if fn.name.value not in _INIT_FAMILY:
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


    def _report_construction(self, c: Construction) -> None:
        self.report(c.call, construction_message(c), notes=notes(c.target, c.attrs, self.engine))

    def _check_reset(self, cls: cst.ClassDef, methods: Sequence[cst.FunctionDef]) -> None:
        """A class whose ``__init__`` puts a parallelism sentinel back after a
        base class resolved it (``super().__init__()`` then
        ``self.dcp_world_size = -1``, or over a base's ``__new__``), with no
        resolver anywhere to undo it, and that passes the attribute on as a
        size in its own methods: every instance runs with the sentinel."""
        qname = self._class_qualname(cls)
        q = self.index.resolve(qname)
        if q is None:
            return
        own = self.index.classes[q]
        eff = self.effective(q)
        refs = [self.index.classes[c] for c in self.index.mro(q)[1:]]
        for attr, (value, span, where, *rest) in own.data.get("sentinel", {}).items():
            # (in ``eff``: a normal path resolves it after construction; the
            # constructions that skip it are what gets reported)
            if attr in eff or not (self._is_sentinel(value) and name_matches(attr, self.opts["attribute-patterns"])):
                continue
            order = rest[0] if rest else ""
            base = _base_giving(refs, attr)
            if base is None or where not in ("__init__", "__post_init__") or not (order == "after" or base[1] == "__new__"):
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
            others = [Note(f"also used as a size ({h}) in `{f.name.value}`") for f, _, h in uses[1:3]]
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
        qual = ".".join([*self.ctx.scope_names[:-1], cls.name.value]) if self.ctx.scope_names else cls.name.value
        return f"{self.ctx.module_name}.{qual}" if self.ctx.module_name else qual


def _first_param(fn: cst.FunctionDef) -> str:
    params = fn.params.params
    return params[0].name.value if params else "self"
