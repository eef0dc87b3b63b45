"""``shardlint server``: the language server (pygls).

Diagnostics are linted on one worker thread, one buffer at a time, against
the workspace folder's facts with the other unsaved buffers laid over.
Changes are debounced per document; a newer change cancels a run that has
not started and makes a running one's result stale (never published).
A client that declares pull diagnostics gets them pulled (and a refresh
when another file's edit changes them); any other client gets them pushed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from linter import __version__
from linter.config import ConfigError
from linter.fixer import fix_text
from linter.lsp import convert
from linter.lsp.buffers import BufferLint
from linter.lsp.workspace import (
    FolderState,
    Settings,
    folder_for,
    key_line,
    nested_project_root,
    parse_settings,
)
from linter.registry import load_registry_fast
from linter.types import Applicability, Span

log = logging.getLogger("shardlint.lsp")

FIX_ALL = "source.fixAll.shardlint"
SHOW_DOCS = "shardlint.showRuleDocs"
DEBOUNCE_S = 0.15


@dataclass
class Linted:
    version: int | None
    text: str
    result: BufferLint
    folder: FolderState


class ShardlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("shardlint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.registry = load_registry_fast()
        self.folders: list[FolderState] = []
        self.settings = Settings()
        self.settings_problem: str | None = None
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Future[Any]] = {}
        # facts a lint laid over (uri, module, collectors changed, folder)
        # whose dependents are not relinted yet: the lint thread records
        # them, the event loop announces them after any lint ends -- a
        # settle whose awaiting task was cancelled (a newer change, a pull)
        # has laid its facts over all the same
        self.unannounced: list[tuple[str, str, set[str], FolderState]] = []
        self.unannounced_lock = threading.Lock()
        self.pyproject_diagnostics: set[str] = set()
        # one thread: the engine, its facts and their recorders are not shared
        self.lint_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shardlint-lint")
        self.debounce = DEBOUNCE_S

    # -- capabilities -----------------------------------------------------
    @property
    def pull(self) -> bool:
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    @property
    def can_refresh(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)

    # -- folders ----------------------------------------------------------
    def folder_of(self, path: Path) -> FolderState:
        """The state whose configuration governs ``path``, as on the command
        line (one configuration per file): the innermost workspace folder
        holding it, or the project nested below that folder whose own
        ``pyproject.toml`` has a ``[tool.shardlint]`` table (its root, rules
        and facts), or, outside every folder, the file's own project."""
        from linter.config import find_project_root

        got = folder_for(self.folders, path)
        root = find_project_root(path) if got is None else nested_project_root(got, path)
        if root is not None:
            got = FolderState(root, self.registry, self.settings)
            got.configure()
            self.folders.append(got)
        return got

    def set_folders(self, paths: list[Path]) -> None:
        keep = {f.folder: f for f in self.folders}
        self.folders = []
        for p in paths:
            f = keep.get(p) or FolderState(p, self.registry, self.settings)
            if f.engine is None:
                f.configure()
            self.folders.append(f)

    async def in_thread(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.lint_thread, fn, *args)

    # -- configuration problems -------------------------------------------
    def report_config(self, folder: FolderState) -> None:
        """A bad configuration: shown once as a message and as a diagnostic on
        the file at fault (cleared when it is fixed)."""
        problem = folder.problem
        target = (problem.path if problem and problem.path else None) or folder.pyproject
        uri = from_fs_path(str(target)) or ""
        if problem is None:
            if uri in self.pyproject_diagnostics:
                self.pyproject_diagnostics.discard(uri)
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
            return
        self.window_show_message(
            lsp.ShowMessageParams(
                lsp.MessageType.Error,
                f"shardlint: {problem.message} (keeping the last good configuration)",
            )
        )
        if problem.path is None:
            return
        try:
            text = problem.path.read_text(encoding="utf-8")
        except OSError:
            text = ""
        line = key_line(text, problem.message)
        width = len(text.splitlines()[line]) if text.splitlines() else 0
        diag = lsp.Diagnostic(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, width)),
            message=problem.message,
            severity=lsp.DiagnosticSeverity.Error,
            source=convert.SOURCE,
            code="config",
        )
        self.pyproject_diagnostics.add(uri)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, [diag]))

    # -- linting ----------------------------------------------------------
    def _lint_sync(self, uri: str, text: str, version: int | None) -> Linted:
        path = Path(to_fs_path(uri) or uri)
        folder = self.folder_of(path)
        return Linted(version, text, folder.lint(path, text), folder)

    def _settle_sync(self, uri: str, text: str) -> set[str]:
        """Lay a buffer's facts over (its dependents are announced later):
        the collectors whose facts for its module changed."""
        path = Path(to_fs_path(uri) or uri)
        folder = self.folder_of(path)
        changed = folder.settle(path, text)
        if changed:
            with self.unannounced_lock:
                self.unannounced.append((uri, folder.module_of(path), changed, folder))
        return changed

    def announce(self) -> None:
        """Relint the dependents of every module whose facts a lint laid
        over since the last call."""
        with self.unannounced_lock:
            todo, self.unannounced = self.unannounced, []
        for uri, module, changed, folder in todo:
            self.relint_dependents(uri, module, changed, folder)

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Lint the document soon. A change while its last run is still
        queued or running cancels that run (a queued one never starts, a
        running one's result is stale) and waits ``debounce`` for the burst
        to end; a change after a finished run is linted at once."""
        old = self.pending.pop(uri, None)
        busy = old is not None and not old.done()
        if old is not None:
            old.cancel()
        if delay is None:
            delay = self.debounce if busy else 0.0
        self.pending[uri] = asyncio.ensure_future(self.lint_later(uri, delay))

    async def lint_later(self, uri: str, delay: float) -> Linted | None:
        if delay:
            await asyncio.sleep(delay)
        return await self.lint_now(uri)

    async def lint_now(self, uri: str) -> Linted | None:
        """Lint the document against the facts as they stand and publish
        (push), then lay its own facts over; the few times they changed in a
        way its findings read, lint and publish once more. A document first
        seen (new, or unlike the file on disk) has its facts laid over first."""
        doc = self.workspace.text_documents.get(uri)
        if doc is None or not uri.startswith("file:") or not uri.endswith((".py", ".pyi")):
            return None
        version, text = doc.version, doc.source
        settled = uri not in self.linted
        if settled:
            await self.in_thread(self._settle_sync, uri, text)
        linted = await self.in_thread(self._lint_sync, uri, text, version)
        while True:
            current = self.workspace.text_documents.get(uri)
            if current is None or current.version != version:
                self.announce()
                return None  # stale: a newer change is on its way
            if not self.pull:
                self.linted[uri] = linted
                self.publish(uri, linted)
            if settled:
                break
            settled = True
            changed = await self.in_thread(self._settle_sync, uri, text)
            if not (changed and linted.result.depends_on(linted.result.module, changed, linted.folder.lazy_names())):
                break
            linted = await self.in_thread(self._lint_sync, uri, text, version)
        self.linted[uri] = linted
        self.announce()
        return linted

    def relint_dependents(self, uri: str, module: str, changed: set[str], folder: FolderState) -> None:
        lazy = folder.lazy_names()
        stale = [
            other
            for other, lt in self.linted.items()
            if other != uri and lt.folder is folder and lt.result.depends_on(module, changed, lazy)
        ]
        for other in stale:
            if self.pull:
                self.linted.pop(other, None)
            else:
                self.schedule(other)
        if stale and self.pull and self.can_refresh:
            self.workspace_diagnostic_refresh(None)

    def lsp_diagnostics(self, uri: str, linted: Linted) -> list[lsp.Diagnostic]:
        doc = self.workspace.get_text_document(uri)
        codec, lines = doc.position_codec, linted.text.split("\n")
        read: dict[Path, list[str]] = {}

        def lines_of(path: Path) -> list[str]:
            if path not in read:
                other = self.workspace.text_documents.get(from_fs_path(str(path)) or "")
                try:
                    read[path] = (other.source if other else path.read_text(encoding="utf-8")).split("\n")
                except (OSError, UnicodeDecodeError):
                    read[path] = []
            return read[path]

        root = linted.folder.config.root if linted.folder.config else linted.folder.folder
        out = []
        for d in linted.result.diagnostics:
            if d.suppressed:
                continue
            ld = convert.to_diagnostic(d, codec, lines, root, lines_of)
            for rel in ld.related_information or ():
                if not rel.location.uri:
                    rel.location.uri = uri
            out.append(ld)
        return out

    def publish(self, uri: str, linted: Linted) -> None:
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri, self.lsp_diagnostics(uri, linted), version=linted.version)
        )

    async def current(self, uri: str) -> Linted | None:
        """The findings for the document as it is now (linted now if need be)."""
        doc = self.workspace.text_documents.get(uri)
        got = self.linted.get(uri)
        if doc is not None and got is not None and got.version == doc.version:
            return got
        if doc is None:
            return None
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        for _ in range(3):
            got = await self.lint_now(uri)
            if got is not None:
                return got
        return self.linted.get(uri)

    # -- files on disk ----------------------------------------------------
    def _disk_changed(self, changes: list[tuple[Path, bool]]) -> list[tuple[str, str, set[str], FolderState]]:
        out = []
        for path, deleted in changes:
            folder = folder_for(self.folders, path)
            if folder is None:
                continue
            text = None
            if not deleted:
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
            changed = folder.lay_over(path, text)
            if changed:
                out.append((from_fs_path(str(path)) or "", folder.module_of(path), changed, folder))
        return out

    def _reconfigure(self, folders: list[FolderState], settings: Settings | None) -> list[FolderState]:
        for f in folders:
            f.configure(settings)
        return folders

    async def reconfigure(self, folders: list[FolderState], settings: Settings | None = None) -> None:
        await self.in_thread(self._reconfigure, folders, settings)
        for f in folders:
            self.report_config(f)
        self.relint_all(folders)

    def relint_all(self, folders: list[FolderState]) -> None:
        for uri, lt in list(self.linted.items()):
            if lt.folder in folders:
                if self.pull:
                    self.linted.pop(uri, None)
                else:
                    self.schedule(uri, 0)
        if self.pull and self.can_refresh:
            self.workspace_diagnostic_refresh(None)


server = ShardlintServer()


def _settings_from(raw: Any) -> tuple[Settings, str | None]:
    try:
        return parse_settings(raw, server.registry), None
    except ConfigError as exc:
        return server.settings, str(exc)


@server.feature(lsp.INITIALIZE)
def initialize(ls: ShardlintServer, params: lsp.InitializeParams) -> None:
    ls.settings, ls.settings_problem = _settings_from(params.initialization_options)
    paths = [Path(to_fs_path(f.uri) or f.uri) for f in params.workspace_folders or ()]
    if not paths and params.root_uri:
        paths = [Path(to_fs_path(params.root_uri) or params.root_uri)]
    ls.set_folders([p.resolve() for p in paths])


@server.feature(lsp.INITIALIZED)
async def initialized(ls: ShardlintServer, params: lsp.InitializedParams) -> None:
    if ls.settings_problem:
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"shardlint: {ls.settings_problem}"))
    for f in ls.folders:
        if f.problem is not None:
            ls.report_config(f)
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws else None
    if watched and watched.dynamic_registration:
        watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in ("**/*.py", "**/*.pyi", "**/pyproject.toml")]
        try:
            await ls.client_register_capability_async(
                lsp.RegistrationParams([
                    lsp.Registration(
                        "shardlint-watched-files",
                        lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        lsp.DidChangeWatchedFilesRegistrationOptions(watchers),
                    )
                ])
            )
        except Exception as exc:  # a client may refuse: files changed on disk are then read on open
            log.info("watching files not registered: %s", exc)
    # build the facts of every folder now (through the on-disk cache), so
    # that the first file opened is linted without waiting for them
    for f in ls.folders:
        await ls.in_thread(f.warm)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ShardlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ShardlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: ShardlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        path = Path(to_fs_path(uri) or uri)
        folders = [f for f in ls.folders if f.contains(path)]
        if folders:
            await ls.reconfigure(folders)
        return
    ls.schedule(uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: ShardlintServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    linted = ls.linted.pop(uri, None)
    if not ls.pull:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
    if linted is not None:
        # the buffer's unsaved text no longer counts: the file on disk does
        path = Path(to_fs_path(uri) or uri)
        linted.folder.closed(path)
        for other, module, changed, folder in await ls.in_thread(ls._disk_changed, [(path, not path.exists())]):
            ls.relint_dependents(other, module, changed, folder)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: ShardlintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    configs: list[FolderState] = []
    sources: list[tuple[Path, bool]] = []
    for ch in params.changes:
        path = Path(to_fs_path(ch.uri) or ch.uri)
        if path.name == "pyproject.toml":
            configs += [f for f in ls.folders if f.contains(path) and f not in configs]
        elif path.suffix in (".py", ".pyi") and ch.uri not in ls.workspace.text_documents:
            sources.append((path, ch.type == lsp.FileChangeType.Deleted))
    if configs:
        await ls.reconfigure(configs)
    if sources:
        for uri, module, changed, folder in await ls.in_thread(ls._disk_changed, sources):
            ls.relint_dependents(uri, module, changed, folder)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: ShardlintServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings, problem = _settings_from(params.settings)
    if problem:
        ls.window_show_message(
            lsp.ShowMessageParams(lsp.MessageType.Error, f"shardlint: {problem} (keeping the last good settings)")
        )
        return
    ls.settings = settings
    await ls.reconfigure(list(ls.folders), settings)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_folders(ls: ShardlintServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    gone = {Path(to_fs_path(f.uri) or f.uri).resolve() for f in params.event.removed}
    added = [Path(to_fs_path(f.uri) or f.uri).resolve() for f in params.event.added]
    ls.set_folders([f.folder for f in ls.folders if f.folder not in gone] + added)


# -- pull diagnostics ---------------------------------------------------------


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    lsp.DiagnosticOptions(identifier="shardlint", inter_file_dependencies=True, workspace_diagnostics=True),
)
async def document_diagnostic(ls: ShardlintServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    linted = await ls.current(params.text_document.uri)
    if linted is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    return lsp.RelatedFullDocumentDiagnosticReport(
        items=ls.lsp_diagnostics(params.text_document.uri, linted), result_id=f"{linted.version}"
    )


@server.feature(lsp.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostic(ls: ShardlintServer, params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
    """The open documents' findings (a whole-project pull is what
    ``shardlint check`` is for)."""
    items: list[Any] = []
    for uri in list(ls.workspace.text_documents):
        linted = await ls.current(uri)
        if linted is None:
            continue
        items.append(
            lsp.WorkspaceFullDocumentDiagnosticReport(
                uri=uri, items=ls.lsp_diagnostics(uri, linted), version=linted.version, result_id=f"{linted.version}"
            )
        )
    return lsp.WorkspaceDiagnosticReport(items=items)


# -- code actions -------------------------------------------------------------


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll, FIX_ALL],
        resolve_provider=False,
    ),
)
async def code_action(ls: ShardlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    uri = params.text_document.uri
    linted = await ls.current(uri)
    if linted is None:
        return None
    only = params.context.only
    doc = ls.workspace.get_text_document(uri)
    codec, lines = doc.position_codec, linted.text.split("\n")
    actions: list[lsp.CodeAction] = []
    want_quick = not only or any(k in (lsp.CodeActionKind.QuickFix, "quickfix") for k in only)
    want_fix_all = not only or any(
        k in (lsp.CodeActionKind.Source, lsp.CodeActionKind.SourceFixAll, FIX_ALL) for k in only
    )
    if want_quick:
        start = convert.from_position(codec, lines, params.range.start)
        end = convert.from_position(codec, lines, params.range.end)
        docs_seen: set[str] = set()
        for d in linted.result.diagnostics:
            if d.suppressed or (d.span.end_line, d.span.end_column) < start or (d.span.line, d.span.column) > end:
                continue
            ld = convert.to_diagnostic(d, codec, lines, linted.folder.folder, lambda p: [])
            if d.fix is not None and d.fix.edits and d.fix.applicability is not Applicability.DISPLAY_ONLY:
                actions.append(
                    lsp.CodeAction(
                        title=convert.fix_title(d),
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[ld],
                        is_preferred=d.fix.applicability is Applicability.SAFE,
                        edit=lsp.WorkspaceEdit(
                            changes={uri: [convert.text_edit(codec, lines, e) for e in d.fix.edits]}
                        ),
                    )
                )
            noqa = convert.noqa_edit(linted.text, d.span.line, d.code) if d.code != "SHD900" else None
            if noqa is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Suppress {d.code} on this line",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[ld],
                        edit=lsp.WorkspaceEdit(changes={uri: [convert.text_edit(codec, lines, noqa)]}),
                    )
                )
            if d.code not in docs_seen and convert.docs_markdown(d.code) is not None:
                docs_seen.add(d.code)
                actions.append(
                    lsp.CodeAction(
                        title=f"Show documentation for {d.code} ({d.name})",
                        kind=lsp.CodeActionKind.QuickFix,
                        command=lsp.Command(title=f"Show {d.code} documentation", command=SHOW_DOCS, arguments=[d.code]),
                    )
                )
    if want_fix_all:
        action = await fix_all_action(ls, uri, linted)
        if action is not None:
            actions.append(action)
    return actions


async def fix_all_action(ls: ShardlintServer, uri: str, linted: Linted) -> lsp.CodeAction | None:
    unsafe = linted.folder.settings.unsafe_fixes
    if not any(
        d.fix is not None and d.fix.edits and not d.suppressed
        and (d.fix.applicability is Applicability.SAFE or (unsafe and d.fix.applicability is Applicability.UNSAFE))
        for d in linted.result.diagnostics
    ):
        return None
    path = Path(to_fs_path(uri) or uri)
    engine = linted.folder.engine
    assert engine is not None
    outcome = await ls.in_thread(fix_text, engine, linted.text, path, unsafe)
    if outcome.text == linted.text:
        return None
    lines = linted.text.split("\n")
    doc = ls.workspace.get_text_document(uri)
    whole = Span(1, 0, len(lines), len(lines[-1]))
    edit = lsp.TextEdit(convert.to_range(doc.position_codec, lines, whole), outcome.text)
    return lsp.CodeAction(
        title=f"shardlint: fix all{' (unsafe fixes included)' if unsafe else ''}",
        kind=FIX_ALL,
        edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
    )


@server.command(SHOW_DOCS)
def show_docs(ls: ShardlintServer, *args: Any) -> str | None:
    """The rule's documentation (markdown); a client that can shows it."""
    flat = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    code = str(flat[0]).upper() if flat else ""
    md = convert.docs_markdown(code)
    if md is None:
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"shardlint: unknown rule {code!r}"))
        return None
    window = ls.client_capabilities.window
    uri = convert.docs_uri(code)
    if uri and window and window.show_document and window.show_document.support:
        ls.window_show_document(lsp.ShowDocumentParams(uri, take_focus=True))
    return md


# -- hover --------------------------------------------------------------------


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: ShardlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
    uri = params.text_document.uri
    doc = ls.workspace.text_documents.get(uri)
    if doc is None:
        return None
    lines = doc.source.split("\n")
    line, col = convert.from_position(doc.position_codec, lines, params.position)
    code = convert.noqa_code_at(doc.source, line, col)
    parts: list[str] = []
    if code is not None:
        md = convert.docs_markdown(code)
        parts.append(md if md is not None else f"`{code}` is not a shardlint rule")
    else:
        linted = await ls.current(uri)
        if linted is not None:
            for d in linted.result.diagnostics:
                if not d.suppressed and convert.contains(d.span, line, col):
                    md = convert.docs_markdown(d.code)
                    parts.append(f"**{d.code}** {d.message}" + (f"\n\n---\n\n{md}" if md else ""))
    if not parts:
        return None
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))


def protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """The client's stdin and stdout, as streams of the protocol's own; the
    process's standard streams become /dev/null and stderr.

    The engine scans a big project in forked workers, and a forked
    multiprocessing worker first closes ``sys.stdin``: were the protocol
    read through it, the worker would wait forever for the lock of the
    buffer the server's reader thread holds while it waits for input.
    And nothing a rule or library prints can corrupt the protocol's stream."""
    stdin = os.fdopen(os.dup(0), "rb")
    stdout = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (for the process's lifetime)
    return stdin, stdout


def serve(tcp_port: int | None = None, host: str = "127.0.0.1") -> None:
    logging.basicConfig(level=logging.WARNING, format="shardlint-lsp: %(message)s")
    if tcp_port is None:
        server.start_io(*protocol_streams())
    else:
        server.start_tcp(host, tcp_port)
