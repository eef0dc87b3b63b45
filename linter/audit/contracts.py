"""Contract drift: what changed between the base and the upstream tree in the
upstream classes and functions that fork code subclasses or calls. Derived
from both trees' ``ast`` alone (no hand-kept list of contracts):

- ``attribute-changed``: a class attribute (a capability flag) of a base
  class of a fork class was added, removed or given another value;
- ``signature-changed``: a method a fork class overrides changed its
  parameters;
- ``became-abstract``: a method of a base class became abstract (an
  override's ``super()`` call breaks; a fork class that does not define it
  can no longer be instantiated);
- ``removed-or-renamed``: a method or function fork code calls (or
  overrides) is gone upstream; a new one with the same body or parameters
  is named as the likely new name;
- ``constructor-arg-added``: an upstream constructor the fork calls or
  inherits gained a parameter without a default.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from linter.files import module_name_of

from linter.audit.trees import Tree

DRIFT_KINDS = (
    "attribute-changed",
    "signature-changed",
    "became-abstract",
    "removed-or-renamed",
    "constructor-arg-added",
)
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Signature:
    text: str  # the parameters as written
    params: tuple[str, ...]  # names, in order (self/cls included)
    required: tuple[str, ...]  # named parameters without a default
    abstract: bool
    body: str  # a hash of the body, to recognise a renamed function
    line: int


@dataclass
class ClassFacts:
    name: str
    module: str
    line: int
    bases: list[str]  # dotted, resolved through the module's imports
    attrs: dict[str, str] = field(default_factory=dict)
    methods: dict[str, Signature] = field(default_factory=dict)


@dataclass
class ModuleFacts:
    module: str
    path: str
    imports: dict[str, str] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    functions: dict[str, Signature] = field(default_factory=dict)


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> Signature:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults_from = len(positional) - len(a.defaults)
    required = [p.arg for i, p in enumerate(positional) if i < defaults_from and p.arg not in ("self", "cls")]
    required += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    names = [p.arg for p in positional] + ([f"*{a.vararg.arg}"] if a.vararg else [])
    names += [p.arg for p in a.kwonlyargs] + ([f"**{a.kwarg.arg}"] if a.kwarg else [])
    abstract = any(_name_of(d).endswith("abstractmethod") for d in fn.decorator_list)
    # the body's text, each line stripped (a method moved to another
    # nesting level keeps its hash); its ast dump costs 20x more
    start, end = fn.body[0].lineno - 1, fn.end_lineno or fn.body[-1].lineno
    text = "\n".join(line.strip() for line in lines[start:end])
    body = hashlib.sha256(text.encode()).hexdigest()[:16]
    return Signature(ast.unparse(a), tuple(names), tuple(required), abstract, body, fn.lineno)


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name_of(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    if isinstance(node, ast.Subscript):  # Generic[T], nn.Module[...]
        return _name_of(node.value)
    return ""


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([name] if name else [])])


def _imports(tree: ast.Module, deep: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The module's imports: everywhere (``deep``: fork code, whose
    functions' own imports name what they call), else those at module
    level, under ``if`` and ``try`` included (what other modules import)."""
    if deep:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node
        return
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "finalbody", [])
            for handler in getattr(node, "handlers", []):
                todo += handler.body


def module_facts(text: str, module: str, path: str, deep_imports: bool = True) -> ModuleFacts:
    facts = ModuleFacts(module, path)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return facts
    is_package = path.endswith("__init__.py")
    lines = text.splitlines()
    for node in _imports(tree, deep_imports):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    facts.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    facts.imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                src = _resolve_relative(module, is_package, node.level, node.module)
            else:
                src = node.module or ""
            for alias in node.names:
                if alias.name != "*":
                    facts.imports[alias.asname or alias.name] = f"{src}.{alias.name}"

    def resolve(name: str) -> str:
        head, _, rest = name.partition(".")
        if head in facts.imports:
            return facts.imports[head] + (f".{rest}" if rest else "")
        if head in facts.classes or head in facts.functions:
            return f"{module}.{name}"
        return name

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.functions[node.name] = _signature(node, lines)
        elif isinstance(node, ast.ClassDef):
            facts.classes[node.name] = ClassFacts(node.name, module, node.lineno, [])
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            cf = facts.classes[node.name]
            cf.bases = [resolve(n) for n in map(_name_of, node.bases) if n]
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    cf.methods[stmt.name] = _signature(stmt, lines)
                elif isinstance(stmt, ast.Assign) and stmt.value is not None:
                    for t in stmt.targets:
                        if isinstance(t, ast.Name):
                            cf.attrs[t.id] = ast.unparse(stmt.value)
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.value is not None:
                        cf.attrs[stmt.target.id] = ast.unparse(stmt.value)
    return facts


class TreeFacts:
    """Module facts of one tree, parsed on demand."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.paths = {module_name_of(rel): rel for rel in tree.files}
        self._modules: dict[str, ModuleFacts] = {}

    def module(self, name: str) -> ModuleFacts | None:
        if name not in self._modules:
            rel = self.paths.get(name)
            if rel is None:
                return None
            try:
                text = (self.tree.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._modules[name] = module_facts(text, name, rel, deep_imports=False)
        return self._modules[name]

    def lookup(self, dotted: str, depth: int = 0) -> ClassFacts | Signature | ModuleFacts | None:
        """What a dotted name is in this tree, following re-exports."""
        if depth > _MAX_DEPTH:
            return None
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            mod = self.module(".".join(parts[:cut]))
            if mod is None:
                continue
            rest = parts[cut:]
            if not rest:
                return mod
            head = rest[0]
            if head in mod.classes:
                cls = mod.classes[head]
                if len(rest) == 1:
                    return cls
                if len(rest) == 2:
                    return self.effective(cls).methods.get(rest[1])
                return None
            if head in mod.functions:
                return mod.functions[head] if len(rest) == 1 else None
            if head in mod.imports and mod.imports[head] != dotted:
                return self.lookup(".".join([mod.imports[head], *rest[1:]]), depth + 1)
            return None
        return None

    def lookup_class(self, dotted: str) -> ClassFacts | None:
        got = self.lookup(dotted)
        return got if isinstance(got, ClassFacts) else None

    def effective(self, cls: ClassFacts, depth: int = 0) -> ClassFacts:
        """The class with what it inherits from bases found in this tree
        (attributes and methods; its own win)."""
        merged = ClassFacts(cls.name, cls.module, cls.line, cls.bases)
        if depth < _MAX_DEPTH:
            for base in reversed(cls.bases):
                found = self.lookup_class(base)
                if found is not None and found is not cls:
                    inherited = self.effective(found, depth + 1)
                    merged.attrs.update(inherited.attrs)
                    merged.methods.update(inherited.methods)
        merged.attrs.update(cls.attrs)
        merged.methods.update(cls.methods)
        return merged

    def defining_class(self, cls: ClassFacts, method: str, depth: int = 0) -> ClassFacts | None:
        if method in cls.methods:
            return cls
        if depth >= _MAX_DEPTH:
            return None
        for base in cls.bases:
            found = self.lookup_class(base)
            if found is not None and found is not cls:
                got = self.defining_class(found, method, depth + 1)
                if got is not None:
                    return got
        return None


@dataclass(frozen=True, order=True)
class Drift:
    path: str  # the fork file
    line: int
    kind: str
    fork_symbol: str  # the fork class or function
    upstream_symbol: str
    detail: str


def _calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, int]]:
    """Dotted callees of the calls in a function (``super().m`` as
    ``super.m``)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
            ):
                yield f"super.{func.attr}", node.lineno
            else:
                name = _name_of(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
                if name:
                    yield name, node.lineno


def _literal(value: str | None) -> bool:
    if value is None:
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _flag_change(before: str | None, after: str | None) -> bool:
    """A change of a class's declared value, not of a field's wiring: both
    sides literal constants (``True`` -> ``False``, ``8`` -> ``16``), or a
    boolean flag appearing or vanishing (``supports_pp = True``). A default
    that became an expression, or a new dataclass field with a default,
    changes no behaviour the subclass relied on."""
    if before is not None and after is not None:
        return _literal(before) and _literal(after)
    present = before if before is not None else after
    return present in ("True", "False")


def _renamed(old: Signature, old_names: set[str], new: dict[str, Signature]) -> str:
    """The likely new name of a vanished function: the one new name with the
    same body, else the one new name with the same parameters (two or more
    of them, besides self: an empty list tells nothing)."""
    candidates = {n: s for n, s in new.items() if n not in old_names}
    same_body = [n for n, s in candidates.items() if s.body == old.body]
    if len(same_body) == 1:
        return same_body[0]
    if len([p for p in old.params if p not in ("self", "cls")]) >= 2:
        same_params = [n for n, s in candidates.items() if s.params == old.params]
        if len(same_params) == 1:
            return same_params[0]
    return ""


class DriftFinder:
    def __init__(self, fork: Tree, base: Tree, upstream: Tree) -> None:
        self.fork = fork
        self.before = TreeFacts(base)
        self.after = TreeFacts(upstream)
        # one item per fork symbol, kind, upstream symbol and change: the
        # first line it shows on (three calls of one removed helper in one
        # function are one thing to port)
        self.found: dict[tuple[str, str, str, str, str], Drift] = {}

    def add(self, path: str, line: int, kind: str, fork_symbol: str, upstream_symbol: str, detail: str) -> None:
        key = (path, kind, fork_symbol, upstream_symbol, detail)
        old = self.found.get(key)
        if old is None or line < old.line:
            self.found[key] = Drift(path, line, kind, fork_symbol, upstream_symbol, detail)

    def run(self, fork_files: set[str]) -> list[Drift]:
        for rel in sorted(fork_files):
            if not rel.endswith(".py"):
                continue
            try:
                text = (self.fork.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                continue
            facts = module_facts(text, module_name_of(rel), rel)
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name in facts.classes:
                    self.check_class(rel, facts, facts.classes[node.name], node)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.check_calls(rel, facts, node, node.name, None)
        return sorted(self.found.values())

    def upstream_name(self, facts: ModuleFacts, name: str) -> str:
        head, _, rest = name.partition(".")
        if head in facts.imports:
            return facts.imports[head] + (f".{rest}" if rest else "")
        return ""

    def check_class(self, rel: str, facts: ModuleFacts, cls: ClassFacts, node: ast.ClassDef) -> None:
        for base in cls.bases:
            old = self.before.lookup_class(base)
            if old is None:
                continue  # not an upstream class (or unknown to the base tree)
            new = self.after.lookup_class(base)
            if new is None:
                detail = f"base class {base} is gone upstream"
                self.add(rel, cls.line, "removed-or-renamed", cls.name, base, detail)
                continue
            self.compare_classes(rel, cls, base, self.before.effective(old), self.after.effective(new), new)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.check_calls(rel, facts, stmt, f"{cls.name}.{stmt.name}", cls)

    def compare_classes(
        self, rel: str, cls: ClassFacts, base: str, old: ClassFacts, new: ClassFacts, new_own: ClassFacts
    ) -> None:
        where = f"{cls.name}"
        for attr in sorted(set(old.attrs) | set(new.attrs)):
            a, b = old.attrs.get(attr), new.attrs.get(attr)
            if a == b or attr.startswith("__") or not _flag_change(a, b):
                continue
            before = "unset" if a is None else f"`{a}`"
            after = "unset" if b is None else f"`{b}`"
            own = " (the fork class sets it itself)" if attr in cls.attrs else ""
            self.add(rel, cls.line, "attribute-changed", where, f"{base}.{attr}", f"{before} -> {after}{own}")
        for name, sig in sorted(cls.methods.items()):
            line = sig.line
            was, now = old.methods.get(name), new.methods.get(name)
            if was is None or name.startswith("__") and name != "__init__":
                continue
            if now is None:
                hint = _renamed(was, set(old.methods), new.methods)
                detail = f"overridden method {name} is gone upstream" + (f"; renamed to {hint}?" if hint else "")
                self.add(rel, line, "removed-or-renamed", f"{where}.{name}", f"{base}.{name}", detail)
                continue
            if name != "__init__" and was.text != now.text:
                self.add(rel, line, "signature-changed", f"{where}.{name}", f"{base}.{name}",
                         f"({was.text}) -> ({now.text}); the override keeps ({sig.text})")
            if now.abstract and not was.abstract:
                self.add(rel, line, "became-abstract", f"{where}.{name}", f"{base}.{name}",
                         "now abstract upstream: the override's super() call no longer reaches code")
        for name, sig in sorted(new.methods.items()):
            was = old.methods.get(name)
            if sig.abstract and not (was and was.abstract) and name not in cls.methods:
                self.add(rel, cls.line, "became-abstract", where, f"{base}.{name}",
                         f"{name} is abstract upstream and the fork class does not define it")
        self.compare_init(rel, cls.line, where, base, old.methods.get("__init__"), new.methods.get("__init__"))

    def compare_init(
        self, rel: str, line: int, where: str, symbol: str, was: Signature | None, now: Signature | None
    ) -> None:
        if was is None or now is None:
            return
        added = [p for p in now.required if p not in was.params]
        if added:
            self.add(rel, line, "constructor-arg-added", where, f"{symbol}.__init__",
                     f"new parameter(s) without a default: {', '.join(added)}")

    def check_calls(
        self,
        rel: str,
        facts: ModuleFacts,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        where: str,
        cls: ClassFacts | None,
    ) -> None:
        for callee, line in _calls(fn):
            head, _, attr = callee.partition(".")
            if cls is not None and head in ("self", "super") and attr and "." not in attr:
                if head == "self" and attr in cls.methods:
                    continue
                self.check_inherited_call(rel, line, where, cls, attr)
                continue
            dotted = self.upstream_name(facts, callee)
            if not dotted:
                continue
            old = self.before.lookup(dotted)
            if old is None or isinstance(old, ModuleFacts):
                continue
            new = self.after.lookup(dotted)
            if new is None:
                owner, _, name = dotted.rpartition(".")
                hint = ""
                if isinstance(old, Signature):
                    new_owner = self.after.lookup(owner)
                    old_owner = self.before.lookup(owner)
                    if isinstance(new_owner, ModuleFacts) and isinstance(old_owner, ModuleFacts):
                        hint = _renamed(old, set(old_owner.functions), new_owner.functions)
                    elif isinstance(new_owner, ClassFacts) and isinstance(old_owner, ClassFacts):
                        hint = _renamed(old, set(self.before.effective(old_owner).methods),
                                        self.after.effective(new_owner).methods)
                detail = f"called {name} is gone upstream" + (f"; renamed to {hint}?" if hint else "")
                self.add(rel, line, "removed-or-renamed", where, dotted, detail)
            elif isinstance(old, ClassFacts) and isinstance(new, ClassFacts):
                self.compare_init(rel, line, where, dotted, self.before.effective(old).methods.get("__init__"),
                                  self.after.effective(new).methods.get("__init__"))

    def check_inherited_call(self, rel: str, line: int, where: str, cls: ClassFacts, method: str) -> None:
        for base in cls.bases:
            old = self.before.lookup_class(base)
            if old is None:
                continue
            old_eff = self.before.effective(old)
            if method not in old_eff.methods:
                continue
            new = self.after.lookup_class(base)
            if new is None:
                return  # reported with the class
            new_eff = self.after.effective(new)
            if method not in new_eff.methods:
                hint = _renamed(old_eff.methods[method], set(old_eff.methods), new_eff.methods)
                detail = f"called {method} is gone upstream" + (f"; renamed to {hint}?" if hint else "")
                self.add(rel, line, "removed-or-renamed", where, f"{base}.{method}", detail)
            return


def contract_drift(fork: Tree, base: Tree, upstream: Tree, fork_files: set[str]) -> list[Drift]:
    """The contract drift of every fork file (added or changed by the fork)."""
    return DriftFinder(fork, base, upstream).run(fork_files)
