"""Fact collector ``sentinels`` for SHD201 (unresolved-sentinel-reaches-impl).

Per module it records, on CPython ``ast``:

* ``classes``: every class (dotted local qualname) with its bases qualified
  through the module's imports, the attributes it leaves at a sentinel
  (``-1``/``None``/another negative literal, at class level or in
  ``__init__``/``__post_init__``/``__new__``) without resolving them later in
  that same method family, the attributes it does give a real value there, and
  the other methods that assign a real value to a sentinel attribute (a
  ``set_cp_group()``-style late resolver a caller could invoke).
* ``resolvers``: code that tests ``obj.attr`` against a sentinel and assigns
  ``obj.<attr>`` in that branch (``if impl.cp_size == -1: impl.cp_size = ...``),
  with the enclosing class/function so the rule can tell whether that scope is
  a "normal path" that also constructs the class.
* ``calls``: for each scope holding a resolver, the calls it makes (qualified
  class names, method names) — the construction that pairs with the resolver.
* ``factories``: functions whose return annotation is ``type[X]`` or whose
  body is a single ``return X`` — what a ``get_impl_cls()`` can hand out.
* ``constructs``: what the module's functions may construct a class through.

Which attribute names and which sentinel values count is decided by the rule
from its options, so everything sentinel-shaped is recorded here: options never
reach collectors, and facts must not depend on configuration.

The collector is lazy (a module's facts are read when the rule asks); the
eager ``sentinel_outline`` collector records, per module, the names of its
facts (``outline_of_facts``): what tells ``SentinelIndex``
(``checks.facts.sentinel_index``) which modules to read for a question about
the whole project, and what SHD201's facts gate asks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from checks.facts.common import source_lines, span
from checks.facts.sentinel_index import SentinelIndex, outline_of_facts
from linter.astwalk import ast_dotted, ast_stmt_fields, module_statements
from linter.facts import FactCollector
from linter.imports import imports_from_ast, qualify
from linter.needles import Needles

INIT_FAMILY = frozenset({"__init__", "__post_init__", "__new__"})


def sentinel_repr(node: ast.AST | None) -> str | None:
    """``"None"`` or ``"-N"`` for a sentinel-shaped literal, else None."""
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and node.operand.value > 0
    ):
        return f"-{node.operand.value}"
    return None


def _statement_children(node: ast.AST) -> list[ast.AST]:
    """The statements and clauses directly in ``node``, in ``iter_child_nodes``
    order (only these fields hold any: expressions never do)."""
    out: list[ast.AST] = []
    for name in ast_stmt_fields(type(node)) or (("body",) if isinstance(node, ast.Module) else ()):
        out.extend(getattr(node, name))
    return out


def statements_no_nested(node: ast.AST) -> Iterator[ast.AST]:
    """The statements under ``node``, nested functions and classes listed
    but not entered, without visiting expressions (no statement lives inside
    an expression once lambdas are skipped, and expressions are most of a
    function's tree)."""
    stack = _statement_children(node)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(_statement_children(n))


def _attr_ref(node: ast.AST) -> tuple[str, str] | None:
    """``(object_text, attr)`` for ``obj.attr`` or ``getattr(obj, "attr", ...)``."""
    if isinstance(node, ast.Attribute):
        obj = ast_dotted(node.value)
        if obj is not None:
            return obj, node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        obj = ast_dotted(node.args[0])
        if obj is not None:
            return obj, node.args[1].value
    return None


def _int(node: ast.AST) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _sentinel_tests(test: ast.AST) -> list[tuple[str, str, str]]:
    """``(object, attr, kind)`` for each comparison in ``test`` that asks
    whether ``obj.attr`` still holds a sentinel: ``== -1``, ``is None``,
    ``< 0``, ``< 1``, ``<= 0`` (and the mirrored forms), ``in (-1, None)``."""
    out: list[tuple[str, str, str]] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        op: ast.cmpop | None = node.ops[0]
        ref, other = _attr_ref(node.left), node.comparators[0]
        if ref is None:
            ref, other, op = _attr_ref(other), node.left, _mirror(node.ops[0])
        if ref is None or op is None:
            continue
        rep, num = sentinel_repr(other), _int(other)
        if isinstance(op, ast.In) and isinstance(other, (ast.Tuple, ast.List, ast.Set)):
            reps = [r for r in map(sentinel_repr, other.elts) if r is not None]
            if reps:
                out.append((*ref, reps[0]))
        elif rep is not None and isinstance(op, (ast.Eq, ast.Is)):
            out.append((*ref, rep))
        elif rep is not None and rep != "None" and isinstance(op, (ast.Lt, ast.LtE)):
            out.append((*ref, "<0"))
        elif isinstance(op, ast.Lt) and num in (0, 1):
            out.append((*ref, f"<{num}"))
        elif isinstance(op, ast.LtE) and num == 0:
            out.append((*ref, "<=0"))
    return out


def _mirror(op: ast.cmpop) -> ast.cmpop | None:
    """``b OP a`` as ``a OP' b`` for the tests above (None: not one of them)."""
    if isinstance(op, (ast.Eq, ast.Is)):
        return op
    if isinstance(op, ast.Gt):
        return ast.Lt()
    if isinstance(op, ast.GtE):
        return ast.LtE()
    return None


def _positive_assert(test: ast.AST, self_name: str) -> list[str]:
    """Attributes of ``self_name`` an ``assert`` proves are not the sentinel
    (``> 0``, ``>= 1``, ``!= -1``, ``is not None``)."""
    out: list[str] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        ref = _attr_ref(node.left)
        if ref is None or ref[0] != self_name:
            continue
        op, right = node.ops[0], node.comparators[0]
        num = _int(right)
        if (
            (isinstance(op, ast.Gt) and num is not None and num >= 0)
            or (isinstance(op, ast.GtE) and num is not None and num >= 1)
            or (isinstance(op, (ast.NotEq, ast.IsNot)) and sentinel_repr(right) is not None)
        ):
            out.append(ref[1])
    return out


def _targets(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) pairs of an assignment; a tuple target pairs each
    element with ``None`` (a computed, non-sentinel value)."""
    if isinstance(node, ast.Assign):
        pairs: list[tuple[ast.AST, ast.AST | None]] = []
        for t in node.targets:
            if isinstance(t, (ast.Tuple, ast.List)):
                pairs.extend((e, None) for e in t.elts)
            else:
                pairs.append((t, node.value))
        return pairs
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [(node.target, node.value)]
    if isinstance(node, ast.AugAssign):
        return [(node.target, None)]
    return []


def _receiver(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else None


class _Event(NamedTuple):
    """An assignment (or a proving ``assert``) of an attribute in the class
    body (line 0: before any method) or the ``__init__`` family."""

    line: int
    attr: str
    rep: str | None  # the sentinel, None for a real value
    span: list[int]
    where: str  # "class body" or the method
    # against the method's call of an inherited initialiser
    # (``super().__init__(...)``, ``Base.__init__(self, ...)``): "after" it
    # (the base's value is overwritten: a re-set), "before" it (the base may
    # still assign), "" none in the method
    order: str


def _inherited_init_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef, self_name: str) -> list[int]:
    """Lines of the statements of ``fn`` that call an inherited initialiser:
    ``super().__init__(...)``, ``super(C, self).__post_init__()``,
    ``Base.__init__(self, ...)``."""
    lines: list[int] = []
    for node in statements_no_nested(fn):
        if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("__init__", "__post_init__")):
            continue
        owner = func.value
        is_super = isinstance(owner, ast.Call) and ast_dotted(owner.func) == "super"
        first = node.value.args[0] if node.value.args else None
        explicit = (
            ast_dotted(owner) not in (None, self_name)
            and isinstance(first, ast.Name)
            and first.id == self_name
        )
        if is_super or explicit:
            lines.append(node.lineno)
    return lines


def _method_events(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    events: list[_Event],
    methods: dict[str, list[str]],
    lines: list[str],
) -> None:
    """What a method says about its receiver's attributes: an event per
    assignment and proving ``assert`` in the ``__init__`` family; in any
    other method, the attributes it gives a real value (a late resolver)."""
    self_name = _receiver(fn) or "self"
    family = fn.name in INIT_FAMILY
    supers = _inherited_init_lines(fn, self_name) if family else []
    for node in statements_no_nested(fn):
        if family and isinstance(node, ast.Assert):
            for attr in _positive_assert(node.test, self_name):
                events.append(_Event(node.lineno, attr, None, span(node, lines), fn.name, ""))
        for target, value in _targets(node):
            if not isinstance(target, ast.Attribute):
                continue
            obj = ast_dotted(target.value)
            # __new__ builds the instance under any name (self = super().__new__(cls))
            if obj != self_name and not (fn.name == "__new__" and obj and "." not in obj):
                continue
            rep = sentinel_repr(value)
            if family:
                line = node.lineno
                order = "after" if any(s < line for s in supers) else "before" if supers else ""
                events.append(_Event(line, target.attr, rep, span(node, lines), fn.name, order))
            elif rep is None:
                resolving = methods.setdefault(target.attr, [])
                if fn.name not in resolving:
                    resolving.append(fn.name)


def _class_facts(
    cls: ast.ClassDef, module: str, imports: Mapping[str, str], lines: list[str]
) -> dict[str, Any]:
    bases: list[str] = []
    for b in cls.bases:
        name = ast_dotted(b.value if isinstance(b, ast.Subscript) else b)
        if name and name not in ("object", "Generic", "Protocol", "ABC"):
            bases.append(qualify(name, module, imports))
    events: list[_Event] = []
    methods: dict[str, list[str]] = {}
    later: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for stmt in cls.body:
        for target, value in _targets(stmt):
            if isinstance(target, ast.Name):
                rep = sentinel_repr(value)
                events.append(_Event(0, target.id, rep, span(stmt, lines), "class body", ""))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in INIT_FAMILY:
                _method_events(stmt, events, methods, lines)
            else:
                later.append(stmt)
    # Late resolvers matter only for a class that has sentinels: walking
    # every method of every class would dominate the collector's cost.
    if any(e.rep is not None for e in events):
        for stmt in later:
            _method_events(stmt, events, methods, lines)
    # The last word on each attribute decides.
    events.sort(key=lambda e: (e.line, e.span))
    last = {e.attr: e for e in events}
    sentinel = {a: [e.rep, e.span, e.where, e.order] for a, e in last.items() if e.rep is not None}
    real = {a: e.where for a, e in last.items() if e.rep is None}
    methods = {a: m for a, m in methods.items() if a in sentinel}
    out: dict[str, Any] = {"span": span(cls, lines), "bases": bases}
    if sentinel:
        out["sentinel"] = sentinel
    if real:
        out["real"] = dict(sorted(real.items()))
    if methods:
        out["methods"] = methods
    return out


def _resolvers(
    func: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, scope: str, lines: list[str]
) -> list[dict[str, Any]]:
    """Sentinel tests whose branch assigns the tested object's attributes
    (``if impl.cp_size == -1: impl.cp_size = ...; impl.cp_rank = ...``): the
    branch resolves the whole group (size and rank) at once. A test of the
    function's first parameter, or of an object named ``self``/``cls`` in a
    closure, is a class settling its own attribute, not a normal path
    elsewhere that a direct construction could skip."""
    own = {"self", "cls", _receiver(func)}
    out: list[dict[str, Any]] = []
    for node in statements_no_nested(func):
        tests = _sentinel_tests(node.test) if isinstance(node, ast.If) else []
        if not tests:
            continue
        assigned: set[tuple[str, str]] = set()
        for stmt in node.body:
            for sub in [stmt, *statements_no_nested(stmt)]:
                for target, _ in _targets(sub):
                    obj = ast_dotted(target.value) if isinstance(target, ast.Attribute) else None
                    if obj:
                        assigned.add((obj, target.attr))
        for obj, attr, kind in tests:
            if obj in own or (obj, attr) not in assigned:
                continue
            for o, a in sorted(assigned):
                if o == obj:
                    out.append(
                        {
                            "attr": a,
                            "obj": obj,
                            "test": kind,
                            "span": span(node, lines),
                            "func": qual,
                            "scope": scope,
                        }
                    )
    return out


def _calls(scope: ast.AST, module: str, imports: Mapping[str, str]) -> list[str]:
    """Qualified names of plain calls and ``.method`` names of attribute calls."""
    out: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                out.add("." + node.func.attr)
            else:
                name = ast_dotted(node.func)
                if name:
                    out.add(qualify(name, module, imports))
    return sorted(out)


def _returned_classes(
    func: ast.FunctionDef | ast.AsyncFunctionDef, module: str, imports: Mapping[str, str]
) -> list[str]:
    """``X`` of a return annotation ``type[X]`` (or ``"X"``) and of a body
    that is a single ``return X`` (a capitalised name), qualified."""
    names: list[str] = []
    ann = func.returns
    if isinstance(ann, ast.Subscript) and ast_dotted(ann.value) in ("type", "Type", "typing.Type"):
        inner: ast.AST | None = ann.slice
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            try:
                inner = ast.parse(inner.value, mode="eval").body
            except SyntaxError:
                inner = None
        name = ast_dotted(inner)
        if name:
            names.append(qualify(name, module, imports))
    body = [
        s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        name = ast_dotted(body[0].value)
        if name and name[:1].isupper():
            names.append(qualify(name, module, imports))
    return names


# What can give a module facts, on raw text: a class statement (every class
# is needed, see ``SentinelFacts``), a sentinel comparison (``== -1``, ``is
# None``, ``< 1``, ``<= 0``, mirrored, through parentheses and line
# continuations), a ``type[...]`` annotation, a ``return`` of a capitalised
# name. The spec (tests/test_facts_sentinels.py) has alternatives led by
# ``\b``; here each is led by a literal, the boundary checked behind it
# (``class(?<!\wclass)``), so that ``re`` jumps from one occurrence of the
# literal to the next instead of trying every position (0.50 s -> 0.03 s
# over vLLM).
_SENTINEL_TAIL = r"[\s\\(]*(?:-[\s\\(]*\d|None\b|[01]\b)"
_SENTINEL_HEAD = r"[\s\\)]*(?:==|\bis\b|>=?)"
_FACTS_TEXT = "|".join(
    (
        r"class(?<!\wclass)[ \t]",
        r"type(?<!\wtype)\s*\[",
        r"Type(?<!\wType)\s*\[",
        r"return(?<!\wreturn)[\s(\\]*[^\W\d_a-z]",
        "==" + _SENTINEL_TAIL,
        r"is(?<!\wis)\b" + _SENTINEL_TAIL,
        "<=?" + _SENTINEL_TAIL,
        r"-[\s\\]*\d" + _SENTINEL_HEAD,
        r"None(?<!\wNone)" + _SENTINEL_HEAD,
        r"0(?<!\w0)" + _SENTINEL_HEAD,
        r"1(?<!\w1)" + _SENTINEL_HEAD,
    )
)
# ... and an ``=``: an assignment may construct a class (``constructed_names``).
# With it, nearly every file has facts.
FACTS_NEEDLES = Needles(regex=_FACTS_TEXT + "|=")


def collect_ast(tree: ast.Module, text: str, module: str, path: str) -> Any:
    """The facts of one module read from its whole CPython ``ast``. The
    outline and the facts are read from the same tree when one buffer is
    linted (the scan's ``ast`` serves both): the last result is served again
    for the same tree and text."""
    global _LAST
    key = (id(tree), module, path)
    if _LAST is not None and _LAST[0] == key and _LAST[1] == text:
        return _LAST[2]
    # Imports at module level (also under ``if TYPE_CHECKING:``/``try:``) are
    # enough to qualify bases and factory returns, and spare a walk of the
    # whole tree per file; function-local imports are not seen.
    top = [s for s in module_statements(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))]
    imports = imports_from_ast(ast.Module(body=top, type_ignores=[]), module, path)
    lines = source_lines(text)
    classes: dict[str, Any] = {}
    resolvers: list[dict[str, Any]] = []
    calls: dict[str, list[str]] = {}
    factories: dict[str, list[str]] = {}

    def visit(body: list[ast.stmt], prefix: str, owner: ast.ClassDef | None) -> None:
        for stmt in body:
            if not isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            qual = f"{prefix}{stmt.name}"
            if isinstance(stmt, ast.ClassDef):
                classes[qual] = _class_facts(stmt, module, imports, lines)
                visit(stmt.body, qual + ".", stmt)
                continue
            # The "normal path" is the whole class (a wrapper may construct
            # in __init__ and resolve lazily in forward).
            scope = prefix[:-1] if owner else qual
            found = _resolvers(stmt, qual, scope, lines)
            resolvers.extend(found)
            if found and scope not in calls:
                calls[scope] = _calls(owner or stmt, module, imports)
            # keyed "Owner.method" so a typed receiver narrows the family
            returned = _returned_classes(stmt, module, imports)
            if returned:
                factories.setdefault(qual if owner else stmt.name, []).extend(returned)
            visit(stmt.body, qual + ".", None)

    visit(tree.body, "", None)
    constructs = constructed_names(tree)
    got: dict[str, Any] | None = None
    if classes or resolvers or factories or constructs:
        got = {"path": path, "classes": classes}
        if constructs:
            got["constructs"] = constructs
        if resolvers:
            got["resolvers"] = resolvers
            got["calls"] = calls
        if factories:
            got["factories"] = factories
        # Re-exports let the rule follow ``pkg.Name`` to ``pkg.mod.Name``.
        if path.endswith("__init__.py"):
            got["imports"] = {k: v for k, v in imports.items() if k[:1].isupper()}
    _LAST = (key, text, got)
    return got


# (the tree's id, module, path), the text, and the facts of the last call
_LAST: tuple[tuple[int, str, str], str, Any] | None = None


_CAST = frozenset({"cast", "typing.cast", "t.cast"})


def _call_names(call: ast.Call, out: set[str]) -> None:
    """The names a construction ``x = <call>`` can go by: a capitalised
    callee (``Impl(...)``, ``mod.Impl(...)``), or a method whose result is
    the class (``backend.get_impl_cls()`` assigned, called at once, or cast).
    A loop, not recursion: ``f()()()...`` may nest deeper than the stack."""
    todo = [call]
    while todo:
        node = todo.pop()
        func = node.func
        name = ast_dotted(func) if not isinstance(func, ast.Call) else None
        if name in _CAST and len(node.args) == 2 and isinstance(node.args[1], ast.Call):
            todo.append(node.args[1])
        elif isinstance(func, ast.Call):
            todo.append(func)
        elif isinstance(func, ast.Attribute):
            out.add(func.attr)
        elif isinstance(func, ast.Name) and func.id[:1].isupper():
            out.add(func.id)


def constructed_names(tree: ast.Module) -> list[str]:
    """What the functions of a module may construct a class through, for
    SHD201's facts gate: the names of ``x = <call>`` statements (see
    :func:`_call_names`) anywhere in a function, nested ones included, and
    the imported names their aliases stand for (``from m import Impl as K``
    then ``K(...)`` records ``Impl`` too). The rule reports constructions
    only at assignments in functions, so nothing else can matter; which of
    these names are classes keeping a sentinel is the gate's question."""
    names: set[str] = set()
    aliases: dict[str, str] = {}
    stack: list[tuple[ast.AST, bool]] = [(s, False) for s in tree.body]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name.rsplit(".", 1)[-1]
        elif (
            in_function
            and isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(node.value, ast.Call)
        ):
            _call_names(node.value, names)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        stack.extend((c, inner) for c in _statement_children(node))
    names |= {aliases[n] for n in names if n in aliases}
    return sorted(names)


class SentinelFacts(FactCollector):
    name = "sentinels"
    # 12: a test of ``self``/``cls`` is no resolver; lazy. 13: CPython's
    # ``ast`` only. 14: order against an inherited initialiser, real values,
    # constructions. 15: ``in (-1, None)`` tests
    version = 15
    # Read module by module when the rule asks (one class's bases, one
    # attribute's resolvers, one factory's returns); questions spanning the
    # project are answered from ``sentinel_outline``'s names, which say which
    # modules to read. Every file with a class may have facts: a subclass that
    # gives an inherited sentinel a real value in ``__init__`` hides it, and a
    # subclass is how a resolver's construction reaches the sentinel class.
    lazy = True
    index_with = ("sentinel_outline",)
    needles = FACTS_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return collect_ast(tree, text, module, path)

    @classmethod
    def build_index(
        cls, per_module: Mapping[str, Any], outline: Mapping[str, Any] | None = None
    ) -> SentinelIndex:
        return SentinelIndex(per_module, outline)


class SentinelOutline(FactCollector):
    """Per module, the names of its ``sentinels`` facts (``outline_of_facts``):
    what tells ``SentinelIndex`` which modules' facts to read for a question
    about the whole project (which classes are named so, which modules
    resolve an attribute, which define a factory). Eager, and stable under
    edits that only move lines: a cached check result depends on it whole."""

    name = "sentinel_outline"
    # 2: CPython's ``ast``. 3: constructions, sentinels and bases (the rule's
    # facts gate). 4: resolvers testing ``in (-1, None)``
    version = 4
    needles = FACTS_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        facts = collect_ast(tree, text, module, path)
        return outline_of_facts(facts) if facts else None
