"""The ``aux_tap_paths`` facts: the code paths of the project that turn a
model's tap capture on for a draft, and, per path, whether it reads a
capability flag (directly or through a function it calls) or refuses
pipeline parallelism.

A *path* is a function that calls a tap setter (``TAP_SETTERS``: vLLM's
``model.set_aux_hidden_state_layers(...)``, SGLang's
``model.set_eagle3_layers_to_capture(...)``) and is not a tap setter itself
(a model forwarding the call to its inner model is not an entry point).
Every path is a way a draft that consumes the taps can be started: vLLM
0.33 has two (the V2 runner's ``set_eagle3_aux_hidden_state_layers``, which
checks ``supports_aux_hidden_states_over_pp`` under pipeline parallelism,
and the V1 runner's ``_setup_eagle3_aux_hidden_state_outputs``, which does
not), and a model the checked path refuses is still run by the other one.

A path *refuses* pipeline parallelism when it, a method of its class, or
every function that calls it (one or two calls up, by name) raises or
asserts under a pipeline test in a block that names the draft (a
speculative word in the tests or the message):
``if self.use_pp: raise ValueError(f"{method} with pipeline parallel is not
supported")`` under ``if self.speculative_config ...``. A refusal that lives
elsewhere (a configuration validator) is not seen: the path then counts as
open, which the triage records."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from linter.api import FactCollector, Needles
from linter.astwalk import ast_dotted, ast_walk

# The methods that turn a model's tap capture on. Deliberately not options:
# the collector runs before a rule's options are known.
TAP_SETTERS = ("set_aux_hidden_state_layers", "set_*_layers_to_capture")
# Words that name the draft in a refusal's tests or message; also the call
# names kept per function (what may lead to a path or to a flag read).
SPEC_WORDS = ("spec", "eagle", "draft", "aux", "dflash", "dspark", "mtp", "medusa")
_KEPT_CALL_WORDS = (*SPEC_WORDS, "captur", "support", "verify", "tap")


def is_tap_setter(name: str) -> bool:
    """``set_aux_hidden_state_layers``, ``_set_aux_hidden_state_layers``,
    ``set_eagle3_layers_to_capture``..."""
    bare = name.lstrip("_").lower()
    return any(fnmatchcase(bare, g) for g in TAP_SETTERS)


def _pp_word(ident: str) -> bool:
    low = ident.lower()
    return "pipeline" in low or "pp" in low.split("_")


# what a test of the pipeline's size (not of a rank) names besides a pp word
_SIZE_WORDS = ("size", "use_", "enable", "world", "degree", "stages")


def _pp_size_name(ident: str) -> bool:
    """``pp_size``, ``use_pp``, ``pipeline_parallel_size``, ``pp_world_size``
    (``is_last_rank`` tests a rank, not whether there is a pipeline)."""
    low = ident.lower()
    return _pp_word(ident) and (any(k in low for k in _SIZE_WORDS) or low in ("pp", "pipeline"))


def _words(node: ast.AST) -> Iterator[str]:
    """Identifiers and string constants under ``node`` (lower case)."""
    for n in ast_walk(node):
        if isinstance(n, ast.Name):
            yield n.id.lower()
        elif isinstance(n, ast.Attribute):
            yield n.attr.lower()
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            yield n.value.lower()


def _mentions_pp(node: ast.AST) -> bool:
    """Whether ``node`` tests the pipeline's size: a size name
    (``_pp_size_name``) or ``<pp group>.world_size``."""
    for n in ast_walk(node):
        if isinstance(n, ast.Name) and _pp_size_name(n.id):
            return True
        if isinstance(n, ast.Attribute):
            if _pp_size_name(n.attr):
                return True
            if n.attr in ("world_size", "size") and any(
                (isinstance(m, ast.Name) and _pp_word(m.id)) or (isinstance(m, ast.Attribute) and _pp_word(m.attr))
                for m in ast_walk(n.value)
            ):
                return True
    return False


def _mentions_spec(nodes: Iterable[ast.AST]) -> bool:
    return any(w in word for node in nodes for word in _words(node) for w in SPEC_WORDS)


def refuses_pp(func: ast.AST) -> bool:
    """Whether ``func`` raises (or asserts) under a pipeline test in a block
    that names the draft."""

    def block(stmts: Sequence[ast.stmt], tests: list[ast.AST]) -> bool:
        for s in stmts:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(s, ast.Raise):
                if any(_mentions_pp(t) for t in tests) and _mentions_spec([*tests, s]):
                    return True
            elif isinstance(s, ast.Assert):
                # (an assert inside a pipeline block checks something else)
                if _mentions_pp(s.test) and _mentions_spec([*tests, s]):
                    return True
            elif isinstance(s, ast.If):
                if block(s.body, [*tests, s.test]) or block(s.orelse, [*tests, s.test]):
                    return True
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                if block(s.body, tests) or block(getattr(s, "orelse", []), tests):
                    return True
            elif isinstance(s, ast.Try):
                inner = [*s.body, *s.orelse, *s.finalbody, *(x for h in s.handlers for x in h.body)]
                if block(inner, tests):
                    return True
        return False

    return block(getattr(func, "body", []), [])


def flag_reads(func: ast.AST) -> list[str]:
    """The ``support``-named attributes ``func`` reads (``inner.supports_x``,
    ``getattr(inner, "supports_x", False)``, ``hasattr``)."""
    names: set[str] = set()
    for n in ast_walk(func):
        if isinstance(n, ast.Attribute) and "support" in n.attr and not isinstance(n.ctx, ast.Store):
            names.add(n.attr)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "hasattr")
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
            and "support" in n.args[1].value
        ):
            names.add(n.args[1].value)
    return sorted(names)


def _functions(body: Sequence[ast.stmt], prefix: str = "") -> Iterator[tuple[str, str | None, ast.AST]]:
    """(qualified name, enclosing class, node) of the module's functions and
    methods (nested classes included, nested functions not)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", prefix.rstrip(".") or None, node
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.If, ast.Try)):
            more = [*node.body, *node.orelse, *getattr(node, "finalbody", ())]
            more += [x for h in getattr(node, "handlers", ()) for x in h.body]
            yield from _functions(more, prefix)


def _call_names(func: ast.AST) -> set[str]:
    out = set()
    for n in ast_walk(func):
        if isinstance(n, ast.Call):
            name = ast_dotted(n.func)
            if name:
                out.add(name.rpartition(".")[2])
    return out


def tap_path_facts(tree: ast.Module, path: str) -> dict[str, Any] | None:
    """Per function worth keeping: ``[qualname, [line, col, end line, end
    col], sets_taps, refuses, flag reads, kept call names]``."""
    rows = []
    for qual, _cls, node in _functions(tree.body):
        name = qual.rpartition(".")[2]
        calls = _call_names(node)
        sets = not is_tap_setter(name) and any(is_tap_setter(c) for c in calls)
        refuses = refuses_pp(node)
        reads = flag_reads(node)
        kept = sorted(c for c in calls if any(w in c.lower() for w in _KEPT_CALL_WORDS))
        if sets or refuses or reads or kept:
            where = [getattr(node, k, 0) or 0 for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")]
            rows.append([qual, where, sets, refuses, reads, kept])
    return {"path": path, "functions": rows} if rows else None


@dataclass(frozen=True)
class TapPath:
    """One function that turns tap capture on."""

    module: str
    qualname: str
    path: str
    span: tuple[int, int, int, int]
    flags_read: frozenset[str]  # read by it or by what it calls (three calls down)
    refused: bool


@dataclass(frozen=True)
class _Function:
    module: str
    qualname: str
    path: str
    span: tuple[int, int, int, int]
    sets_taps: bool
    refuses: bool
    reads: frozenset[str]
    calls: frozenset[str]

    @property
    def cls(self) -> str | None:
        return self.qualname.rpartition(".")[0] or None


class TapPathIndex:
    """The project's tap paths, and which of them refuse a model that does
    not claim a flag."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._by_name: dict[str, list[_Function]] = {}
        self._callers: dict[str, list[_Function]] = {}
        refusing_classes: set[tuple[str, str]] = set()
        funcs: list[_Function] = []
        for module, data in per_module.items():
            if not data:
                continue
            for qual, span, sets, refuses, reads, calls in data.get("functions", ()):
                f = _Function(
                    module, qual, data.get("path", ""), tuple(span), sets, refuses, frozenset(reads), frozenset(calls)
                )
                funcs.append(f)
                self._by_name.setdefault(qual.rpartition(".")[2], []).append(f)
                for c in f.calls:
                    self._callers.setdefault(c, []).append(f)
                if refuses and f.cls:
                    refusing_classes.add((module, f.cls))
        self._refusing_classes = refusing_classes
        self.paths = tuple(
            TapPath(f.module, f.qualname, f.path, f.span, self._reads(f, 3), self._refused(f, 2))
            for f in funcs
            if f.sets_taps
        )

    def _refuses_here(self, f: _Function) -> bool:
        return f.refuses or (f.cls is not None and (f.module, f.cls) in self._refusing_classes)

    def _refused(self, f: _Function, up: int) -> bool:
        if self._refuses_here(f):
            return True
        if up == 0:
            return False
        callers = [c for c in self._callers.get(f.qualname.rpartition(".")[2], ()) if c is not f]
        return bool(callers) and all(self._refused(c, up - 1) for c in callers)

    def _reads(self, f: _Function, down: int) -> frozenset[str]:
        got = set(f.reads)
        if down:
            for c in f.calls:
                for g in self._by_name.get(c, ()):
                    if g is not f:
                        got |= self._reads(g, down - 1)
        return frozenset(got)

    def open_paths(self, flags: Sequence[str]) -> list[TapPath]:
        """Paths that neither read one of ``flags`` nor refuse pipeline
        parallelism: a model that does not claim a flag is run by them."""
        return [p for p in self.paths if not p.refused and not (p.flags_read & set(flags))]

    def checked_paths(self, flags: Sequence[str]) -> list[TapPath]:
        return [p for p in self.paths if p.flags_read & set(flags)]


# (the module holds a tap setter's call, a caller of a path, or a flag read
# near one: every such name holds one of these)
_NEEDLE = re.compile(r"aux_hidden_state|layers_to_capture", re.IGNORECASE)


class AuxTapPaths(FactCollector):
    """Per module holding a tap word, its functions that turn taps on,
    refuse pipeline parallelism, read a flag, or call such a function
    (:func:`tap_path_facts`)."""

    name = "aux_tap_paths"
    version = 1
    needles = Needles(regex=f"(?i:{_NEEDLE.pattern})")

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return tap_path_facts(tree, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> TapPathIndex:
        return TapPathIndex(per_module)
