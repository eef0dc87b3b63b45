"""SHD301's analysis of one class, written once: which methods return a
pipeline payload on the other ranks (``IntermediateTensors``/``PPProxyTensors``,
or any return after a last-rank test), which tensors they collect for the last
rank (``aux_hidden_states.append(h)``, a helper, a ``capture=`` keyword), and
which of those the payload leaves behind. The rule runs it on the class it
visits; the ``pp_tap_drops`` facts (``drops``) run it on every module, so that
a runner path's finding can name the models it breaks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from checks.facts.classes import NonLiteral
from checks.pp_payload_drops_tensors.needles import DEFAULT_LAST_RANK, DEFAULT_PAYLOAD_CLASSES
from linter.api import call_name, dotted, last_name, name_matches, walk, walk_no_nested
from linter.syntax import positional_args

DEFAULT_FLAGS = ("supports_aux_hidden_states_over_pp",)
# ``hidden`` alone would make every ``hidden_states`` a candidate; it only
# becomes an accumulator when appended to, so the pattern stays cheap to match
DEFAULT_ACCUMULATORS = ("*aux*", "*hidden*", "*tap*", "*captur*")
DEFAULT_HELPERS = ("*add*", "*captur*", "*collect*", "*record*", "*append*", "*tap*")
# the options the analysis reads, at their defaults (what the facts use)
ANALYSIS_DEFAULTS: Mapping[str, Any] = {
    "payload-classes": DEFAULT_PAYLOAD_CLASSES,
    "last-rank-accessors": DEFAULT_LAST_RANK,
    "accumulator-patterns": DEFAULT_ACCUMULATORS,
    "accumulator-helpers": DEFAULT_HELPERS,
}
_MUTATORS = {"append", "extend", "insert", "capture"}
_LITERALS = {"True": True, "False": False, "None": None}
# the rank contexts of a return (``Return.ctx``): LAST, NONLAST or 0 (unknown)
LAST, NONLAST = 1, -1


def statements(block: cst.BaseSuite | Sequence[cst.BaseStatement]) -> list[cst.CSTNode]:
    """Statements of a suite with simple statement lines flattened into their
    small statements (``x = 1; return x`` is two)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else block
    out: list[cst.CSTNode] = []
    for s in body:
        out.extend(s.body if isinstance(s, cst.SimpleStatementLine) else [s])
    return out


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _root(node: cst.CSTNode) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def base_names(cls: cst.ClassDef) -> list[str]:
    """The dotted names of the class's bases (not its keywords)."""
    return [b for b in (dotted(a.value) for a in cls.bases if a.keyword is None) if b]


def own_flags(cls: cst.ClassDef, flags: Sequence[str]) -> dict[str, Any]:
    """The ``flags`` the class body sets, with the value each is first given
    (``True``/``False``/``None`` or a ``NonLiteral``)."""
    out: dict[str, Any] = {}
    for s in statements(cls.body):
        if isinstance(s, cst.Assign) and len(s.targets) == 1:
            target, value = s.targets[0].target, s.value
        elif isinstance(s, cst.AnnAssign) and s.value is not None:
            target, value = s.target, s.value
        else:
            continue
        if isinstance(target, cst.Name) and target.value in flags and target.value not in out:
            if isinstance(value, cst.Name) and value.value in _LITERALS:
                out[target.value] = _LITERALS[value.value]
            else:
                out[target.value] = NonLiteral(cst.Module([]).code_for_node(value))
    return out


@dataclass
class Return:
    node: cst.Return
    ctx: int  # LAST, NONLAST or 0 (unknown)
    guard: cst.CSTNode | None  # the branch (suite) that made ctx NONLAST, if any


Drop = tuple[Return, list[str]]


class DropAnalysis:
    """The analysis under a rule's options (``ANALYSIS_DEFAULTS`` names them)."""

    def __init__(self, opts: Mapping[str, Any]) -> None:
        self.opts = opts

    def drops(self, cls: cst.ClassDef) -> Iterator[tuple[cst.FunctionDef, list[Return], list[Drop]]]:
        """Per method of ``cls`` with a payload return: the method, its
        payload returns, and those that leave collected tensors behind (with
        the names they leave)."""
        for func in statements(cls.body):
            if not isinstance(func, cst.FunctionDef):
                continue
            returns: list[Return] = []
            self._block(statements(func.body), 0, None, returns)
            payloads = [r for r in returns if self._is_payload_return(r)]
            if payloads:
                yield func, payloads, self._dropped(func, returns, payloads)

    def _block(self, stmts: list[cst.CSTNode], ctx: int, guard: cst.CSTNode | None, m: list[Return]) -> None:
        """Collect the returns of ``stmts`` into ``m`` with their rank context."""
        for s in stmts:
            if isinstance(s, cst.Return):
                m.append(Return(s, ctx, guard if ctx == NONLAST else None))
            elif isinstance(s, cst.If):
                after = self._if(s, ctx, guard, m)
                if after is not None:
                    # ``if last: return ...`` makes the rest of the block the
                    # other ranks' path (and the reverse)
                    ctx, guard = after, None
            elif isinstance(s, (cst.For, cst.While, cst.With, cst.Try)):
                # the body, then (in source order) handlers, ``else``, ``finally``
                parts = [s, *getattr(s, "handlers", ()), getattr(s, "orelse", None), getattr(s, "finalbody", None)]
                for part in parts:
                    if part is not None:
                        self._block(statements(part.body), ctx, guard, m)

    def _if(self, s: cst.If, ctx: int, guard: cst.CSTNode | None, m: list[Return]) -> int | None:
        body_ctx, else_ctx = self._classify(s.test)
        self._block(statements(s.body), body_ctx or ctx, s.body if body_ctx == NONLAST else guard, m)
        e = else_ctx or ctx
        else_guard = s.orelse if else_ctx == NONLAST else guard
        if isinstance(s.orelse, cst.If):
            self._if(s.orelse, e, else_guard, m)
        elif isinstance(s.orelse, cst.Else):
            self._block(statements(s.orelse.body), e, else_guard, m)
        stmts = statements(s.body)
        if else_ctx and s.orelse is None and stmts and isinstance(stmts[-1], (cst.Return, cst.Raise)):
            return else_ctx
        return None

    def _classify(self, test: cst.BaseExpression) -> tuple[int, int]:
        """(context of the body, context of the else branch) for an ``if``."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            b, e = self._classify(test.expression)
            return e, b
        if isinstance(test, cst.BooleanOperation):
            left, right = self._classify(test.left), self._classify(test.right)
            if isinstance(test.operator, cst.And):
                # ``a and not last``: the body is on a non-last rank; the else
                # branch could be either
                return (left[0] or right[0]), 0
            return 0, (left[1] or right[1])
        if isinstance(test, cst.Call) and not test.args:
            test = test.func
        if isinstance(test, (cst.Attribute, cst.Name)):
            leaf = test.attr.value if isinstance(test, cst.Attribute) else test.value
            if name_matches(leaf, self.opts["last-rank-accessors"]):
                return LAST, NONLAST
        return 0, 0

    # -- payloads and accumulators ---------------------------------------------
    def payload_call(self, node: cst.CSTNode | None) -> cst.Call | None:
        if isinstance(node, cst.Call) and last_name(call_name(node)) in self.opts["payload-classes"]:
            return node
        return None

    def _is_payload_return(self, r: Return) -> bool:
        value = r.node.value
        return self.payload_call(value) is not None or (r.ctx == NONLAST and value is not None)

    def _accumulators(self, func: cst.FunctionDef) -> set[str]:
        pats = self.opts["accumulator-patterns"]
        helpers = self.opts["accumulator-helpers"]
        names: list[str] = []
        for n in walk_no_nested(func):
            if isinstance(n, cst.Call):
                f = n.func
                if isinstance(f, cst.Attribute) and f.attr.value in _MUTATORS and isinstance(f.value, cst.Name):
                    names.append(f.value.value)
                    continue
                # ``self._maybe_add_tap(taps, i, hidden)``: the list is the
                # first argument; the others are what gets added
                helper = name_matches(last_name(call_name(n)), helpers)
                positional = positional_args(n) if helper else []
                if positional and isinstance(positional[0], cst.Name):
                    names.append(positional[0].value)
                for a in n.args:
                    if a.keyword is None or not name_matches(a.keyword.value, ("*captur*",)):
                        continue
                    # ``capture_output=aux.capture`` / ``capture=aux.append``,
                    # possibly only for some layers (``... if i in ids else None``)
                    v = a.value
                    for c in (v.body, v.orelse) if isinstance(v, cst.IfExp) else (v,):
                        if isinstance(c, cst.Attribute) and isinstance(c.value, cst.Name):
                            names.append(c.value.value)
                        elif isinstance(c, cst.Name):
                            names.append(c.value)
            elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                if isinstance(n.value, (cst.List, cst.Tuple)):
                    names.append(n.target.value)
            elif (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call)
                and name_matches(last_name(call_name(n.value)), helpers)
            ):
                # ``taps = self._maybe_add_tap([], 0, hidden)`` starts the list
                names.append(n.targets[0].target.value)
        return {name for name in names if name_matches(name, pats)}

    def _dropped(self, func: cst.FunctionDef, returns: list[Return], payloads: list[Return]) -> list[Drop]:
        accs = self._accumulators(func)
        if not accs:
            return []
        # the accumulators the last rank returns itself (bare, in a tuple or
        # list, or concatenated), not merely passed to something returned
        last: set[str] = set()
        todo = [r.node.value for r in returns if r not in payloads and r.ctx != NONLAST]
        while todo:
            v = todo.pop()
            if isinstance(v, cst.Name):
                last.add(v.value)
            elif isinstance(v, (cst.Tuple, cst.List)):
                todo.extend(e.value for e in v.elements)
            elif isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
                todo.extend((v.left, v.right))
        last &= accs
        if not last:
            return []
        out = []
        for r in payloads:
            carried = self._carried_by_payload(func, r, accs)
            if carried is not None and last - carried:
                out.append((r, sorted(last - carried)))
        return out

    def _carried_by_payload(self, func: cst.FunctionDef, r: Return, accs: set[str]) -> set[str] | None:
        """Accumulators the payload carries; ``None`` when it cannot be told
        (a ``**`` splat: whatever it unpacks may hold them)."""
        value = r.node.value
        assert value is not None
        for n in walk(value):
            if isinstance(n, cst.StarredDictElement) or (isinstance(n, cst.Arg) and n.star == "**"):
                return None
        carried = _names_in(value) & accs
        if r.guard is not None:
            # anything the non-last branch does with the taps (a key written
            # into the payload, a helper that packs them) counts as carrying
            carried |= _names_in(r.guard) & accs
        # writes into the container the payload is built from: ``p = {...};
        # p["k"] = aux; p.update(pack(aux)); return Payload(p)`` or ``return p``
        built_from: set[str] = set()
        call = self.payload_call(value)
        if isinstance(value, cst.Name):
            built_from.add(value.value)
        elif call is not None and call.args and isinstance(call.args[0].value, cst.Name):
            built_from.add(call.args[0].value.value)
        for n in walk_no_nested(func):
            targets: list[cst.CSTNode] = []
            if isinstance(n, cst.Assign):
                targets = [t.target for t in n.targets]
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
                targets = [n.target]
            elif (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Attribute)
                and n.func.attr.value in {"update", "__setitem__", "setdefault"}
            ):
                targets = [n.func.value]
            if any(_root(t) in built_from for t in targets):
                carried |= _names_in(n) & accs
        return carried
