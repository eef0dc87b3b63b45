"""The ``aux_tap_paths`` facts: the runner paths of the project, functions
that turn a model's tap capture on for a draft (call a ``TAP_SETTERS``
method and are not one: a model forwarding the call to its inner model is no
entry point), and whether each reads a capability flag (itself or through
what it calls) or refuses pipeline parallelism: it, a method of its class,
or every function calling it (one or two calls up, by name) raises or
asserts under a pipeline test in a block naming the draft (``if
self.use_pp: raise ...`` under ``if self.speculative_config ...``). Each path
can start a draft, so a model the checked one refuses is still run by an
open one (vLLM 0.33's V1 runner beside the V2 runner's check). A refusal
elsewhere (a configuration validator) is not seen: the path counts as open,
which the triage records."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any

from checks.pp_payload_drops_tensors.capability import flag_reads
from linter.api import FactCollector, Needles
from linter.astwalk import ast_dotted, ast_walk

# The methods that turn a model's tap capture on. Deliberately not options:
# the collector runs before a rule's options are known.
TAP_SETTERS = ("set_aux_hidden_state_layers", "set_*_layers_to_capture")
# Words that name the draft in a refusal's tests or message; also the call
# names kept per function (what may lead to a path or to a flag read).
SPEC_WORDS = ("spec", "eagle", "draft", "aux", "dflash", "dspark", "mtp", "medusa")
_KEPT_CALL_WORDS = (*SPEC_WORDS, "captur", "support", "verify", "tap")
# what a test of the pipeline's size (not of a rank) names besides a pp word
_SIZE_WORDS = ("size", "use_", "enable", "world", "degree", "stages")


def is_tap_setter(name: str) -> bool:
    """``set_aux_hidden_state_layers``, ``_set_aux_hidden_state_layers``,
    ``set_eagle3_layers_to_capture``..."""
    bare = name.lstrip("_").lower()
    return any(fnmatchcase(bare, g) for g in TAP_SETTERS)


def _pp_word(ident: str) -> bool:
    low = ident.lower()
    return "pipeline" in low or "pp" in low.split("_")


def _pp_size_name(ident: str) -> bool:
    """``pp_size``, ``use_pp``, ``pipeline_parallel_size``, ``pp_world_size``
    (``is_last_rank`` tests a rank, not whether there is a pipeline)."""
    low = ident.lower()
    return _pp_word(ident) and (any(k in low for k in _SIZE_WORDS) or low in ("pp", "pipeline"))


def _mentions_pp(node: ast.AST) -> bool:
    """Whether ``node`` tests the pipeline's size: a size name or
    ``<pp group>.world_size``."""
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
    """Whether an identifier or string constant under ``nodes`` names the draft."""
    for n in (m for node in nodes for m in ast_walk(node)):
        if isinstance(n, ast.Name):
            word = n.id
        elif isinstance(n, ast.Attribute):
            word = n.attr
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            word = n.value
        else:
            continue
        if any(w in word.lower() for w in SPEC_WORDS):
            return True
    return False


def refuses_pp(stmts: Sequence[ast.stmt], tests: Sequence[ast.expr] = ()) -> bool:
    """Whether ``stmts`` (under the ``if`` ``tests``) raise, or assert, under a
    pipeline test in a block that names the draft (nested definitions left out)."""
    for s in stmts:
        if isinstance(s, ast.Raise):
            hit = any(_mentions_pp(t) for t in tests) and _mentions_spec([*tests, s])
        elif isinstance(s, ast.Assert):
            # (an assert inside a pipeline block checks something else)
            hit = _mentions_pp(s.test) and _mentions_spec([*tests, s])
        elif isinstance(s, ast.If):
            hit = refuses_pp([*s.body, *s.orelse], [*tests, s.test])
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
            handlers = [x for h in getattr(s, "handlers", ()) for x in h.body]
            inner = [*s.body, *getattr(s, "orelse", ()), *getattr(s, "finalbody", ()), *handlers]
            hit = refuses_pp(inner, tests)
        else:
            continue
        if hit:
            return True
    return False


def functions(
    body: Sequence[ast.stmt], prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of the module's functions and methods (nested
    classes, and definitions under ``if``/``try``, included; nested functions not)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from functions(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.If, ast.Try)):
            more = [*node.body, *node.orelse, *getattr(node, "finalbody", ())]
            more += [x for h in getattr(node, "handlers", ()) for x in h.body]
            yield from functions(more, prefix)


def tap_path_facts(tree: ast.Module, path: str) -> dict[str, Any] | None:
    """Per function worth keeping: ``[qualname, [line, col, end line, end
    col], sets_taps, refuses, flag reads, kept call names]``."""
    rows = []
    for qual, node in functions(tree.body):
        calls = {
            name.rpartition(".")[2]
            for n in ast_walk(node)
            if isinstance(n, ast.Call) and (name := ast_dotted(n.func))
        }
        sets = not is_tap_setter(node.name) and any(is_tap_setter(c) for c in calls)
        refuses = refuses_pp(node.body)
        reads = flag_reads(node)
        kept = sorted(c for c in calls if any(w in c.lower() for w in _KEPT_CALL_WORDS))
        if sets or refuses or reads or kept:
            where = [node.lineno, node.col_offset, node.end_lineno, node.end_col_offset]
            rows.append([qual, where, sets, refuses, reads, kept])
    return {"path": path, "functions": rows} if rows else None


@dataclass(frozen=True)
class TapPath:
    """A function as the facts record it; a path when it sets taps."""

    module: str
    qualname: str
    path: str
    span: tuple[int, int, int, int]
    sets_taps: bool
    refuses: bool
    reads: frozenset[str]
    calls: frozenset[str]
    # (of a path) the flags read by it or by what it calls, three calls down;
    # whether it, its class or its callers refuse
    flags_read: frozenset[str] = frozenset()
    refused: bool = False

    @property
    def cls(self) -> str | None:
        return self.qualname.rpartition(".")[0] or None


class TapPathIndex:
    """The project's tap paths, and which of them refuse a model that does
    not claim a flag."""

    def __init__(self, per_module: Mapping[str, Any]) -> None:
        self._by_name: dict[str, list[TapPath]] = {}
        self._callers: dict[str, list[TapPath]] = {}
        self._refusing_classes: set[tuple[str, str]] = set()
        funcs = []
        for module, data in per_module.items():
            for qual, span, sets, refuses, reads, calls in (data or {}).get("functions", ()):
                f = TapPath(
                    module, qual, data.get("path", ""), tuple(span), sets, refuses, frozenset(reads), frozenset(calls)
                )
                funcs.append(f)
                self._by_name.setdefault(qual.rpartition(".")[2], []).append(f)
                for c in f.calls:
                    self._callers.setdefault(c, []).append(f)
                if refuses and f.cls:
                    self._refusing_classes.add((module, f.cls))
        self.paths = tuple(
            replace(f, flags_read=self._reads(f, 3), refused=self._refused(f, 2)) for f in funcs if f.sets_taps
        )

    def _refused(self, f: TapPath, up: int) -> bool:
        if f.refuses or (f.cls is not None and (f.module, f.cls) in self._refusing_classes):
            return True
        if up == 0:
            return False
        callers = [c for c in self._callers.get(f.qualname.rpartition(".")[2], ()) if c is not f]
        return bool(callers) and all(self._refused(c, up - 1) for c in callers)

    def _reads(self, f: TapPath, down: int) -> frozenset[str]:
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


class AuxTapPaths(FactCollector):
    """Per module holding a tap word, its functions that turn taps on,
    refuse pipeline parallelism, read a flag, or call such a function
    (:func:`tap_path_facts`)."""

    name = "aux_tap_paths"
    version = 1
    # (a tap setter's call, a caller of a path, or a flag read near one:
    # every such name holds one of these)
    needles = Needles(regex="(?i:aux_hidden_state|layers_to_capture)")

    @classmethod
    def collect(cls, tree: ast.Module, text: str, module: str, path: str) -> Any:
        return tap_path_facts(tree, path)

    @classmethod
    def build_index(cls, per_module: Mapping[str, Any]) -> TapPathIndex:
        return TapPathIndex(per_module)
