"""`shardlint server` as a command: without the lsp extra, and over TCP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from linter.cli import main

pytest.importorskip("pygls")
from lsp_client import SERVER_COMMAND, server_env  # noqa: E402


def test_without_the_extra_it_names_the_extra_and_exits_2(monkeypatch: pytest.MonkeyPatch):
    for name in ("pygls", "pygls.lsp", "pygls.lsp.server"):
        monkeypatch.setitem(sys.modules, name, None)  # import pygls... raises ImportError
    result = CliRunner().invoke(main, ["server"])
    assert result.exit_code == 2
    assert "shardlint[lsp]" in result.output and "pygls" in result.output


def _message(body: dict) -> bytes:
    raw = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(raw) + raw


def _read_message(sock: socket.socket, buf: bytearray) -> dict:
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed")
        buf += chunk
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed")
        rest += chunk
    buf[:] = rest[length:]
    return json.loads(rest[:length])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tcp_server_answers_initialize_and_exits(tmp_path):
    port = _free_port()
    proc = subprocess.Popen([*SERVER_COMMAND, "--tcp", str(port)], env=server_env(tmp_path), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        with sock:
            buf = bytearray()
            sock.sendall(_message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                   "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
            reply = _read_message(sock, buf)
            while reply.get("id") != 1:
                reply = _read_message(sock, buf)
            assert reply["result"]["serverInfo"]["name"] == "shardlint"
            assert reply["result"]["capabilities"]["hoverProvider"]
            sock.sendall(_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            sock.sendall(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            reply = _read_message(sock, buf)
            while reply.get("id") != 2:
                reply = _read_message(sock, buf)
            assert reply.get("result") is None and "error" not in reply
            sock.sendall(_message({"jsonrpc": "2.0", "method": "exit"}))
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
