"""Server test fixtures: a real index of ``examples/docs``, built once per session with ``docs-mcp build``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BIN_DIR = Path(sys.executable).parent
SERVER_COMMAND = str(BIN_DIR / "docs-mcp-server")
BUILD_COMMAND = str(BIN_DIR / "docs-mcp")


# the opening JSON-RPC messages of a raw protocol exchange
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def text(block: Any) -> str:
    """The text of a text content block or text resource contents (asserting that is what it is)."""
    from mcp.types import TextContent, TextResourceContents

    assert isinstance(block, TextContent | TextResourceContents), block
    return block.text


def metadata_document(**overrides: Any) -> dict[str, Any]:
    """A small valid metadata.json document (original layout) for tests that need no search."""
    doc: dict[str, Any] = {
        "metadata_version": "1.1.0",
        "corpus_description": "Tidewater SDK docs",
        "taxonomy": {
            "language": {"values": ["typescript", "go", "python"]},
            "scope": {
                "description": "Documentation scope.",
                "values": ["sdk-specific", "global-guide"],
                "properties": {"global-guide": {"mcp_resource": True}},
            },
        },
        "stats": {"total_chunks": 2, "total_files": 2, "indexed_at": "2026-02-22T00:00:00Z"},
        "embedding": None,
    }
    doc.update(overrides)
    return doc


def write_index_stub(
    folder: Path, document: dict[str, Any] | str | None = None, *, table: bool = True
) -> Path:
    """An index folder with ``metadata.json`` and (optionally) an empty ``.lancedb/chunks.lance`` dir."""
    folder.mkdir(parents=True, exist_ok=True)
    body = document if isinstance(document, str) else json.dumps(document or metadata_document())
    (folder / "metadata.json").write_text(body, encoding="utf-8")
    if table:
        (folder / ".lancedb" / "chunks.lance").mkdir(parents=True, exist_ok=True)
    return folder


def server_env(**extra: str) -> dict[str, str]:
    """Environment for server subprocesses: the parent's, minus variables that change defaults."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "SERVER_NAME",
            "SERVER_VERSION",
            "STATELESS",
            "LOG_LEVEL",
            "LOG_PRETTY",
            "GIT_COMMIT",
            "BUILD_DATE",
            "DOCS_MCP_AUTH_TOKEN",
            "DOCS_MCP_CURSOR_SECRET",
        }
    }
    env["LANCEDB_LOG"] = "error"
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def built_app(built_index: Path) -> Iterator[Any]:
    """One app over the built index, engine opened once for all in-memory tests."""
    from docs_mcp_server import create_app

    app = create_app(built_index, name="test-server", version="0.1.0")
    yield app


@pytest.fixture(scope="module")
def stdio_session(built_index: Path) -> Iterator[Any]:
    """A ``docs-mcp-server`` subprocess over stdio on the built index, past the opening handshake
    (a :class:`tests.server.processes.ServerProcess`, shared by the tests of one module)."""
    from .processes import ServerProcess

    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "warning"])
    try:
        server.send(INITIALIZE)
        assert server.receive()["id"] == INITIALIZE["id"]
        server.send(INITIALIZED)
        yield server
    finally:
        server.stop()
