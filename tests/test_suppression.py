"""``# noqa`` comments read from a few lines (the statement before each line
naming noqa, with the file's ``ast``) are those read from the whole file."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from linter.suppression import parse_suppressions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

EDGES = '''\
import os  # noqa: SHD101
@decorate  # noqa
def f(x):  # noqa: SHD2
    """A docstring that says
    # noqa: SHD301 (not a comment)
    """
    try:
        y = (1,  # noqa: SHD102
             2)  # noqa: SHD103
    except ValueError:  # noqa: SHD401
        pass
    if x:
        return "# noqa"  # NOQA:SHD501
    else:  # noqa: SHD503
        return f"{x!r} # noqa"
    match x:
        case 1:  # noqa: SHD900
            pass
# shardlint: noqa: SHD3
z = 1 \\
    + 2  # noqa
'''


def with_noqa_everywhere(text: str) -> str | None:
    """``text`` with a noqa comment at the end of every line that can take
    one (None when the result does not compile)."""
    out = [ln if ln.rstrip().endswith("\\") or not ln.strip() else ln + "  # noqa: SHD101" for ln in text.split("\n")]
    got = "\n".join(out)
    try:
        ast.parse(got)
    except SyntaxError:
        return None
    return got


def texts() -> list[tuple[str, str]]:
    out = [("edges", EDGES)]
    for path in sorted(CORPUS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path.name, text))
        many = with_noqa_everywhere(text)
        if many is not None:
            out.append((f"{path.name} (noqa on every line)", many))
    return out


@pytest.mark.parametrize(("name", "text"), texts(), ids=lambda v: v if len(v) < 80 else None)
def test_noqa_from_windows_equals_noqa_from_the_whole_file(name: str, text: str) -> None:
    tree = ast.parse(text)
    assert parse_suppressions(text, tree) == parse_suppressions(text)


def test_the_edge_sample_reads_what_a_reader_sees() -> None:
    sup = parse_suppressions(EDGES, ast.parse(EDGES))
    assert sorted(sup.lines) == [1, 2, 3, 8, 9, 10, 13, 14, 17, 21]
    assert sup.lines[13].codes == ("SHD501",)
    assert sup.file_codes == ("SHD3",)
