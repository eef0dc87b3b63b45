"""SHD501 padded-unpadded-width-mismatch: what a user sees (messages naming
both widths and their origins, severity), options, and the text prefilter
(``needles``, ``definition_needles``) never hiding a finding."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest
from corpus_harness import CORPUS, diagnostics_for, lint_snippet, with_gates_open_and_closed

from checks.padded_unpadded_width_mismatch import PaddedUnpaddedWidthMismatch
from linter.types import Diagnostic, Severity

PADDING = CORPUS / "padded_unpadded_width_mismatch"
CODE = PaddedUnpaddedWidthMismatch.code


def lint(code: str, tmp_path: Path, gates: bool = True, **options: object) -> list[Diagnostic]:
    return lint_snippet(code, CODE, tmp_path, gates, **options)


def test_padding_message_names_both_widths_and_origins() -> None:
    [d] = diagnostics_for(PADDING)[PADDING / "bad.py"]
    assert d.code == CODE and d.severity is Severity.WARNING
    assert "`output`" in d.message and "`expert_out`" in d.message
    assert "`hidden_padded = round_up(hidden, 256)`" in d.message
    assert "unpadded width `hidden` (read from `expert_out.shape`)" in d.message
    notes = " ".join(n.message for n in d.notes)
    assert "2880" in notes and "3072" in notes
    assert "output[..., :hidden]" in notes


def test_padding_uninitialised_tail_names_buffer_and_consumer(tmp_path: Path) -> None:
    [d] = lint(
        """
        import torch
        def f(act, weight):
            k_in = act.shape[-1]
            stage = torch.empty(act.shape[0], round_up(k_in, 128), device=act.device)
            stage[:, :k_in] = act
            return torch.mm(stage, weight)
        """,
        tmp_path,
    )
    assert d.span.line == 7
    assert "`stage`" in d.message and "`torch.mm`" in d.message
    assert any("stage[..., k_in:].zero_()" in n.message for n in d.notes)


def test_padding_silent_on_sliced_and_unpadded_names(tmp_path: Path) -> None:
    assert not lint(
        """
        import torch
        def f(y, hidden_unpadded, non_padded_width):
            m, h = y.shape
            out = torch.zeros(m, round_up(h, 256))
            out[:, :h].copy_(y)
            a = torch.empty(m, hidden_unpadded)
            b = torch.empty(m, non_padded_width)
            a.copy_(b)
            return out[:, :h]
        """,
        tmp_path,
    )


def test_padding_options_replace_defaults(tmp_path: Path) -> None:
    code = """
        import torch
        def f(x, hidden_aligned):
            m, hidden = x.shape
            a = torch.empty(m, hidden_aligned)
            a.copy_(x)
            b = torch.empty(m, round_up(hidden, 64))
            b.copy_(x)
        """
    assert [d.span.line for d in lint(code, tmp_path)] == [8]
    configured = lint(code, tmp_path, **{"padded-names": ["*_aligned"], "rounding-functions": ["x"]})
    assert [d.span.line for d in configured] == [6]


def test_configured_names_need_no_default_word(tmp_path: Path) -> None:
    """The prefilter follows the options (``declared_needles``): a rounding
    function or a padded name holding none of the default words is still
    seen."""
    code = """
        import torch
        def f(x, wide):
            m, k = x.shape
            a = torch.empty(m, tile(k, 64))
            a.copy_(x)
            b = torch.empty(m, wide)
            b.copy_(x)
        """
    assert not lint(code, tmp_path)
    configured = lint(code, tmp_path, **{"padded-names": ["wide"], "rounding-functions": ["tile"]})
    assert [d.span.line for d in configured] == [6]


# -- the prefilter ------------------------------------------------------------------
# A finding needs an allocator's name and an exchange or consumer token in the
# file, and in the definition holding it a padded width's spelling (under the
# options) or an input's width (``needles.declared``).

#: options under which the rule fires far more often than by default (every
#: whole dimension a padded width)
BROAD = {"padded-names": ("*",), "rounding-functions": ("round_up", "align", "cdiv", "max", "min")}


@pytest.mark.parametrize("broad", [False, True], ids=["configured", "broad"])
def test_gates_hide_nothing_on_the_corpus(broad: bool) -> None:
    """Every corpus file, under its folder's options and under broad ones:
    the same findings with the gates open as with every gate closed."""
    fired = 0
    for f, text, opened, closed in with_gates_open_and_closed(PADDING, CODE, **(BROAD if broad else {})):
        assert opened == closed, f.name
        fired += len(closed)
        if closed:
            assert PaddedUnpaddedWidthMismatch.needles.match(text), f.name
    assert fired >= 8, "the corpus must exercise the rule"


def test_needles_skip_files_that_cannot_match() -> None:
    allocates = "import torch\ndef f(x, n):\n    return torch.zeros(n, round_up(n, 8))\n"
    assert not PaddedUnpaddedWidthMismatch.needles.match(allocates)  # no exchange
    assert PaddedUnpaddedWidthMismatch.needles.match(allocates.replace("return ", "x += "))
    exchanges = "def f(x, y):\n    y.copy_(x)\n"
    assert not PaddedUnpaddedWidthMismatch.needles.match(exchanges)  # no allocation
    # another module's allocator, a longer name, the word alone: no tracked allocation
    for other in ("np.zeros(n)", "tl.empty(n)", "my_zeros(n)", "zones(n)", "[] if empty else n"):
        text = f"def f(x, n):\n    a = {other}\n    a.copy_(x)\n"
        assert not PaddedUnpaddedWidthMismatch.needles.match(text), other


def test_a_definition_without_an_allocation_is_skipped_alone(tmp_path: Path) -> None:
    text = (
        "import torch\n\n\ndef merge(x, y):\n    y.copy_(x)\n\n\n"
        "def pad(x):\n    m, h = x.shape\n    a = torch.zeros(m, round_up(h, 8))\n    a.copy_(x)\n"
    )
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    merge, pad = ("".join(lines[s.lineno - 1 : s.end_lineno]) for s in tree.body[1:])
    assert not PaddedUnpaddedWidthMismatch.definition_needles.match(merge)  # type: ignore[union-attr]
    assert PaddedUnpaddedWidthMismatch.definition_needles.match(pad)  # type: ignore[union-attr]
    assert [d.span.line for d in lint(text, tmp_path)] == [11]
    assert lint(text, tmp_path) == lint(text, tmp_path, gates=False)


# Shapes the rule fires on with the default options; older text gates
# rejected each one (a lost finding). Original code, written for these tests.
_HEAD = "import torch\n\n\ndef f(x, n):\n    m, h = x.shape\n"
_SHAPES = [
    "    hp = (h + 127) // 128 * 128\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n",
    "    a = torch.zeros(m, ceil_div(h, n) * n)\n    a.copy_(x)\n",
    "    a = torch.zeros(m, n * ceildiv(h, n))\n    a.add_(x)\n",
    "    a = torch.zeros(m, div_ceil(h, 64) * 64)\n    a += x\n",
    "    hp = int(\n        round_up(h, 8)\n    )\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n",
    "    w = hp = round_up(h, 8)\n    a = torch.zeros(m, hp)\n    a.copy_(x)\n",
    "    a = torch.empty((m, int(round_up(h, 8))))\n    a.copy_(x)\n",
    "    a = torch.randn(m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = torch.rand (m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = torch.empty(m, round_up(h, 8))\n    a[:, :h] = x\n    return a.max()\n",
    "    a = torch.empty(m, round_up(h, 8))\n    a[:, :h] = x\n    return torch.max(a)\n",
    "    a = torch.zeros(m, round_up(h, 8))\n    torch.abs(x, out = a)\n",
    "    a = torch.zeros(m, h_padded)\n    a.copy_(x)\n",
    "    self.hp = round_up(h, 8)\n    a = torch.zeros(m, self.hp)\n    a.copy_(x)\n",
    "    hp = round_up(h, 8)\n    a = x.new_zeros(m, hp)\n    a.copy_(x)\n",
    "    hp = round_up(h, 8)\n    a = torch.zeros(size=(m, hp), dtype=x.dtype)\n    a.copy_(x)\n",
    "    hp = round_up(h, 8)\n    a = torch.empty_strided((m, hp), (hp, 1))\n    a.copy_(x)\n",
    "    a = b = torch.zeros(m, round_up(h, 8))\n    b.copy_(x)\n",
    "    n . buf = torch.zeros(m, round_up(h, 8))\n    n . buf . copy_(x)\n",
    "    n.a = torch.zeros(m, round_up(h, 8))\n    x += n.a\n",
    "    a = torch.zeros(m, round_up(h, 8))\n    b = torch.empty_like(a)\n    b.copy_(x)\n",
    "    a = \\\n        torch.zeros(m, round_up(h, 8))\n    a.copy_(x)\n",
    "    n = 1; a = torch.zeros(m, round_up(h, 8)); a.copy_(x)\n",
    "    a = torch.empty(m, np.int(x=round_up(h, 8)))\n    a.copy_(x)\n",
    "    a = torch.empty(size=(m, *h_padded))\n    a.copy_(x)\n",
    # the allocation's call, spelled as Python allows
    "    a = (torch) . zeros (m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = (torch.zeros)(m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = (zeros)(m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = torch.\\\n        zeros(m, round_up(h, 8))\n    a.copy_(x)\n",
    "    a = (torch  # the module\n        .zeros  # the call\n        (m, round_up(h, 8)))\n    a.copy_(x)\n",
    "    a = x.new_empty (m, round_up(h, 8))\n    a.copy_(x)\n",
]


@pytest.mark.parametrize("body", _SHAPES)
def test_needles_see_every_shape_the_rule_fires_on(body: str, tmp_path: Path) -> None:
    text = _HEAD + body
    diags = lint(text, tmp_path)
    assert [d.code for d in diags] == [CODE], text
    assert PaddedUnpaddedWidthMismatch.needles.match(text), text
    assert lint(text, tmp_path, gates=False) == diags


_ONE_FUNCTION_LOOKALIKES = {
    # an allocation and an exchange, but no padded buffer bound to a name that
    # meets the exchange in one function: the rule finds nothing
    "in another function": "def alloc(m, h):\n    return torch.zeros(m, round_up(h, 8))\n\n\n"
    "def merge(x, y):\n    m, h = x.shape\n    y.copy_(x)\n",
    "returned": "def f(x, y):\n    m, h = x.shape\n    y.copy_(x)\n    return torch.empty(m, round_up(h, 8))\n",
    "a keyword's value": "def f(x, y):\n    m, h = x.shape\n    y.copy_(x)\n"
    "    return run(x, out_buf=torch.empty(m, round_up(h, 8)))\n",
    "handed to a kernel": "def f(x, y):\n    m, h = x.shape\n    buf = torch.empty(m, round_up(h, 8))\n"
    "    kernel[(m,)](x, buf, h)\n    y.copy_(x)\n    return buf[:, :h]\n",
    "its shape read": "def f(x, y):\n    m, h = x.shape\n    buf = torch.zeros(m, round_up(h, 8))\n"
    "    n = buf.shape[-1]\n    y += x\n    return n\n",
    "a tuple's element": "def f(x, y):\n    m, h = x.shape\n    a, b = torch.zeros(m, round_up(h, 8)), x\n    y.copy_(x)\n",
    "zeroed, written, consumed": "def f(x, w, y):\n    m, h = x.shape\n    a = torch.zeros(m, round_up(h, 8))\n"
    "    a[:, :h] = x\n    y += x\n    return torch.mm(a, w)\n",
    "another module's allocator": "def f(x):\n    m, h = x.shape\n    a = tl.zeros([m, round_up(h, 8)])\n"
    "    a.copy_(x)\n",
}


@pytest.mark.parametrize("name", sorted(_ONE_FUNCTION_LOOKALIKES))
def test_silent_where_buffer_and_exchange_do_not_meet(name: str, tmp_path: Path) -> None:
    assert not lint("import torch\n\n\n" + _ONE_FUNCTION_LOOKALIKES[name], tmp_path)


# Random functions built from the statements and expressions the rule
# follows (and some it does not), also laid out otherwise: wherever the
# rule fires with every gate closed, it fires alike with the gates open.


def _padding_function(r: random.Random) -> str:
    tensors = ["a", "b", "y", "self.buf"]
    widths = ["h", "h", "h", "h", "hidden", "self.h", "hp", "h_padded", "hidden_padded", "H"]

    def width() -> str:
        w = r.choice(widths)
        return r.choice([
            w, f"round_up({w}, 256)", f"align({w}, 64)", f"cdiv({w}, 64) * 64",
            f"({w} + 127) // 128 * 128", f"({w} + n - 1) // n * n", f"int(round_up({w}, 8))",
            f"foo({w}, 3)", "x.shape[-1]",
        ])

    def alloc(padded: bool = False) -> str:
        w = width()
        if padded:
            base = r.choice(["h", "h", "hidden", "self.h"])
            w = r.choice([
                f"round_up({base}, 256)", f"align({base}, 64)", f"cdiv({base}, 64) * 64",
                f"({base} + 127) // 128 * 128", f"int(round_up({base}, 8))", "h_padded", "hp",
            ])
        dims = ", ".join(["m"] * (r.random() < 0.7) + [w])
        return r.choice([
            f"torch.empty({dims})", f"torch.zeros({dims})", f"torch.empty(({dims}))",
            f"torch.empty({dims})", f"torch.zeros({dims})",
            f"x.new_empty({dims})", f"torch.empty_like({r.choice(tensors)})",
            f"torch.zeros(size=({dims}))", f"torch.full(({dims}), 0)", f"empty({dims})",
            f"tl.zeros({dims})",
        ])

    # mostly one buffer and one other side, so that they meet
    pad = r.choice(tensors)
    other = r.choice(["x", "x", *(t for t in tensors if t != pad)])

    def block(n: int, ind: str, depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            t = pad if r.random() < 0.7 else r.choice(tensors)
            u = other if r.random() < 0.7 else r.choice([*tensors, "x"])
            w = r.choice(widths)
            c = r.randrange(16 if depth < 2 else 15)
            out.append(ind + [
                f"{t} = {alloc()}", f"{w} = {width()}", f"m, {w} = {u}.shape",
                f"{w} = {u}.shape[-1]", f"{w} = {u}.size(1)",
                f"{t}.{r.choice(['copy_', 'add_', 'mul_'])}({u})",
                f"{u}.{r.choice(['copy_', 'add_', 'mul_'])}({t})", f"{t} += {u}",
                f"torch.add({t}, {u}, out={r.choice([t, u])})", f"{t}[:, :{w}] = {u}",
                f"{t}[..., {w}:] = 0", f"z = torch.matmul({t}, {u})", f"{t}.sum()",
                f"{t}[:, :{w}].copy_({u})", f"{t} = {u}", "if c:",
            ][c])
            if c == 15:
                out += block(r.randint(1, 2), ind + "    ", depth + 1)
        return out

    head = [r.choice(["m, h = x.shape", "h = x.shape[-1]", "m, hidden = x.shape", "h = x.size(-1)"])]
    if other != "x" and r.random() < 0.7:
        head.append(f"{other} = torch.{r.choice(['empty', 'zeros'])}(m, {r.choice(widths)})")
    head.append(f"{pad} = {alloc(padded=r.random() < 0.7)}")
    body = ["    " + s for s in head] + block(r.randint(1, 4), "    ", 0)
    return "def f(self, x, a, b, c, m, n, h, hidden, hp, h_padded, hidden_padded, H):\n" + "\n".join(body)


def _relayout(r: random.Random, function: str) -> str:
    """The same function (the same ``ast``) laid out otherwise: comment
    lines and trailing comments, arguments over lines, blanks around dots,
    line continuations, parenthesised values."""
    lines = function.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        ind = line[: len(line) - len(line.lstrip())]
        body = line.strip()
        tail = ""
        for _ in range(r.randint(0, 2)):
            k = r.randrange(5)
            if k == 0:
                body = re.sub(r"(?<=\w)\.(?=[A-Za-z_])", lambda m: r.choice([".", " .", ". ", " . "]), body)
            elif k == 1 and "(" in body:
                i = body.index("(")
                head, rest = body[: i + 1], body[i + 1 :]
                pad = "\n" + ind + " " * 8
                body = head + pad + rest.replace(", ", "," + pad)
            elif k == 2 and re.match(r"[\w.]+ = ", body) and not body.endswith(":"):
                name, value = body.split(" = ", 1)
                body = name + " = (" + value + ")" if r.random() < 0.5 else name + " = \\\n" + ind + "    " + value
            elif k == 3:
                out.append(ind + "# " + r.choice(["note", "a, b", "out=y", "x.copy_(y)"]))
            elif k == 4 and not body.endswith(":"):
                tail = "  # " + r.choice(["tail", "(", "a,"])
        body += tail
        out.append(ind + body)
    return "\n".join(out)


_OPTION_SETS = [
    {},
    {"padded-names": ("*",), "rounding-functions": ("round_up", "cdiv", "max")},
    {"padded-names": ("*_*", "h*"), "rounding-functions": ("foo",)},
    {"padded-names": ("hp", "*_padded"), "rounding-functions": ("align",)},
]


def test_gates_hide_nothing_on_random_functions(tmp_path: Path) -> None:
    r = random.Random(CODE)
    functions = [_padding_function(r) for _ in range(150)]
    relaid = [_relayout(r, f) for f in functions]
    for f, g in zip(functions, relaid):
        assert ast.dump(ast.parse(f)) == ast.dump(ast.parse(g)), g
    fired = 0
    for options in _OPTION_SETS:
        found = []
        for batch in (functions, relaid):
            # each function a top-level definition: the definition gate
            # judges each alone; a quiet module-level line between them
            text = "import torch\n" + "".join(f"\n\n{f}\n\nz = 1\n" for f in batch)
            closed = lint(text, tmp_path, gates=False, **options)
            assert lint(text, tmp_path, **options) == closed, options
            found.append(len(closed))
        assert found[0] == found[1], options
        fired += found[0]
    assert fired >= 25, "the random functions must exercise the rule"


# -- across functions and classes ----------------------------------------------------
STACK = PADDING / "moe_stack"


def test_across_classes_names_the_declaring_class_and_the_step() -> None:
    """The seed's own layout: the output copies the input's width in one
    method, another class declares the unpadded output width, a third
    method receives both; the note points at the declaration."""
    [d] = diagnostics_for(PADDING)[STACK / "orchestrator.py"]
    assert d.span.line == 28
    assert "`hidden_states`" in d.message and "`PaddedFp4Experts`" in d.message
    assert "`self.hidden_size_unpadded`" in d.message and "`self._finish(output, partial)`" in d.message
    [declared] = [n for n in d.notes if n.path is not None]
    assert declared.path is not None and declared.path.endswith("moe_stack/experts.py")
    assert declared.span is not None and declared.span.line == 13
    notes = " ".join(n.message for n in d.notes)
    assert "The size of tensor a (3072) must match the size of tensor b (2880)" in notes


def test_across_classes_needs_an_unpadded_implementation(tmp_path: Path) -> None:
    """The same layout with no implementation of the part's type declaring
    an unpadded width is silent; declaring one makes it fire."""
    (tmp_path / "parts.py").write_text(
        "class Part:\n"
        "    def shape(self, m, k):\n"
        "        return (m, k)\n"
    )
    code = """
        import torch
        from parts import Part

        class Runner:
            def __init__(self, part: Part) -> None:
                self.part = part

            def _go(self, x):
                return x.new_empty(self.part.shape(x.shape[0], x.shape[-1]))

            def forward(self, x):
                out = torch.empty_like(x)
                y = self._go(x)
                out.copy_(y)
                return out
        """
    assert not lint(code, tmp_path)
    (tmp_path / "impl.py").write_text(
        "from parts import Part\n\n"
        "class Narrow(Part):\n"
        "    def shape(self, m, k):\n"
        "        return (m, self.width_unpadded)\n"
    )
    assert [d.span.line for d in lint(code, tmp_path)] == [13]


def test_definition_needles_follow_the_padded_spellings() -> None:
    """The definition gate asks for a padded width or an input's width;
    a glob's bracket set is no literal, and a glob without a literal part
    opens the padded-width condition."""
    from checks.padded_unpadded_width_mismatch.needles import _glob_literals, declared, padded_width

    defaults = {k: o.default for k, o in PaddedUnpaddedWidthMismatch.options.items()}
    _, definition = declared(defaults)
    body = "def f(x, m, h):\n    a = torch.zeros(m, {})\n    a.copy_(x)\n"
    for width in ("h_PADDED", "round_up(h, 8)", "cdiv(h, 8) * 8", "(h + 7) // 8 * 8", "8 * ((h + 7) // 8)"):
        assert definition.match(body.format(width)), width
    for width in ("h", "h // 8 * 8", "rounded(h, 8)"):
        assert not definition.match(body.format(width)), width
    assert _glob_literals("h[0-9]_wide*") == ["h", "_wide"]
    assert _glob_literals("[!x]y?z[") == ["y", "z["]
    assert padded_width(("*",), ("round_up",)) is None
    # a part holding another adds nothing: `_wide_` holds `wide_`
    assert padded_width(("wide_*", "*_wide_*"), ()).startswith("(?i:wide_)|")  # type: ignore[union-attr]
