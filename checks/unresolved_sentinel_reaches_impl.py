"""SHD201 unresolved-sentinel-reaches-impl (seed 004)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks._helpers import (
    ast_dotted,
    ast_nodes_no_nested,
    ast_stmt_fields,
    call_name,
    dotted,
    memo_last_text_under,
    memo_on_tree,
    name_matches,
    walk_no_nested,
)
from checks._imports import imports_from_ast, imports_from_cst, qualify
from checks._sentinels import ClassRef, Resolver, SentinelIndex
from checks._textfunctions import narrow_classes, regions_at, regions_holding, skeleton_to, top_level_regions
from linter.facts import FactCollector, ProjectFacts
from linter.needles import Needles
from linter.rule import Option, Rule
from linter.types import Note, Severity, Span

_INIT_FAMILY = frozenset({"__init__", "__post_init__", "__new__"})
_DEFAULT_FACTORIES = ("get_impl_cls", "get_impl_class")
_CAST = frozenset({"cast", "typing.cast", "t.cast"})
# Calls whose positional arguments are tensor shapes or loop bounds: a
# sentinel there is a wrong-sized buffer or an empty loop, not an error.
_SIZE_CALLS = frozenset(
    {
        "range",
        "empty",
        "zeros",
        "ones",
        "full",
        "randn",
        "rand",
        "view",
        "reshape",
        "expand",
        "new_empty",
        "new_zeros",
        "new_ones",
        "new_full",
        "arange",
        "split",
        "chunk",
    }
)
# libcst operator class names (the scan imports this module without loading libcst)
_ARITH = frozenset(
    {"Divide", "FloorDivide", "Modulo", "Multiply", "Add", "Subtract", "Power", "LeftShift"}
)


# -- prefilter: construction sites and own-init size uses, on CPython ``ast`` --------
# Recorded without options (names are kept, not matched) so the ast gate is
# sound under any configuration; the facts gate decides with the effective
# options whether any recorded site can meet a class that keeps a sentinel.

# ``FooImpl(`` (also ``(FooImpl)(``, or with a line continuation before ``(``)
_IMPL_CALL = re.compile(r"Impl(?:Base)?(?:[\s\\)]|#[^\n]*\n)*\(")
# A size/rank attribute set to a sentinel: ``self.cp_world_size = -1``,
# ``cp_rank: int = -1``, ``self.rank = None`` (a class-level None is too
# common in dataclasses to be worth a parse on its own), in any layout: line
# continuations, brackets or comments between ``=`` and the value, ``- 1``,
# ``-(1)``, an annotation holding ``=`` or spanning lines, another target
# or a compound statement's header before it; names in any case (as
# ``name_matches`` compares them). Led by the ``=`` of an assignment; the
# name is looked for before it on its line (and the lines that line
# continues): ``self.<name>``, the attribute of an init-family method's
# first parameter, or a plain name in a class body.
_GAP = r"(?:[ \t\r\n\\(]|#[^\n]*\n)*"
_SENTINEL_VALUE = re.compile(
    r"=(?<![=!<>+\-*/%&|^@:]=)(?!=)" + _GAP + r"(?:(None)(?!\w)|-" + _GAP + r"\d)"
)


def _target_start(text: str, eq: int) -> int:
    """Offset of the line holding the targets of the ``=`` at ``eq``: its
    own, or the one it continues (a backslash, or brackets closing that
    opened above); -1 when the ``=`` stands in a comment or in brackets
    opened on its line."""
    ls = text.rfind("\n", 0, eq) + 1
    h = text.find("#", ls, eq)
    if h >= 0 and text.find("'", ls, eq) < 0 and text.find('"', ls, eq) < 0:
        return -1
    seg = text[ls:eq]
    if (
        "'" not in seg
        and '"' not in seg
        and seg.count("(") + seg.count("[") + seg.count("{")
        > seg.count(")") + seg.count("]") + seg.count("}")
    ):
        return -1  # inside brackets opened on its line: a keyword argument, a default
    for _ in range(32):
        seg = text[ls:eq]
        opened = seg.count("(") + seg.count("[") + seg.count("{")
        closed = seg.count(")") + seg.count("]") + seg.count("}")
        if ls == 0 or (opened >= closed and not text[max(0, ls - 3) : ls].rstrip("\r\n").endswith("\\")):
            break
        ls = text.rfind("\n", 0, ls - 1) + 1
    return ls


_COMPOUND = re.compile(r"(?:if|elif|else|try|except|finally|with|for|while|match|case|async)\b")
_ASYNC_DEF = re.compile(r"async[ \t]+def\b")
_DEF_HEAD = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\([ \t\r\n\\]*(\w+)")


def _owner(text: str, ls: int, memo: dict[int, tuple[int, tuple[str, int]]]) -> tuple[str, int]:
    """What holds the statement line at ``ls``: ``("class", _)`` (a class
    body, through ``if``/``try``/... blocks), ``("def", offset of the def
    line)``, ``("module", _)``, ``("continued", _)`` (the line continues a
    statement: a keyword argument on its own line) or ``("unsure", _)``
    (tabs, a header spanning lines, a string that may hold the lines
    above): the nearest line above indented less, and the headers that
    lead from it. ``memo`` (per text) holds the answers given: a line met on
    the way at the same indentation has the same owner."""
    le = text.find("\n", ls)
    line = text[ls : le if le >= 0 else len(text)]
    ind = len(line) - len(line.lstrip(" "))
    if line[ind : ind + 1] == "\t":
        return "unsure", 0
    got = _owner_walk(text, ls, ind, memo)
    memo[ls] = (ind, got)
    return got


def _owner_walk(
    text: str, ls: int, ind: int, memo: dict[int, tuple[int, tuple[str, int]]]
) -> tuple[str, int]:
    if ind == 0:
        return "module", 0
    pos = ls
    strings = False
    for _ in range(4000):
        if pos == 0:
            return "unsure", 0
        b = text.rfind("\n", 0, pos - 1) + 1
        prev = text[b : pos - 1].rstrip("\r")
        pos = b
        body = prev.lstrip(" ")
        if body[:1] == "\t":
            return "unsure", 0
        # (a line of a multi-line string may be indented less)
        strings = strings or "'''" in prev or '"""' in prev
        if not body or body[0] == "#":
            continue
        k = len(prev) - len(body)
        if k >= ind:
            seen = memo.get(b)
            if seen is not None and seen[0] == k == ind and not strings:
                return seen[1]  # a statement above at this indentation: its owner
            continue
        h = body.find("#")
        if h >= 0:
            if "'" in body[:h] or '"' in body[:h]:
                return "unsure", 0  # where the comment starts is not known
            body = body[:h]
        body = body.rstrip()
        if body.startswith("class") and body[5:6] in (" ", "\t"):
            return "class", b
        if body.startswith(("def ", "def\t")) or _ASYNC_DEF.match(body):
            return "def", b
        if not body.endswith(":"):
            return ("unsure" if strings else "continued"), 0
        if not _COMPOUND.match(body):
            return "unsure", 0  # a header's last line, a lambda...
        return _owner(text, b, memo)  # an if/try/... block: what holds it
    return "unsure", 0


def _init_param(
    text: str, ls: int, memo: dict[int, tuple[int, tuple[str, int]]]
) -> str | None:
    """The first parameter of the ``__init__``/``__post_init__``/``__new__``
    holding the statement line at ``ls`` ("" when unsure; None when the
    line is in no such method)."""
    kind, at = _owner(text, ls, memo)
    if kind == "unsure":
        return ""
    if kind != "def":
        return None
    while text[at] in " \t":
        at += 1
    m = _DEF_HEAD.match(text, at)
    if m is None:
        return ""
    return m.group(2) if m.group(1) in _INIT_FAMILY else None


# the first parameter of every init-family method
_INIT_PARAMS = re.compile(
    r"def[ \t]+__(?:init|post_init|new)__(?:[ \t\r\n\\]|#[^\n]*\n)*\((?:[ \t\r\n\\]|#[^\n]*\n)*(\w+)"
).findall
_SIZE_WORD = re.compile(r"(?i:\w*(?:rank|_size)|num_\w+)")
_BLANK = " \t\r\n\\"


def _target_at(seg: str, end: int) -> str | None:
    """The target ending ``seg[:end]`` when it is named like a size or a
    rank: its object for ``<object>.<name>`` ("" for a plain name), None
    otherwise (another name, an attribute of an attribute, an element of a
    tuple, not after the statement's start, ``=``, ``:`` or ``;``)."""
    j = end - 1
    while j >= 0 and seg[j] in _BLANK + ")":
        j -= 1
    e = j + 1
    j = _word_start(seg, j) - 1
    name = seg[j + 1 : e]
    if not name or name[0].isdigit() or not _SIZE_WORD.fullmatch(name):
        return None
    start, obj = j + 1, ""
    k = j
    while k >= 0 and seg[k] in _BLANK:
        k -= 1
    if k >= 0 and seg[k] == ".":
        k -= 1
        while k >= 0 and seg[k] in _BLANK:
            k -= 1
        b = _word_start(seg, k)
        obj = seg[b : k + 1]
        if not obj or obj[0].isdigit() or (b and seg[b - 1] == "."):
            return None
        start = b
    elif j >= 0 and seg[j] == ".":
        return None
    before = seg[:start].rstrip(_BLANK + "(")
    return obj if not before or before[-1] in "=:;" else None


def _word_start(text: str, j: int) -> int:
    """Start of the identifier ending at ``j`` (``j + 1`` if none)."""
    while j >= 0 and (text[j].isalnum() or text[j] == "_"):
        j -= 1
    return j + 1


def _size_targets(seg: str) -> set[str]:
    """The targets ``seg`` (a statement's text before a sentinel's ``=``)
    ends with, named like a size or a rank (see :func:`_target_at`): the
    whole of it, or its part before an annotation's ``:`` or before another
    target's ``=``."""
    out: set[str] = set()
    ends = [len(seg)]
    ends += [i for i, c in enumerate(seg) if c == ":" or c == "=" and seg[i - 1 : i] not in "=!<>"]
    for end in ends:
        got = _target_at(seg, end)
        if got is not None:
            out.add(got)
    return out


def _sets_sentinel(text: str) -> bool:
    """Whether a size/rank attribute is assigned a sentinel somewhere in
    ``text`` (see ``_SENTINEL_VALUE``): ``self.<name>`` (or the attribute of
    an init-family method's first parameter) to ``None`` or ``-N``, a plain
    ``<name>`` to ``-N`` in a class body."""
    params: set[str] | None = None
    memo: dict[int, tuple[int, tuple[str, int]]] = {}
    for m in _SENTINEL_VALUE.finditer(text):
        eq = m.start()
        # most targets hold no size word: tell that from the ``=``'s own line
        # unless the statement may have started above (the line closes more
        # brackets than it opens, or the line above ends with a backslash)
        ls = text.rfind("\n", 0, eq) + 1
        line = text[ls:eq]
        low = line.lower()
        if ("rank" not in low and "_size" not in low and "num_" not in low) and (
            ls == 0
            or (
                line.count("(") + line.count("[") + line.count("{")
                >= line.count(")") + line.count("]") + line.count("}")
                and not text[max(0, ls - 3) : ls].rstrip("\r\n").endswith("\\")
            )
        ):
            continue
        ls = _target_start(text, eq)
        if ls < 0:
            continue
        seg = text[ls:eq]
        low = seg.lower()
        if "rank" not in low and "_size" not in low and "num_" not in low:
            continue  # (``_SIZE_WORD`` cannot match)
        targets = _size_targets(seg)
        if not targets:
            continue
        if "self" in targets:
            return True
        objects = targets - {""}
        if objects:
            if params is None:
                params = set(_INIT_PARAMS(text))
            if not objects & params:
                continue  # no init-family method takes one of them first
            param = _init_param(text, ls, memo)
            if param == "" or param in objects:
                return True
        # a plain name at ``-N`` in a class body (``class A: rank = -1`` on one line too)
        if (
            "" in targets
            and not m.group(1)
            and (seg.lstrip().startswith("class") or _owner(text, ls, memo)[0] in ("class", "unsure"))
        ):
            return True
    return False


class _SiteNeedles(Needles):
    """``get_impl_cl``, an ``*Impl``/``*ImplBase`` call, or a size/rank
    attribute set to a sentinel (:func:`_sets_sentinel`); the fields (what
    the registry records) are a looser search it implies."""

    def _match(self, text: str) -> bool:
        if "get_impl_cl" in text:
            return True
        if _IMPL_CALL.search(text):  # (led by the literal: ``re`` jumps between them)
            return True
        if "-" not in text and "None" not in text:
            return False
        return _sets_sentinel(text)


_SITE_NEEDLES = _SiteNeedles(
    any_of=(("get_impl_cl", "Impl", "-", "None"),),
    regex=f"get_impl_cl|{_IMPL_CALL.pattern}|{_SENTINEL_VALUE.pattern}",
)
_AST_ARITH = (ast.Div, ast.FloorDiv, ast.Mod, ast.Mult, ast.Add, ast.Sub, ast.Pow, ast.LShift)
_AST_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _stmts_no_nested(stmts: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """The statements (and ``except``/``case`` clauses) among
    :func:`~checks._helpers.ast_nodes_no_nested`'s nodes: what a search for assignments needs
    (no expression holds a statement), without walking every expression."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _AST_NESTED):
            for f in ast_stmt_fields(type(n)):
                stack.extend(getattr(n, f))


def _own_size_uses(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Attributes of ``self`` an init-family method uses in a size position
    (``_size_uses``, any keyword counting)."""
    args = fn.args.args
    self_name = args[0].arg if args else "self"
    out: set[str] = set()

    def hit(e: ast.AST) -> None:
        if isinstance(e, ast.Attribute) and ast_dotted(e.value) == self_name:
            out.add(e.attr)

    for n in ast_nodes_no_nested(fn.body):
        if isinstance(n, ast.BinOp) and isinstance(n.op, _AST_ARITH):
            hit(n.left)
            hit(n.right)
        elif isinstance(n, ast.Call):
            leaf = (ast_dotted(n.func) or "").rsplit(".", 1)[-1]
            for k in n.keywords:
                hit(k.value)
            if leaf in _SIZE_CALLS:
                for a in n.args:
                    v = a.value if isinstance(a, ast.Starred) else a
                    for e in v.elts if isinstance(v, (ast.Tuple, ast.List)) else (v,):
                        hit(e)
    return out


def _factory_call(expr: ast.AST | None) -> list[str]:
    """Method names ``expr`` may call as an implementation factory:
    ``x.m(...)`` or ``cast(T, x.m(...))``."""
    if isinstance(expr, ast.Call) and ast_dotted(expr.func) in _CAST:
        return [m for a in [*expr.args, *(k.value for k in expr.keywords)] for m in _factory_call(a)]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        return [expr.func.attr]
    return []


@memo_on_tree
def sentinel_sites(tree: ast.Module) -> dict[str, Any]:
    """``own``: class qualname → self attributes its ``__init__`` family uses
    as sizes; ``named``: capitalised callees (as written) assigned in functions;
    ``factories``: method names whose result is called and assigned (memoised
    on the tree: the ast gate and the collector share one parse)."""
    own: dict[str, list[str]] = {}
    named: set[str] = set()
    factories: set[str] = set()
    typed: set[str] = set()

    def constructions(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        fvars: dict[str, list[str]] = {}
        calls: list[ast.Call] = []
        annotated: list[tuple[ast.Call, ast.expr]] = []
        for n in _stmts_no_nested(fn.body):
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, ast.AnnAssign) and n.value is not None:
                targets = [n.target]
            else:
                continue
            names = [d for d in map(ast_dotted, targets) if d]
            if not names:
                continue
            made = _factory_call(n.value)
            for m in made:
                for d in names:
                    fvars.setdefault(d, []).append(m)
            if isinstance(n.value, ast.Call):
                calls.append(n.value)
                if isinstance(n, ast.AnnAssign):
                    annotated.append((n.value, n.annotation))
            if made and isinstance(n.value, ast.Call) and n.value.args:
                # a cast of a factory's result: the class it names
                typed.update(_type_names(n.value.args[0]))
        # an annotated construction from a factory's result (the statements
        # come in any order: the factory variables are all known here)
        for call, annotation in annotated:
            if _factory_call(call) or _factory_call(call.func) or ast_dotted(call.func) in fvars:
                typed.update(_type_names(annotation))
        for call in calls:
            factories.update(_factory_call(call.func))
            callee = ast_dotted(call.func)
            if callee is None:
                continue
            factories.update(fvars.get(callee, ()))
            if callee.rsplit(".", 1)[-1][:1].isupper():
                named.add(callee)

    def visit(body: Sequence[ast.stmt], prefix: str, cls: ast.ClassDef | None) -> None:
        stack = list(body)
        while stack:
            s = stack.pop()
            if isinstance(s, ast.ClassDef):
                qual = f"{prefix}{s.name}"
                visit(s.body, qual + ".", s)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                constructions(s)
                if cls is not None and s.name in _INIT_FAMILY:
                    used = _own_size_uses(s)
                    if used:
                        own.setdefault(prefix[:-1], []).extend(sorted(used))
                visit(s.body, f"{prefix}{s.name}.", None)
            else:
                for name in ("body", "orelse", "finalbody"):
                    stack.extend(getattr(s, name, ()) or ())
                for h in getattr(s, "handlers", ()):
                    stack.extend(h.body)
                for c in getattr(s, "cases", ()):
                    stack.extend(c.body)

    visit(tree.body, "", None)
    del visit  # (a recursive closure is a reference cycle: see engine._scan_job)
    out = {"own": own, "named": sorted(named), "factories": sorted(factories)}
    if typed and factories:
        out["typed"] = sorted(typed)
    return out


_NAME_IN_STRING = re.compile(r"[A-Za-z_][\w.]*")


def _type_names(expr: ast.AST) -> set[str]:
    """Every dotted name in a type expression (``type[C]``, ``"C"``,
    ``Optional[C]``): a superset of the class the rule reads from it."""
    out: set[str] = set()
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            d = ast_dotted(node)
            if d:
                out.add(d)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.update(_NAME_IN_STRING.findall(node.value))
    return out


# -- what the ast readers read -------------------------------------------------
# ``sentinel_sites`` records, per function, the assignments of a capitalised
# call, the method calls whose result is called (of which the facts gate
# keeps the configured ``factory-methods``) and, per class, what an
# ``__init__``-family method uses as a size, qualified through the module's
# imports. So this rule's ast readers (its gate, ``SentinelSiteFacts``) and
# its check read only the top-level statements whose code holds an
# ``import``, an ``__init__``/``__post_init__``/``__new__``, an ``=`` before
# a (dotted) capitalised name called, or a configured factory method's name,
# found on the strings-and-comments skeleton; the other statements' lines are
# blanked before the file is compiled or parsed (``Rule.ast_scope``). Code
# with a character outside ASCII (an identifier the compiler normalises, a
# capital the pattern would not know) is read whole. The scan's readers
# also leave out the methods of those classes whose code holds none of
# these (``_scan_scope``).
# an ``=`` before a (dotted) capitalised name called (led by the ``=``)
_ASSIGNED_CAPITAL = re.compile(r"=[\s(\\]*(?:\w+[\s\\]*\.[\s\\]*)*[A-Z]\w*[\s\\]*\(").finditer


def _scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """The top-level regions this rule's ast readers read (None: all)."""
    regions = top_level_regions(text)
    if regions is None:
        return None
    sk = skeleton_to(text, len(text))
    if not sk.isascii():
        return None
    factories = options.get("SHD201", {}).get("factory-methods", _DEFAULT_FACTORIES)
    # (a word found inside a longer one only keeps one statement more)
    kept = set(regions_holding(text, ("import", "__init__", "__post_init__", "__new__", *factories), sk) or ())
    kept.update(regions[k] for k in regions_at(regions, (m.start() for m in _ASSIGNED_CAPITAL(sk))))
    return sorted(kept)


def _factories(options: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(options.get("SHD201", {}).get("factory-methods", _DEFAULT_FACTORIES))


@memo_last_text_under(_factories)
def _scan_scope(text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
    """``_scope``, and in its classes only the statements ``sentinel_sites``
    can take something from: what :func:`sentinel_sites` reads of a method
    is a construction assigned (``= Name(`` or a factory's result), the
    sizes an ``__init__``-family method uses, and the imports that qualify
    names; a method whose code holds none of those words (nested
    functions included) adds nothing, so its lines are left out of the
    compile (``linter.facts.scoped_tree`` hands the other readers of a
    file compiled with them the class without them too). Every other
    statement of a class body is kept; a class whose every statement is
    such a method is kept whole. Read by the scan's readers only
    (``scan_scope``): the libcst check reads the classes whole. (The gate
    and the collector of one text ask in turn: the answer is kept.)"""
    spans = _scope(text, options)
    if spans is None:
        return None
    sk = skeleton_to(text, len(text))
    words = ("import", "__init__", "__post_init__", "__new__", *_factories(options))
    return narrow_classes(
        sk,
        spans,
        lambda s, e: any(sk.find(w, s, e) >= 0 for w in words) or next(_ASSIGNED_CAPITAL(sk, s, e), None) is not None,
    )


class SentinelSiteFacts(FactCollector):
    """Per module, what the SHD201 facts gate needs (see
    :func:`sentinel_sites`). Read only by the gate."""

    name = "sentinel_sites"
    # 2: ``typed``, the names a cast or an annotation gives a factory's result;
    # 3: only the top-level statements in ``_scope``; (still 3: the methods
    # ``_scan_scope`` leaves out add only factories nobody configured and
    # casts of their results, which no configuration reads)
    version = 3
    needles = _SITE_NEEDLES

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        # always something for a file the text gate lets in, so the facts
        # gate can tell "no site here" from "not collected"
        sites = sentinel_sites(tree)
        if sites["named"] or sites.get("typed"):
            imports = imports_from_ast(tree, module, path)
            for key in ("named", "typed"):
                if sites.get(key):
                    sites = {**sites, key: sorted({qualify(n, module, imports) for n in sites[key]})}
        return sites


@dataclass(frozen=True)
class SentinelAttr:
    """An attribute a class leaves at a sentinel, with where that happens and
    where the normal path resolves it."""

    attr: str
    value: str
    origin: ClassRef
    init_span: tuple[int, int, int, int]
    init_where: str
    resolvers: tuple[Resolver, ...]
    late_methods: tuple[str, ...]


@dataclass
class Construction:
    call: cst.Call
    target: str
    classes: tuple[str, ...]
    via: str
    func: str
    attrs: dict[str, SentinelAttr] = field(default_factory=dict)
    # the classes are those below a ``cast(type[Base], ...)`` of a factory's
    # result: any of them may arrive, those keeping a sentinel are reported
    cast: bool = False


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


class UnresolvedSentinelReachesImpl(Rule):
    """## What it finds
    A direct construction of a class that leaves a size or rank attribute
    (`dcp_world_size`, `sp_rank`, `num_kv_splits`, ...) at a "not resolved
    yet" sentinel (`-1`, `None`) when the project's normal path (a wrapper
    that also constructs the class) resolves it right after construction and
    this construction site does neither. The construction is found by name
    (through imports, including subclasses in other files that inherit the
    sentinel) or through an implementation factory
    (`impl_cls = backend.get_impl_cls(); self.impl = impl_cls(...)`).
    Also reported: such an attribute of a directly constructed object used as
    a size (arithmetic, `range`, a shape, a `*_world_size=` keyword) in
    another method with no comparison against the sentinel, and a class that
    uses its own sentinel attribute as a size in `__init__` before anything
    could have resolved it.

    A *resolver* is code that tests `obj.attr` against the sentinel
    (`== -1`, `is None`, `< 0`) and assigns `obj.attr` in that branch; it is
    the normal path when its class (or function) also constructs the class
    or calls the implementation factory. A factory's result cast to a base
    class (`cast(type[MLAAttentionImpl], backend.get_impl_cls())`) may be any
    class of the factory below that base: reported when some of them keep
    the sentinel, even if others resolve it (the seed's Kimi-K3 model).
    Deliberately left out, for
    precision: a class that resolves the attribute itself (`__init__`,
    `__post_init__`, `__new__`, or an `assert attr > 0`); neutral defaults
    (`1`, `0`); sentinels nobody tests for (`fixed_split_size = -1` meaning
    "off"); `None` fields that a later phase fills in without constructing
    the object (metadata and config dataclasses); a factory whose possible
    classes disagree (some resolve the attribute) unless an annotation or a
    typed receiver narrows it; constructions that
    are returned or passed on rather than kept (the caller owns
    resolution); uses of the attribute on objects of unknown provenance
    (the impl's own `forward` relies on the wrapper's contract). Any
    comparison, assertion, assignment, `setattr`, normaliser call or late
    resolver method (`impl.bind_cp_group(...)`) on the object in the
    constructing function counts as handling it. Files are only parsed when
    they mention `get_impl_cl`, call an `*Impl`/`*ImplBase` class, or set a
    size/rank attribute to a sentinel, in any layout (a raw-text gate, blind
    to options and to the other files: in a file with none of these, a
    direct construction of a class named otherwise, a construction through a
    custom factory, or a subclass sizing with a sentinel it inherits from
    another file's class is missed), and when, with the effective
    options, a class the file constructs (by name, through imports) or
    defines (and sizes with in `__init__`) keeps a sentinel that the normal
    path resolves, or the file calls the result of one of `factory-methods`
    and some code of the project may resolve such an attribute. A test of
    an object named `self` or `cls` is not a resolver (the class settling
    its own attribute, in a closure of its method: no construction elsewhere
    can skip it).

    ## Why it breaks
    The sentinel is a private contract between the implementation and its
    usual wrapper. A model that builds the implementation itself (to fuse a
    layer, to skip the wrapper's overhead) inherits the sentinel, and the
    kernel receives `cp_world_size=-1`: with context parallelism *disabled*
    the FlashAttention/MLA path is handed invalid CP metadata and crashes or
    computes garbage, only for that model and only on the platform whose code
    path constructs directly.

    ## Example
    ```python
    impl_cls = self.attn_backend.get_impl_cls()
    self.impl = impl_cls(num_heads=n, head_size=d, scale=s)   # SHD201
    ```

    ## Fix
    Resolve or normalise right after construction, as the wrapper does:
    ```python
    self.impl = impl_cls(num_heads=n, head_size=d, scale=s)
    if getattr(self.impl, "dcp_world_size", -1) < 1:
        self.impl.dcp_world_size = 1
        self.impl.dcp_rank = 0
    ```
    or construct through the wrapper, or make the class resolve the attribute
    itself (in `__init__`/`__new__`, then no construction site can forget).

    ## Options
    - `attribute-patterns` (list of globs, default `["*world_size", "*rank",
      "*_size", "num_*"]`): attribute names that count as sizes and ranks.
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

    The prefilter's facts gate applies all of these (configured names and
    values work); only its raw-text gate is blind to them (see above): with
    custom `factory-methods` or `impl-class-patterns`, a file is analysed
    only when it also mentions `get_impl_cl`, calls an `*Impl(`/`*ImplBase(`
    name, or sets a size/rank-named attribute to `-N` (or `self.<x> = None`).
    Its `ast` gate and the check then read only the top-level statements
    (a class, a function, a block) that hold an `import`, an
    `__init__`/`__post_init__`/`__new__`, an assignment of a call to a
    capitalised name, or a configured `factory-methods` name (the gate, of
    those classes, only the methods that hold one).
    """

    code = "SHD201"
    name = "unresolved-sentinel-reaches-impl"
    summary = "A class is constructed directly while a sentinel size/rank attribute its wrapper resolves stays unresolved"
    severity = Severity.ERROR
    facts = ("sentinels", "sentinel_outline", "sentinel_sites")
    tags = ("correctness", "context-parallel")
    # The facts decide, but candidate() only sees text, so it asks for what
    # a finding needs under the default options: a factory call, a call of an
    # ``*Impl``/``*ImplBase`` class, or a sentinel size/rank attribute set in
    # this file (the class-local checks). A capitalised call alone would send
    # most files to libcst.
    needles = Needles(any_of=(("get_impl_cl", "Impl", "= -", "None"),))
    options = {
        "attribute-patterns": Option(
            ("*world_size", "*rank", "*_size", "num_*"), "list[str]", "Size/rank attribute names"
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
        "resolver-scope": Option("paired", "str", "paired | any | none"),
    }

    # its facts gate reads the ``sentinels`` facts of the modules a site may
    # reach (tenths of a second over vLLM): after the other rules' gates,
    # with the first of those reads done in the pool beforehand
    gate_cost = 1

    @classmethod
    def prefetch(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> Iterable[tuple[str, str]]:
        """The modules the facts gate reads first: this module (its own
        sites' classes), the module of each name constructed or cast to (the
        longest dotted prefix that is a module of the project), and the
        modules that may define a factory this file calls."""
        sites = facts.raw("sentinel_sites").get(module)
        lazy = facts.raw("sentinels")
        if not sites or not hasattr(lazy, "pending"):
            return ()
        out: set[str] = set()
        if sites.get("own"):
            out.add(module)
        for name in (*sites.get("named", ()), *sites.get("typed", ())):
            parts = name.split(".")
            for i in range(len(parts) - 1, 0, -1):
                mod = ".".join(parts[:i])
                if lazy.pending(mod):  # type: ignore[attr-defined]
                    out.add(mod)
                    break
        called = set(sites.get("factories", ())) & set(options["factory-methods"])
        if called:
            index = facts.index("sentinels")
            if isinstance(index, SentinelIndex):
                for f in sorted(called):
                    out.update(index.modules_defining(f))
        return [("sentinels", m) for m in sorted(out)]

    @classmethod
    def candidate(cls, text: str) -> bool:
        return _SITE_NEEDLES.match(text)

    @classmethod
    def ast_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scope(text, options)

    @classmethod
    def scan_scope(cls, text: str, options: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]] | None:
        return _scan_scope(text, options)

    @classmethod
    def candidate_tree(cls, tree: ast.Module, text: str) -> bool:
        # something constructed in a function (by a capitalised name or a
        # factory's result), or an ``__init__`` using its own attribute as a size
        sites = sentinel_sites(tree)
        return bool(sites["own"] or sites["named"] or sites["factories"])

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        sites = facts.raw("sentinel_sites").get(module)
        index = facts.index("sentinels")
        if sites is None or not isinstance(index, SentinelIndex):
            return True
        if options["resolver-scope"] not in ("paired", "any", "none"):
            return True  # the rule reports its configuration error
        view = _SentinelView.of(index, options)
        for qual, used in sites.get("own", {}).items():
            eff = view.effective(f"{module}.{qual}" if module else qual)
            if set(used) & set(eff):
                return True
        for name in sites.get("named", ()):
            q = index.resolve(name)
            if q is not None and view.effective(q):
                return True
        called = set(sites.get("factories", ())) & set(options["factory-methods"])
        if not called or not view.any_effective():
            return False
        # what the rule constructs from a factory's result: the factory's
        # family (a cast or a typed receiver only narrows it), or the class
        # a cast or an annotation names
        if any(view.effective(q) for f in sorted(called) for q in view.family(f)):
            return True
        for name in sites.get("typed", ()):
            q = index.resolve(name)
            if q is not None and view.effective(q):
                return True
        return False

    def __init__(self, ctx: Any, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        if self.opts["resolver-scope"] not in ("paired", "any", "none"):
            raise ValueError(
                f"resolver-scope must be 'paired', 'any' or 'none', got {self.opts['resolver-scope']!r}"
            )
        self.index: SentinelIndex = ctx.facts.index("sentinels")
        self._imports: dict[str, str] | None = None
        self._eff: dict[str, dict[str, SentinelAttr]] = {}
        self._real: dict[str, set[str]] = {}
        self._params: dict[str, str] = {}
        # per class being visited: self.<x> -> constructions stored there
        self._stored: list[dict[str, Construction]] = []
        # narrowings that came from a cast to a base class (see _factory_of)
        self._cast_families: set[tuple[str, ...]] = set()
        self._methods: list[list[cst.FunctionDef]] = []
        self._func_name = ""

    # -- facts -------------------------------------------------------------------
    @property
    def imports(self) -> dict[str, str]:
        if self._imports is None:
            self._imports = imports_from_cst(self.ctx.module, self.ctx.module_name, self.ctx.path)
        return self._imports

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
        for cname in mro:
            ref = self.index.classes[cname]
            data = ref.data
            for attr, methods in data.get("methods", {}).items():
                late.setdefault(attr, []).extend(methods)
            for attr in data.get("real", ()):
                decided.setdefault(attr, None)
            for attr, (value, span, where) in data.get("sentinel", {}).items():
                if attr in decided:
                    continue
                if not (self._is_sentinel(value) and name_matches(attr, self.opts["attribute-patterns"])):
                    decided[attr] = None
                    continue
                decided[attr] = SentinelAttr(attr, value, ref, tuple(span), where, (), ())
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
                attr, sa.value, sa.origin, sa.init_span, sa.init_where, resolvers, tuple(late.get(attr, ()))
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
                return True
            if call.startswith("."):
                continue
            target = self.index.resolve(call)
            if target is not None and any(c in mro for c in self.index.mro(target)):
                return True
        return False

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

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        stored = self._stored.pop()
        methods = self._methods.pop()
        if stored:
            for fn in methods:
                self._check_uses(fn, stored, exclude_fn=True)
        self._check_own_init(original_node, methods)

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

    def _constructions(self, fn: cst.FunctionDef) -> list[Construction]:
        factory_vars: dict[str, tuple[str, tuple[str, ...] | None]] = {}
        out: list[Construction] = []
        p = fn.params
        self._params = {}
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            if param.annotation is not None:
                t = self._type_name(param.annotation.annotation)
                if t:
                    self._params[param.name.value] = t
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
            if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in _ARITH:
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
                    elif kw is None and leaf in _SIZE_CALLS:
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
                    notes=self._notes(target, {attr: sa}),
                )

    def _check_own_init(self, cls: cst.ClassDef, methods: Sequence[cst.FunctionDef]) -> None:
        """A class using its own sentinel attribute as a size in ``__init__``
        (nothing outside can have resolved it yet)."""
        qual = ".".join([*self.ctx.scope_names[:-1], cls.name.value]) if self.ctx.scope_names else cls.name.value
        qname = f"{self.ctx.module_name}.{qual}" if self.ctx.module_name else qual
        eff = self.effective(qname)
        if not eff:
            return
        for fn in methods:
            if fn.name.value not in _INIT_FAMILY:
                continue
            params = fn.params.params
            self_name = params[0].name.value if params else "self"
            for node, attr, how in self._size_uses(fn, self_name, eff):
                sa = eff[attr]
                self.report(
                    node,
                    f"`{self_name}.{attr}` is used as a size ({how}) in `{cls.name.value}.{fn.name.value}` "
                    f"while it still holds the sentinel {sa.value}; it is only resolved later, outside the class",
                    notes=self._notes(self_name, {attr: sa}),
                )

    # -- reporting ---------------------------------------------------------------
    @staticmethod
    def _ranked(attrs: Mapping[str, SentinelAttr]) -> list[Resolver]:
        """Resolvers of ``attrs``, one per site: exact sentinel tests first
        (the normal path), then assignments after construction, then
        normalisers (``< 1``) written by other direct constructors."""
        seen: dict[tuple[str, tuple[int, ...]], Resolver] = {}
        origin = next(iter(attrs.values())).origin.module.split(".") if attrs else []
        for sa in attrs.values():
            for r in sa.resolvers:
                seen.setdefault((r.path, r.span), r)

        def near(r: Resolver) -> int:
            n = 0
            for a, b in zip(origin, r.module.split(".")):
                if a != b:
                    break
                n += 1
            return n

        def rank(r: Resolver) -> tuple[int, int, str, int]:
            kind = 0 if r.test and r.test not in ("<1", "<=0") else 1 if not r.test else 2
            return (kind, -near(r), r.path, r.span[0])

        return sorted(seen.values(), key=rank)

    @staticmethod
    def _origins(attrs: Mapping[str, SentinelAttr]) -> list[SentinelAttr]:
        """One initialisation site per class and method."""
        seen: dict[tuple[str, str], SentinelAttr] = {}
        for sa in attrs.values():
            seen.setdefault((sa.origin.name, sa.init_where), sa)
        return list(seen.values())

    def _notes(self, target: str, attrs: Mapping[str, SentinelAttr]) -> list[Note]:
        notes: list[Note] = []
        for sa in attrs.values():
            notes.append(
                Note(
                    f"`{sa.attr}` is initialised to {sa.value} in {sa.origin.qual} ({sa.init_where})",
                    sa.origin.path,
                    Span(*sa.init_span),
                )
            )
        for r in self._ranked(attrs)[:2]:
            what = f"tests `{r.obj}.{r.attr}` against the sentinel" if r.test else f"assigns `{r.obj}.{r.attr}`"
            notes.append(Note(f"the normal path {what} in {r.func}", r.path, Span(*r.span)))
        notes.append(Note(self._suggestion(target, attrs)))
        return notes

    @staticmethod
    def _neutral(attr: str) -> str:
        return "0" if attr.endswith("rank") else "1"

    def _suggestion(self, target: str, attrs: Mapping[str, SentinelAttr]) -> str:
        first = next(iter(attrs.values()))
        if first.value == "None":
            test = f"{target}.{first.attr} is None"
        else:
            bound = "0" if first.attr.endswith("rank") else "1"
            test = f'getattr({target}, "{first.attr}", {first.value}) < {bound}'
        body = "; ".join(f"{target}.{a} = {self._neutral(a)}" for a in attrs)
        return (
            f"fix: resolve or normalise right after construction, e.g. `if {test}: {body}` "
            "(or the real group size/rank), or construct it through the wrapper that resolves it"
        )

    def _where(self, attrs: Mapping[str, SentinelAttr]) -> tuple[str, str]:
        origins = ", ".join(
            f"{sa.origin.qual}{'' if sa.init_where == 'class body' else '.' + sa.init_where} "
            f"({sa.origin.path}:{sa.init_span[0]})"
            for sa in self._origins(attrs)
        )
        ranked = self._ranked(attrs)
        resolved = (
            f"; the normal path resolves {'it' if len(attrs) == 1 else 'them'} in {ranked[0].func} "
            f"({ranked[0].path}:{ranked[0].span[0]})"
            if ranked
            else ""
        )
        return origins, resolved

    def _report_construction(self, c: Construction) -> None:
        names = ", ".join(f"`{a}`" for a in c.attrs)
        values = "/".join(sorted({sa.value for sa in c.attrs.values()}))
        origins, resolved = self._where(c.attrs)
        kind = c.classes[0].rsplit(".", 1)[-1] if len(c.classes) == 1 else f"one of {len(c.classes)} classes"
        one = len(c.attrs) == 1
        self.report(
            c.call,
            f"`{c.target}` is constructed directly via `{c.via}` ({kind}), so {names} "
            f"{'stays' if one else 'stay'} at the sentinel {values} from {origins}{resolved}; "
            f"nothing here resolves or checks {'it' if one else 'them'} before `{c.target}` is used",
            notes=self._notes(c.target, c.attrs),
        )


class _SentinelView:
    """The rule's ``effective`` computation without a file: what the facts
    gate asks, per index and options (memoised on the index, which lives as
    long as the merged facts)."""

    _counts = UnresolvedSentinelReachesImpl._counts
    _is_sentinel = UnresolvedSentinelReachesImpl._is_sentinel

    def family(self, factory: str) -> list[str]:
        return self.index._cached(  # type: ignore[no-any-return]
            "family" + self._key, factory, lambda: UnresolvedSentinelReachesImpl.family(self, factory)  # type: ignore[arg-type]
        )

    def __init__(self, index: SentinelIndex, opts: Mapping[str, Any]) -> None:
        self.index = index
        self.opts = opts
        # (memoised by the index instead, which replays the lazy reads
        # behind an answer into each file's recording)
        self._eff: dict[str, dict[str, SentinelAttr]] = _NoMemo()
        self._real: dict[str, set[str]] = {}
        self._any: bool | None = None
        self._key = repr(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in opts.items()))

    def effective(self, qualname: str) -> dict[str, SentinelAttr]:
        return self.index._cached(  # type: ignore[no-any-return]
            "eff" + self._key, qualname, lambda: UnresolvedSentinelReachesImpl.effective(self, qualname)  # type: ignore[arg-type]
        )

    @classmethod
    def of(cls, index: SentinelIndex, opts: Mapping[str, Any]) -> _SentinelView:
        views: dict[str, _SentinelView] = index.__dict__.setdefault("_shd201_views", {})
        key = repr(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in opts.items()))
        if key not in views:
            views[key] = cls(index, dict(opts))
        return views[key]

    def any_effective(self) -> bool:
        """Whether some class of the project may keep a sentinel its normal
        path resolves (what a factory could hand out): a gate's superset,
        read from the attributes some code may resolve (with
        ``resolver-scope = "none"`` every sentinel counts: always)."""
        if self._any is None:
            if self.opts["resolver-scope"] == "none":
                self._any = True
            else:
                pats = self.opts["attribute-patterns"]
                self._any = any(name_matches(a, pats) for a in self.index.resolver_attrs())
        return self._any


class _NoMemo(dict):  # type: ignore[type-arg]
    """A memo that keeps nothing."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass
