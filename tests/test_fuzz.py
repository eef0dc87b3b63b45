"""Fuzzing every rule and --fix (issue 22): programs hypothesmith generates
from Python's grammar, deep nesting of every recursive construct, and
mutated corpus files. Whatever the input: no exception, no internal error,
a fix that leaves code that compiles; deep code keeps its finding or is one
SHD000 naming the limit. Sized for CI (well under two minutes);
``python bench/fuzz.py`` runs the same checks for as long as asked and
prints the counts."""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linter.config import Config
from linter.engine import Engine
from linter.fixer import fix_text
from linter.registry import load_registry

# mutants hold invalid escapes and the like: CPython's warnings are noise here
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::SyntaxWarning"),
]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"

# SHD401 fires on line 3, column 5 of this snippet
BAD = (
    "def shrink(cache_cfg, dp_size):\n"
    "    share = cache_cfg.num_blocks // dp_size\n"
    "    cache_cfg.num_blocks = share\n"
)


def fuzz_engine(root: Path) -> Engine:
    """Every rule on, no cache, one process: an empty project at ``root``."""
    config = Config(root=root).with_overrides(select=("ALL",))
    return Engine(config, load_registry(), jobs=1)


class Problem(AssertionError):
    pass


def _compiles(text: str, path: str) -> bool:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def check_program(engine: Engine, text: str, path: Path, fix: bool = True) -> tuple[int, bool]:
    """Lint (and fix) ``text``; raise :class:`Problem` on anything but
    findings. Returns the number of findings and whether a fix changed it."""
    try:
        diags, errors = engine.lint_text(text, path)
    except Exception as exc:  # noqa: BLE001 - what the fuzzer is for
        raise Problem(f"lint_text raised {type(exc).__name__}: {exc}") from exc
    if errors:
        raise Problem(f"internal errors: {[e.message for e in errors]}")
    changed = False
    if fix and any(d.fix is not None for d in diags):
        try:
            outcome = fix_text(engine, text, path, unsafe=True)
        except Exception as exc:  # noqa: BLE001
            raise Problem(f"fix_text raised {type(exc).__name__}: {exc}") from exc
        if outcome.errors:
            raise Problem(f"fix errors: {[e.message for e in outcome.errors]}")
        changed = outcome.text != text
        if changed:
            # the fixed code parses, and compiles whole when the input did
            # (a mutant may hold a 'return' outside a function already)
            try:
                compile(outcome.text, str(path), "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
                if _compiles(text, str(path)):
                    compile(outcome.text, str(path), "exec", dont_inherit=True)
            except SyntaxError as exc:
                raise Problem(f"the fix broke the code: {exc}") from exc
    return len(diags), changed


# -- deep nesting of every recursive construct ------------------------------------------


def _wrap(make: Callable[[str], str], depth: int, seed: str = "x") -> str:
    out = seed
    for _ in range(depth):
        out = make(out)
    return out


# name -> code nested ``depth`` levels deep (an expression, or statements)
DEEP: dict[str, Callable[[int], str]] = {
    "call chain": lambda n: "y = a" + ".a()" * n,
    "attribute chain": lambda n: "y = a" + ".b" * n,
    "nested calls": lambda n: "y = " + _wrap(lambda e: f"f({e})", n),
    "subscripts": lambda n: "y = " + _wrap(lambda e: f"a[{e}]", n),
    "lists": lambda n: "y = " + _wrap(lambda e: f"[{e}]", n),
    "tuples": lambda n: "y = " + _wrap(lambda e: f"({e},)", n),
    "dicts": lambda n: "y = " + _wrap(lambda e: f"{{1: {e}}}", n),
    "sets": lambda n: "y = " + _wrap(lambda e: f"{{{e}}}", n),
    "parentheses": lambda n: "y = " + _wrap(lambda e: f"({e})", n),
    "binary operators": lambda n: "y = " + "+".join(["1"] * n),
    "right-nested powers": lambda n: "y = " + "**".join(["2"] * n),
    "unary operators": lambda n: "y = " + "-" * n + "x",
    "not": lambda n: "y = " + "not " * n + "x",
    "comparisons": lambda n: "y = " + " < ".join(["x"] * n),
    "boolean operators": lambda n: "y = " + _wrap(lambda e: f"(x and {e})", n),
    "conditional expressions": lambda n: "y = " + " if c else ".join(["x"] * n),
    "lambdas": lambda n: "y = " + "lambda: " * n + "x",
    "comprehensions": lambda n: "y = " + _wrap(lambda e: f"[{e} for x in z]", n),
    "awaits": lambda n: "y = " + "await " * n + "x",
    "strings concatenated": lambda n: "y = " + " ".join(['"s"'] * n),
    "f-strings": lambda n: "y = " + _wrap(lambda e: "f'{" + e + "}'", min(n, 2)),
    "elif chain": lambda n: "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, n)),
    "else-if blocks": lambda n: "".join("    " * i + "if x:\n" for i in range(n)) + "    " * n + "pass",
    "for loops": lambda n: "".join("    " * i + "for x in y:\n" for i in range(n)) + "    " * n + "pass",
    "with blocks": lambda n: "".join("    " * i + "with x:\n" for i in range(n)) + "    " * n + "pass",
    "try blocks": lambda n: "".join("    " * i + "try:\n" for i in range(n)) + "".join(
        "    " * i + "pass\n" + "    " * (i - 1) + "finally:\n" for i in range(n, 0, -1)) + "pass",
    "functions": lambda n: "".join("    " * i + "def f():\n" for i in range(n)) + "    " * n + "pass",
    "classes": lambda n: "".join("    " * i + "class C:\n" for i in range(n)) + "    " * n + "pass",
    "match patterns": lambda n: "match x:\n    case " + _wrap(lambda e: f"[{e}]", n, "y") + ":\n        pass",
    "decorators": lambda n: "".join("@d\n" for _ in range(n)) + "def g():\n    pass",
}


def in_function(code: str) -> str:
    """``code`` in the body of the function holding BAD's finding."""
    return BAD + "".join(f"    {line}\n" if line else "\n" for line in code.splitlines())


def check_deep(engine: Engine, code: str, path: Path) -> str:
    """The finding kept, or one SHD000 (a syntax error CPython itself
    reports, or the nesting limit); returns which."""
    text = in_function(code)
    diags, errors = engine.lint_text(text, path)
    if errors:
        raise Problem(f"internal errors: {[e.message for e in errors]}")
    codes = sorted(d.code for d in diags)
    if "SHD401" in codes:
        return "analysed"
    if codes.count("SHD000") == 1:
        msg = next(d.message for d in diags if d.code == "SHD000")
        if "RecursionError" in msg:
            raise Problem(f"recursion limit leaked out: {msg}")
        return "limit" if "limit" in msg or "deeper" in msg else "syntax error"
    raise Problem(f"finding lost: {codes}")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return fuzz_engine(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.parametrize("construct", sorted(DEEP))
def test_every_recursive_construct_deeply_nested(engine: Engine, construct: str) -> None:
    path = engine.config.root / "deep.py"
    seen = {check_deep(engine, DEEP[construct](depth), path) for depth in (60, 190, 320)}
    assert seen <= {"analysed", "limit", "syntax error"}


@pytest.mark.parametrize("construct", ["binary operators", "elif chain", "call chain"])
def test_nesting_past_the_limit(engine: Engine, construct: str) -> None:
    from linter.deep import MAX_NESTING

    got = check_deep(engine, DEEP[construct](MAX_NESTING + 100), engine.config.root / "deep.py")
    assert got in ("limit", "analysed")


# -- hypothesmith programs ------------------------------------------------------------


hypothesmith = pytest.importorskip("hypothesmith")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=hypothesmith.from_grammar())
def test_generated_programs(engine: Engine, program: str) -> None:
    check_program(engine, program, engine.config.root / "gen.py")


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=hypothesmith.from_node())
def test_generated_programs_from_valid_trees(engine: Engine, program: str) -> None:
    check_program(engine, program, engine.config.root / "gen.py")
    check_program(engine, BAD + program, engine.config.root / "gen.py")


# -- mutated corpus files ------------------------------------------------------------


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*.py"))


def mutations(text: str, rng: random.Random) -> Iterator[tuple[str, str]]:
    """Named mutants of ``text``: lines dropped, doubled, swapped or cut,
    characters inserted, brackets unbalanced, indentation changed, the
    line endings switched, a BOM or look-alike letters added."""
    lines = text.split("\n")
    n = len(lines)
    i, j = rng.randrange(n), rng.randrange(n)
    yield "drop line", "\n".join(lines[:i] + lines[i + 1:])
    yield "double line", "\n".join(lines[: i + 1] + lines[i:])
    swapped = list(lines)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    yield "swap lines", "\n".join(swapped)
    k = rng.randrange(len(text) + 1)
    yield "truncate", text[:k]
    yield "insert", text[:k] + rng.choice(["(", ")", "[", ":", "'", '"""', "\\", "\t", " ", "#", "\x0c", "ñ", "€"]) + text[k:]
    yield "dedent", "\n".join(line[4:] if line.startswith("    ") and rng.random() < 0.3 else line for line in lines)
    yield "indent", "\n".join(("    " + line) if rng.random() < 0.1 else line for line in lines)
    yield "crlf", text.replace("\n", "\r\n")
    yield "bom", "\ufeff" + text
    yield "look-alikes", text.replace("min(", "ｍｉｎ(").replace("BLOCK", "𝐁LOCK")
    words = text.split(" ")
    if len(words) > 2:
        a, b = rng.randrange(len(words)), rng.randrange(len(words))
        words[a], words[b] = words[b], words[a]
        yield "swap words", " ".join(words)


def test_mutated_corpus_files_through_every_rule_and_fix(engine: Engine) -> None:
    rng = random.Random(22)
    files = corpus_files()
    assert files
    count = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        for name, mutant in mutations(text, rng):
            try:
                check_program(engine, mutant, engine.config.root / f.name, fix=True)
            except Problem as exc:
                raise AssertionError(f"{f.relative_to(ROOT)} ({name}): {exc}") from exc
            count += 1
    assert count >= len(files) * 10


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_randomly_mutated_corpus_files(engine: Engine, data: st.DataObject) -> None:
    files = corpus_files()
    f = files[data.draw(st.integers(0, len(files) - 1), label="file")]
    text = f.read_text(encoding="utf-8")
    lo = data.draw(st.integers(0, len(text)), label="start")
    hi = data.draw(st.integers(lo, min(len(text), lo + 40)), label="end")
    junk = data.draw(st.text(max_size=8), label="replacement")
    check_program(engine, text[:lo] + junk + text[hi:], engine.config.root / f.name, fix=True)
