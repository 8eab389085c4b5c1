"""The tool list and the first searches of a stdio client are answered before the MCP SDK has
finished importing, exactly as the SDK answers them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.integration  # starts processes

EARLY_LOG = "answered before the MCP SDK was ready"


def _search(request_id: int, **arguments: Any) -> dict[str, Any]:
    params = {"name": "search_docs", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_the_tool_list_and_a_search_sent_right_after_initialize_are_answered_early_as_the_sdk_answers_them(
    built_index: Path,
) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(INITIALIZE)
        assert server.receive(timeout=60)["id"] == 1
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        server.send(_search(3, query="retry configuration", limit=3))
        early_list, early_search = server.receive(timeout=60), server.receive(timeout=60)
        server.send({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})  # only the SDK answers this
        assert server.receive(timeout=60)["id"] == 4
        server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})  # so the SDK answers these
        server.send(_search(6, query="retry configuration", limit=3))
        late_list, late_search = server.receive(timeout=60), server.receive(timeout=60)
        server.send(_search(7, query="retry", limit="many"))  # invalid: the SDK's error
        invalid = server.receive(timeout=60)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert [early_list["id"], early_search["id"], late_list["id"], late_search["id"]] == [2, 3, 5, 6]
    assert early_list["result"] == late_list["result"]
    assert early_search["result"] == late_search["result"]
    assert early_search["result"]["structuredContent"]["hits"]
    assert invalid["id"] == 7 and invalid["result"]["isError"] is True
    logs = "\n".join(server.stderr_lines)
    assert logs.count(EARLY_LOG) == 2  # the first tool list and search
    assert "differs from the MCP SDK" not in logs


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _modern(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as a 2026-era client sends it: its protocol, name and capabilities in ``_meta``."""
    return {**request, "params": {**request.get("params", {}), "_meta": MODERN_META}}


def test_a_2026_era_client_gets_its_first_tool_list_and_search_early_as_the_sdk_answers_them(
    built_index: Path,
) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(_modern({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
        assert server.receive(timeout=60)["id"] == 1
        server.send(_modern({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        server.send(_modern(_search(3, query="retry configuration", limit=3)))
        early_list, early_search = server.receive(timeout=60), server.receive(timeout=60)
        server.send(_modern({"jsonrpc": "2.0", "id": 4, "method": "resources/list"}))  # the SDK's
        assert server.receive(timeout=60)["id"] == 4
        server.send(_modern({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
        server.send(_modern(_search(6, query="retry configuration", limit=3)))
        late_list, late_search = server.receive(timeout=60), server.receive(timeout=60)
        progress = _search(7, query="retry configuration", limit=3)  # a progress token: the SDK's
        progress["params"]["_meta"] = {**MODERN_META, "progressToken": "p"}
        server.send(progress)
        assert server.receive(timeout=60)["id"] == 7
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert [early_list["id"], early_search["id"], late_list["id"], late_search["id"]] == [2, 3, 5, 6]
    assert early_list["result"] == late_list["result"]
    assert early_search["result"] == late_search["result"]
    assert (
        early_search["result"]["resultType"] == "complete"
        and early_search["result"]["structuredContent"]["hits"]
    )
    logs = "\n".join(server.stderr_lines)
    assert logs.count(EARLY_LOG) == 2
    assert "differs from the MCP SDK" not in logs
