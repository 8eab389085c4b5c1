"""Server test fixtures: one app over the session's ``examples/docs`` index (the helpers that start
servers and speak raw MCP are in :mod:`tests.support`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_server import create_app
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess


@pytest.fixture(scope="session")
def built_app(built_index: Path) -> Iterator[Any]:
    """One app over the built index, engine opened once for all in-memory tests."""
    app = create_app(built_index, name="test-server", version="0.1.0")
    yield app


@pytest.fixture(scope="module")
def stdio_session(built_index: Path) -> Iterator[Any]:
    """A ``docs-mcp-server`` subprocess over stdio on the built index, past the opening handshake
    (a :class:`tests.support.server_process.ServerProcess`, shared by the tests of one module)."""
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "warning"])
    try:
        server.send(INITIALIZE)
        assert server.receive()["id"] == INITIALIZE["id"]
        server.send(INITIALIZED)
        yield server
    finally:
        server.stop()
