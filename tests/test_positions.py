"""Our position pass must give what libcst's PositionProvider gives, for
every node: spans of findings, fixes and fingerprints' scopes depend on it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from linter.positions import positions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

SNIPPETS = {
    "empty": "",
    "newline only": "\n",
    "no trailing newline": "x = 1",
    "crlf": "def f(a,\r\n      b):\r\n    return a + b\r\n",
    "cr only": "x = 1\ry = 2\r",
    "decorated": "@dec\n@other(1)\nclass C(Base):\n    '''doc'''\n\n    def m(self):  # c\n        pass\n",
    "strings": 'x = """a\nb\n"""  + f"{y!r:>{w}}"\nz = (1,\n     2)\n',
    "comments and blank lines": "# top\n\n\nif a:\n    # inner\n\n    b = 1\nelse:\n    c = 2\n",
    "tabs": "if a:\n\tb = 1\n\tif c:\n\t\td = 2\n",
    "continuation": "x = 1 + \\\n    2\n",
    "match and walrus": "match p:\n    case [a, *rest] if (n := len(rest)):\n        pass\n",
}


def _same(text: str) -> None:
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    got = positions(module)
    assert set(got) == set(expected)
    for node, rng in expected.items():
        assert got[node] == (rng.start.line, rng.start.column, rng.end.line, rng.end.column), (
            type(node).__name__
        )


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippets_match_position_provider(name: str) -> None:
    _same(SNIPPETS[name])


def test_corpus_files_match_position_provider() -> None:
    files = sorted(CORPUS.rglob("*.py"))
    assert len(files) > 20
    for p in files:
        _same(p.read_text(encoding="utf-8"))


def test_parsing_without_node_validation_builds_the_same_tree() -> None:
    from libcst._nodes.base import CSTNode

    from linter.check import parse_module_unvalidated

    files = sorted(CORPUS.rglob("*.py"))
    for p in files:
        text = p.read_text(encoding="utf-8")
        fast = parse_module_unvalidated(text)
        assert fast.deep_equals(cst.parse_module(text)) and fast.code == text
    for text in SNIPPETS.values():
        assert parse_module_unvalidated(text).deep_equals(cst.parse_module(text))
    # validation is back for trees built by hand
    assert "__post_init__" in CSTNode.__dict__
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module_unvalidated("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")


def test_positions_of_needed_nodes_stop_early_and_agree() -> None:
    """With the nodes a file's findings need, the pass stops after the
    top-level statement that completes them: each needed node, and every
    node it did reach, has the full pass's position; the nodes after that
    statement have none (a finding near the top of a big file costs little)."""
    import random

    r = random.Random(7)
    files = sorted(CORPUS.rglob("*.py"))
    checked = stopped = 0
    for p in files:
        module = cst.parse_module(p.read_text(encoding="utf-8"))
        full = positions(module)
        nodes = [n for n in full if n is not module]
        if not nodes:
            continue
        for needed in (r.sample(nodes, min(3, len(nodes))), [nodes[0]], [module]):
            part = positions(module, needed)
            assert all(part[n] == full[n] for n in needed)
            assert all(full[n] == v for n, v in part.items())
            checked += 1
            if len(part) < len(full):
                stopped += 1
                # what is missing lies after every needed node
                last = max(full[n][2:] for n in needed)
                assert all(full[n][:2] >= last for n in full if n not in part and n is not module)
    assert checked > 60 and stopped > 20


# top-level definitions whose keyword line a search could take for another
DEFINITIONS = {
    "decorated and async": "import x\n\n\n@dec\n# between\n@other(\n    1)\nasync def f(a):\n    return a\n\n\nclass C:\n    def g(self):\n        pass\n",
    "a look-alike line in a string": 'DOC = """\nclass C:\n    pass\n"""\n\n\nclass C(Base):\n    x = 1\n',
    "defined twice": "def f():\n    return 1\n\n\ndef f():\n    return 2\n",
    "keyword and name on two lines": "x = '''\ndef f\n'''\ndef \\\n  f():\n    pass\n",
    "prefix of another name": "def f_long():\n    pass\n\n\ndef f():\n    y = (1,\n         2)\n",
    "crlf and tabs": "class A:\r\n\tdef m(self):\r\n\t\treturn 1\r\n\r\n\r\nclass B(A):\r\n\tpass\r\n",
}


def _top_definitions(module: cst.Module) -> list[cst.CSTNode]:
    return [s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]


@pytest.mark.parametrize(
    "source",
    [*(DEFINITIONS[k] for k in sorted(DEFINITIONS)), *(p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py")))],
    ids=[*sorted(DEFINITIONS), *(str(p.relative_to(CORPUS)) for p in sorted(CORPUS.rglob("*.py")))],
)
def test_a_definition_generated_alone_gets_the_positions_of_the_whole_pass(source: str) -> None:
    """``statement_positions``: a top-level ``def``/``class`` generated alone
    and moved to its keyword's line gives each of its nodes the position the
    whole pass gives, or says it cannot tell (never a wrong line)."""
    from linter.positions import statement_positions

    module = cst.parse_module(source)
    full = positions(module)
    for stmt in _top_definitions(module):
        got = statement_positions(module, source, stmt)
        if got is None:
            continue
        assert {n: full[n] for n in got} == got
        assert set(_descendants(stmt)) <= set(got)


def _descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def test_definitions_a_search_cannot_place_fall_back_to_the_module_pass() -> None:
    """Where the keyword's line is not unique (a look-alike in a string, a
    name defined twice) or the name is on another line, the definition is
    not generated alone; the reported nodes still get their positions."""
    from linter.positions import report_positions, statement_positions

    for name, expect_alone in (
        ("decorated and async", True),
        ("a look-alike line in a string", False),
        ("defined twice", False),
        ("keyword and name on two lines", False),
        ("prefix of another name", True),
        ("crlf and tabs", True),
    ):
        source = DEFINITIONS[name]
        module = cst.parse_module(source)
        full = positions(module)
        last = _top_definitions(module)[-1]
        assert (statement_positions(module, source, last) is not None) is expect_alone, name
        inner = [n for n in full if n is not module][-1]
        got = report_positions(module, source, [(inner, last, None), (module.body[0], None, None)])
        assert got[inner] == full[inner] and got[module.body[0]] == full[module.body[0]], name


# methods of top-level classes whose keyword line a search could take for another
MEMBERS = {
    "decorated, async, commented": (
        "class A:\n    x = 1\n\n    # about f\n    @dec\n    @other(\n        2)\n    async def f(self):\n"
        "        return 1\n\n    class Inner:\n        def f(self):\n            pass\n"
    ),
    "same name in two classes": (
        "class A:\n    def forward(self):\n        return 1\n\n\nclass B(A):\n    def forward(self):\n"
        "        y = (1,\n             2)\n        return y\n"
    ),
    "getter and setter": (
        "class A:\n    @property\n    def v(self):\n        return 1\n\n    @v.setter\n    def v(self, x):\n        pass\n"
    ),
    "a look-alike in the class's docstring": 'class A:\n    """\n    def m(self):\n    """\n\n    def m(self):\n        pass\n',
    "two-space and tab bodies": "class A:\n  def m(self):\n    return 1\n\n\nclass B:\n\tdef m(self):\n\t\treturn 2\n",
    "a look-alike after the class, before the next": (
        "class A:\n    def m(self):\n        pass\n\n\nX = '''\n    def m(self):\n'''\n\n\ndef g():\n    pass\n"
    ),
    "keyword and name on two lines": "class A:\n    x = '''\n    def m\n'''\n    def \\\n      m(self):\n        pass\n",
}


def _members(module: cst.Module) -> list[tuple[cst.ClassDef, cst.CSTNode]]:
    return [
        (top, m)
        for top in module.body
        if isinstance(top, cst.ClassDef) and isinstance(top.body, cst.IndentedBlock)
        for m in top.body.body
        if isinstance(m, (cst.FunctionDef, cst.ClassDef))
    ]


@pytest.mark.parametrize(
    "source",
    [*(MEMBERS[k] for k in sorted(MEMBERS)), *(p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py")))],
    ids=[*sorted(MEMBERS), *(str(p.relative_to(CORPUS)) for p in sorted(CORPUS.rglob("*.py")))],
)
def test_a_method_generated_alone_gets_the_positions_of_the_whole_pass(source: str) -> None:
    """``member_positions``: a ``def``/``class`` in a top-level class's body,
    generated alone at the body's indentation and moved to its keyword's
    line, gives each of its nodes the position the whole pass gives, or
    says it cannot tell (never a wrong place)."""
    from linter.positions import member_positions

    module = cst.parse_module(source)
    full = positions(module)
    for top, member in _members(module):
        got = member_positions(module, source, top, member)
        if got is None:
            continue
        assert {n: full[n] for n in got} == got
        assert set(_descendants(member)) <= set(got)


def test_methods_a_search_cannot_place_fall_back_and_the_others_are_placed_alone() -> None:
    """A method is placed alone when its keyword's line is the only one
    between its class's keyword and the next definition's; otherwise (two
    with its name, a look-alike in a docstring, the name on another line)
    its class or the module pass places the reported node."""
    from linter.positions import member_positions, report_positions

    for name, expect_alone in (
        ("decorated, async, commented", True),
        ("same name in two classes", True),
        ("getter and setter", False),
        ("a look-alike in the class's docstring", False),
        ("two-space and tab bodies", True),
        ("a look-alike after the class, before the next", False),
        ("keyword and name on two lines", False),
    ):
        source = MEMBERS[name]
        module = cst.parse_module(source)
        full = positions(module)
        top, member = _members(module)[-1]
        assert (member_positions(module, source, top, member) is not None) is expect_alone, name
        inner = _descendants(member)[-1]
        got = report_positions(module, source, [(inner, top, member)])
        assert got[inner] == full[inner], name
        if expect_alone:  # the class's other members were not generated
            assert len(got) < len(full), name
