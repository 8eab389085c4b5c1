"""The early stdio handshake must answer exactly what the MCP SDK answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from docs_mcp_server import create_app
from docs_mcp_server.handshake import HANDSHAKE_PROTOCOL_VERSIONS as OUR_HANDSHAKE
from docs_mcp_server.handshake import MODERN_PROTOCOL_VERSIONS as OUR_MODERN
from docs_mcp_server.handshake import EarlyHandshake, is_modern_meta
from tests.support.index_stubs import metadata_document, write_index_stub

pytestmark = pytest.mark.anyio

CLIENT = {"name": "test-client", "version": "1.0"}


def initialize(version: str, request_id: int | str = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT},
    }


def discover(version: str = "2026-07-28") -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": "probe-1", "method": "server/discover", "params": {"_meta": meta}}


async def sdk_answer(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Send one raw JSON-RPC request to the SDK server loop and return its raw response."""
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](4)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](4)
    reply: SessionMessage | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_in, server_out, server.create_initialization_options())
        await to_server.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(request)))
        with anyio.fail_after(5):
            reply = await from_server.receive()
        tg.cancel_scope.cancel()
    assert reply is not None
    return reply.message.model_dump(by_alias=True, exclude_unset=True, mode="json")


def test_protocol_versions_match_the_installed_sdk() -> None:
    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == OUR_HANDSHAKE
    assert tuple(MODERN_PROTOCOL_VERSIONS) == OUR_MODERN


@pytest.mark.parametrize("instructions", ["Search before coding.", None])
@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01"])
async def test_initialize_answer_equals_sdk(tmp_path: Path, version: str, instructions: str | None) -> None:
    doc = metadata_document(**({"mcpServerInstructions": instructions} if instructions else {}))
    app = create_app(write_index_stub(tmp_path / "idx", doc), name="early-test", version="9.9.9")
    early = EarlyHandshake(app.build_info.name, app.build_info.version, app.metadata.instructions)
    request = initialize(version)
    assert early.answer(request) == await sdk_answer(app.server, request)


@pytest.mark.parametrize("instructions", ["Search before coding.", None])
async def test_discover_answer_equals_sdk(tmp_path: Path, instructions: str | None) -> None:
    doc = metadata_document(**({"mcpServerInstructions": instructions} if instructions else {}))
    app = create_app(write_index_stub(tmp_path / "idx", doc), name="early-test", version="9.9.9")
    early = EarlyHandshake(app.build_info.name, app.build_info.version, app.metadata.instructions)
    request = discover()
    assert early.answer(request) == await sdk_answer(app.server, request)


@pytest.mark.parametrize(
    "request_",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "initialize", "params": {}},  # a notification, not a request
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": initialize("2025-06-18")["params"]},
        discover("2099-01-01"),
        {**discover(), "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}},
        "not an object",
    ],
)
def test_early_handshake_leaves_uncertain_requests_to_the_sdk(request_: Any) -> None:
    assert EarlyHandshake("n", "v").answer(request_) is None


CLIENTS = [  # (clientInfo, capabilities, whether the SDK accepts them in every opening request)
    (CLIENT, {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}}, True),
    (
        {**CLIENT, "title": "Test Client", "websiteUrl": "https://example.com"},
        {"experimental": {"x": {}}},
        True,
    ),
    (CLIENT, {"extensions": {"io.example/x": {}}, "tasks": {"list": {}, "requests": {"sampling": {}}}}, True),
    ({**CLIENT, "title": 5}, {}, False),
    ({**CLIENT, "icons": "none"}, {}, False),
    ({**CLIENT, "description": ["not", "text"]}, {}, False),
    (CLIENT, {"sampling": 5}, False),
    (CLIENT, {"experimental": {"x": 1}}, False),
    (CLIENT, {"roots": {"listChanged": []}}, False),
    (CLIENT, {"elicitation": {"form": "yes"}}, False),
]


@pytest.mark.parametrize(("client", "capabilities", "valid"), CLIENTS)
async def test_an_opening_request_the_sdk_refuses_is_not_answered_early(
    tmp_path: Path, client: dict[str, Any], capabilities: dict[str, Any], valid: bool
) -> None:
    # answered early, a malformed client description got a result and the SDK's error was dropped
    app = create_app(write_index_stub(tmp_path / "idx", metadata_document()), name="early-test")
    early = EarlyHandshake(app.build_info.name, app.build_info.version, app.metadata.instructions)
    opening = initialize("2025-06-18")
    opening["params"] = {**opening["params"], "clientInfo": client, "capabilities": capabilities}
    probe = discover()
    meta = probe["params"]["_meta"]
    meta["io.modelcontextprotocol/clientInfo"] = client
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities
    assert is_modern_meta(meta) is valid
    refused = 0
    for request in (opening, probe):
        sdk = await sdk_answer(app.server, request)
        refused += "error" in sdk
        assert early.answer(request) == (sdk if valid else None), sdk
    assert refused == 0 if valid else refused > 0
