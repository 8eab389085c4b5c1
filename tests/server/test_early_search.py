"""The first searches of a stdio client are answered before the MCP SDK has finished importing,
exactly as the SDK answers them."""

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


def test_a_search_sent_right_after_initialize_is_answered_early_as_the_sdk_answers_it(
    built_index: Path,
) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(INITIALIZE)
        assert server.receive(timeout=60)["id"] == 1
        server.send(INITIALIZED)
        server.send(_search(2, query="retry configuration", limit=3))
        early = server.receive(timeout=60)
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})  # answered by the SDK
        assert server.receive(timeout=60)["id"] == 3
        server.send(_search(4, query="retry configuration", limit=3))
        late = server.receive(timeout=60)
        server.send(_search(5, query="retry", limit="many"))  # invalid: the SDK's error, not an early one
        invalid = server.receive(timeout=60)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert early["id"] == 2 and late["id"] == 4
    assert early["result"] == late["result"]
    assert early["result"]["structuredContent"]["hits"]
    assert invalid["id"] == 5 and invalid["result"]["isError"] is True
    logs = "\n".join(server.stderr_lines)
    assert EARLY_LOG in logs
    assert "differs from the MCP SDK" not in logs
