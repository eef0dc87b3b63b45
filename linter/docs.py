"""Rule documentation: the rule class docstring (fixed headings) plus the
rule's corpus examples, so that every documented example is also tested."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from linter.rule import Rule

REQUIRED_HEADINGS = ("What it finds", "Why it breaks", "Example", "Fix", "Options")
_MARKER = re.compile(r"\s*#\s*(error|todo-error|todo-ok):.*$")


def corpus_root() -> Path | None:
    here = Path(__file__).resolve().parent.parent / "corpus"
    if here.is_dir():
        return here
    try:
        import importlib.resources as res

        p = Path(str(res.files("shardlint_corpus")))
        return p if p.is_dir() else None
    except (ModuleNotFoundError, TypeError):
        return None


def module_name(rule: type[Rule]) -> str:
    return rule.name.replace("-", "_")


def corpus_dir(rule: type[Rule]) -> Path | None:
    root = corpus_root()
    if root is None:
        return None
    d = root / module_name(rule)
    return d if d.is_dir() else None


def sections(rule: type[Rule]) -> dict[str, str]:
    doc = inspect.cleandoc(rule.__doc__ or "")
    out: dict[str, str] = {}
    current = None
    buf: list[str] = []
    for line in doc.splitlines():
        m = re.match(r"^##\s+(.*?)\s*$", line)
        if m:
            if current is not None:
                out[current] = "\n".join(buf).strip()
            current, buf = m.group(1), []
        elif current is not None:
            buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf).strip()
    return out


def example_text(path: Path) -> str:
    """A corpus file as documentation: expectation markers stripped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(_MARKER.sub("", ln) for ln in lines).strip() + "\n"


def render_markdown(rule: type[Rule]) -> str:
    secs = sections(rule)
    d = corpus_dir(rule)
    parts = [f"# {rule.code} {rule.name}", "", rule.summary, ""]
    meta = [f"Severity: {rule.severity.value}", f"Fix: {rule.fixable.value}"]
    if not rule.default_enabled:
        meta.append("off by default")
    parts += [" · ".join(meta), ""]
    for heading in REQUIRED_HEADINGS:
        body = secs.get(heading, "")
        parts += [f"## {heading}", ""]
        if body:
            parts += [body, ""]
        if heading == "Example" and d is not None:
            for label, fname in (("Flagged", "bad.py"), ("Correct", "good.py")):
                f = d / fname
                if f.is_file():
                    parts += [f"{label} (`corpus/{d.name}/{fname}`):", "", "```python",
                              example_text(f).rstrip(), "```", ""]
    for heading, body in secs.items():
        if heading not in REQUIRED_HEADINGS:
            parts += [f"## {heading}", "", body, ""]
    return "\n".join(parts).rstrip() + "\n"


def render_text(rule: type[Rule]) -> str:
    md = render_markdown(rule)
    return md
