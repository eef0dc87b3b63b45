"""End to end: the real `shardlint server` process driven by pytest-lsp, with a
push-only client and a pull client. Waits are generous and nothing is timed."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from lsp_client import (  # noqa: E402
    PYPROJECT,
    SERVER_COMMAND,
    Docs,
    apply_edits,
    codes,
    eventually,
    init_params,
    make_workspace,
    published,
    server_env,
    uri,
)
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from linter.lsp.server import FIX_ALL, SHOW_DOCS  # noqa: E402

pytestmark = pytest.mark.asyncio
CONFIG = ClientServerConfig(SERVER_COMMAND, server_env=server_env(Path(tempfile.mkdtemp(prefix="shardlint-lsp-docs-"))))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


async def start(client: LanguageClient, workspace: Path, pull: bool = False, options: object = None) -> None:
    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        client.registrations = [*getattr(client, "registrations", []), *params.registrations]

    client.initialize_result = await client.initialize_session(init_params(workspace, pull=pull, options=options))


@pytest_lsp.fixture(config=CONFIG)
async def push(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def push_unsafe(lsp_client: LanguageClient, workspace: Path):
    """A push client whose settings turn unsafe fixes on."""
    await start(lsp_client, workspace, options={"unsafe-fixes": True})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def push_ignoring(lsp_client: LanguageClient, workspace: Path):
    """A push client whose settings ignore SHD201."""
    await start(lsp_client, workspace, options={"ignore": ["SHD201"]})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def pull(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, pull=True)
    yield
    await lsp_client.shutdown_session()


MODEL = "backend_pkg/model.py"
COMMON = "backend_pkg/common.py"


def unresolved_base(text: str) -> str:
    """common.py with its sentinels resolved in the class body (-1 -> 1):
    model.py's SHD201 findings depend on them."""
    out = text.replace("pcp_world_size: int = -1", "pcp_world_size: int = 1").replace("pcp_rank: int = -1", "pcp_rank: int = 0")
    assert out != text
    return out


async def open_and_wait(client: LanguageClient, docs: Docs, path: Path, text: str | None = None):
    target = uri(path)
    got = await published(client, lambda: docs.open(path, text), target)
    return target, got


# -- start, capabilities, shutdown -----------------------------------------------


async def test_initialize_announces_capabilities(push: LanguageClient):
    assert push.initialize_result.server_info.name == "shardlint"
    caps = push.initialize_result.capabilities
    assert caps.text_document_sync is not None
    kinds = caps.code_action_provider.code_action_kinds
    assert lsp.CodeActionKind.QuickFix in kinds and FIX_ALL in kinds
    assert caps.hover_provider
    assert caps.diagnostic_provider.inter_file_dependencies
    assert caps.diagnostic_provider.workspace_diagnostics
    assert SHOW_DOCS in caps.execute_command_provider.commands
    # files changed on disk are watched: sources and pyproject.toml
    await eventually(lambda: getattr(push, "registrations", None), "client/registerCapability")
    (registration,) = push.registrations
    assert registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = {w["globPattern"] for w in registration.register_options["watchers"]}
    assert "**/pyproject.toml" in globs and "**/*.py" in globs


async def test_shutdown_and_exit_end_the_process(push: LanguageClient):
    await push.shutdown_session()
    push.capabilities = None  # (the fixture's own shutdown is done)
    proc = push._server
    assert proc is not None
    await asyncio.wait_for(proc.wait(), 60)
    assert proc.returncode == 0


# -- push diagnostics ------------------------------------------------------------------


async def test_diagnostics_on_open_change_and_save(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    target, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    d = got.diagnostics[0]
    assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "shardlint"
    assert d.range.start.line == 14  # `self.impl = FlashSparseImpl(...)`, line 15
    # the rule's documentation, linked and readable
    href = d.code_description.href
    assert href.startswith("file://") and href.endswith("SHD201.md")
    assert "# SHD201" in Path(href[len("file://"):]).read_text()
    # the notes: the base class's sentinel in common.py, the resolver in wrapper.py
    related = {(r.location.uri, r.location.range.start.line) for r in d.related_information}
    assert (uri(workspace / COMMON), 7) in related
    assert any(u == uri(workspace / "backend_pkg/wrapper.py") for u, _ in related)

    # an edit that removes one construction: one finding left, for that version
    text = docs.texts[target].replace("        self.impl = FlashSparseImpl(num_heads, topk, window=128)  # error: SHD201\n", "        self.impl = None\n")
    version = None

    def change():
        nonlocal version
        version = docs.change(target, text)

    got = await published(push, change, target, lambda p: p.version == docs.versions[target])
    assert codes(got.diagnostics) == ["SHD201"]
    assert got.version == version

    # saving publishes again
    got = await published(push, lambda: docs.save(target), target)
    assert codes(got.diagnostics) == ["SHD201"]


async def test_rapid_changes_publish_the_last_version(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    target, _ = await open_and_wait(push, docs, workspace / MODEL)
    base = docs.texts[target]

    def burst():
        for i in range(8):
            docs.change(target, base + f"\nx{i} = {i}\n")
        docs.change(target, base.replace("(nn.Module)", "(object)", 1) + "\n")

    got = await published(push, burst, target, lambda p: p.version == docs.versions[target])
    assert got.version == 10
    # the last text is the one linted (no findings from a stale run shown last)
    await asyncio.sleep(0.5)
    assert push.diagnostics[target] == got.diagnostics


async def test_broken_buffer_shows_the_syntax_error_only(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    target, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    good = docs.texts[target]
    broken = good.replace("class ToyModelSparseAttentionViaFactory(nn.Module):", "class ToyModelSparseAttentionViaFactory(nn.Module:")
    got = await published(push, lambda: docs.change(target, broken), target, lambda p: p.version == docs.versions[target])
    assert codes(got.diagnostics) == ["SHD000"]
    # still serving: hover answers, and the repaired buffer has its findings back
    await push.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(target), lsp.Position(0, 0)))
    got = await published(push, lambda: docs.change(target, good), target, lambda p: p.version == docs.versions[target])
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]


# -- cross-file ----------------------------------------------------------------------


async def test_editing_the_base_class_relints_the_open_subclass_user(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    model, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    common, _ = await open_and_wait(push, docs, workspace / COMMON)
    original = docs.texts[common]
    # unsaved edit of the base class: model.py is re-linted without being touched
    got = await published(push, lambda: docs.change(common, unresolved_base(original)), model)
    assert codes(got.diagnostics) == []
    got = await published(push, lambda: docs.change(common, original), model)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]


async def test_an_edit_that_changes_the_buffers_own_facts_relints_it(push: LanguageClient, workspace: Path):
    """The buffer's findings are published against its last facts, then its
    new facts are laid over: when its findings read them (the base class
    with the sentinel in the same file), the version is linted and published
    again, and the last publication is right."""
    docs = Docs(push)
    bad = (Path(__file__).parent.parent / "corpus" / "unresolved_sentinel_reaches_impl" / "bad.py").read_text()
    solo, got = await open_and_wait(push, docs, workspace / "solo.py", bad)
    assert "SHD201" in codes(got.diagnostics)
    resolved = bad.replace("self.dcp_world_size = -1", "self.dcp_world_size = 1").replace("self.dcp_rank = -1", "self.dcp_rank = 0")
    assert resolved != bad

    def settled(expect: bool):
        return lambda p: p.version == docs.versions[solo] and ("SHD201" in codes(p.diagnostics)) == expect

    await published(push, lambda: docs.change(solo, resolved), solo, settled(False))
    await published(push, lambda: docs.change(solo, bad), solo, settled(True))


async def test_a_file_changed_on_disk_relints_the_open_files_using_it(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    model, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    path = workspace / COMMON
    path.write_text(unresolved_base(path.read_text()))

    def notify():
        push.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams([lsp.FileEvent(uri(path), lsp.FileChangeType.Changed)])
        )

    got = await published(push, notify, model)
    assert codes(got.diagnostics) == []


# -- code actions ---------------------------------------------------------------------


async def actions_at(client: LanguageClient, target: str, diag: lsp.Diagnostic, only=None):
    return await client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target), diag.range, lsp.CodeActionContext([diag], only=only)
        )
    )


async def test_quick_fix_labelled_unsafe_applies_cleanly(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    target, got = await open_and_wait(push, docs, workspace / "kernels.py")
    first = min((d for d in got.diagnostics if d.code == "SHD101"), key=lambda d: d.range.start.line)
    opened = list(got.diagnostics)
    actions = await actions_at(push, target, first)
    titles = [a.title for a in actions]
    fixes = [a for a in actions if getattr(a, "edit", None) and "(unsafe fix)" in a.title]
    assert len(fixes) == 1, titles
    assert any(t == "Suppress SHD101 on this line" for t in titles)
    # (the test client reads a code action carrying only a command back as
    # a Command, its command the action's command object as text)
    shows = [str(a.command) for a in actions if a.title.startswith("Show documentation")]
    assert len(shows) == 1 and SHOW_DOCS in shows[0]
    fixed = apply_edits(docs.texts[target], fixes[0].edit.changes[target])
    compile(fixed, "kernels.py", "exec")
    assert "import math" in fixed and "math.gcd(width, 1024)" in fixed
    got = await published(push, lambda: docs.change(target, fixed), target, lambda p: p.version == docs.versions[target])
    before = [d for d in opened if d.code == "SHD101"]
    after = [d for d in got.diagnostics if d.code == "SHD101"]
    assert len(after) == len(before) - 1
    assert "SHD000" not in codes(got.diagnostics)


async def test_noqa_action_adds_and_extends_the_comment(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    target, got = await open_and_wait(push, docs, workspace / "kernels.py")
    before = [d for d in got.diagnostics if d.code == "SHD101"]
    first = min(before, key=lambda d: d.range.start.line)
    action = next(a for a in await actions_at(push, target, first) if a.title == "Suppress SHD101 on this line")
    text = apply_edits(docs.texts[target], action.edit.changes[target])
    line = text.split("\n")[first.range.start.line]
    assert line.endswith("# error: SHD101  # noqa: SHD101")
    got = await published(push, lambda: docs.change(target, text), target, lambda p: p.version == docs.versions[target])
    assert len([d for d in got.diagnostics if d.code == "SHD101"]) == len(before) - 1
    assert "SHD900" not in codes(got.diagnostics)

    # a line whose noqa names another code: the code is added to it
    second = min((d for d in got.diagnostics if d.code == "SHD101"), key=lambda d: d.range.start.line)
    lines = text.split("\n")
    lines[second.range.start.line] = lines[second.range.start.line].split("  #")[0] + "  # noqa: SHD501"
    text = "\n".join(lines)
    got = await published(push, lambda: docs.change(target, text), target, lambda p: p.version == docs.versions[target])
    second = next(d for d in got.diagnostics if d.code == "SHD101" and d.range.start.line == second.range.start.line)
    action = next(a for a in await actions_at(push, target, second) if a.title == "Suppress SHD101 on this line")
    text = apply_edits(text, action.edit.changes[target])
    assert text.split("\n")[second.range.start.line].endswith("# noqa: SHD501, SHD101")
    got = await published(push, lambda: docs.change(target, text), target, lambda p: p.version == docs.versions[target])
    assert second.range.start.line not in {d.range.start.line for d in got.diagnostics if d.code == "SHD101"}


async def test_fix_all_applies_safe_fixes_only(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    path = workspace / "kernels.py"
    text = path.read_text() + "\nUNUSED = 1  # noqa: SHD101\n"
    target, got = await open_and_wait(push, docs, path, text)
    assert "SHD900" in codes(got.diagnostics)
    actions = await push.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target),
            lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            lsp.CodeActionContext([], only=[FIX_ALL]),
        )
    )
    assert [a.kind for a in actions] == [FIX_ALL]
    fixed = apply_edits(text, actions[0].edit.changes[target])
    assert "UNUSED = 1\n" in fixed
    assert "min(" in fixed and "math.gcd" not in fixed  # the unsafe fixes are left alone
    got = await published(push, lambda: docs.change(target, fixed), target, lambda p: p.version == docs.versions[target])
    assert "SHD900" not in codes(got.diagnostics)


async def test_fix_all_with_unsafe_fixes_configured(push_unsafe: LanguageClient, workspace: Path):
    push = push_unsafe
    docs = Docs(push)
    target, got = await open_and_wait(push, docs, workspace / "kernels.py")
    actions = await push.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target),
            lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            lsp.CodeActionContext([], only=[lsp.CodeActionKind.SourceFixAll]),
        )
    )
    assert len(actions) == 1 and "unsafe" in actions[0].title
    fixed = apply_edits(docs.texts[target], actions[0].edit.changes[target])
    compile(fixed, "kernels.py", "exec")
    assert "math.gcd(width, 1024)" in fixed


async def test_show_docs_command(push: LanguageClient):
    md = await push.workspace_execute_command_async(lsp.ExecuteCommandParams(SHOW_DOCS, ["SHD101"]))
    assert md.startswith("# SHD101") and "corpus/block_size_min_divisibility/bad.py" in md
    await eventually(lambda: push.shown_documents, "window/showDocument")
    assert push.shown_documents[0].uri.endswith("SHD101.md")


# -- hover -------------------------------------------------------------------------


async def test_hover_on_a_finding_and_on_a_noqa_code(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    path = workspace / MODEL
    text = path.read_text() + "\nLATER = 1  # noqa: SHD301\n"
    target, got = await open_and_wait(push, docs, path, text)
    d = next(d for d in got.diagnostics if d.code == "SHD201")
    inside = lsp.Position(d.range.start.line, d.range.start.character + 2)
    h = await push.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(target), inside))
    assert h.contents.kind == lsp.MarkupKind.Markdown
    assert "**SHD201**" in h.contents.value and "## Example" in h.contents.value and "```python" in h.contents.value
    last = len(text.split("\n")) - 2
    col = text.split("\n")[last].index("SHD301") + 3
    h = await push.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(target), lsp.Position(last, col)))
    assert h.contents.value.startswith("# SHD301")
    nothing = await push.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(target), lsp.Position(0, 0)))
    assert nothing is None


# -- configuration -------------------------------------------------------------------


async def test_pyproject_reload_and_bad_key(push: LanguageClient, workspace: Path):
    docs = Docs(push)
    model, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    pyproject = workspace / "pyproject.toml"

    def changed():
        push.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams([lsp.FileEvent(uri(pyproject), lsp.FileChangeType.Changed)])
        )

    pyproject.write_text(PYPROJECT + 'ignore = ["SHD201"]\n')
    got = await published(push, changed, model)
    assert codes(got.diagnostics) == []

    # a bad key: a diagnostic on pyproject.toml, a message, the last good config kept
    pyproject.write_text(PYPROJECT + 'ignore = ["SHD201"]\nselec = ["SHD"]\n')
    got = await published(push, changed, uri(pyproject))
    assert len(got.diagnostics) == 1 and "selec" in got.diagnostics[0].message
    assert got.diagnostics[0].range.start.line == PYPROJECT.count("\n") + 1
    await eventually(lambda: [m for m in push.messages if "selec" in m.message], "window/showMessage")
    got = await published(push, lambda: docs.change(model, docs.texts[model] + "\n"), model,
                          lambda p: p.version == docs.versions[model])
    assert codes(got.diagnostics) == []  # still ignoring SHD201

    # repaired: the diagnostic on pyproject.toml goes, the new config applies
    pyproject.write_text(PYPROJECT)
    got = await published(push, changed, uri(pyproject))
    assert list(got.diagnostics) == []
    await eventually(lambda: codes(push.diagnostics.get(model, [])) == ["SHD201", "SHD201"], "findings back")


async def test_a_nested_project_is_linted_under_its_own_configuration(push: LanguageClient, workspace: Path):
    """As on the command line: a folder below the workspace whose
    pyproject.toml has a ``[tool.shardlint]`` table configures the files
    under it (here it ignores SHD101); the workspace's other files keep the
    workspace's configuration."""
    nested = workspace / "tools"
    nested.mkdir()
    (nested / "pyproject.toml").write_text('[tool.shardlint]\nignore = ["SHD101"]\n')
    (nested / "kernels.py").write_text((workspace / "kernels.py").read_text())
    docs = Docs(push)
    _, outer = await open_and_wait(push, docs, workspace / "kernels.py")
    _, inner = await open_and_wait(push, docs, nested / "kernels.py")
    assert "SHD101" in codes(outer.diagnostics)
    assert "SHD101" not in codes(inner.diagnostics)


async def test_client_settings_from_init_options_and_did_change_configuration(
    push_ignoring: LanguageClient, workspace: Path
):
    push = push_ignoring
    docs = Docs(push)
    model, got = await open_and_wait(push, docs, workspace / MODEL)
    assert codes(got.diagnostics) == []

    def configure(settings):
        return lambda: push.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings))

    got = await published(push, configure({"shardlint": {"select": ["SHD201"]}}), model)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
    configure({"shardlint": {"args": ["--ignore", "SHD2"]}})()
    await eventually(lambda: codes(push.diagnostics.get(model, [None])) == [], "args applied")
    # bad settings: a message, the last good settings kept
    configure({"shardlint": {"select": ["SHD999"]}})()
    await eventually(lambda: [m for m in push.messages if "SHD999" in m.message], "window/showMessage")
    got = await published(push, lambda: docs.change(model, docs.texts[model] + "\n"), model,
                          lambda p: p.version == docs.versions[model])
    assert codes(got.diagnostics) == []


# -- pull diagnostics -----------------------------------------------------------------


async def pull_codes(client: LanguageClient, target: str) -> list[str]:
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(target))
    )
    return codes(report.items)


async def test_pull_client_pulls_and_is_told_to_refresh(pull: LanguageClient, workspace: Path):
    docs = Docs(pull)
    model = docs.open(workspace / MODEL)
    assert await pull_codes(pull, model) == ["SHD201", "SHD201"]
    common = docs.open(workspace / COMMON)
    assert await pull_codes(pull, common) == []
    refreshed = pull.diagnostic_refresh_count
    docs.change(common, unresolved_base(docs.texts[common]))
    assert await pull_codes(pull, common) == []
    await eventually(lambda: pull.diagnostic_refresh_count > refreshed, "workspace/diagnostic/refresh")
    assert await pull_codes(pull, model) == []
    report = await pull.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=[]))
    assert {item.uri for item in report.items} == {model, common}
    # nothing pushed to a client that pulls
    assert model not in pull.diagnostics


@pytest.fixture
def big_workspace(tmp_path: Path) -> Path:
    """Enough files that the engine scans them in forked workers."""
    root = make_workspace(tmp_path / "big")
    for i in range(60):
        (root / f"filler_{i}.py").write_text(f"VALUE_{i} = {i}\n\n\ndef f_{i}(x):\n    return x + VALUE_{i}\n")
    return root


@pytest_lsp.fixture(config=CONFIG)
async def push_big(lsp_client: LanguageClient, big_workspace: Path):
    await start(lsp_client, big_workspace)
    yield
    await lsp_client.shutdown_session()


async def test_a_project_scanned_in_worker_processes(push_big: LanguageClient, big_workspace: Path):
    # (forked workers once hung on the lock of the stdin the protocol was read from)
    docs = Docs(push_big)
    _, got = await open_and_wait(push_big, docs, big_workspace / MODEL)
    assert codes(got.diagnostics) == ["SHD201", "SHD201"]
