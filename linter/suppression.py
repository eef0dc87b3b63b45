"""``# noqa`` handling, flake8-compatible.

- ``# noqa`` on a diagnostic's first line suppresses every code there;
- ``# noqa: SHD101,SHD2`` suppresses codes by prefix (``SHD`` alone: all ours);
- ``# shardlint: noqa`` anywhere in a file (own line) suppresses the file,
  ``# shardlint: noqa: SHD3`` only those codes.
Unused or unknown shardlint codes in noqa comments are reported as SHD900.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from linter.astwalk import statement_start
from linter.types import Applicability, Diagnostic, Edit, Fix, Severity, Span

_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?",
    re.IGNORECASE,
)
_FILE_NOQA = re.compile(
    r"^#\s*shardlint:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?\s*$",
    re.IGNORECASE,
)
OUR_PREFIX = "SHD"


@dataclass(frozen=True)
class NoqaComment:
    line: int
    column: int  # start of the comment token (code points)
    end_column: int
    text: str
    codes: tuple[str, ...] | None  # None: bare noqa
    match_start: int  # offset of "# noqa" within the comment
    match_end: int


@dataclass(frozen=True)
class Suppressions:
    lines: dict[int, NoqaComment]
    file_codes: tuple[str, ...] | None  # None: no file-level noqa; () : all codes
    has_file_noqa: bool

    def suppresses(self, d: Diagnostic) -> NoqaComment | bool:
        if self.has_file_noqa and (not self.file_codes or d.code.startswith(self.file_codes)):
            return True
        c = self.lines.get(d.span.line)
        if c is None:
            return False
        if c.codes is None or any(d.code.startswith(code.upper()) for code in c.codes):
            return c
        return False


EMPTY = Suppressions({}, None, False)


def _split_codes(raw: str | None) -> tuple[str, ...] | None:
    if raw is None:
        return None
    return tuple(c.upper() for c in re.split(r"[,\s]+", raw.strip()) if c)


def _comments(text: str, tree: ast.Module | None) -> list[tokenize.TokenInfo]:
    """The comment tokens of ``text`` that may hold a noqa: with its ``ast``
    (``tree``), those on the lines naming noqa, each line tokenized from the
    statement starting at or before it (``linter.astwalk.statement_start``)
    -- a few lines instead of the whole file; without it, or where a window
    does not tokenize as the whole text would, every comment."""
    lines = io.StringIO(text).readlines()
    noqa_lines = [i + 1 for i, ln in enumerate(lines) if "noqa" in ln.lower()]
    if tree is not None and "\r" not in text:
        out: list[tokenize.TokenInfo] = []
        try:
            for line in noqa_lines:
                start = statement_start(tree.body, line) or 1
                for tok in tokenize.generate_tokens(iter(lines[start - 1 :]).__next__):
                    row = tok.start[0] + start - 1
                    if row > line or (row == line and tok.type in (tokenize.NL, tokenize.NEWLINE)):
                        break
                    if row == line and tok.type == tokenize.COMMENT:
                        out.append(tok._replace(start=(row, tok.start[1]), end=(row, tok.end[1])))
            return out
        except (tokenize.TokenError, SyntaxError, StopIteration):
            pass  # (an ``else:`` line read from the body above it dedents past the start)
    return [tok for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]


def parse_suppressions(text: str, tree: ast.Module | None = None) -> Suppressions:
    """The noqa comments of ``text``; ``tree``: its ``ast``, when at hand
    (then only the lines naming noqa are tokenized)."""
    if "noqa" not in text and "NOQA" not in text.upper():
        return EMPTY
    lines: dict[int, NoqaComment] = {}
    file_codes: tuple[str, ...] | None = None
    has_file = False
    try:
        tokens = _comments(text, tree)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return EMPTY
    for tok in tokens:
        s = tok.string
        fm = _FILE_NOQA.match(s)
        if fm:
            has_file = True
            codes = _split_codes(fm.group("codes"))
            file_codes = () if not codes else (file_codes or ()) + codes
            continue
        m = _NOQA.search(s)
        if m:
            line, col = tok.start
            lines[line] = NoqaComment(
                line=line,
                column=col,
                end_column=tok.end[1],
                text=s,
                codes=_split_codes(m.group("codes")),
                match_start=m.start(),
                match_end=m.end(),
            )
    return Suppressions(lines, file_codes if has_file else None, has_file)


def apply_suppressions(diags: Sequence[Diagnostic], sup: Suppressions) -> tuple[list[Diagnostic], set[tuple[int, str]]]:
    """Mark suppressed diagnostics; return them and the (line, noqa code) uses."""
    out = []
    used: set[tuple[int, str]] = set()
    for d in diags:
        hit = sup.suppresses(d) if d.code != "SHD000" or sup.has_file_noqa else False
        if hit:
            out.append(replace(d, suppressed=True))
            if isinstance(hit, NoqaComment):
                if hit.codes is None:
                    used.add((hit.line, "*"))
                for code in hit.codes or ():
                    if d.code.startswith(code):
                        used.add((hit.line, code))
        else:
            out.append(d)
    return out, used


def unused_noqa(
    path: str,
    sup: Suppressions,
    used: set[tuple[int, str]],
    known_codes: Iterable[str],
    enabled_codes: Iterable[str],
    lines: Sequence[str] = (),
) -> list[Diagnostic]:
    """SHD900 for shardlint codes in noqa comments that suppressed nothing or
    that name no shardlint rule. Other tools' codes are left alone."""
    known = tuple(known_codes)
    enabled = tuple(enabled_codes)
    out: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for c in sorted(sup.lines.values(), key=lambda c: c.line):
        if not c.codes:
            continue
        ours = [code for code in c.codes if code.startswith(OUR_PREFIX)]
        unknown = [code for code in ours if not any(k.startswith(code) for k in known)]
        unused = [
            code
            for code in ours
            if code not in unknown
            and (c.line, code) not in used
            and any(k.startswith(code) for k in enabled)
        ]
        bad = unknown + unused
        if not bad:
            continue
        keep = [code for code in c.codes if code not in bad]
        parts = []
        if unused:
            parts.append("unused " + ", ".join(unused))
        if unknown:
            parts.append("unknown " + ", ".join(unknown))
        msg = f"noqa comment with {' and '.join(parts)}"
        if keep:
            new_comment = c.text[: c.match_start] + "# noqa: " + ", ".join(keep) + c.text[c.match_end :]
            edit = Edit(Span(c.line, c.column, c.line, c.end_column), new_comment)
            title = "Remove " + ", ".join(bad) + " from the noqa comment"
        else:
            rest = (c.text[: c.match_start] + c.text[c.match_end :]).strip()
            if rest and rest != "#":
                new_comment = rest if rest.startswith("#") else "# " + rest
                edit = Edit(Span(c.line, c.column, c.line, c.end_column), new_comment)
            else:
                # the whitespace between the code and the comment goes too
                src = lines[c.line - 1] if c.line <= len(lines) else ""
                start = len(src[: c.column].rstrip())
                edit = Edit(Span(c.line, start, c.line, c.end_column), "")
            title = "Remove the noqa comment"
        out.append(
            Diagnostic(
                code="SHD900",
                name="unused-noqa",
                severity=Severity.WARNING,
                path=path,
                span=Span(c.line, c.column, c.line, c.end_column),
                message=msg,
                fix=Fix(title, Applicability.SAFE, (edit,)),
                fingerprint=_fingerprint(lines, c.line, msg, seen),
            )
        )
    return out


def _fingerprint(lines: Sequence[str], line: int, msg: str, seen: dict[str, int]) -> str:
    # The normalised source line and an occurrence index, never the line
    # number: a stale noqa keeps its identity when code above it moves.
    src = " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""
    key = f"SHD900\0{src}\0{msg}"
    idx = seen.get(key, 0)
    seen[key] = idx + 1
    return hashlib.sha256(f"{key}\0{idx}".encode()).hexdigest()[:16]
