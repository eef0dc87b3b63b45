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
  or assigns ``obj.attr`` right after constructing ``obj`` in the same function;
  with the enclosing class/function so the rule can tell whether that scope is
  a "normal path" that also constructs the class.
* ``calls``: for each scope holding a resolver, the calls it makes (qualified
  class names, method names) — the construction that pairs with the resolver.
* ``factories``: functions whose return annotation is ``type[X]`` or whose
  body is a single ``return X`` — what a ``get_impl_cls()`` can hand out.

Which attribute names and which sentinel values count is decided by the rule
from its options, so everything sentinel-shaped is recorded here: options never
reach collectors, and facts must not depend on configuration.

The collector is lazy (a module's facts are read when the rule asks); the
eager ``sentinel_outline`` collector records, per module, the names of its
facts (class names, attributes resolved, factory names, what it constructs
through, its classes' sentinels and bases): what tells ``SentinelIndex``
(``checks.facts.sentinel_index``) which modules to read for a question about
the whole project, and what SHD201's facts gate asks. Both read CPython's
``ast``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checks.facts.sentinel_index import ClassRef, Resolver, SentinelIndex, outline_of_facts
from linter.astwalk import ast_dotted, ast_stmt_fields, module_statements
from linter.imports import imports_from_ast, qualify
from linter.facts import FactCollector
from linter.needles import Needles

__all__ = [
    "ClassRef",
    "Resolver",
    "SentinelFacts",
    "SentinelIndex",
    "SentinelOutline",
    "outline_of_facts",
]

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
    but not entered, without visiting expressions (no statement lives
    inside an expression once lambdas are skipped): the walks below look
    only for statements, and expression nodes are most of a function's tree."""
    stack = _statement_children(node)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack.extend(_statement_children(n))


def attr_ref(node: ast.AST) -> tuple[str, str] | None:
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


def sentinel_test(test: ast.AST) -> list[tuple[str, str, str]]:
    """``(object, attr, kind)`` for each comparison in ``test`` that asks
    whether ``obj.attr`` still holds a sentinel: ``== -1``, ``is None``,
    ``< 0``, ``< 1``, ``<= 0`` (and the mirrored forms), ``in (-1, None)``."""
    out: list[tuple[str, str, str]] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        left, op, right = node.left, node.ops[0], node.comparators[0]
        ref = attr_ref(left)
        other = right
        if ref is None:
            ref, other = attr_ref(right), left
            op = _mirror(op)
        if ref is None or op is None:
            continue
        rep = sentinel_repr(other)
        num = other.value if isinstance(other, ast.Constant) and type(other.value) is int else None
        if isinstance(op, ast.In) and isinstance(other, (ast.Tuple, ast.List, ast.Set)):
            reps = [r for r in map(sentinel_repr, other.elts) if r is not None]
            if reps:
                out.append((ref[0], ref[1], reps[0]))
        elif rep is not None and isinstance(op, (ast.Eq, ast.Is)):
            out.append((ref[0], ref[1], rep))
        elif rep is not None and rep != "None" and isinstance(op, (ast.Lt, ast.LtE)):
            out.append((ref[0], ref[1], "<0"))
        elif num is not None and (
            (isinstance(op, ast.Lt) and num in (0, 1)) or (isinstance(op, ast.LtE) and num == 0)
        ):
            out.append((ref[0], ref[1], f"<{num}" if isinstance(op, ast.Lt) else "<=0"))
    return out


def _mirror(op: ast.cmpop) -> ast.cmpop | None:
    if isinstance(op, (ast.Eq, ast.Is)):
        return op
    if isinstance(op, ast.Gt):
        return ast.Lt()
    if isinstance(op, ast.GtE):
        return ast.LtE()
    return None


def positive_assert(test: ast.AST, self_name: str) -> list[str]:
    """Attributes of ``self_name`` an ``assert`` proves are not the sentinel
    (``> 0``, ``>= 1``, ``!= -1``, ``is not None``)."""
    out: list[str] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        ref = attr_ref(node.left)
        if ref is None or ref[0] != self_name:
            continue
        op, right = node.ops[0], node.comparators[0]
        num = right.value if isinstance(right, ast.Constant) and type(right.value) is int else None
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


@dataclass
class _Pos:
    """Positions of ast nodes in the file (``lines``: the file's lines as
    the compiler numbers them)."""

    lines: list[str]

    def col(self, line: int, byte_col: int) -> int:
        """ast columns are UTF-8 byte offsets; diagnostics use code points."""
        if 1 <= line <= len(self.lines):
            raw = self.lines[line - 1].encode("utf-8", "surrogatepass")
            return len(raw[:byte_col].decode("utf-8", "replace"))
        return byte_col

    def line(self, node: ast.AST) -> int:
        return getattr(node, "lineno", 1)

    def span(self, node: ast.AST) -> list[int]:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", line) or line
        return [
            line,
            self.col(line, getattr(node, "col_offset", 0)),
            end_line,
            self.col(end_line, getattr(node, "end_col_offset", 0) or 0),
        ]


@dataclass
class _ClassFacts:
    span: list[int]
    bases: list[str]
    sentinel: dict[str, list[Any]] = field(default_factory=dict)
    # attribute -> where the class gives it a real value ("class body",
    # "__init__", "__new__", ...): a base's ``__new__`` runs before any
    # subclass ``__init__`` can re-set it
    real: dict[str, str] = field(default_factory=dict)
    methods: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"span": self.span, "bases": self.bases}
        if self.sentinel:
            out["sentinel"] = self.sentinel
        if self.real:
            out["real"] = dict(sorted(self.real.items()))
        if self.methods:
            out["methods"] = self.methods
        return out


# (line, attr, sentinel repr or None for a real value, span, method, order):
# ``order`` says where a sentinel assignment stands against the method's
# call of an inherited initialiser (``super().__init__(...)``,
# ``Base.__init__(self, ...)``): ``"after"`` it (the base's value is
# overwritten: a re-set), ``"before"`` it (the base may still assign), ``""``
# none in the method.
Event = tuple[int, str, "str | None", list[int], str, str]

_INHERITED_INIT = frozenset({"__init__", "__post_init__"})


def inherited_init_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef, self_name: str) -> list[int]:
    """Lines of the statements of ``fn`` that call an inherited initialiser:
    ``super().__init__(...)``, ``super(C, self).__post_init__()``,
    ``Base.__init__(self, ...)``."""
    lines: list[int] = []
    for node in statements_no_nested(fn):
        if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        if not (isinstance(func, ast.Attribute) and func.attr in _INHERITED_INIT):
            continue
        owner = func.value
        is_super = isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super"
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
    family: bool,
    events: list[Event],
    methods: dict[str, list[str]],
    pos: _Pos,
) -> None:
    args = fn.args.posonlyargs + fn.args.args
    self_name = args[0].arg if args else "self"
    supers = inherited_init_lines(fn, self_name) if family else []
    for node in statements_no_nested(fn):
        _stmt_events(node, fn.name, self_name, family, events, methods, pos, supers)


def _stmt_events(
    node: ast.AST,
    fn_name: str,
    self_name: str,
    family: bool,
    events: list[Event],
    methods: dict[str, list[str]],
    pos: _Pos,
    supers: Sequence[int] = (),
) -> None:
    """What one statement of a method says about ``self_name``'s attributes:
    an :data:`Event` for the ``__init__`` family, the late resolvers'
    ``methods`` otherwise."""
    if family and isinstance(node, ast.Assert):
        for attr in positive_assert(node.test, self_name):
            events.append((pos.line(node), attr, None, pos.span(node), fn_name, ""))
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return
    for target, value in _targets(node):
        if not isinstance(target, ast.Attribute):
            continue
        obj = ast_dotted(target.value)
        # __new__ builds the instance under any name (self = super().__new__(cls))
        if obj != self_name and not (fn_name == "__new__" and obj and "." not in obj):
            continue
        rep = sentinel_repr(value) if value is not None else None
        if family:
            line = pos.line(node)
            order = "after" if any(s < line for s in supers) else "before" if supers else ""
            events.append((line, target.attr, rep, pos.span(node), fn_name, order))
        elif rep is None:
            add_method(methods, target.attr, fn_name)


def add_method(methods: dict[str, list[str]], attr: str, fn_name: str) -> None:
    methods.setdefault(attr, [])
    if fn_name not in methods[attr]:
        methods[attr].append(fn_name)


def _class_facts(
    cls: ast.ClassDef, module: str, imports: Mapping[str, str], pos: _Pos
) -> _ClassFacts:
    bases: list[str] = []
    for b in cls.bases:
        expr = b.value if isinstance(b, ast.Subscript) else b
        name = ast_dotted(expr)
        if name and name not in ("object", "Generic", "Protocol", "ABC"):
            bases.append(qualify(name, module, imports))
    facts = _ClassFacts(pos.span(cls), bases)
    # (line, attr, value-repr or None for a real value, span of the node)
    events: list[Event] = []
    later: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for stmt in cls.body:
        class_level_events(stmt, events, pos)
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if stmt.name not in INIT_FAMILY:
            later.append(stmt)
            continue
        _method_events(stmt, True, events, facts.methods, pos)
    # Late resolvers matter only for a class that has sentinels: walking
    # every method of every class would dominate the collector's cost.
    if any(e[2] is not None for e in events):
        for stmt in later:
            _method_events(stmt, False, events, facts.methods, pos)
    finish_class(facts, events)
    return facts


def class_level_events(stmt: ast.AST, events: list[Event], pos: _Pos) -> None:
    for target, value in _targets(stmt):
        if isinstance(target, ast.Name):
            rep = sentinel_repr(value) if value is not None else None
            events.append((0, target.id, rep, pos.span(stmt), "class body", ""))


def finish_class(facts: _ClassFacts, events: list[Event]) -> None:
    """The last word on each attribute decides: a sentinel (with where it
    stands against an inherited initialiser's call, see :data:`Event`), or
    a real value (with the method that gives it)."""
    # Class-level lines are 0 so that any method-family assignment comes after.
    events.sort(key=lambda e: (e[0], e[3]))
    last: dict[str, tuple[str | None, list[int], str, str]] = {}
    for _, attr, rep, span, where, order in events:
        last[attr] = (rep, span, where, order)
    for attr, (rep, span, where, order) in last.items():
        if rep is None:
            facts.real[attr] = where
        else:
            facts.sentinel[attr] = [rep, span, where, order]
    facts.methods = {a: m for a, m in facts.methods.items() if a in facts.sentinel}


def _resolvers(func: ast.FunctionDef | ast.AsyncFunctionDef, pos: _Pos) -> list[dict[str, Any]]:
    """Sentinel tests whose branch assigns the tested object's attributes
    (``if impl.cp_size == -1: impl.cp_size = ...; impl.cp_rank = ...``)."""
    out: list[dict[str, Any]] = []
    args = func.args.posonlyargs + func.args.args
    self_name = args[0].arg if args else None
    for node in statements_no_nested(func):
        if isinstance(node, ast.If):
            out.extend(if_resolvers(node, self_name, pos))
    return out


_OWN = frozenset({"self", "cls"})


def if_resolvers(node: ast.If, self_name: str | None, pos: _Pos) -> list[dict[str, Any]]:
    """The resolvers one ``if`` statement holds (see :func:`_resolvers`)."""
    out: list[dict[str, Any]] = []
    tests = sentinel_test(node.test)
    if not tests:
        return out
    assigned: set[tuple[str, str]] = set()
    for stmt in node.body:
        for sub in [stmt, *statements_no_nested(stmt)]:
            for target, _ in _targets(sub):
                if isinstance(target, ast.Attribute):
                    obj = ast_dotted(target.value)
                    if obj:
                        assigned.add((obj, target.attr))
    for obj, attr, kind in tests:
        # (the function's own receiver, or an object named ``self``/``cls``
        # in a closure: the class settling its own attribute, not a normal
        # path elsewhere that a direct construction could skip)
        if obj == self_name or obj in _OWN or (obj, attr) not in assigned:
            continue
        # The branch resolves the whole group (size and rank) at once.
        for o, a in sorted(assigned):
            if o == obj:
                out.append({"attr": a, "obj": obj, "test": kind, "span": pos.span(node)})
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


def annotation_classes(ann: ast.AST | None, module: str, imports: Mapping[str, str]) -> list[str]:
    """``[X]`` for a return annotation ``type[X]`` (qualified)."""
    names: list[str] = []
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
    return names


def _returned_classes(
    func: ast.FunctionDef | ast.AsyncFunctionDef, module: str, imports: Mapping[str, str]
) -> list[str]:
    names = annotation_classes(func.returns, module, imports)
    body = [
        s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        name = ast_dotted(body[0].value)
        if name and name[:1].isupper():
            names.append(qualify(name, module, imports))
    return names


def _shallow_imports(tree: ast.Module, module: str, path: str) -> dict[str, str]:
    """Imports at module level (also under ``if TYPE_CHECKING:``/``try:``):
    enough to qualify bases and factory returns, and it spares a walk of the
    whole tree per file. Function-local imports are not seen."""
    imports = [s for s in module_statements(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))]
    return imports_from_ast(ast.Module(body=imports, type_ignores=[]), module, path)


# What can give a module facts, on raw text: a class statement (every class
# is needed, see below), a sentinel comparison a resolver needs (``== -1``,
# ``is None``, ``< 1``, ``<= 0`` and the mirrored forms, parentheses and line
# continuations allowed), a ``type[...]``/``Type[...]`` annotation or a
# ``return`` of a capitalised name (factories). Written as
#
#   \bclass[ \t]|\b[tT]ype\s*\[|\breturn[\s(\\]*[^\W\d_a-z]
#   |(?:==|\bis\b|<=?)[\s\\(]*(?:-[\s\\(]*\d|None\b|[01]\b)
#   |(?:-[\s\\]*\d|\bNone|\b[01])[\s\\)]*(?:==|\bis\b|>=?)
#
# but with every alternative led by a literal and the word boundary checked
# behind it (``class(?<!\wclass)`` for ``\bclass``): ``re`` then jumps from
# one occurrence of the literal to the next instead of trying every position
# (0.50 s -> 0.03 s over vLLM, same files; see tests/test_facts_sentinels.py).
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
# What can hold a direct construction (recorded for the rule's facts gate,
# see ``constructed_names``): an assignment, so an ``=`` (a single literal:
# ``re`` jumps to it). With it, nearly every file has facts.
FACTS_NEEDLES = Needles(regex=_FACTS_TEXT + "|=")


@dataclass
class Facts:
    """One module's facts while they are being collected, in visit order."""

    module: str
    path: str
    imports: Mapping[str, str]
    classes: dict[str, Any] = field(default_factory=dict)
    resolvers: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, list[str]] = field(default_factory=dict)
    factories: dict[str, list[str]] = field(default_factory=dict)
    constructs: list[str] = field(default_factory=list)

    def add_resolvers(
        self, found: list[dict[str, Any]], qual: str, scope: str, calls_of: Callable[[], list[str]]
    ) -> None:
        """``calls_of``: the calls of the scope (the whole class, or the
        function) that pair with the resolvers, computed when it is new."""
        for r in found:
            r["func"] = qual
            r["scope"] = scope
        if found:
            self.resolvers.extend(found)
            if scope not in self.calls:
                self.calls[scope] = calls_of()

    def add_factory(self, key: str, names: list[str]) -> None:
        if names:
            self.factories.setdefault(key, []).extend(names)

    def to_json(self) -> Any:
        if not (self.classes or self.resolvers or self.factories or self.constructs):
            return None
        out: dict[str, Any] = {"path": self.path, "classes": self.classes}
        if self.constructs:
            out["constructs"] = self.constructs
        if self.resolvers:
            out["resolvers"] = self.resolvers
            out["calls"] = self.calls
        if self.factories:
            out["factories"] = self.factories
        # Re-exports let the rule follow ``pkg.Name`` to ``pkg.mod.Name``.
        if self.path.endswith("__init__.py"):
            out["imports"] = {k: v for k, v in self.imports.items() if k[:1].isupper()}
        return out


def visit(
    body: list[ast.stmt], prefix: str, owner: ast.ClassDef | None, facts: Facts, pos: _Pos
) -> None:
    """Classes and functions directly in ``body`` (and, recursively, directly
    in their bodies), on CPython ``ast``."""
    module, imports = facts.module, facts.imports
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qual = f"{prefix}{stmt.name}"
            facts.classes[qual] = _class_facts(stmt, module, imports, pos).to_json()
            visit(stmt.body, qual + ".", stmt, facts, pos)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{prefix}{stmt.name}"
            found = _resolvers(stmt, pos)
            cls_qual = prefix[:-1] if owner is not None else None
            # The "normal path" is the whole class (a wrapper may
            # construct in __init__ and resolve lazily in forward).
            scope = cls_qual or qual
            key_node = owner if owner is not None else stmt
            facts.add_resolvers(
                found, qual, scope, lambda node=key_node: _calls(node, module, imports)
            )
            # keyed "Owner.method" so a typed receiver narrows the family
            key = f"{prefix}{stmt.name}" if owner is not None else stmt.name
            facts.add_factory(key, _returned_classes(stmt, module, imports))
            visit(stmt.body, qual + ".", None, facts, pos)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def collect_ast(tree: ast.Module, text: str, module: str, path: str) -> Any:
    """The facts of one module read from its whole CPython ``ast``. The
    outline and the facts are read from the same tree when one buffer is
    linted (the scan's ``ast`` serves both): the last result is served again
    for the same tree and text."""
    global _LAST
    key = (id(tree), module, path)
    if _LAST is not None and _LAST[0] == key and _LAST[1] == text:
        return _LAST[2]
    facts = Facts(module, path, _shallow_imports(tree, module, path))
    # the lines the compiler numbers: ``str.splitlines`` also breaks at form
    # feeds, ``\x1c``-``\x1e``, ``\x85``, U+2028/U+2029
    visit(tree.body, "", None, facts, _Pos(_LINE_BREAK.split(text)))
    facts.constructs = constructed_names(tree)
    got = facts.to_json()
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
        elif in_function and isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            _call_names(node.value, names)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        stack.extend((c, inner) for c in _statement_children(node))
    names |= {aliases[n] for n in names if n in aliases}
    return sorted(names)


class SentinelFacts(FactCollector):
    name = "sentinels"
    # 12: a test of an object named ``self`` or ``cls`` is no resolver;
    # lazy (read per module when the rule asks, see ``SentinelOutline``)
    # 13: read from CPython's ``ast`` only (a file that does not compile
    # has no facts)
    # 14: a sentinel's place against an inherited initialiser's call, where
    # a real value is given, what the module constructs
    # 15: ``in (-1, None)`` tests
    version = 15
    # Read module by module when the rule asks (one class's bases, one
    # attribute's resolvers, one factory's returns): the questions that span
    # the whole project are answered from ``sentinel_outline``'s names, which
    # say which modules to read. Every file with a class may have facts: a
    # subclass that gives an inherited sentinel a real value in ``__init__``
    # hides it, a subclass is how a resolver's construction reaches the
    # sentinel class. Files without a class have facts only for a resolver's
    # test or a factory's return.
    lazy = True
    index_with = ("sentinel_outline",)
    needles = FACTS_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return collect_ast(tree, text, module, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any], outline: Mapping[str, Any] | None = None) -> SentinelIndex:
        return SentinelIndex(per_module, outline)


class SentinelOutline(FactCollector):
    """Per module, the names of its ``sentinels`` facts (``outline_of_facts``):
    what tells ``SentinelIndex`` which modules' facts to read for a question
    about the whole project (which classes are named so, which modules
    resolve an attribute, which define a factory). Eager, and stable under
    edits that only move lines: a cached check result depends on it whole."""

    name = "sentinel_outline"
    # 2: read from CPython's ``ast`` (the facts' own names)
    # 3: what the module constructs, its classes' sentinels and bases (the
    # rule's facts gate); 4: resolvers testing ``in (-1, None)``
    version = 4
    needles = FACTS_NEEDLES

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        facts = collect_ast(tree, text, module, path)
        return outline_of_facts(facts) if facts else None
