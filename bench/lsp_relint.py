"""The language server on vLLM 0.33.0, measured through the real process
(`shardlint server` over stdio, driven by a pygls client):

- start to first diagnostics: process spawn -> the first publishDiagnostics
  of llama.py opened right after `initialized`, with a cold cache (a fresh
  --cache-dir) and then warm (the same one), against the cold CLI run
  (`shardlint check` with a fresh cache) measured in the same run;
- re-lint after an edit: didChange -> publishDiagnostics of that version, for
  model_executor/models/llama.py and v1/worker/gpu_model_runner.py (median
  and max of --edits edits, a second apart so that each is linted on its
  own, not coalesced with the previous one), of two kinds: a comment line
  appended at the end of the file, and a statement line typed inside the
  file's longest function (``linter.reparse`` then parses that function
  alone);
- the server's RSS (VmRSS, and VmHWM, the peak) with the workspace open.

Not a test. Usage: python bench/lsp_relint.py [--tree PATH] [--edits N]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

TREE = Path(os.environ.get("SHARDLINT_CORPUS", "~/.cache/shardlint-corpus")).expanduser() / "vllm-0.33.0"
FILES = ("vllm/model_executor/models/llama.py", "vllm/v1/worker/gpu_model_runner.py")
REPO = Path(__file__).resolve().parent.parent


def rss_mb(pid: int) -> tuple[float, float]:
    got = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            got[k] = int(v.split()[0]) / 1024
    return got.get("VmRSS", 0.0), got.get("VmHWM", 0.0)


class Session:
    def __init__(self, root: Path, cache: Path) -> None:
        self.root, self.cache = root, cache
        self.client = LanguageClient("bench", "1")
        self.published: dict[str, list[tuple[float, lsp.PublishDiagnosticsParams]]] = {}
        self.waiters: list[tuple[str, int | None, asyncio.Future]] = []

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            now = time.perf_counter()
            self.published.setdefault(params.uri, []).append((now, params))
            for w in list(self.waiters):
                u, version, fut = w
                if u == params.uri and (version is None or params.version == version) and not fut.done():
                    fut.set_result((now, params))
                    self.waiters.remove(w)

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_message(params: lsp.ShowMessageParams) -> None:
            print(f"  server says: {params.message}", file=sys.stderr)

    def wait_for(self, uri: str, version: int | None) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.waiters.append((uri, version, fut))
        return fut

    async def start(self) -> float:
        """Spawn, initialize, open llama.py: seconds to its first diagnostics."""
        env = dict(os.environ, PYTHONPATH=str(REPO))
        t0 = time.perf_counter()
        await self.client.start_io(sys.executable, "-m", "linter", "server", env=env)
        await self.client.initialize_async(
            lsp.InitializeParams(
                capabilities=lsp.ClientCapabilities(),
                workspace_folders=[lsp.WorkspaceFolder(from_fs_path(str(self.root)), self.root.name)],
                initialization_options={"args": ["--cache-dir", str(self.cache)]},
            )
        )
        self.client.initialized(lsp.InitializedParams())
        uri = self.open(FILES[0])
        await asyncio.wait_for(self.wait_for(uri, 1), 600)
        return time.perf_counter() - t0

    def open(self, rel: str) -> str:
        path = self.root / rel
        uri = from_fs_path(str(path))
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, path.read_text()))
        )
        return uri

    async def relint(self, rel: str, edits: int, edit: Callable[[str, int], str]) -> list[float]:
        uri = from_fs_path(str(self.root / rel))
        if uri not in self.published:
            fut = self.wait_for(uri, 1)
            self.open(rel)
            await asyncio.wait_for(fut, 600)
        text = (self.root / rel).read_text()
        times = []
        for i in range(edits):
            self.version = version = getattr(self, "version", 1) + 1
            fut = self.wait_for(uri, version)
            t0 = time.perf_counter()
            self.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(version, uri),
                    [lsp.TextDocumentContentChangeWholeDocument(edit(text, i))],
                )
            )
            t1, _ = await asyncio.wait_for(fut, 600)
            times.append(t1 - t0)
            await asyncio.sleep(1.0)
        return times

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def at_end(text: str, i: int) -> str:
    return text + f"\n# edit {i}\n"


def in_function(text: str, i: int) -> str:
    """``text`` with a line typed after the middle one-line statement of
    its longest function's body."""
    fns = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    fn = max(fns, key=lambda f: (f.end_lineno or f.lineno) - f.lineno)
    simple = [st for st in fn.body if isinstance(st, (ast.Assign, ast.Expr, ast.AugAssign)) and st.end_lineno == st.lineno]
    st = simple[len(simple) // 2]
    lines = text.split("\n")
    return "\n".join([*lines[: st.lineno], " " * st.col_offset + f"_edit = {i}", *lines[st.lineno :]])


EDITS = {"a line appended": at_end, "a line in its longest function": in_function}


def in_process(root: Path, cache: Path, rel: str, edits: int) -> float:
    """Median seconds of ``Engine.lint_text`` on the same edits, in this
    process (what the server adds on top is the protocol and the overlay)."""
    code = (
        "import statistics, sys, time\n"
        "from pathlib import Path\n"
        "from linter.cache import Cache\n"
        "from linter.config import load_config\n"
        "from linter.engine import Engine\n"
        "from linter.registry import load_registry_fast\n"
        "root, cache, rel, n = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])\n"
        "reg = load_registry_fast()\n"
        "engine = Engine(load_config([root], reg), reg, cache=Cache(cache))\n"
        "engine.project_facts()\n"
        "text = (root / rel).read_text()\n"
        "engine.lint_text(text, root / rel)\n"
        "times = []\n"
        "for i in range(n):\n"
        "    t = time.perf_counter(); engine.lint_text(text + f'\\n# edit {i}\\n', root / rel)\n"
        "    times.append(time.perf_counter() - t)\n"
        "print(statistics.median(times))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), str(cache), rel, str(edits)],
        env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, check=True,
    )
    return float(out.stdout.strip())


def cold_cli(root: Path) -> float:
    cache = Path(tempfile.mkdtemp(prefix="shardlint-bench-cli-"))
    try:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "linter", "check", str(root), "--cache-dir", str(cache), "-q", "--exit-zero"],
            env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.DEVNULL, check=False,
        )
        return time.perf_counter() - t0
    finally:
        shutil.rmtree(cache, ignore_errors=True)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=TREE)
    ap.add_argument("--edits", type=int, default=15)
    ap.add_argument("--skip-cli", action="store_true", help="leave out the cold CLI run (the slowest part)")
    args = ap.parse_args()
    root = args.tree.resolve()
    if not (root / FILES[0]).is_file():
        sys.exit(f"no vLLM 0.33.0 tree at {root}: bash ../shared/tools/fetch-engines.sh ~/.cache/shardlint-corpus vllm==0.33.0")
    cache = Path(tempfile.mkdtemp(prefix="shardlint-bench-lsp-"))
    try:
        cli = float("nan") if args.skip_cli else cold_cli(root)
        print(f"cold CLI run (shardlint check, fresh cache):      {cli:6.2f} s")
        cold = Session(root, cache)
        t = await cold.start()
        print(f"server start -> first diagnostics, cold cache:    {t:6.2f} s  (target <= CLI + 1 s = {cli + 1:.2f} s)")
        await cold.stop()
        warm = Session(root, cache)
        t = await warm.start()
        print(f"server start -> first diagnostics, warm cache:    {t:6.2f} s  (target <= 1 s)")
        for rel, target in zip(FILES, (0.050, 0.300)):
            for kind, edit in EDITS.items():
                times = await warm.relint(rel, args.edits, edit)
                med = statistics.median(times)
                print(
                    f"didChange -> publishDiagnostics {rel.removeprefix('vllm/')}, {kind}: median "
                    f"{med * 1000:6.1f} ms, max {max(times) * 1000:6.1f} ms over {len(times)} edits "
                    f"(target median <= {target * 1000:.0f} ms)"
                )
            engine = in_process(root, cache, rel, args.edits)
            print(f"    Engine.lint_text in process, a line appended (the buffer's facts collected, "
                  f"the whole file parsed): median {engine * 1000:6.1f} ms")
        proc = warm.client._server  # the server process pygls started
        if proc is not None:
            now, peak = rss_mb(proc.pid)
            print(f"server RSS with vLLM open: {now:.0f} MB now, {peak:.0f} MB peak (target <= 400 MB)")
        await warm.stop()
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
