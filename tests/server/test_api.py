"""The Python API as the README shows it: an in-process HTTP server queried with the MCP client."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.server import Server

import docs_mcp_server
from docs_mcp_server import create_app, create_server, serve_http

pytestmark = pytest.mark.anyio


@pytest.mark.integration
async def test_readme_example(built_index: Path) -> None:
    app = create_app(built_index, name="acme-docs")
    with anyio.fail_after(60):
        async with serve_http(app) as http:
            assert http.url == f"http://127.0.0.1:{http.port}/mcp"
            async with Client(http.url) as client:
                result = await client.call_tool(
                    "search_docs", {"query": "retry backoff", "language": "python"}
                )
            async with httpx2.AsyncClient() as raw:
                health = await raw.get(f"http://127.0.0.1:{http.port}/healthz")
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["hits"]
    assert health.status_code == 200
    assert health.headers["DOCS-MCP"] == "name=acme-docs version=0.1.0"


def test_create_server_returns_a_low_level_server(built_index: Path) -> None:
    server = create_server(built_index, version="7.0.0")
    assert isinstance(server, Server)
    assert (server.name, server.version) == ("docs-mcp-server", "7.0.0")


def test_package_exports_are_lazy_and_complete() -> None:
    for name in docs_mcp_server.__all__:
        assert getattr(docs_mcp_server, name) is not None
    with pytest.raises(AttributeError):
        _ = docs_mcp_server.nothing_here  # type: ignore[attr-defined]
