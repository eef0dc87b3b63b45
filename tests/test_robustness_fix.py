"""--fix changes the fix and nothing else (issue 22 item 3): the file's own
encoding, BOM and line endings are kept, and it is written in place through
the same inode (symlinks, hard links, owner and mode kept), or the fix is
refused with the reason."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from test_robustness import err, no_traceback, shardlint

KERNEL = (
    "import torch\n"
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _copy_rows_kernel(src_ptr, dst_ptr, n_cols, BLOCK_COLS: tl.constexpr):\n"
    "    row = tl.program_id(0)\n"
    "    offs = tl.program_id(1) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)\n"
    "    tl.store(dst_ptr + row * n_cols + offs, tl.load(src_ptr + row * n_cols + offs))\n"
    "\n"
    "\n"
    "def copy_rows(src: torch.Tensor, dst: torch.Tensor) -> None:\n"
    "    width = src.shape[1]\n"
    "    BLOCK_COLS = min(width, 1024)\n"
    "    assert width % BLOCK_COLS == 0\n"
    "    grid = (src.shape[0], width // BLOCK_COLS)\n"
    "    _copy_rows_kernel[grid](src, dst, width, BLOCK_COLS=BLOCK_COLS)\n"
)
FIXED_LINE = "BLOCK_COLS = math.gcd(width, 1024)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    return tmp_path


def fix(project: Path, *paths: str) -> None:
    r = shardlint(*paths, "--fix", "--unsafe-fixes", "--no-cache", cwd=project)
    no_traceback(r)
    assert r.returncode in (0, 1), err(r)


def test_a_latin1_file_keeps_its_encoding(project: Path) -> None:
    text = "# -*- coding: latin-1 -*-\n" + KERNEL + "NAME = 'café'\n"
    (project / "k.py").write_bytes(text.encode("latin-1"))
    fix(project, "k.py")
    data = (project / "k.py").read_bytes()
    assert b"NAME = 'caf\xe9'\n" in data
    assert FIXED_LINE in data.decode("latin-1")


def test_cp1252_and_the_bom_are_kept(project: Path) -> None:
    (project / "w.py").write_bytes(("# coding: cp1252\n" + KERNEL + "Q = '“x”'\n").encode("cp1252"))
    (project / "b.py").write_bytes(codecs.BOM_UTF8 + (KERNEL + "N = 'café'\n").encode("utf-8"))
    fix(project, "w.py", "b.py")
    w = (project / "w.py").read_bytes()
    assert "Q = '“x”'\n".encode("cp1252") in w and FIXED_LINE in w.decode("cp1252")
    b = (project / "b.py").read_bytes()
    assert b.startswith(codecs.BOM_UTF8) and not b.startswith(codecs.BOM_UTF8 * 2)
    assert "N = 'café'\n".encode() in b and FIXED_LINE.encode() in b


def test_mixed_line_endings_are_kept_line_by_line(project: Path) -> None:
    lines = KERNEL.split("\n")
    endings = ["\r\n" if i % 3 == 0 else "\n" for i in range(len(lines) - 1)]
    endings[1] = "\r"  # a lone CR is a line break for Python too
    body = "".join(line + end for line, end in zip(lines, endings))
    (project / "m.py").write_bytes(body.encode())
    fix(project, "m.py")
    after = (project / "m.py").read_bytes().decode()
    got = [line for line in after.splitlines(keepends=True)]
    by_text = {x.rstrip("\r\n"): x[len(x.rstrip("\r\n")):] for x in got}
    for line, end in zip(lines, endings):
        if line.strip() and "min(" not in line and line in by_text:
            assert by_text[line] == end, (line, end, by_text[line])
    assert FIXED_LINE in after
    assert after.count("\r") == body.count("\r")


def test_links_owner_and_mode_are_kept(project: Path) -> None:
    real = project / "real.py"
    real.write_text(KERNEL)
    os.chmod(real, 0o640)
    os.symlink("real.py", project / "via_link.py")
    hard = project / "hard.py"
    os.link(real, hard)
    ino = real.stat().st_ino
    fix(project, "via_link.py")
    assert (project / "via_link.py").is_symlink()
    assert real.stat().st_ino == ino == hard.stat().st_ino
    assert FIXED_LINE in real.read_text() and hard.read_text() == real.read_text()
    assert real.stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_fix_that_cannot_be_written_is_refused_with_the_reason(project: Path) -> None:
    ro = project / "ro.py"
    ro.write_text(KERNEL)
    os.chmod(ro, 0o444)
    r = shardlint("ro.py", "--fix", "--unsafe-fixes", "--no-cache", cwd=project)
    assert r.returncode == 2 and "fix not written: cannot open it for writing" in err(r)
    assert ro.read_text() == KERNEL


def test_a_fix_the_encoding_cannot_hold_is_refused() -> None:
    from linter.fixes import CannotWrite, Original

    original = Original.decode("# coding: latin-1\nx = 1\n".encode("latin-1"))
    with pytest.raises(CannotWrite, match="iso-8859-1"):
        original.encode("# coding: latin-1\nx = '€'\n")
    # the text as read comes back as the very bytes
    for data in (b"a = 1\r\nb = 2\rc = 3\n", codecs.BOM_UTF8 + b"x = 1\n", b"x = 1", b""):
        o = Original.decode(data)
        assert o.encode(o.text) == data
