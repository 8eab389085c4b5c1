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


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _modern(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as a 2026-era client sends it: its protocol, name and capabilities in ``_meta``."""
    return {**request, "params": {**request.get("params", {}), "_meta": MODERN_META}}


def _as_sent(request: dict[str, Any]) -> dict[str, Any]:
    return request


@pytest.mark.parametrize("era", ["handshake", "2026"])
def test_the_first_tool_list_and_search_are_answered_early_as_the_sdk_answers_them(
    built_index: Path, era: str
) -> None:
    """A handshake-era client (``initialize``) and a 2026-era one (``server/discover``, ``_meta`` on
    every request) get their first tool list and search before the SDK runs, equal to its answers."""
    wrap = _modern if era == "2026" else _as_sent
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        if era == "2026":
            server.send(_modern({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
            assert server.receive(timeout=60)["id"] == 1
        else:
            server.send(INITIALIZE)
            assert server.receive(timeout=60)["id"] == 1
            server.send(INITIALIZED)
        server.send(wrap({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        server.send(wrap(_search(3, query="retry configuration", limit=3)))
        early_list, early_search = server.receive(timeout=60), server.receive(timeout=60)
        server.send(
            wrap({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})
        )  # only the SDK answers this
        assert server.receive(timeout=60)["id"] == 4
        server.send(wrap({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))  # so the SDK answers these
        server.send(wrap(_search(6, query="retry configuration", limit=3)))
        late_list, late_search = server.receive(timeout=60), server.receive(timeout=60)
        server.send(wrap(_search(7, query="retry", limit="many")))  # invalid: the SDK's error
        invalid = server.receive(timeout=60)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert [early_list["id"], early_search["id"], late_list["id"], late_search["id"]] == [2, 3, 5, 6]
    assert early_list["result"] == late_list["result"]
    assert early_search["result"] == late_search["result"]
    assert early_search["result"]["structuredContent"]["hits"]
    assert ("resultType" in early_search["result"]) is (era == "2026")
    assert invalid["id"] == 7 and invalid["result"]["isError"] is True
    logs = "\n".join(server.stderr_lines)
    assert logs.count(EARLY_LOG) == 2  # the first tool list and search
    assert "differs from the MCP SDK" not in logs


def test_a_request_with_other_meta_is_left_to_the_sdk(built_index: Path) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(_modern({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
        assert server.receive(timeout=60)["id"] == 1
        progress = _search(2, query="retry configuration", limit=3)  # a progress token: the SDK's to honour
        progress["params"]["_meta"] = {**MODERN_META, "progressToken": "p"}
        server.send(progress)
        answer = server.receive(timeout=60)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert answer["id"] == 2 and answer["result"]["structuredContent"]["hits"]
    assert EARLY_LOG not in "\n".join(server.stderr_lines)


def test_a_search_with_an_unpaired_surrogate_escape_sent_at_start_up_leaves_the_session_on(
    built_index: Path,
) -> None:
    # Python's parser reads "\ud800"; answered early, the hint echoing the query could not be
    # written as UTF-8, and the failed write ended the session: no later request was answered
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(INITIALIZE)
        assert server.receive(timeout=60)["id"] == 1
        server.send(INITIALIZED)
        server.send(_search(2, query="\ud800 backoff_factor", topic="onboarding"))
        server.send(_search(3, query="retry configuration", limit=3))
        answers = {
            answer["id"]: answer for answer in (server.receive(timeout=60), server.receive(timeout=60))
        }
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert answers[2]["error"]["code"] == -32700  # as the SDK answers it (the search came first)
    assert "unpaired surrogate" in answers[2]["error"]["message"]
    assert answers[3]["result"]["structuredContent"]["hits"]
    assert "stdin read failed" not in server.stderr_text()


def test_a_tool_list_reusing_the_id_of_initialize_at_start_up_is_answered_once(built_index: Path) -> None:
    # the early tool list took the place of the early initialize answer (both id 1): the SDK's
    # replayed initialize answer was dropped in its stead and its tool list written too
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    tools_list = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    try:
        server.send(INITIALIZE)
        assert "serverInfo" in server.receive(timeout=60)["result"]
        server.send(INITIALIZED)
        server.send(tools_list)  # id 1 again: the initialize request has been answered
        assert "tools" in server.receive(timeout=60)["result"]
        server.send(tools_list)  # and again, once answered
        assert "tools" in server.receive(timeout=60)["result"]
        server.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert server.receive(timeout=60)["id"] == 9  # no third answer came before it
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert "differs from the MCP SDK's" not in server.stderr_text()


def test_a_ping_reusing_the_id_of_an_early_tool_list_gets_its_own_answer(built_index: Path) -> None:
    # the early tool list was replayed into the SDK, which kept its id in flight after the client
    # had its answer: the ping was refused as reusing an id in flight (or got the SDK's tool list)
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(INITIALIZE)
        assert server.receive(timeout=60)["id"] == 1
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert "tools" in server.receive(timeout=60)["result"]
        server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert server.receive(timeout=60) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        server.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert server.receive(timeout=60)["id"] == 9  # no other answer came before it
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert EARLY_LOG in server.stderr_text()  # the tool list was answered early


def test_a_request_reusing_the_id_of_server_discover_at_start_up_is_answered(built_index: Path) -> None:
    # server/discover is answered early, then replayed into the SDK, which held its id in flight
    # for a moment after the client had the answer: the next request with that id was refused
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(_modern({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
        assert "result" in server.receive(timeout=60)
        server.send(_modern({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}))
        answer = server.receive(timeout=60)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert answer["id"] == 1 and answer["result"]["resources"], answer
