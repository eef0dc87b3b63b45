"""Helpers for the language-server tests: a workspace made of corpus files,
client capabilities (push-only and pull), waiting with generous timeouts
(the tests assert what is published, never how fast)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path

import linter

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REPO = Path(linter.__file__).resolve().parent.parent
WAIT_S = 60.0
SERVER_COMMAND = [sys.executable, "-m", "linter", "server"]


def server_env(home: Path | None = None) -> dict[str, str]:
    """The server runs this checkout's code, and writes rule docs under a
    throw-away cache folder."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    if home is not None:
        env["XDG_CACHE_HOME"] = str(home)
    return env


# unused-noqa (SHD900, off by default) on: its fix is the safe one
PYPROJECT = '[project]\nname = "ws"\n\n[tool.shardlint]\nextend-select = ["SHD900"]\n'


def make_workspace(root: Path) -> Path:
    """backend_pkg (SHD201 across four files) and kernels.py (SHD101 with
    unsafe fixes), under a pyproject.toml."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CORPUS / "unresolved_sentinel_reaches_impl" / "backend_pkg", root / "backend_pkg")
    shutil.copy(CORPUS / "block_size_min_divisibility" / "bad.py", root / "kernels.py")
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


def uri(path: Path) -> str:
    return from_fs_path(str(path)) or ""


def capabilities(pull: bool) -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True, code_description_support=True
            ),
            diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False) if pull else None,
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
            code_action=lsp.CodeActionClientCapabilities(
                code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                    lsp.ClientCodeActionKindOptions(value_set=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll])
                )
            ),
        ),
        workspace=lsp.WorkspaceClientCapabilities(
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None,
            workspace_folders=True,
        ),
        window=lsp.WindowClientCapabilities(show_document=lsp.ShowDocumentClientCapabilities(support=True)),
    )


def init_params(root: Path, pull: bool, options: Any = None) -> lsp.InitializeParams:
    return lsp.InitializeParams(
        capabilities=capabilities(pull),
        workspace_folders=[lsp.WorkspaceFolder(uri(root), root.name)],
        root_uri=uri(root),
        initialization_options=options,
    )


class Docs:
    """Open documents and their versions, as an editor keeps them."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    def open(self, path: Path, text: str | None = None) -> str:
        u = uri(path)
        text = path.read_text() if text is None else text
        self.versions[u], self.texts[u] = 1, text
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(u, "python", 1, text))
        )
        return u

    def change(self, u: str, text: str) -> int:
        self.versions[u] += 1
        self.texts[u] = text
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(self.versions[u], u),
                [lsp.TextDocumentContentChangeWholeDocument(text)],
            )
        )
        return self.versions[u]

    def save(self, u: str) -> None:
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(u)))


async def published(
    client: Any,
    send: Callable[[], Any],
    target: str,
    accept: Callable[[lsp.PublishDiagnosticsParams], bool] = lambda p: True,
) -> lsp.PublishDiagnosticsParams:
    """Do ``send()``, then wait for the publication for ``target`` that
    ``accept`` takes (earlier ones, e.g. of an older version, are skipped)."""

    async def wait() -> lsp.PublishDiagnosticsParams:
        while True:
            params = await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == target and accept(params):
                return params

    waiter = asyncio.ensure_future(wait())
    await asyncio.sleep(0)
    send()
    return await asyncio.wait_for(waiter, WAIT_S)


async def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something true (or fail after WAIT_S)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        got = check()
        if got:
            return got
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def codes(diags: Any) -> list[str]:
    return sorted(str(d.code) for d in diags)


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP text edits (ASCII text: UTF-16 columns are code points)."""
    lines = text.split("\n")
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)

    def offset(p: lsp.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        return min(starts[p.line] + p.character, len(text))

    out = text
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(e.range.start), offset(e.range.end)
        out = out[:a] + e.new_text + out[b:]
    return out
