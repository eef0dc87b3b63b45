"""SHD301's analysis of one class, written once: which methods return a
pipeline payload on the other ranks (``IntermediateTensors``/``PPProxyTensors``,
or any return after a last-rank test), which tensors they collect for the last
rank (``aux_hidden_states.append(h)``, a helper, a ``capture=`` keyword), and
which of those the payload leaves behind. The rule runs it on the class it
visits; the ``pp_tap_drops`` facts (``drops``) run the same code on every
module, so that a runner path's finding can name the models it breaks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from checks.facts.classes import NonLiteral
from checks.pp_payload_drops_tensors.needles import DEFAULT_LAST_RANK, DEFAULT_PAYLOAD_CLASSES
from linter.api import call_name, last_name, name_matches, walk, walk_no_nested

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
# the rank contexts of a return (``Return.ctx``): LAST, NONLAST or 0 (unknown)
LAST, NONLAST = 1, -1

# -- small syntax helpers ----------------------------------------------------------


def statements(block: cst.BaseSuite | Sequence[cst.BaseStatement]) -> list[cst.CSTNode]:
    """Statements of a suite with simple statement lines flattened into their
    small statements (``x = 1; return x`` is two)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else block
    out: list[cst.CSTNode] = []
    for s in body:
        if isinstance(s, cst.SimpleStatementLine):
            out.extend(s.body)
        else:
            out.append(s)
    return out


def _terminates(block: cst.BaseSuite) -> bool:
    stmts = statements(block)
    return bool(stmts) and isinstance(stmts[-1], (cst.Return, cst.Raise))


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _root(node: cst.CSTNode) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


@dataclass
class Return:
    node: cst.Return
    ctx: int  # LAST, NONLAST or 0 (unknown)
    guard: cst.CSTNode | None  # the branch (suite) that made ctx NONLAST, if any


@dataclass
class Method:
    func: cst.FunctionDef
    returns: list[Return] = field(default_factory=list)


Drop = tuple[Return, list[str]]


class DropAnalysis:
    """The analysis under a rule's options (``ANALYSIS_DEFAULTS`` names them)."""

    def __init__(self, opts: Mapping[str, Any]) -> None:
        self.opts = opts

    def drops(self, cls: cst.ClassDef) -> Iterator[tuple[Method, list[Return], list[Drop]]]:
        """Per method of ``cls`` with a payload return: the method, its
        payload returns, and those that leave collected tensors behind (with
        the names they leave)."""
        for m in self._methods(cls):
            payloads = [r for r in m.returns if self._is_payload_return(r)]
            if payloads:
                yield m, payloads, self._dropped(m, payloads)

    def _methods(self, cls: cst.ClassDef) -> Iterator[Method]:
        for stmt in statements(cls.body):
            if isinstance(stmt, cst.FunctionDef):
                m = Method(stmt)
                self._block(statements(stmt.body), 0, None, m)
                yield m

    def _block(
        self, stmts: list[cst.CSTNode], ctx: int, guard: cst.CSTNode | None, m: Method
    ) -> None:
        for s in stmts:
            if isinstance(s, cst.Return):
                m.returns.append(Return(s, ctx, guard if ctx == NONLAST else None))
            elif isinstance(s, cst.If):
                after = self._if(s, ctx, guard, m)
                if after is not None:
                    # ``if last: return ...`` makes the rest of the block the
                    # other ranks' path (and the reverse)
                    ctx, guard = after, None
            elif isinstance(s, (cst.For, cst.While)):
                self._block(statements(s.body), ctx, guard, m)
                if s.orelse is not None:
                    self._block(statements(s.orelse.body), ctx, guard, m)
            elif isinstance(s, cst.With):
                self._block(statements(s.body), ctx, guard, m)
            elif isinstance(s, cst.Try):
                self._block(statements(s.body), ctx, guard, m)
                for h in s.handlers:
                    self._block(statements(h.body), ctx, guard, m)
                if s.orelse is not None:
                    self._block(statements(s.orelse.body), ctx, guard, m)
                if s.finalbody is not None:
                    self._block(statements(s.finalbody.body), ctx, guard, m)

    def _if(self, s: cst.If, ctx: int, guard: cst.CSTNode | None, m: Method) -> int | None:
        body_ctx, else_ctx = self._classify(s.test)
        b = body_ctx or ctx
        self._block(statements(s.body), b, s.body if body_ctx == NONLAST else guard, m)
        e = else_ctx or ctx
        else_guard = s.orelse if else_ctx == NONLAST else guard
        if isinstance(s.orelse, cst.If):
            self._if(s.orelse, e, else_guard, m)
        elif isinstance(s.orelse, cst.Else):
            self._block(statements(s.orelse.body), e, else_guard, m)
        if else_ctx and s.orelse is None and _terminates(s.body):
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
                # ``a and not last`` → body is on a non-last rank; the else
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
        if (
            isinstance(node, cst.Call)
            and last_name(call_name(node)) in self.opts["payload-classes"]
        ):
            return node
        return None

    def _is_payload_return(self, r: Return) -> bool:
        if self.payload_call(r.node.value) is not None:
            return True
        return r.ctx == NONLAST and r.node.value is not None

    def _accumulators(self, func: cst.FunctionDef) -> dict[str, cst.CSTNode]:
        pats = self.opts["accumulator-patterns"]
        helpers = self.opts["accumulator-helpers"]
        out: dict[str, cst.CSTNode] = {}

        def add(name: str | None, where: cst.CSTNode) -> None:
            if name and name_matches(name, pats):
                out.setdefault(name, where)

        for n in walk_no_nested(func):
            if isinstance(n, cst.Call):
                f = n.func
                if (
                    isinstance(f, cst.Attribute)
                    and f.attr.value in _MUTATORS
                    and isinstance(f.value, cst.Name)
                ):
                    add(f.value.value, n)
                    continue
                if not name_matches(last_name(call_name(n)), helpers):
                    helper_arg = None
                else:
                    # ``self._maybe_add_tap(taps, i, hidden)``: the list is
                    # the first argument; the others are what gets added
                    positional = [a.value for a in n.args if a.keyword is None and not a.star]
                    helper_arg = positional[0] if positional else None
                if isinstance(helper_arg, cst.Name):
                    add(helper_arg.value, n)
                for a in n.args:
                    if a.keyword is None or not name_matches(a.keyword.value, ("*captur*",)):
                        continue
                    # ``capture_output=aux.capture`` / ``capture=aux.append``,
                    # possibly only for some layers (``... if i in ids else None``)
                    v = a.value
                    for c in (v.body, v.orelse) if isinstance(v, cst.IfExp) else (v,):
                        if isinstance(c, cst.Attribute) and isinstance(c.value, cst.Name):
                            add(c.value.value, n)
                        elif isinstance(c, cst.Name):
                            add(c.value, n)
            elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                if isinstance(n.value, (cst.List, cst.Tuple)):
                    add(n.target.value, n)
            elif (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call)
                and name_matches(last_name(call_name(n.value)), helpers)
            ):
                # ``taps = self._maybe_add_tap([], 0, hidden)`` starts the list
                add(n.targets[0].target.value, n)
        return out

    def _carried_by_last(self, value: cst.BaseExpression | None, accs: Iterable[str]) -> set[str]:
        """Accumulators that are themselves returned (bare, in a tuple or list,
        or concatenated), not merely passed to something that is returned."""
        found: set[str] = set()

        def visit(v: cst.BaseExpression) -> None:
            if isinstance(v, cst.Name):
                found.add(v.value)
            elif isinstance(v, (cst.Tuple, cst.List)):
                for e in v.elements:
                    visit(e.value)
            elif isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
                visit(v.left)
                visit(v.right)

        if value is not None:
            visit(value)
        return found & set(accs)

    def _dropped(self, m: Method, payloads: list[Return]) -> list[tuple[Return, list[str]]]:
        accs = self._accumulators(m.func)
        if not accs:
            return []
        last: set[str] = set()
        for r in m.returns:
            if r in payloads or r.ctx == NONLAST:
                continue
            last |= self._carried_by_last(r.node.value, accs)
        if not last:
            return []
        out = []
        for r in payloads:
            carried = self._carried_by_payload(m.func, r, accs)
            if carried is None:
                continue
            missing = sorted(last - carried)
            if missing:
                out.append((r, missing))
        return out

    def _carried_by_payload(
        self, func: cst.FunctionDef, r: Return, accs: Mapping[str, cst.CSTNode]
    ) -> set[str] | None:
        """Accumulators the payload carries; ``None`` when it cannot be told
        (a ``**`` splat: whatever it unpacks may hold them)."""
        value = r.node.value
        assert value is not None
        for n in walk(value):
            if isinstance(n, cst.StarredDictElement):
                return None
            if isinstance(n, cst.Arg) and n.star == "**":
                return None
        names = _names_in(value)
        carried = names & set(accs)
        if r.guard is not None:
            # anything the non-last branch does with the taps (a key written
            # into the payload, a helper that packs them) counts as carrying
            carried |= _names_in(r.guard) & set(accs)
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
                carried |= _names_in(n) & set(accs)
        return carried


def own_flag(node: cst.ClassDef, flag: str) -> tuple[Any, cst.CSTNode] | None:
    """The value ``flag`` is given in the class body (``True``/``False``/``None``
    or a ``NonLiteral``) and its target; None when the class does not set it."""
    for s in statements(node.body):
        target = value = None
        if isinstance(s, cst.Assign) and len(s.targets) == 1:
            target, value = s.targets[0].target, s.value
        elif isinstance(s, cst.AnnAssign) and s.value is not None:
            target, value = s.target, s.value
        if isinstance(target, cst.Name) and target.value == flag and value is not None:
            if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[value.value], target
            return NonLiteral(cst.Module([]).code_for_node(value)), target
    return None

