"""Phase 2, the check: parse one text with libcst and run the rules over it
in one batched traversal; turn what they report into diagnostics (positions,
fingerprints, fixes as text edits). Nothing here prints."""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from linter.config import Config
from linter.facts import ProjectFacts
from linter.reparse import ParseMemo
from linter.scan import Cut, Gate, check_source
from linter.source import content_hash, one_line, shd000
from linter.types import Diagnostic, Edit, Fix, InternalError, Span

if TYPE_CHECKING:
    from linter.rule import PendingFix, Rule

def parse_module_unvalidated(text: str) -> Any:
    """``libcst.parse_module`` without re-validating every node the parser
    builds (``CSTNode.__post_init__`` runs ``_validate``, which guards trees
    built by hand; the parser's output satisfies it by construction, and
    libcst's own source notes the cost). About a fifth of the parse time;
    the tree is the same (tests/test_positions.py compares)."""
    import libcst as cst
    from libcst._nodes.base import CSTNode

    saved = CSTNode.__dict__.get("__post_init__")
    if saved is None:  # a libcst without the hook: parse as usual
        return cst.parse_module(text)
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = saved  # type: ignore[method-assign]


def _no_validation(self: Any) -> None:
    return None


_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


class _Guard:
    """Wraps a rule's visitor methods so that a crash in one rule on one file is
    recorded and switches that rule off for the file, while the others go on."""

    def __init__(self, rule: Rule, errors: list[InternalError], path: str) -> None:
        self.rule = rule
        self.errors = errors
        self.path = path
        self.dead = False

    def get_visitors(self) -> Mapping[str, Callable[[Any], Any]]:
        # libcst finds a visitor's methods with inspect.getmembers (~8 ms a
        # rule a file); which names they are is a property of the class
        cls = type(self.rule)
        names = _VISITOR_NAMES.get(cls)
        if names is None:
            names = _VISITOR_NAMES[cls] = tuple(sorted(self.rule.get_visitors()))
        return {name: self._wrap(getattr(self.rule, name)) for name in names}

    def _wrap(self, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def call(node: Any) -> Any:
            if self.dead:
                return None
            try:
                return fn(node)
            except Exception as exc:
                self.dead = True
                self.errors.append(_internal(self.path, self.rule.code, exc))
                return None

        return call


def _internal(path: str, code: str | None, exc: BaseException) -> InternalError:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return InternalError(path, code, f"{type(exc).__name__}: {describe(exc)}{where}")


def describe(exc: BaseException) -> str:
    """An exception's message on one line of at most 300 characters; never
    raises (``KeyError(node)`` formats the node, whose repr may recurse as
    deep as the code)."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - any failure to format is reported as such
        return "(message could not be formatted)"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def check_text(
    text: str,
    relpath: str,
    module_name: str,
    rule_classes: Sequence[type[Rule]],
    config: Config,
    facts: ProjectFacts,
    gates: Sequence[Gate] | None = None,
    cut: Cut | None = None,
    tree: ast.Module | None = None,
    memo: ParseMemo | None = None,
) -> tuple[list[Diagnostic], list[InternalError]]:
    """Parse ``text`` once with libcst (only the regions the rules' declared
    needles admit, with ``gates``: :func:`linter.scan.check_source`) and run
    ``rule_classes`` over it in one batched traversal. Suppressions are not
    applied here. ``tree``: the text's ``ast``, if the caller has it (what
    ``RuleContext.ast_tree`` gives the rules); ``memo``: the last parse of
    the same document, which an edit's parse starts from (the editor)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    errors: list[InternalError] = []
    source = check_source(text, relpath, gates, cut) if gates is not None else text
    try:
        module = parse_module_unvalidated(source) if memo is None else memo.parse(source, tree, parse_module_unvalidated)
    except cst.ParserSyntaxError as exc:
        # CPython places syntax errors better than libcst and says it better
        try:
            compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as py:
            line, col = py.lineno or 1, max((py.offset or 1) - 1, 0)
            return [shd000(relpath, line, col, f"syntax error: {py.msg}")], errors
        except (ValueError, RecursionError, MemoryError):
            pass
        msg = f"libcst cannot parse this file: {exc.message}"
        return [shd000(relpath, exc.raw_line, exc.raw_column, msg)], errors
    except (RecursionError, MemoryError, ValueError) as exc:
        return [shd000(relpath, 1, 0, f"cannot parse the file: {type(exc).__name__}")], errors

    from linter.rule import RuleContext

    ctx = RuleContext(path=relpath, module_name=module_name, text=text, module=module, facts=facts, _ast=tree)
    rules: list[Rule] = []
    for cls in rule_classes:
        try:
            rules.append(cls(ctx, config.options_for(cls.code)))
        except Exception as exc:
            errors.append(_internal(relpath, cls.code, exc))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    guards = [_Guard(r, errors, relpath) for r in rules]
    scoped = (cst.FunctionDef, cst.ClassDef)

    scopes: list[tuple[cst.CSTNode, str]] = []

    def before(node: cst.CSTNode) -> None:
        if type(node) in scoped:
            ctx.scope_names.append(node.name.value)  # type: ignore[attr-defined]
            ctx.scope_nodes.append(node)
            scopes.append((node, ".".join(ctx.scope_names)))

    def after(node: cst.CSTNode) -> None:
        if type(node) in scoped:
            ctx.scope_names.pop()
            ctx.scope_nodes.pop()

    with ExitStack() as stack:
        for r, g in zip(rules, guards):
            if r.get_inherited_dependencies():
                try:
                    stack.enter_context(r.resolve(wrapper))
                except Exception as exc:
                    g.dead = True
                    errors.append(_internal(relpath, r.code, exc))
        live = [g for g in guards if not g.dead]
        try:
            fast_visit_batched(module, live, before, after)
        except Exception as exc:  # the traversal itself failed
            errors.append(_internal(relpath, None, exc))
        for g in guards:
            if hasattr(g.rule, "finish") and not g.dead:
                try:
                    g.rule.finish()  # type: ignore[attr-defined]
                except Exception as exc:
                    g.dead = True
                    errors.append(_internal(relpath, g.rule.code, exc))

    dead = {g.rule.code for g in guards if g.dead}
    reports = [r for r in ctx.reports if r.code not in dead]
    if not reports:
        return [], errors
    from linter.positions import positions as node_positions
    from linter.positions import report_positions

    # positions of the definitions the reports were made in, each generated
    # alone (a class's method, else the top-level definition), and of the
    # statements up to the last one holding another reported node; a node
    # asked for beyond them (a fix's edit) gets them all
    positions = report_positions(module, source, [(r.node, r.top, r.member) for r in reports])
    complete = False
    by_code = {cls.code: cls for cls in rule_classes}
    out: list[Diagnostic] = []
    counts: dict[tuple[str, str, str], int] = {}

    def span_of(node: cst.CSTNode) -> Span:
        nonlocal positions, complete
        got = positions.get(node)
        if got is None and not complete:
            positions, complete = node_positions(module), True
            got = positions.get(node)
        if got is None:
            raise KeyError(node)
        return Span(*got)

    pending = []
    for rep in reports:
        try:
            pending.append((span_of(rep.node), rep))
        except KeyError:
            errors.append(InternalError(relpath, rep.code, "reported a node that is not in the module"))
    pending.sort(key=lambda t: (t[0].line, t[0].column, t[1].code))
    # The enclosing scope of a finding comes from where it is, not from when it
    # was reported: rules that report from leave_Module or finish() get the
    # same fingerprints as rules that report during the traversal.
    # (a scope without a position starts after every reported node: it
    # cannot hold one)
    scope_spans = [(Span(*positions[n]), q) for n, q in scopes if n in positions] if scopes else []

    def scope_at(span: Span) -> str:
        best, best_q = None, ""
        for sp, q in scope_spans:
            if (sp.line, sp.column) <= (span.line, span.column) and (span.line, span.column) < (
                sp.end_line,
                sp.end_column,
            ):
                if best is None or (sp.line, sp.column) >= (best.line, best.column):
                    best, best_q = sp, q
        return best_q

    for span, rep in pending:
        scope = scope_at(span) if scope_spans else ""
        cls = by_code[rep.code]
        norm = " ".join(module.code_for_node(rep.node).split())[:400]
        key = (rep.code, scope, norm)
        idx = counts.get(key, 0)
        counts[key] = idx + 1
        try:
            fix = _convert_fix(rep.fix, module, span_of) if rep.fix else None
        except Exception as exc:
            errors.append(_internal(relpath, rep.code, exc))
            fix = None
        out.append(
            Diagnostic(
                code=rep.code,
                name=cls.name,
                severity=rep.severity or cls.severity,
                path=relpath,
                span=span,
                message=one_line(rep.message),
                notes=rep.notes,
                fix=fix,
                fingerprint=content_hash(rep.code, scope, norm, str(idx)),
            )
        )
    return out, errors


# Fields that hold only tokens and whitespace: no rule visits what is in them
# (fast_visit_batched falls back to libcst's own traversal if one ever does).
_TRIVIA_FIELDS = frozenset(
    {"lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon",
     "newline", "leading_lines", "lines_after_decorators", "header", "footer", "dot",
     "equal", "colon", "asynchronous", "whitespace_before", "whitespace_after",
     "whitespace_before_colon", "whitespace_after_colon", "trailing_whitespace",
     "whitespace_after_def", "whitespace_after_name", "whitespace_before_params",
     "whitespace_after_class", "whitespace_after_arg", "whitespace_after_star",
     "whitespace_after_star_arg", "whitespace_after_at", "whitespace_after_assert",
     "whitespace_after_import", "whitespace_after_from", "whitespace_before_import",
     "whitespace_after_in", "whitespace_before_in", "whitespace_after_for",
     "whitespace_after_if", "whitespace_before_if", "whitespace_after_else",
     "whitespace_before_else", "whitespace_after_lambda", "whitespace_after_await",
     "whitespace_after_return", "whitespace_after_yield", "whitespace_after_del",
     "whitespace_after_with", "whitespace_after_while", "whitespace_after_except",
     "whitespace_after_as", "whitespace_before_as", "whitespace_before_expression",
     "whitespace_after_expression", "whitespace_after_global", "whitespace_after_nonlocal",
     "whitespace_after_raise", "whitespace_after_match", "whitespace_after_case",
     "whitespace_after_type", "whitespace_after_async", "whitespace_before_walrus",
     "whitespace_after_walrus", "whitespace_before_from", "whitespace_before_value"}
)
_TRIVIA_TYPES = frozenset(
    {"Comma", "Semicolon", "Colon", "Dot", "AssignEqual", "LeftParen", "RightParen",
     "LeftSquareBracket", "RightSquareBracket", "LeftCurlyBrace", "RightCurlyBrace",
     "Newline", "EmptyLine", "TrailingWhitespace", "SimpleWhitespace",
     "ParenthesizedWhitespace", "Comment", "Asynchronous"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        import dataclasses

        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _TRIVIA_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[cls] = names
    return names


def fast_visit_batched(
    module: Any,
    visitors: Sequence[Any],
    before: Callable[[Any], None],
    after: Callable[[Any], None],
) -> None:
    """libcst's batched traversal without its cost: libcst's ``visit`` rebuilds
    every node's children through ``with_changes`` machinery even for
    read-only visitors (a third of a big file's check time). This walks the
    dataclass fields directly and calls the same ``visit_X`` / ``leave_X`` /
    ``visit_X_attr`` / ``leave_X_attr`` methods in the same order, skipping
    fields that only hold tokens and whitespace. A visit method's return value
    is ignored, as in libcst's batched mode."""
    import libcst as cst

    from linter.syntax import NODE, SEQUENCE, field_kind  # (imports libcst)

    table: dict[str, list[Callable[[Any], Any]]] = {}
    for v in visitors:
        for name, fn in v.get_visitors().items():
            table.setdefault(name, []).append(fn)
    wanted = {name.split("_", 2)[1] for name in table}
    if wanted & _TRIVIA_TYPES:
        cst.visit_batched(module, visitors, before_visit=before, after_leave=after)
        return
    if wanted <= _DEF_LEVEL_TYPES and not any(name.count("_") > 1 for name in table):
        _walk_definitions(module, table, before, after)
        return
    visit_of: dict[type, tuple[list[Any], list[Any], dict[str, tuple[list[Any], list[Any]]]]] = {}

    def plan(cls: type) -> tuple[list[Any], list[Any], dict[str, tuple[list[Any], list[Any]]]]:
        n = cls.__name__
        attrs = {}
        for f in _fields(cls):
            va, la = table.get(f"visit_{n}_{f}", []), table.get(f"leave_{n}_{f}", [])
            if va or la:
                attrs[f] = (va, la)
        p = (table.get(f"visit_{n}", []), table.get(f"leave_{n}", []), attrs)
        visit_of[cls] = p
        return p

    def walk(node: Any) -> None:
        cls = type(node)
        p = visit_of.get(cls) or plan(cls)
        before(node)
        for fn in p[0]:
            fn(node)
        attrs = p[2]
        for f in _fields(cls):
            hooks = attrs.get(f) if attrs else None
            if hooks:
                for fn in hooks[0]:
                    fn(node)
            v = getattr(node, f)
            kind = field_kind(type(v))
            if kind is NODE:
                walk(v)
            elif kind is SEQUENCE:
                for x in v:
                    if field_kind(type(x)) is NODE:
                        walk(x)
            if hooks:
                for fn in hooks[1]:
                    fn(node)
        for fn in p[1]:
            fn(node)
        after(node)

    walk(module)


# Visitors of only these node types (no ``visit_X_attr``) need no expression:
# a definition sits in a block of statements, never inside an expression.
_DEF_LEVEL_TYPES = frozenset({"Module", "FunctionDef", "ClassDef"})


def _walk_definitions(
    module: Any,
    table: Mapping[str, list[Callable[[Any], Any]]],
    before: Callable[[Any], None],
    after: Callable[[Any], None],
) -> None:
    """``fast_visit_batched`` for visitors of the module, functions and
    classes only: the same calls in the same order, entering only the nodes
    a definition can sit in (compound statements, blocks and their clauses);
    ``before``/``after`` see those nodes (all that the engine's scope
    tracking looks at)."""
    import libcst as cst

    holders = (
        cst.BaseCompoundStatement,
        cst.IndentedBlock,
        cst.Else,
        cst.ExceptHandler,
        cst.ExceptStarHandler,
        cst.Finally,
        cst.MatchCase,
    )
    hooks: dict[type, tuple[list[Any], list[Any]]] = {
        cst.Module: (table.get("visit_Module", []), table.get("leave_Module", [])),
        cst.FunctionDef: (table.get("visit_FunctionDef", []), table.get("leave_FunctionDef", [])),
        cst.ClassDef: (table.get("visit_ClassDef", []), table.get("leave_ClassDef", [])),
    }
    none: tuple[list[Any], list[Any]] = ([], [])

    def walk(node: Any) -> None:
        cls = type(node)
        visit, leave = hooks.get(cls, none)
        before(node)
        for fn in visit:
            fn(node)
        for f in _fields(cls):
            v = getattr(node, f)
            if isinstance(v, holders):
                walk(v)
            elif type(v) in (list, tuple):
                for x in v:
                    if isinstance(x, holders):
                        walk(x)
        for fn in leave:
            fn(node)
        after(node)

    walk(module)


def _convert_fix(pf: PendingFix, module: Any, span_of: Callable[[Any], Span]) -> Fix:
    edits: list[Edit] = []
    for old, new in pf.replacements:
        code = new if isinstance(new, str) else module.code_for_node(new)
        edits.append(Edit(span_of(old), code))
    for name in pf.add_imports:
        edit = _import_edit(module, name, span_of)
        if edit is not None:
            edits.append(edit)
    return Fix(pf.title, pf.applicability, tuple(edits))


def _import_edit(module: Any, name: str, span_of: Callable[[Any], Span]) -> Edit | None:
    """An edit adding ``import name`` after the module's leading imports (after
    the docstring and ``from __future__`` imports when there are no others), or
    ``None`` when the module already imports it at top level."""
    import libcst as cst

    last_import = None
    anchor = None
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in small):
                for s in small:
                    if isinstance(s, cst.Import):
                        for alias in s.names:
                            if alias.asname is None and module.code_for_node(alias.name) == name:
                                return None
                last_import = stmt
                continue
            if i == 0 and len(small) == 1 and isinstance(small[0], cst.Expr) and isinstance(
                small[0].value, (cst.SimpleString, cst.ConcatenatedString)
            ):
                anchor = stmt
                continue
        break
    target = last_import or anchor
    if target is None:
        line = 1
        for stmt in module.body[:1]:
            line = span_of(stmt).line
        return Edit(Span(line, 0, line, 0), f"import {name}\n")
    end = span_of(target).end_line + 1
    return Edit(Span(end, 0, end, 0), f"import {name}\n")
