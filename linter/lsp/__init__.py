"""The language server (``shardlint server``): needs the ``lsp`` extra
(pygls, lsprotocol). Nothing here imports them until the server starts."""

from __future__ import annotations

EXTRA_HINT = "the language server needs the lsp extra: pip install 'shardlint[lsp]'"


def missing_dependency() -> str | None:
    """The name of the first missing package the server needs, if any."""
    import importlib

    for name in ("lsprotocol.types", "pygls.lsp.server"):
        try:
            importlib.import_module(name)
        except ImportError:
            return name.split(".")[0]
    return None


def run(tcp_port: int | None = None, host: str = "127.0.0.1") -> None:
    from linter.lsp.server import serve

    serve(tcp_port, host)
