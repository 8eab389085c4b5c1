"""Raw MCP messages and result content, for tests that speak JSON-RPC to a server themselves."""

from __future__ import annotations

from typing import Any

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
