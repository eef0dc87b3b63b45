"""SHD302 pp-cross-rank-module-alias: a draft model wired to the target's
embedding or LM head by reference, with no pipeline-parallel guard."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from checks.pp_cross_rank_module_alias.pipeline_layout import PipelineLayoutIndex
from checks.pp_payload_drops_tensors.locate import is_sglang, note_at
from checks.pp_payload_drops_tensors.needles import caseless_words
from linter.api import Needles, Note, Option, ProjectFacts, Rule, Severity
from linter.api import call_name, dotted, last_name, name_matches, walk, walk_no_nested

DEFAULT_FIRST_RANK = tuple(
    "embed_tokens embed_in wte word_embeddings tok_embeddings embedding embeddings"
    " get_input_embeddings".split()
)
DEFAULT_LAST_RANK = ("lm_head", "lm_heads", "get_output_embeddings")
DEFAULT_GUARDS = tuple(
    "is_first_rank is_last_rank is_pipeline_first_stage is_pipeline_last_stage PPMissingLayer"
    " *pp_size* *pp_world_size* *pipeline_parallel_size* *pp_rank*".split()
)
DEFAULT_SETTERS = tuple(
    "set_input_embeddings set_output_embeddings set_embed* set_lm_head* set_*_head".split()
)

FIRST, LAST = "first", "last"

# -- what the text must hold (the docstring's Prefilter) -------------------------
# Under the default options every finding is an alias whose source
# (``_source``) is, directly or through a local assigned it in the same
# function: an attribute chain whose last segment named like a default module
# (any case) is followed only by ``.weight``/``.bias``/``.data`` and, for a
# getter, an empty call, and then ends the value; ``getattr(obj, "<default
# module name>"[, ...])`` (or a key spelled with an escape); or one end of
# ``a, b = t.get_embed_and_head()``. Between tokens: blanks, line
# continuations, comments. The definition gate: an alias, its source and the
# guards of the functions it is nested in lie in that function; the one guard
# read elsewhere, a method of the class raising under a pipeline test
# (``_class_refuses_pp``), holds a guard name's literal part or
# "pp"/"pipeline", then ``raise`` (``_refusal``).
_MODULE_NAMES = f"(?:{'|'.join(DEFAULT_FIRST_RANK + DEFAULT_LAST_RANK)})"
_GAP = r"(?:[ \t\r\n\\]|#[^\n]*\n)*"
_IDENT = r"[^\W\d]\w*"
_QUOTE = r"""(?:'''|\"\"\"|'|")"""
_CHAIN_SOURCE = (
    rf"\.{_GAP}(?i:{_MODULE_NAMES})(?!\w)(?:{_GAP}\.{_GAP}(?:weight|bias|data)(?!\w))*"
    rf"[ \t]*(?:\({_GAP}\)[ \t]*)?(?:[\r\n\\;#),\]}}]|\Z|(?:if|or|else)(?!\w))"
)
_GETATTR_SOURCE = (
    rf"getattr(?:{_GAP}\))*{_GAP}\((?:{_GAP}\()*{_GAP}{_IDENT}(?:{_GAP}\.{_GAP}{_IDENT})*"
    rf"(?:{_GAP}\))*{_GAP},{_GAP}[rRuU]?{_QUOTE}(?:(?i:{_MODULE_NAMES}){_QUOTE}|[^'\"\n\\]*\\)"
)
_PAIR_SOURCE = r"embed\w*head|head\w*embed"
ALIAS_NEEDLES = Needles(regex=f"{_CHAIN_SOURCE}|{_GETATTR_SOURCE}|{_PAIR_SOURCE}")
# ``getattr(obj, <a key spelled with an escape>``, with any string prefix
# (the key is the string's value, a configured glob may match bytes' ``b'...'``)
_GETATTR_ESCAPED_KEY = (
    rf"getattr(?:{_GAP}\))*{_GAP}\((?:[^,#'\"]|#[^\n]*\n)*,{_GAP}[A-Za-z]{{0,2}}"
    r"""(?:'''(?:(?!''')[^\\])*|\"\"\"(?:(?!\"\"\")[^\\])*|'[^'\n\\]*|"[^"\n\\]*)\\"""
)


def _refusal(guards: Sequence[str]) -> str:
    """A regex that finds a text holding, in any case, a guard name's
    literal part or "pp"/"pipeline" (what the test of a ``_mentions_guard``
    owner ``.world_size`` holds), then ``raise`` (the ``if`` body after the
    test); ``raise`` alone when a guard glob has no literal part. The first
    such word is taken for good (atomic): one pass over the text."""
    words = caseless_words(guards)
    if words is None:
        return "raise"
    return rf"\A(?>[\s\S]*?(?:{'|'.join(words)}|(?i:pp|pipeline)))[\s\S]*?raise"


_DEFAULT_REFUSAL = _refusal(DEFAULT_GUARDS)
DEFINITION_NEEDLES = Needles(regex=f"{ALIAS_NEEDLES.regex}|{_DEFAULT_REFUSAL}")


def alias_needles(options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
    """The (file, definition) needles under ``options``: the default ones for
    default module and guard names (or some of them), else a configured
    module name's literal part in any case, a getattr key spelled with an
    escape, or the pair, and for a definition a refusal too; every text,
    and no definition gate, when a module glob has no literal part."""
    modules = (
        *options.get("first-rank-modules", DEFAULT_FIRST_RANK),
        *options.get("last-rank-modules", DEFAULT_LAST_RANK),
    )
    guards = tuple(options.get("guard-names", DEFAULT_GUARDS))
    default_modules = set(modules) <= {*DEFAULT_FIRST_RANK, *DEFAULT_LAST_RANK}
    if default_modules and set(guards) <= set(DEFAULT_GUARDS):
        return ALIAS_NEEDLES, DEFINITION_NEEDLES
    if default_modules:
        file = ALIAS_NEEDLES
    else:
        words = caseless_words(modules)
        if words is None:
            return Needles(), None
        file = Needles(regex="|".join([*words, _GETATTR_ESCAPED_KEY, _PAIR_SOURCE]))
    return file, Needles(regex=f"{file.regex}|{_refusal(guards)}")


def _without_pipeline(facts: ProjectFacts, options: Mapping[str, Any]) -> bool:
    if options.get("assume-pipeline-parallel"):
        return False
    index = facts.index("pipeline_layout")
    return isinstance(index, PipelineLayoutIndex) and index.without_pipeline(
        options["first-rank-modules"]
    )


@dataclass(frozen=True)
class _Source:
    """A module reached through another object: ``target.model.embed_tokens``
    is ``owner="target.model"``, the rank it lives on and the text borrowed."""

    owner: str
    rank: str
    text: str


@dataclass(frozen=True)
class _Alias:
    node: cst.CSTNode
    receiver: str
    source: _Source


# what may follow a borrowed module and still share its storage: a parameter
# (``lm_head.weight``) or its tensor (``.weight.data``); anything else
# (``.dtype``, ``.shape``, ``.num_embeddings``) is a value read from it
_ALIAS_TAIL = frozenset({"weight", "bias", "data"})


def _raises(block: cst.BaseSuite) -> bool:
    return any(isinstance(s, cst.Raise) for s in walk_no_nested(block))


def _contains(a: str, b: str) -> bool:
    """Whether object ``a`` is ``b`` or holds it (``self`` holds ``self.model``)."""
    return a == b or b.startswith(a + ".")


class PpCrossRankModuleAlias(Rule):
    """## What it finds
    A function that wires one model's module to another model's input
    embedding or LM head by reference — `draft.model.embed_tokens =
    target.model.embed_tokens`, `setattr(draft, "embed_tokens", ...)`,
    `draft.set_input_embeddings(target.get_input_embeddings())`, or
    `embed, head = target.get_embed_and_head(); draft.set_embed_and_head(embed,
    head)` — when the borrowed module lives on a pipeline rank other than the
    one the draft runs on, and nothing in the function (or the functions it
    is nested in) looks at the pipeline layout: no `pp_size`/`world_size`
    check, no `is_first_rank`/`is_last_rank`, no `PPMissingLayer`.

    Drafts run on the last pipeline rank in vLLM and SGLang, so by default
    borrowing the LM head alone is fine and borrowing the embedding is not.
    One finding per root cause: a module of one rank borrowed from one owner
    in one function is reported once, at its first site, with the function's
    other sites as related locations; the message names what that statement
    borrows (the head only where it is borrowed, "no rank holds both" when
    the function borrows both ends). An owner may be written with a
    subscript (`self.step_runners[i].model.set_embed_and_head(...)`).

    Also counted as a guard: a method of the same class raising under a
    pipeline test (a validator refusing PP up front), and a check of the
    borrowed module that raises (`if not isinstance(embed,
    VocabParallelEmbedding): raise ...`, `assert embed is not None`): how a
    placeholder on the wrong rank is refused. One model, not an alias across
    models: a model tying its own head to its own embedding
    (`self.lm_head.weight = self.model.embed_tokens.weight`, whatever the head
    is called: `self.embed_out.weight`, `self.output.weight`), or a module
    built in the function, given the embedding's weight and placed in the
    embedding's own model (`head = nn.Linear(...); head.weight =
    model.model.embed_tokens.weight; model.lm_head = head`). Not a source: a
    getter taken without a call (`wrapper.get_input_embeddings =
    core.get_input_embeddings`, a method), a value read from the module
    (`embed_tokens.weight.dtype`, `.num_embeddings`): a source ends at the
    module, a parameter or its tensor (`.weight`, `.bias`, `.data`). Setters
    installing what their caller passes (`def set_embed_and_head(self, embed,
    head)`) are left to their callers.

    Only in a project that places modules on pipeline ranks: when at least
    five of its modules build an input embedding (an attribute named like a
    `first-rank-modules` entry assigned an `*Embedding*(...)` construction)
    and no file holds a pipeline marker (`PPMissingLayer`, or an identifier
    containing `first_rank`, `last_rank`, `first_pp_rank`, `last_pp_rank`,
    `pp_rank`, `is_first_stage`, `is_last_stage`, `is_pipeline_first_stage` or
    `is_pipeline_last_stage`), the engine has no pipeline parallelism (every
    rank holds the whole model, as in LMDeploy's PyTorch engine) and nothing
    is reported. (A draft model file linted alone, or with a few others,
    builds its own embedding and need not mention the pipeline.)

    Deliberately left out: a function that silently `return`s when the
    pipeline size is not 1. On vLLM 0.33 and SGLang 0.5.23 every such early
    return sits where the engine already refuses PP for that model (for
    example a draft class that does not implement `SupportsPP`), which the
    function cannot show; it would be noise.

    ## Why it breaks
    With pipeline parallelism the input embedding is built on the first rank
    and the LM head on the last; the other ranks hold a `PPMissingLayer`
    placeholder. No rank holds both, so a draft that reuses the target's
    embedding on the last rank gets the placeholder: start-up fails (the
    engine refuses the model, or the draft's first forward crashes), or worse,
    a half-fixed version runs with a wrong embedding.

    ## Example
    Below, a draft loader points the draft's `embed_tokens` and `lm_head` at
    the target's; the finding is on the embedding (the draft runs on the last
    rank) and names the head too.

    ## Fix
    (SGLang: resolve the pair for the draft's stage, as
    `srt/speculative/pp_draft_embedding.py` does in 0.5.23, or raise when
    `pp_size > 1`.) Check the pipeline size first and fail loudly (`if pp_size > 1: raise
    NotImplementedError(...)`), or place the draft on the last rank and
    broadcast the embedding weights from the first rank once at load time, or
    let the draft load its own embedding from its checkpoint under PP.

    ## Options
    - `first-rank-modules` (list[str], default `["embed_tokens", "embed_in",
      "wte", "word_embeddings", "tok_embeddings", "embedding", "embeddings",
      "get_input_embeddings"]`): attributes (or getter methods) of modules
      that live on the first pipeline rank.
    - `last-rank-modules` (list[str], default `["lm_head", "lm_heads",
      "get_output_embeddings"]`): the same for the last rank.
    - `draft-rank` (str, default `"last"`): where the project runs its draft
      model: `"last"`, `"first"`, or `"any"` (report every borrowed module).
    - `guard-names` (list[str], default `["is_first_rank", "is_last_rank",
      "is_pipeline_first_stage", "is_pipeline_last_stage", "PPMissingLayer",
      "*pp_size*", "*pp_world_size*", "*pipeline_parallel_size*",
      "*pp_rank*"]`): names whose mention in the function counts as a
      pipeline guard (besides `<pp group>.world_size`).
    - `setter-patterns` (list[str], default `["set_input_embeddings",
      "set_output_embeddings", "set_embed*", "set_lm_head*", "set_*_head"]`):
      methods that install modules they are given.
    - `assume-pipeline-parallel` (bool, default `false`): report even in a
      project where no file holds a pipeline marker (for an engine whose
      pipeline code uses other names).

    Prefilter: a file is parsed only when its text holds an attribute named
    like a default module name (any case) that may end a source (followed,
    after `.weight`/`.bias`/`.data` and a getter's `()`, by the end of the
    value: a line end, `)`, `,`, `;`, a comment, `if`, `or`, `else`...),
    `getattr` given one as its key, or a name holding "embed" and "head".
    Under configured module names: the literal part of one in any case (a
    glob with none, such as `*`, reads every file), a `getattr` key spelled
    with an escape, or the pair. libcst then reads the module-level code and
    only the definitions holding the same or that may refuse pipeline
    parallelism (a guard name, or "pp"/"pipeline", then `raise`).
    """

    code = "SHD302"
    name = "pp-cross-rank-module-alias"
    summary = "A draft model borrows a module that lives on another pipeline rank"
    severity = Severity.ERROR
    needles = ALIAS_NEEDLES
    definition_needles = DEFINITION_NEEDLES
    # (a finding reads only the definitions the needles match, their classes'
    # headers and the facts: not a helper or method they name)
    follows_definitions = False
    facts = ("pipeline_layout",)
    tags = ("correctness", "pipeline-parallel", "speculative-decoding")
    options: ClassVar[Mapping[str, Option]] = {
        "first-rank-modules": Option(DEFAULT_FIRST_RANK, "list[str]", "first-rank modules"),
        "last-rank-modules": Option(DEFAULT_LAST_RANK, "list[str]", "last-rank modules"),
        "draft-rank": Option(
            "last",
            "str",
            "where the draft runs: last, first or any",
            choices=("last", "first", "any"),
        ),
        "guard-names": Option(DEFAULT_GUARDS, "list[str]", "pipeline guard names"),
        "setter-patterns": Option(DEFAULT_SETTERS, "list[str]", "module-installing setters"),
        "assume-pipeline-parallel": Option(
            False,
            "bool",
            "report even where no file of the project places modules on pipeline ranks",
        ),
    }

    @classmethod
    def declared_needles(cls, options: Mapping[str, Any]) -> tuple[Needles, Needles | None]:
        # (see ``needles``)
        return alias_needles(options)

    @classmethod
    def candidate_facts(
        cls, module: str, path: str, facts: ProjectFacts, options: Mapping[str, Any]
    ) -> bool:
        # (the rule reports nothing in a project without pipeline ranks)
        return not _without_pipeline(facts, options)

    def __init__(self, ctx: Any, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._no_pipeline: bool | None = None  # (see _without_pipeline, read once per file)
        # per function: ``local -> receiver`` for its ``receiver = local``
        # statements (a local placed in two places left out; see _owner)
        self._installed: dict[str, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._no_pipeline is None:
            self._no_pipeline = _without_pipeline(self.ctx.facts, self.opts)
        if self._no_pipeline:
            return
        aliases = list(self._aliases(node))
        wrong = [a for a in aliases if a.source.rank != self.opts["draft-rank"]]
        if not wrong:
            return
        # (the function being visited is the innermost of these)
        enclosing = [n for n in self.ctx.scope_nodes if isinstance(n, cst.FunctionDef)]
        if any(self._mentions_guard(f) for f in enclosing) or self._validated(node, aliases):
            return
        cls = self.ctx.current_class
        if cls is not None and self._class_refuses_pp(cls):
            return
        # one finding per root cause: a module of one rank borrowed from one
        # owner in this function; its other sites are notes
        groups: dict[tuple[str, str], list[_Alias]] = {}
        for a in wrong:
            groups.setdefault((a.source.owner, a.source.rank), []).append(a)
        for group in groups.values():
            self._report_group(node, group, aliases)

    def _report_group(
        self, func: cst.FunctionDef, group: list[_Alias], aliases: list[_Alias]
    ) -> None:
        first = group[0]
        rank = first.source.rank
        if rank == FIRST:
            where, other, what, other_what = "first", "last", "input embedding", "LM head"
        else:
            where, other, what, other_what = "last", "first", "LM head", "input embedding"

        def together(a: _Alias) -> str:
            """What the same statement borrows from the other end."""
            texts = {b.source.text for b in aliases if b.node is a.node and b.source.rank != rank}
            return f" together with {', '.join(f'`{w}`' for w in sorted(texts))}" if texts else ""

        with_ = together(first)
        msg = (
            f"`{first.receiver}` borrows `{first.source.text}` by reference{with_}, but the "
            f"{what} exists only on the {where} pipeline rank"
        )
        elsewhere = [
            b for b in aliases if b.source.rank != rank and not any(b.node is a.node for a in group)
        ]
        notes: list[Note] = []
        if with_:
            msg += f" and the {other_what} only on the {other}: no rank holds both"
        elif elsewhere:
            shown = ", ".join(sorted({f"`{b.source.text}`" for b in elsewhere}))
            msg += (
                f"; `{func.name.value}` also borrows {shown}, which exists only on the {other}: "
                "no rank holds both"
            )
            notes = [
                note_at(self.ctx, b.node, f"`{b.receiver}` borrows `{b.source.text}` here")
                for b in elsewhere
            ]
        msg += f"; `{func.name.value}` never checks the pipeline layout"
        for a in group[1:]:
            notes.append(
                note_at(self.ctx, a.node, f"`{a.receiver}` borrows it here too{together(a)}")
            )
        if is_sglang(self.ctx):
            fix = (
                "Resolve the pair for the draft's rank first (an embedding the draft loads or "
                "receives on the last rank when `self.pp_group.world_size > 1`), or raise when "
                "`pp_size > 1`."
            )
        else:
            fix = (
                "Check the pipeline first: raise when `get_pp_group().world_size > 1` (or when the "
                "module is a `PPMissingLayer`), or give the draft its own copy on its rank (load it "
                "from the checkpoint, or broadcast the embedding from the first rank once at load "
                "time)."
            )
        self.report(
            first.node,
            msg,
            notes=[
                *notes,
                (
                    f"With pipeline parallelism every rank but the {where} holds a `PPMissingLayer` "
                    "placeholder there; the draft runs on one rank and gets the placeholder: start-up "
                    "fails, or the draft's first forward crashes on it."
                ),
                fix,
            ],
        )

    # -- finding aliases ---------------------------------------------------------
    def _rank_of(self, name: str | None) -> str | None:
        if name_matches(name, self.opts["first-rank-modules"]):
            return FIRST
        if name_matches(name, self.opts["last-rank-modules"]):
            return LAST
        return None

    def _source(self, expr: cst.BaseExpression, locals_: dict[str, _Source]) -> _Source | None:
        """The rank-placed module ``expr`` reaches on some object."""
        if isinstance(expr, cst.Name):
            return locals_.get(expr.value)
        # ``getattr(t, "embed_tokens", None) or getattr(t, "embedding", None)``
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            return self._source(expr.left, locals_) or self._source(expr.right, locals_)
        if isinstance(expr, cst.IfExp):
            return self._source(expr.body, locals_) or self._source(expr.orelse, locals_)
        # ``getattr(target, "embed_tokens"[, None])``
        if isinstance(expr, cst.Call) and call_name(expr) == "getattr" and len(expr.args) >= 2:
            obj = dotted(expr.args[0].value)
            key = expr.args[1].value
            if obj and isinstance(key, cst.SimpleString):
                leaf = str(key.evaluated_value)
                rank = None if leaf.startswith("get_") else self._rank_of(leaf)
                if rank:
                    return _Source(obj, rank, f"{obj}.{leaf}")
            return None
        # ``target.get_input_embeddings()``
        if isinstance(expr, cst.Call) and not expr.args:
            expr_name = dotted(expr.func)
            if expr_name and "." in expr_name:
                owner, _, leaf = expr_name.rpartition(".")
                rank = self._rank_of(leaf)
                if rank:
                    return _Source(owner, rank, f"{expr_name}()")
            return None
        chain = dotted(expr)
        if not chain or "." not in chain:
            return None
        parts = chain.split(".")
        # the module is the last rank-placed segment: ``t.lm_head.weight``
        # borrows the head's parameter, which lives where the head does
        for i in range(len(parts) - 1, 0, -1):
            if parts[i].startswith("get_"):
                continue  # ``core.get_input_embeddings``: the method, not the module
            rank = self._rank_of(parts[i])
            if rank:
                if not set(parts[i + 1 :]) <= _ALIAS_TAIL:
                    return None  # ``embed_tokens.weight.dtype``: a value read, no alias
                return _Source(".".join(parts[:i]), rank, chain)
        return None

    def _aliases(self, func: cst.FunctionDef) -> Iterator[_Alias]:
        locals_: dict[str, _Source] = {}
        nodes = list(walk_no_nested(func.body))
        self._installed = {}
        twice: set[str] = set()
        for n in nodes:
            if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name):
                for t in n.targets:
                    receiver = dotted(t.target)
                    if receiver and "." in receiver:
                        local = n.value.value
                        if self._installed.setdefault(local, receiver) != receiver:
                            twice.add(local)
        for local in twice:
            del self._installed[local]
        for n in nodes:
            if isinstance(n, cst.Assign):
                yield from self._assign(n, locals_)
            elif isinstance(n, cst.Call):
                yield from self._call(n, locals_)

    def _assign(self, n: cst.Assign, locals_: dict[str, _Source]) -> Iterator[_Alias]:
        value = n.value
        for t in n.targets:
            target = t.target
            if isinstance(target, cst.Name):
                src = self._source(value, locals_)
                if src is not None:
                    locals_[target.value] = src
                else:
                    locals_.pop(target.value, None)
                continue
            if isinstance(target, cst.Tuple):
                self._unpack_pair(target, value, locals_)
                continue
            receiver = dotted(target)
            src = self._source(value, locals_)
            if (
                receiver
                and src is not None
                and "." in receiver
                and self._cross(self._owner(receiver), src)
            ):
                yield _Alias(n, receiver, src)

    def _unpack_pair(
        self, target: cst.Tuple, value: cst.BaseExpression, locals_: dict[str, _Source]
    ) -> None:
        """``embed, head = target.get_embed_and_head()``: a getter that hands
        out both ends of the pipeline at once."""
        names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        for nm in names:
            locals_.pop(nm, None)
        if len(names) != 2 or not isinstance(value, cst.Call):
            return
        fn = dotted(value.func)
        leaf = last_name(fn) or ""
        if fn and "." in fn and "embed" in leaf and "head" in leaf:
            owner = fn.rpartition(".")[0]
            locals_[names[0]] = _Source(owner, FIRST, f"{fn}()[0]")
            locals_[names[1]] = _Source(owner, LAST, f"{fn}()[1]")

    def _call(self, n: cst.Call, locals_: dict[str, _Source]) -> Iterator[_Alias]:
        fn = call_name(n)
        if fn == "setattr" and len(n.args) >= 3:
            obj = dotted(n.args[0].value)
            key = n.args[1].value
            src = self._source(n.args[2].value, locals_)
            attr = str(key.evaluated_value) if isinstance(key, cst.SimpleString) else "..."
            if obj and src is not None and self._cross(self._owner(f"{obj}.{attr}"), src):
                yield _Alias(n, f"{obj}.{attr}", src)
            return
        if (
            not fn
            and isinstance(n.func, cst.Attribute)
            and name_matches(n.func.attr.value, self.opts["setter-patterns"])
        ):
            # ``runners[i].model.set_embed_and_head(...)``: an owner written
            # with a subscript, compared by its text
            fn = f"{' '.join(self.ctx.code_for(n.func.value).split())}.{n.func.attr.value}"
        if not fn or "." not in fn or not name_matches(last_name(fn), self.opts["setter-patterns"]):
            return
        owner = fn.rpartition(".")[0]
        for a in n.args:
            src = self._source(a.value, locals_)
            if src is not None and self._cross(owner, src):
                yield _Alias(n, owner, src)

    def _owner(self, receiver: str) -> str:
        """The object whose module ``receiver`` replaces: ``draft.model`` for
        ``draft.model.embed_tokens``; with no rank-placed segment, the object
        before the last one, or for a parameter the one holding its module (a
        model tying its own head, whatever it is called: ``self`` for
        ``self.embed_out.weight``). A receiver rooted at a local is seen from
        where the function installs that local: ``lm_head.weight`` is
        ``model.lm_head.weight`` after ``model.lm_head = lm_head`` (a module
        built here, then placed in a model: that model owns it)."""
        root, dot, rest = receiver.partition(".")
        if root in self._installed:
            receiver = f"{self._installed[root]}{dot}{rest}"
        parts = receiver.split(".")
        for i in range(1, len(parts)):
            if self._rank_of(parts[i]):
                return ".".join(parts[:i])
        head, _, last = receiver.rpartition(".")
        if last in ("weight", "bias") and "." in head:
            return head.rpartition(".")[0]
        return head

    @staticmethod
    def _cross(receiver_owner: str, src: _Source) -> bool:
        """Whether the receiving object and the source's owner are different
        models: neither contains the other (``self`` tying its own
        ``self.transformer.wte`` to ``self.lm_head`` is one model)."""
        return not (_contains(receiver_owner, src.owner) or _contains(src.owner, receiver_owner))

    # -- guards ------------------------------------------------------------------
    def _class_refuses_pp(self, cls: cst.ClassDef) -> bool:
        """Whether some method of the class raises under a pipeline test (a
        config validator refusing PP up front guards every method)."""
        return any(
            isinstance(n, cst.If) and self._mentions_guard(n.test) and _raises(n.body)
            for n in walk(cls.body)
        )

    def _validated(self, func: cst.FunctionDef, aliases: list[_Alias]) -> bool:
        """Whether the function checks what it borrowed and raises when it is
        not a real module (``if not isinstance(embed, VocabParallelEmbedding):
        raise ...``, ``assert embed is not None``): on a rank without the
        module that is an honest refusal, not a silent alias."""
        borrowed = {a.source.text for a in aliases}
        names = set()
        for n in walk_no_nested(func.body):
            if isinstance(n, cst.Assign) and isinstance(n.targets[0].target, cst.Name):
                src = self._source(n.value, {})
                if src is not None and (
                    src.text in borrowed or any(a.source.owner == src.owner for a in aliases)
                ):
                    names.add(n.targets[0].target.value)
        return bool(names) and any(
            any(isinstance(x, cst.Name) and x.value in names for x in walk(n.test))
            for n in walk_no_nested(func.body)
            if isinstance(n, cst.If) and _raises(n.body) or isinstance(n, cst.Assert)
        )

    def _mentions_guard(self, node: cst.CSTNode) -> bool:
        guards: Sequence[str] = self.opts["guard-names"]
        nodes = list(walk_no_nested(node))
        # (``replace(ps, pp_size=1)``: a keyword names a parameter, it tests nothing)
        keywords = {
            id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None
        }
        for n in nodes:
            if id(n) in keywords:
                continue
            if isinstance(n, cst.Name) and name_matches(n.value, guards):
                return True
            if isinstance(n, cst.Attribute):
                if name_matches(n.attr.value, guards):
                    return True
                # ``get_pp_group().world_size``, ``self.pp_group.world_size``
                if n.attr.value in ("world_size", "size", "rank_in_group"):
                    owner = self.ctx.code_for(n.value)
                    if "pp" in owner.lower() or "pipeline" in owner.lower():
                        return True
        return False
