"""The engine: files → prefilter → facts (map, merge) → check (map) → suppress.

Every function here returns plain data; nothing prints. The CLI, the flake8
plugin and the language server are thin layers over :class:`Engine`.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import io
import json
import multiprocessing
import os
import re
import tokenize
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linter._lazy import load_in_background
from linter.config import Config
from linter.facts import (
    FactCollector,
    FileLoader,
    LazyModules,
    ProjectFacts,
    mask_text,
    run_collector,
    scope_of,
    scoped_tree,
)
from linter.files import SourceFile, discover, module_name_of, project_files, relpath_of
from linter.registry import Registry, load_registry
from linter.suppression import apply_suppressions, parse_suppressions, unused_noqa
from linter.types import (
    Diagnostic,
    Edit,
    Fix,
    InternalError,
    RunResult,
    Severity,
    Span,
)

if TYPE_CHECKING:
    from linter.rule import PendingFix, Rule

# Below this many files the pool costs more than it saves.
POOL_MIN_FILES = 24
# The costly facts gates of at least this many files have their lazy facts
# computed in the pool beforehand (``Engine.prefetch_pairs``), when at least
# this many modules are to be read.
PREFETCH_MIN_FILES = 8
PREFETCH_MIN_PAIRS = 16
# libcst checks of at least this much source go to the pool even when few
# (~60 µs a line: 64 KB is about 0.1 s of work; a fork of the parent, which
# has libcst imported already, costs a few tens of ms)
HEAVY_CHECK_BYTES = 64 * 1024


# -- reading -----------------------------------------------------------------


def shd000(path: str, line: int, col: int, message: str) -> Diagnostic:
    span = Span(max(line, 1), max(col, 0), max(line, 1), max(col, 0) + 1)
    return Diagnostic(
        code="SHD000",
        name="unparsable-file",
        severity=Severity.ERROR,
        path=path,
        span=span,
        message=message,
        fingerprint=_hash("SHD000", path, message),
    )


def decode_source(data: bytes, relpath: str) -> tuple[str | None, Diagnostic | None]:
    """Bytes → text as Python would read it (PEP 263 cookie, BOM), or one
    SHD000 diagnostic saying why not."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return None, shd000(relpath, line, 0, "file contains NUL bytes; not Python source")
    # The common case without the tokenize machinery: no BOM and no
    # ``coding`` in the first two lines (where a PEP 263 cookie must be) is
    # UTF-8; anything else, or a file that then fails to decode, takes the
    # full path (and its messages).
    first = data.find(b"\n", data.find(b"\n") + 1) if b"\n" in data else len(data)
    if not data.startswith(b"\xef\xbb\xbf") and b"coding" not in data[: first if first >= 0 else len(data)]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text), None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, shd000(relpath, 1, 0, f"cannot determine the file's encoding: {exc}")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        return None, shd000(relpath, line, 0, f"cannot decode the file as {encoding}: {exc}")
    if text.startswith("\ufeff"):
        text = text[1:]
    # universal newlines, as Python's own reader does
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, None


def read_source(path: Path | str, relpath: str) -> tuple[str | None, Diagnostic | None]:
    try:
        # (unbuffered: one read of the whole file, half the CPU of
        # ``Path.read_bytes`` over a tree's small files)
        with open(path, "rb", buffering=0) as fh:
            data = fh.readall()
    except OSError as exc:
        return None, shd000(relpath, 1, 0, f"cannot read the file: {exc.strerror or exc}")
    return decode_source(data, relpath)


_LINE_BREAK_RUN = re.compile(r"[ \t]*(?:\r\n|\r|\n)\s*")


def one_line(message: str) -> str:
    """A finding's message on one line (code quoted from several lines
    keeps one space per line break): one finding per output line, as
    flake8-style consumers and CI annotations expect."""
    return _LINE_BREAK_RUN.sub(" ", message) if "\n" in message or "\r" in message else message


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


# -- phase 1: scan (read, hash, facts) ------------------------------------------


@dataclass
class ScanResult:
    relpath: str
    digest: str = ""
    error: Diagnostic | None = None
    # None: in the cache, not read (see ``fh``)
    facts: dict[str, Any] | None = field(default_factory=dict)
    # for checked files: the rules whose prefilter (text, then ast) passed
    rules: list[str] | None = None
    noqa: bool = False
    # per collector, a hash of this file's facts (what check results depend on)
    fh: dict[str, str] = field(default_factory=dict)


def facts_hash(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _has_tree_gate(rule: type[Rule]) -> bool:
    from linter.rule import Rule

    return getattr(rule.candidate_tree, "__func__", None) is not Rule.candidate_tree.__func__


def _has_facts_gate(rule: type[Rule]) -> bool:
    from linter.rule import Rule

    return getattr(rule.candidate_facts, "__func__", None) is not Rule.candidate_facts.__func__


def _text_gate(rule: type[Rule], text: str) -> bool:
    try:
        return bool(rule.candidate(text))
    except Exception:  # a broken gate lets the file through; the rule runs
        return True


def scan_text(
    text: str,
    relpath: str,
    module: str,
    collectors: Sequence[type[FactCollector]],
    rules: Sequence[type[Rule]] | None = None,
    syntax: bool = False,
    hashes: bool = True,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> ScanResult:
    """Hash the text, run the fact collectors whose needles match and, for a
    file being checked (``rules`` given), decide which rules need to see it:
    the text gate, then the rule's gate on CPython's ``ast`` when it has one.
    The ``ast`` is built at most once and only when something needs it (or,
    with ``syntax``, for every checked file), of the statements its readers
    read when each says which (``ast_scope``: the other lines blanked; each
    reader is handed its own statements); a syntax error it meets in a
    checked file is SHD000. A file it cannot parse has no ast facts; a file
    never compiled that a rule's text gate admits is parsed by libcst in the
    check phase, which reports SHD000 in turn. Without ``hashes`` (a run with
    no cache: nothing to key or validate) the content digest and the facts
    hashes are left empty; ``fh`` still names the collectors with facts."""
    res = ScanResult(relpath, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() if hashes else "")
    wanted = [c for c in collectors if c.needles.match(text)]
    cands = [r for r in rules if _text_gate(r, text)] if rules is not None else []
    gated = [r for r in cands if _has_tree_gate(r)]
    tree = None
    readers: list[Any] = [*gated, *(c for c in wanted if c.needs_ast)]
    scopes = {r: scope_of(r, text, options or {}, scan=True) for r in readers}
    if (syntax and rules is not None) or readers:
        if not (syntax and rules is not None) and all(s is not None for s in scopes.values()):
            # only the statements the readers read (``ast_scope``)
            spans = sorted(p for s in scopes.values() for p in s)  # type: ignore[union-attr]
            try:
                tree = compile(mask_text(text, spans), relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None  # the whole text tells what is wrong
        try:
            if tree is None:
                tree = compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as exc:
            tree = None
            wanted = [c for c in wanted if not c.needs_ast]
            if rules is not None:
                line, col = exc.lineno or 1, max((exc.offset or 1) - 1, 0)
                res.error = shd000(relpath, line, col, f"syntax error: {exc.msg}")
        except (ValueError, RecursionError, MemoryError) as exc:
            tree = None
            wanted = [c for c in wanted if not c.needs_ast]
            if rules is not None:
                res.error = shd000(relpath, 1, 0, f"cannot parse the file: {type(exc).__name__}")
    views: dict[Any, ast.Module] = {}

    def view(reader: Any) -> ast.Module:
        """The tree as ``reader`` sees it: one object per scope, so that
        readers of one scope share what they memoise on it."""
        spans = scopes.get(reader)
        key = None if spans is None else tuple(spans)
        got = views.get(key)
        if got is None:
            got = views[key] = scoped_tree(tree, text, spans)  # type: ignore[arg-type]
        return got

    if rules is not None:
        keep = []
        for r in cands:
            if tree is not None and r in gated:
                try:
                    if not r.candidate_tree(view(r), text):
                        continue
                except Exception:  # a broken gate lets the file through
                    pass
            keep.append(r.code)
        res.rules = keep
    for c in wanted:
        try:
            # a text collector always reads the text, even when an ast exists
            # for others: its facts must not depend on which gates ran
            data = c.collect(view(c) if c.needs_ast else None, text, module, relpath)  # type: ignore[arg-type]
        except Exception:  # a broken collector must not stop the run
            data = None
        if data is not None:
            res.facts[c.name] = data
            res.fh[c.name] = facts_hash(data) if hashes else ""
    return res


# -- phase 2: check one text ---------------------------------------------------


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
    return InternalError(path, code, f"{type(exc).__name__}: {exc}{where}")


def _check_source(text: str, relpath: str, rule_classes: Sequence[type[Rule]], config: Config) -> str:
    """What libcst parses for ``rule_classes``: when each reads only some
    top-level statements (``Rule.ast_scope``) and none can fix (a fix may
    look at the whole module, its imports say), ``text`` with the other
    lines blanked, provided the whole text compiles (a syntax error
    elsewhere is still reported); else ``text``. Positions are the same."""
    from linter.types import Fixability

    if not rule_classes or any(c.fixable != Fixability.NEVER for c in rule_classes):
        return text
    options = {c.code: config.effective_options(c) for c in rule_classes}
    spans: list[tuple[int, int]] = []
    for c in rule_classes:
        got = scope_of(c, text, options)
        if got is None:
            return text
        spans.extend(got)
    try:
        compile(text, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    return mask_text(text, sorted(spans))


def check_text(
    text: str,
    relpath: str,
    module_name: str,
    rule_classes: Sequence[type[Rule]],
    config: Config,
    facts: ProjectFacts,
) -> tuple[list[Diagnostic], list[InternalError]]:
    """Parse ``text`` once with libcst and run ``rule_classes`` over it in one
    batched traversal. Suppressions are not applied here."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    errors: list[InternalError] = []
    source = _check_source(text, relpath, rule_classes, config)
    try:
        module = parse_module_unvalidated(source)
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

    ctx = RuleContext(path=relpath, module_name=module_name, text=text, module=module, facts=facts)
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

    # positions of the top-level definitions the reports were made in, each
    # generated alone, and of the statements up to the last one holding
    # another reported node; a node asked for beyond them (a fix's edit)
    # gets them all
    positions = report_positions(module, source, [(r.node, r.top) for r in reports])
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
                fingerprint=_hash(rep.code, scope, norm, str(idx)),
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
    node_base = cst.CSTNode

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
            if isinstance(v, node_base):
                walk(v)
            elif type(v) in (list, tuple):
                for x in v:
                    if isinstance(x, node_base):
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


# -- worker entry points ---------------------------------------------------------

_W: dict[str, Any] = {}


def _init_worker(state: dict[str, Any]) -> None:
    _W.clear()
    _W.update(state)
    if state.get("gc") is False:  # a scan worker (see _gc_paused)
        gc.disable()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No automatic cyclic garbage collection while scanning. The scan
    allocates millions of objects (CPython ``ast`` trees, facts) and keeps
    the facts: the collector, triggered every 700 net allocations, kept
    walking half-built trees and the growing heap, ~17 % of the scan's CPU on
    vLLM. Trees and facts are acyclic (ast nodes have no parent links, facts
    are JSON-shaped), so reference counting frees them; the few cycles a file
    leaves are collected between files by ``_scan_job``."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _FROZEN[0]:
            # inside a run's ``_gc_frozen``: what the pause left alive (the
            # scan's results) joins the frozen set before the collector is
            # back, or its first collections walk all of it
            gc.freeze()
        if was:
            gc.enable()


@contextmanager
def _gc_frozen() -> Iterator[None]:
    """libcst checks leave reference cycles, so the collector stays on after
    the scan; but everything alive when the scan ends (its results, loaded
    modules) is moved out of its sight: collections then walk only what the
    merge, the gates and the checks allocate (the first collection after the
    scan walked every scan result; a big file's check spent ~20 % more
    otherwise). Forked workers inherit the frozen set."""
    if gc.get_freeze_count():  # somebody else froze: leave it to them
        yield
        return
    gc.freeze()
    _FROZEN[0] = True
    try:
        yield
    finally:
        _FROZEN[0] = False
        gc.unfreeze()


# whether this process is inside a ``_gc_frozen`` that froze the heap itself
_FROZEN = [False]


_SCANNED = [0]


def _scan_job(job: tuple[str, str, bool]) -> ScanResult:
    path, relpath, checked = job
    engine: Engine = _W["engine"]
    text, err = read_source(path, relpath)
    if text is None:
        return ScanResult(relpath, error=err if checked else None)
    res = engine.scan_one(text, relpath, checked)
    if not gc.isenabled():
        # (see _gc_paused) the few reference cycles files leave behind (the
        # stdlib's ast.dump and ast.literal_eval make some; the readers
        # themselves keep no tree in one, a test holds them to it) are all
        # young: collecting the youngest generation between files frees them
        # for next to nothing
        _SCANNED[0] += 1
        if _SCANNED[0] % 32 == 0:
            gc.collect(0)
    return res


def _check_job(job: tuple[str, str, list[str]]) -> CheckOutcome:
    path, relpath, codes = job
    engine: Engine = _W["engine"]
    text, err = read_source(path, relpath)
    if text is None:
        return CheckOutcome([err] if err else [])
    facts = engine._facts
    if facts is None:
        return engine.check_one(text, relpath, codes=codes)
    with facts.recording() as read:
        out = engine.check_one(text, relpath, codes=codes)
    out.lazy = {f"{n}\0{m}": facts.raw(n).facts_hash(m) for n, m in sorted(read)}  # type: ignore[attr-defined]
    return out


def _lazy_files_job(items: list[tuple[str, str, list[str]]]) -> list[Any]:
    """``_lazy_job`` in a scan worker, which has no merged facts: each item
    names the collector, the module and its files."""
    engine: Engine = _W["engine"]
    out = []
    for name, module, rels in items:
        try:
            out.append(FileLoader(engine.registry, name, engine.config.root, {module: rels})(module) if rels else None)
        except Exception:  # the gate reads it again itself
            out.append(_NOT_LOADED)
    return out


def _lazy_job(pairs: list[tuple[str, str]]) -> list[Any]:
    """Lazy facts computed in a worker for the main process
    (``_Checks.prefetch``; one value per pair, ``_NOT_LOADED`` if it failed)."""
    facts = _W["engine"]._facts
    out = []
    for name, module in pairs:
        try:
            out.append(facts.raw(name).load(module))
        except Exception:  # the gate reads it again itself
            out.append(_NOT_LOADED)
    return out


_NOT_LOADED = "\0not loaded"


@dataclass
class CheckOutcome:
    diagnostics: list[Diagnostic]
    errors: list[InternalError] = field(default_factory=list)
    parsed: bool = False
    collectors: tuple[str, ...] = ()
    # the lazy facts the check read: "collector\0module" -> facts hash
    lazy: dict[str, str] = field(default_factory=dict)


# -- the engine ------------------------------------------------------------------


class Engine:
    """One configured linter. ``run`` lints paths; ``lint_text`` lints one
    buffer (stdin, the editor, flake8) with the project's facts."""

    def __init__(
        self,
        config: Config,
        registry: Registry | None = None,
        jobs: int | None = None,
        cache: Any = None,
    ) -> None:
        self.config = config
        self.registry = registry or load_registry()
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.cache = cache
        self.enabled = config.enabled_codes(self.registry)
        # metadata (or classes): enough for keys and selection; the classes are
        # loaded by _real() only when something must be parsed
        self.rule_meta = [r for r in self.registry.checkers if r.code in self.enabled]
        used = sorted({f for r in self.rule_meta for f in r.facts})
        missing = [f for f in used if f not in self.registry.collectors]
        if missing:
            raise RuntimeError(f"rules use unknown fact collectors: {missing}")
        self.collector_meta = [self.registry.collectors[f] for f in used]
        self._facts: ProjectFacts | None = None
        # module -> files, file -> content digest (set by _merge: lazy facts)
        self._mod_rels: dict[str, list[str]] = {}
        self._digests: dict[str, str] = {}
        self._key = ""
        # the scan's workers, kept by ``run`` for the lazy facts its gates
        # will read (``_Checks.prefetch``): they need no merged facts
        self._scan_pool: ProcessPoolExecutor | None = None
        # progress(phase, done, total): set by the CLI for an interactive run
        self.progress: Callable[[str, int, int], None] | None = None
        # set by the CLI, which defers libcst (linter._lazy): load it while
        # the scan workers run, so that the parse phase finds it loaded
        self.preload_libcst = False
        self._rules: list[type[Rule]] | None = None
        self._collectors: list[type[FactCollector]] | None = None

    def _real(self) -> None:
        if self._rules is None:
            real = self.registry.real()
            self._rules = [real.rules[r.code] for r in self.rule_meta]
            self._collectors = [real.collectors[c.name] for c in self.collector_meta]

    @property
    def rules(self) -> list[type[Rule]]:
        self._real()
        assert self._rules is not None
        return self._rules

    @property
    def collectors(self) -> list[type[FactCollector]]:
        self._real()
        assert self._collectors is not None
        return self._collectors

    @property
    def scan_collectors(self) -> list[type[FactCollector]]:
        """The collectors the scan runs (lazy ones read modules on demand)."""
        return [c for c in self.collectors if not getattr(c, "lazy", False)]

    @property
    def scan_options(self) -> Mapping[str, Mapping[str, Any]]:
        """The effective options of every rule, by code: what the ast
        readers' scopes (``Rule.ast_scope``) are told."""
        got = self.__dict__.get("_scan_options")
        if got is None:
            got = self.__dict__["_scan_options"] = {
                r.code: self.config.effective_options(r) for r in self.registry.rules.values()
            }
        return got

    def _collector_map(self) -> Mapping[str, Any]:
        return {c.name: c for c in self.collectors}

    # -- single file --------------------------------------------------------
    def rules_for(self, relpath: str) -> list[type[Rule]]:
        """The enabled rules, less those per-file-ignores switch off here."""
        ignored = self.config.ignored_for(relpath)
        return [r for r in self.rules if not (ignored and r.code.startswith(ignored))]

    def facts_gate(self, relpath: str, codes: Sequence[str], facts: ProjectFacts | None = None) -> list[str]:
        """``codes`` less the rules whose facts gate says they cannot fire in
        this module (a crashing gate keeps the rule)."""
        facts = facts if facts is not None else (self._facts or ProjectFacts())
        wanted = set(codes)
        keep = []
        module = module_name_of(relpath)
        for r in self.rules:
            if r.code not in wanted:
                continue
            if _has_facts_gate(r):
                try:
                    opts = self.scan_options[r.code]
                    if not r.candidate_facts(module, relpath, facts, opts):
                        continue
                except Exception:
                    pass
            keep.append(r.code)
        return keep

    def prefetch_pairs(self, pending: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, str]]:
        """The lazy facts the costly facts gates (``Rule.gate_cost``) of these
        (relpath, candidate codes) files will likely read and nobody has read
        yet (``Rule.prefetch``)."""
        facts = self._facts
        if facts is None:
            return []
        costly = [r for r in self.rules if getattr(r, "gate_cost", 0) > 0]
        seen: set[tuple[str, str]] = set()
        out: list[tuple[str, str]] = []
        for relpath, codes in pending:
            for r in costly:
                if r.code not in codes:
                    continue
                try:
                    opts = self.scan_options[r.code]
                    pairs = list(r.prefetch(module_name_of(relpath), relpath, facts, opts))
                except Exception:
                    continue  # only a hint
                for pair in pairs:
                    if pair in seen:
                        continue
                    seen.add(pair)
                    lazy = facts.raw(pair[0]) if facts.is_lazy(pair[0]) else None
                    if lazy is not None and lazy.pending(pair[1]):  # type: ignore[attr-defined]
                        out.append(pair)
        return out

    def noqa_check(self, relpath: str, text: str) -> bool:
        return "SHD900" in self.enabled and "noqa" in text and not self._ignored(relpath, "SHD900")

    def scan_one(self, text: str, relpath: str, checked: bool, syntax: bool | None = None) -> ScanResult:
        res = scan_text(
            text, relpath, module_name_of(relpath), self.scan_collectors,
            self.rules_for(relpath) if checked else None,
            self.config.check_syntax if syntax is None else syntax,
            self.cache is not None,
            self.scan_options,
        )
        res.noqa = checked and self.noqa_check(relpath, text)
        return res

    def check_one(
        self,
        text: str,
        relpath: str,
        facts: ProjectFacts | None = None,
        codes: Sequence[str] | None = None,
    ) -> CheckOutcome:
        """Check one text with the rules named by ``codes`` (default: those
        whose prefilter passes): diagnostics (suppressed ones marked), internal
        errors, whether libcst parsed it and which fact collectors its rules
        read."""
        facts = facts if facts is not None else (self._facts or ProjectFacts())
        if codes is None:
            codes = self.facts_gate(relpath, self.scan_one(text, relpath, True).rules or [], facts)
        wanted = set(codes)
        rules = [r for r in self.rules if r.code in wanted]
        diags: list[Diagnostic] = []
        errors: list[InternalError] = []
        parsed = False
        if rules:
            parsed = True
            diags, errors = check_text(
                text, relpath, module_name_of(relpath), rules, self.config, facts
            )
        noqa_on = self.noqa_check(relpath, text)
        if diags or noqa_on:
            sup = parse_suppressions(text)
            diags, used = apply_suppressions(diags, sup)
            if noqa_on:
                diags += unused_noqa(
                    relpath,
                    sup,
                    used,
                    self.registry.rules,
                    self.enabled,
                    # the lines tokenize numbers (``str.splitlines`` also
                    # breaks at form feeds and other separators)
                    text.split("\n"),
                )
        cols = tuple(sorted({f for r in rules for f in r.facts}))
        return CheckOutcome(diags, errors, parsed, cols)

    def _ignored(self, relpath: str, code: str) -> bool:
        ignored = self.config.ignored_for(relpath)
        return bool(ignored) and code.startswith(ignored)

    def lint_text(self, text: str, path: Path | str) -> tuple[list[Diagnostic], list[InternalError]]:
        """Lint one buffer as if it were at ``path`` (which need not exist)."""
        relpath = relpath_of(Path(path), self.config.root)
        module = module_name_of(relpath)
        # one buffer: compiling it costs milliseconds, so any syntax error shows
        scan = self.scan_one(text, relpath, True, syntax=True)
        if scan.error is not None:
            return self._finish_file([scan.error], relpath, text), []
        facts = self.project_facts()
        mine = dict(scan.facts)
        for c in self.collectors:
            if getattr(c, "lazy", False):
                mine[c.name] = run_collector(c, text, module, relpath, self.scan_options)
        # Most edits leave a module's facts as they were: then the project's
        # facts (and the indexes already built on them) serve as they are.
        if any(facts.raw(c.name).get(module) != mine.get(c.name) for c in self.collector_meta):
            facts = facts.with_module(module, mine)
        codes = self.facts_gate(relpath, scan.rules or [], facts)
        out = self.check_one(text, relpath, facts, codes)
        return sorted(out.diagnostics, key=lambda d: d.sort_key), out.errors

    def _finish_file(self, diags: list[Diagnostic], relpath: str, text: str | None) -> list[Diagnostic]:
        if self._ignored(relpath, "SHD000") or "SHD000" not in self.enabled:
            return []
        if text is not None:
            diags, _ = apply_suppressions(diags, parse_suppressions(text))
        return diags

    # -- facts --------------------------------------------------------------
    def project_facts(self) -> ProjectFacts:
        """The facts of the whole project (computed once per engine, through
        the cache when there is one): what the editor and flake8 use."""
        if self._facts is None:
            files = {sf.relpath: sf for sf in project_files(self.config)} if self.collector_meta else {}
            key = self.cache_key()
            entries = self.cache.entries(key) if self.cache is not None else {}
            scans = self._scan_cached(files, set(), key, entries)
            self._facts = self._merge(scans.values())
            if self.cache is not None:
                self.cache.save()
        return self._facts

    def _scan_cached(
        self,
        files: Mapping[str, SourceFile],
        checked: set[str],
        key: str,
        entries: dict[str, Any],
        keep_pool: bool = False,
    ) -> dict[str, ScanResult]:
        """Scan results for ``files``: from the cache where the file's size and
        mtime are unchanged, else by scanning (in the pool when many; with
        ``keep_pool``, the pool stays in ``_scan_pool``)."""
        scans: dict[str, ScanResult] = {}
        stats: dict[str, tuple[int, int]] = {}
        todo: list[SourceFile] = []
        for rel, sf in files.items():
            try:
                st = os.stat(sf.abspath)
                stats[rel] = (st.st_mtime_ns, st.st_size)
            except OSError:
                stats[rel] = (-1, -1)
            e = entries.get(rel)
            if (
                e is not None
                and e.scan is not None
                and (e.mtime, e.size) == stats[rel]
                and (e.scan.get("checked") or rel not in checked)
                and isinstance(e.scan.get("fh"), dict)
            ):
                err = e.scan.get("error")
                scans[rel] = ScanResult(
                    rel,
                    e.digest,
                    Diagnostic.from_dict(err) if err else None,
                    None,  # read from the cache's facts files if a rule asks
                    e.scan.get("rules"),
                    e.scan.get("noqa", False),
                    e.scan["fh"],
                )
            else:
                todo.append(sf)
        for res in self._scan(todo, checked, {rel: st[1] for rel, st in stats.items()}, keep_pool):
            scans[res.relpath] = res
            if self.cache is not None and stats[res.relpath][0] >= 0:
                old = entries.get(res.relpath)
                keep_check = old.check if old is not None and old.digest == res.digest else None
                entries[res.relpath] = _entry(stats[res.relpath], res, res.relpath in checked, keep_check)
                self.cache.mark_dirty(key, res.relpath)
        return scans

    def _merge(self, scans: Iterable[ScanResult]) -> ProjectFacts:
        """The project's facts. Their digests (check results' dependencies)
        combine the per-file facts hashes, so an edit that leaves a file's
        facts alone invalidates nothing and nothing is serialised; the facts
        themselves are read from the cache only when a rule asks for them."""
        scans = list(scans)
        names = [c.name for c in self.collector_meta if not c.lazy]
        # lazy collectors: a module's facts are read from its file(s) when
        # a rule asks (module -> files, in scan order: the last with facts wins)
        rels: dict[str, list[str]] = {}
        for s in scans:
            rels.setdefault(module_name_of(s.relpath), []).append(s.relpath)
        self._mod_rels = rels
        self._digests = {s.relpath: s.digest for s in scans}
        lazy = {
            c.name: LazyModules(c.name, FileLoader(self.registry, c.name, self.config.root, rels), list(rels))
            for c in self.collector_meta
            if c.lazy
        }
        lines: dict[str, list[str]] = {n: [] for n in names}
        for s in scans if self.cache is not None else ():  # (no cache: no hashes, see scan_text)
            if s.fh:
                mod = module_name_of(s.relpath)
                for name, h in s.fh.items():
                    if name in lines:
                        lines[name].append(f"{mod}={h}")
        hashes = {n: hashlib.sha256("\n".join(sorted(ls)).encode()).hexdigest() for n, ls in lines.items()}
        if self.cache is None:
            hashes = {}  # computed from the facts if anybody asks (ProjectFacts.collector_digest)

        if all(s.facts is not None for s in scans):
            data: dict[str, dict[str, Any]] = {n: {} for n in names}
            for s in scans:
                mod = module_name_of(s.relpath)
                for name, value in (s.facts or {}).items():
                    if name in data:
                        data[name][mod] = value
            return ProjectFacts(data, self._collector_map, hashes, lazy=lazy)
        return ProjectFacts(
            None, self._collector_map, hashes, load=lambda n: self._load_facts(scans, n), names=tuple(names), lazy=lazy
        )

    def _load_facts(self, scans: list[ScanResult], name: str) -> dict[str, Any]:
        """One collector's facts, per module: fresh scans have them; cached
        files' are read from the cache's facts files, and a file whose facts
        are lost there is scanned again (same content, same facts)."""
        key = self.cache_key()
        entries = self.cache.entries(key) if self.cache is not None else {}
        if self.cache is not None:
            self.cache.load_facts(key, {name})
        out: dict[str, Any] = {}
        for s in scans:
            if name not in s.fh:
                continue
            if s.facts is not None and name in s.facts:
                value = s.facts[name]
            else:
                e = entries.get(s.relpath)
                value = e.facts.get(name) if e is not None else None
                if value is None:
                    text, _ = read_source(self.config.root / s.relpath, s.relpath)
                    fresh = scan_text(
                        text or "", s.relpath, module_name_of(s.relpath), self.scan_collectors,
                        options=self.scan_options,
                    )
                    s.facts, s.fh = fresh.facts, fresh.fh
                    if e is not None and self.cache is not None:
                        e.facts = dict(fresh.facts)
                        self.cache.mark_dirty(key, s.relpath)
                    value = fresh.facts.get(name)
                    if value is None:
                        continue
            out[module_name_of(s.relpath)] = value
        return out

    def _pool(self, n: int, state: dict[str, Any], heavy: bool = False) -> ProcessPoolExecutor | None:
        """A pool for many files, or for a few ``heavy`` ones (libcst checks
        of big files: a fork costs less than one of them)."""
        if self.jobs <= 1 or n < (2 if heavy else POOL_MIN_FILES):
            return None
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # pragma: no cover - platforms without fork
            ctx = multiprocessing.get_context()
        return ProcessPoolExecutor(
            max_workers=min(self.jobs, n), mp_context=ctx, initializer=_init_worker, initargs=(state,)
        )

    def _map(
        self, fn: Callable[[Any], Any], jobs: list[Any], state: dict[str, Any], phase: str = "",
        heavy: bool = False, preload: bool = False, keep: bool = False,
    ) -> list[Any]:
        """``fn`` over ``jobs`` in order, in the pool when there are many;
        reports progress to ``self.progress(phase, done, total)`` if set.
        With ``keep``, a pool is not shut down but left in ``_scan_pool``."""
        progress = self.progress
        out: list[Any] = []
        pool = self._pool(len(jobs), state, heavy)
        if pool is None:
            saved = dict(_W)
            _init_worker(state)
            try:
                for j in jobs:
                    out.append(fn(j))
                    if progress is not None:
                        progress(phase, len(out), len(jobs))
                return out
            finally:
                _init_worker(saved)
        kept = False
        try:
            # small chunks: the callers put the biggest files first, so the
            # workers finish together instead of one waiting on a last chunk;
            # not too small: each chunk costs the main process a round trip
            # (64 rather than 16 on vLLM's 3,231 files: 0.035 s sooner)
            chunk = max(1, min(64, len(jobs) // (self.jobs * 8)))
            results = pool.map(fn, jobs, chunksize=chunk)
            # (a fork pool has started every worker by now: a thread cannot
            # be forked in the middle of an import)
            loader = load_in_background() if preload else None
            try:
                # Executor.map yields in order as results arrive: enough for a counter
                for r in results:
                    out.append(r)
                    if progress is not None:
                        progress(phase, len(out), len(jobs))
            finally:
                if loader is not None:
                    loader.join()
            if keep:
                self._close_scan_pool()
                self._scan_pool, kept = pool, True
            return out
        finally:
            if not kept:
                pool.shutdown(wait=True)

    def _while_waiting(self) -> None:
        """Work for this process while it waits on its workers: the facts
        files of the cache (the bulk of what the end of the run writes)."""
        if self.cache is not None:
            self.cache.save_facts()

    def _close_scan_pool(self) -> None:
        pool, self._scan_pool = self._scan_pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _scan(
        self,
        files: Sequence[SourceFile],
        report_errors: bool | set[str],
        sizes: Mapping[str, int] | None = None,
        keep_pool: bool = False,
    ) -> list[ScanResult]:
        """``sizes``: bytes per relpath, when the caller has stat'ed the files;
        ``keep_pool``: see ``_scan_cached``."""

        def want(sf: SourceFile) -> bool:
            return report_errors if isinstance(report_errors, bool) else sf.relpath in report_errors

        if not files:
            return []
        jobs = [(sf.abspath, sf.relpath, want(sf)) for sf in files]
        if len(jobs) >= POOL_MIN_FILES and self.jobs > 1:
            # the longest jobs first
            jobs.sort(key=lambda j: -(sizes[j[1]] if sizes and j[1] in sizes else _size(j[0])))
        self._real()
        with _gc_paused():
            return self._map(
                _scan_job, jobs, {"engine": self, "gc": False}, "reading", preload=self.preload_libcst,
                keep=keep_pool,
            )

    # -- lazy facts in the cache ---------------------------------------------------
    def _module_digest(self, module: str) -> str:
        """The content of the files a module's lazy facts are read from
        (empty for a module the project does not have)."""
        return "|".join(self._digests.get(r, "") for r in self._mod_rels.get(module, ()))

    def _lazy_deps(self, read: set[tuple[str, str]]) -> dict[str, list[str]]:
        """What a check result records of the lazy facts it read:
        ``"collector\0module" -> [content digest, facts hash]``."""
        assert self._facts is not None
        return {
            f"{n}\0{m}": [self._module_digest(m), self._facts.raw(n).facts_hash(m)]  # type: ignore[attr-defined]
            for n, m in sorted(read)
        }

    def _lazy_valid(self, ld: Any) -> bool:
        """Whether the lazy facts a cached check read are still the same: the
        files are unchanged, or their facts read again hash the same (an
        edit that changes no fact re-checks nothing)."""
        if not ld:
            return ld is not None or not any(c.lazy for c in self.collector_meta)
        assert self._facts is not None
        try:
            for k, (dig, fh) in ld.items():
                name, _, module = k.partition("\0")
                if self._module_digest(module) == dig:
                    continue
                if not self._facts.is_lazy(name):
                    return False
                if self._facts.raw(name).facts_hash(module) != fh:  # type: ignore[attr-defined]
                    return False
        except (TypeError, ValueError, AttributeError):
            return False  # a damaged entry
        return True

    # -- a whole run ------------------------------------------------------------
    def cache_key(self) -> str:
        if self._key:
            return self._key
        from linter.registry import rules_fingerprint

        parts = [self.config.digest(), ",".join(sorted(self.enabled)), rules_fingerprint()]
        parts += [f"{c.name}:{c.version}" for c in self.collector_meta]
        self._key = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
        return self._key

    def run(self, paths: Sequence[Path]) -> RunResult:
        result = RunResult()
        project = project_files(self.config) if self.collector_meta else None
        checked = discover(paths, self.config, project)
        result.stats.files = len(checked)
        checked_set = {sf.relpath for sf in checked}
        everything: dict[str, SourceFile] = {sf.relpath: sf for sf in checked}
        for sf in project or ():
            everything.setdefault(sf.relpath, sf)

        key = self.cache_key()
        entries = self.cache.entries(key) if self.cache is not None else {}
        # What the scan leaves (its results, the facts merged from them)
        # lasts the run: out of the collector's sight as soon as the scan
        # ends, or its first collections walk all of it (~0.02 s on vLLM).
        with _gc_frozen():
            try:
                scans = self._scan_cached(everything, checked_set, key, entries, keep_pool=True)
                return self._run_checks(result, checked, everything, scans, key, entries)
            finally:
                self._close_scan_pool()

    def _run_checks(
        self,
        result: RunResult,
        checked: list[SourceFile],
        everything: dict[str, SourceFile],
        scans: dict[str, ScanResult],
        key: str,
        entries: dict[str, Any],
    ) -> RunResult:
        """``run`` after the scan: the facts merged, cached results reused,
        the facts gates, the libcst checks, the cache saved."""
        result.stats.facts_files = sum(1 for s in scans.values() if s.fh)
        self._facts = self._merge(scans.values())

        diags: list[Diagnostic] = []
        pending: list[tuple[SourceFile, ScanResult, Any]] = []
        for sf in checked:
            scan = scans[sf.relpath]
            if scan.error is not None:
                diags.extend(self._finish_file([scan.error], sf.relpath, None))
                continue
            if not scan.rules and not scan.noqa:
                continue  # no rule can match: never parsed with libcst
            e = entries.get(sf.relpath)
            chk = e.check if e is not None and e.digest == scan.digest else None
            if (
                chk is not None
                and chk.get("fk") == self._facts.digest(tuple(chk.get("cols", ())))
                and self._lazy_valid(chk.get("ld"))
            ):
                diags.extend(Diagnostic.from_dict(d) for d in chk["diags"])
                result.stats.cached += 1
                continue
            pending.append((sf, scan, e))
        # The facts gates run here, in this process: the cheap ones first
        # (``Rule.gate_cost``), biggest files first; the files they admit
        # start their libcst check in the pool at once, so the longest checks
        # overlap the remaining (and the costly) gates.
        sizes = {sf.relpath: _size(sf.abspath) for sf, _, _ in pending} if self.jobs > 1 else {}
        # (the rules themselves only when there are gates to run: a warm run
        # imports none)
        cost = {r.code: getattr(r, "gate_cost", 0) for r in self.rules} if pending else {}
        pending.sort(
            key=lambda p: (max((cost.get(c, 0) for c in p[1].rules or ()), default=0), -sizes.get(p[0].relpath, 0))
        )
        todo: list[tuple[str, str, list[str]]] = []
        gate_deps: dict[str, dict[str, list[str]]] = {}
        costly = {c for c, v in cost.items() if v > 0}
        with _Checks(self, sizes) as checks:
            # the lazy facts the costly gates will read, computed in the pool
            # while this process runs the cheap gates
            prefetched = None
            if self.jobs > 1 and costly:
                gated = [(sf.relpath, scan.rules or []) for sf, scan, _ in pending if costly & set(scan.rules or ())]
                if len(gated) >= PREFETCH_MIN_FILES:
                    prefetched = checks.prefetch(self.prefetch_pairs(gated))
            for sf, scan, e in pending:
                if prefetched is not None and costly & set(scan.rules or ()):
                    checks.take_prefetched(prefetched)
                    prefetched = None
                with self._facts.recording() as read:
                    codes = self.facts_gate(sf.relpath, scan.rules or [])
                if self.cache is not None:
                    gate_deps[sf.relpath] = self._lazy_deps(read)
                if not codes and not scan.noqa:
                    if self.cache is not None and e is not None:
                        cols = tuple(sorted({f for r in self.rules if r.code in (scan.rules or []) for f in r.facts}))
                        e.check = {
                            "cols": list(cols),
                            "fk": self._facts.digest(cols),
                            "ld": gate_deps[sf.relpath],
                            "diags": [],
                            "parsed": False,
                        }
                        self.cache.mark_dirty(key, sf.relpath, facts=False)
                    continue
                job = (sf.abspath, sf.relpath, codes)
                todo.append(job)
                checks.add(job)
            outs = checks.results()
        for (path, rel, _), out in zip(todo, outs):
            diags.extend(out.diagnostics)
            result.errors.extend(out.errors)
            result.stats.parsed += int(out.parsed)
            e = entries.get(rel)
            if self.cache is not None and e is not None and not out.errors:
                ld = dict(gate_deps.get(rel, {}))
                for k, fh in out.lazy.items():
                    ld[k] = [self._module_digest(k.partition("\0")[2]), fh]
                e.check = {
                    "cols": list(out.collectors),
                    "fk": self._facts.digest(out.collectors),
                    "ld": ld,
                    "diags": [d.to_dict() for d in out.diagnostics],
                    "parsed": out.parsed,
                }
                self.cache.mark_dirty(key, rel, facts=False)
        result.stats.skipped = len(checked) - result.stats.parsed - result.stats.cached
        if self.cache is not None:
            # forget files that are gone, so the state file does not grow forever
            root = self.config.root
            for rel in [r for r in entries if r not in everything and not (root / r).exists()]:
                del entries[rel]
                self.cache.mark_dirty(key, rel)
            self.cache.save()
        result.diagnostics = sorted(diags, key=lambda d: d.sort_key)
        return result


class _Checks:
    """The check phase's jobs, started as the facts gates admit them: in
    this process when they are few and small (a fork would cost more), in a
    pool as soon as they are many or heavy enough (``HEAVY_CHECK_BYTES``)."""

    def __init__(self, engine: Engine, sizes: Mapping[str, int]) -> None:
        self.engine = engine
        self.sizes = sizes
        self.jobs: list[tuple[str, str, list[str]]] = []
        self.bytes = 0
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Any] = []

    def __enter__(self) -> _Checks:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=exc[0] is not None)

    def prefetch(self, pairs: list[tuple[str, str]]) -> list[tuple[list[tuple[str, str]], Any]] | None:
        """``pairs`` of lazy facts computed in the pool (started now), a few
        per job; None when too few to be worth it."""
        if len(pairs) < PREFETCH_MIN_PAIRS:
            return None
        engine = self.engine
        if engine._scan_pool is not None:
            # the scan's workers, idle since the scan: no fork to wait for
            rels = engine._mod_rels
            per = max(1, len(pairs) // (engine.jobs * 4))
            batches = [pairs[i : i + per] for i in range(0, len(pairs), per)]
            try:
                return [
                    (b, engine._scan_pool.submit(_lazy_files_job, [(n, m, rels.get(m, [])) for n, m in b]))
                    for b in batches
                ]
            except RuntimeError:  # a broken pool: computed in the check pool instead
                engine._close_scan_pool()
        if self.pool is None:
            self.pool = self.engine._pool(max(2, self.engine.jobs), {"engine": self.engine}, heavy=True)
            if self.pool is None:
                return None
            self.futures = [self.pool.submit(_check_job, j) for j in self.jobs]
        per = max(1, len(pairs) // (self.engine.jobs * 4))
        batches = [pairs[i : i + per] for i in range(0, len(pairs), per)]
        return [(b, self.pool.submit(_lazy_job, b)) for b in batches]

    def take_prefetched(self, prefetched: list[tuple[list[tuple[str, str]], Any]]) -> None:
        """Waits for the prefetched facts and hands them to the project's
        lazy facts (a batch that failed is read by the gates themselves)."""
        facts = self.engine._facts
        assert facts is not None
        if not all(f.done() for _, f in prefetched):
            self.engine._while_waiting()
        for batch, future in prefetched:
            try:
                values = future.result()
            except Exception:
                continue
            for (name, module), value in zip(batch, values):
                if value != _NOT_LOADED:  # (a copy: compared by value)
                    facts.raw(name).preload(module, value)  # type: ignore[attr-defined]
        self.engine._close_scan_pool()

    def add(self, job: tuple[str, str, list[str]]) -> None:
        self.jobs.append(job)
        self.bytes += self.sizes.get(job[1], 0)
        if self.pool is not None:
            self.futures.append(self.pool.submit(_check_job, job))
        elif self.engine.jobs > 1 and (len(self.jobs) >= POOL_MIN_FILES or self.bytes >= HEAVY_CHECK_BYTES):
            self.pool = self.engine._pool(max(2, self.engine.jobs), {"engine": self.engine}, heavy=True)
            if self.pool is not None:
                self.futures = [self.pool.submit(_check_job, j) for j in self.jobs]

    def results(self) -> list[CheckOutcome]:
        if self.pool is None:
            return self.engine._map(_check_job, self.jobs, {"engine": self.engine}, "checking") if self.jobs else []
        progress = self.engine.progress
        out: list[CheckOutcome] = []
        if not all(f.done() for f in self.futures):
            self.engine._while_waiting()
        for f in self.futures:
            out.append(f.result())
            if progress is not None:
                progress("checking", len(out), len(self.futures))
        return out


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _entry(stat: tuple[int, int], res: ScanResult, checked: bool, check: dict[str, Any] | None) -> Any:
    from linter.cache import Entry

    scan = {
        "error": res.error.to_dict() if res.error else None,
        "checked": checked,
        "rules": res.rules,
        "noqa": res.noqa,
        "fh": res.fh,
    }
    return Entry(stat[0], stat[1], res.digest, scan, check, dict(res.facts or {}))


def internal_error_line(e: InternalError) -> str:
    rule = f" in {e.code}" if e.code else ""
    return f"internal error{rule} on {e.path}: {e.message}"

