"""A session ended (``DELETE /mcp``) while one of its requests is in flight: the request still
gets a complete answer, a JSON-RPC error with its id, not an event stream cut off mid-response."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from docs_mcp_server import create_app, serve_http
from docs_mcp_server.http_checks import SESSION_ENDED, ResponseWatch

pytestmark = [pytest.mark.anyio, pytest.mark.integration]  # listens on a port

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip


def _events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]


async def test_a_request_in_flight_when_its_session_is_deleted_gets_an_error(built_index: Path) -> None:
    app = create_app(built_index)
    entered, release = anyio.Event(), anyio.Event()
    answer_tool = app.call_tool

    async def held_call(name: str, arguments: Any) -> Any:
        if arguments and arguments.get("query") == "hold":
            entered.set()
            await release.wait()
        return await answer_tool(name, arguments)

    app.call_tool = held_call  # type: ignore[method-assign]
    outcome: dict[str, Any] = {}
    with anyio.fail_after(60):
        async with serve_http(app) as http, httpx2.AsyncClient(timeout=30) as client:
            opened = await client.post(http.url, json=INITIALIZE, headers=HEADERS)
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-06-18"}  # fmt: skip
            await client.post(http.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers=session)  # fmt: skip

            async def held() -> None:
                call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "search_docs", "arguments": {"query": "hold"}}}  # fmt: skip
                try:
                    outcome["answer"] = await client.post(http.url, json=call, headers=session)
                finally:
                    release.set()

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(held)
                await entered.wait()
                outcome["deleted"] = await client.delete(http.url, headers=session)
    assert outcome["deleted"].status_code == 200
    answer = outcome["answer"]
    assert answer.status_code == 200
    assert _events(answer.content) == [
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": SESSION_ENDED}}
    ]


async def test_an_event_stream_the_sdk_abandoned_is_ended_with_the_error() -> None:
    # the session was closed before the SDK handed the request on: it had sent the stream's 200
    # and returned without ending it (the client read a truncated response)
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    watch = ResponseWatch(send, "r1")
    await watch.send({"type": "http.response.start", "status": 200,
                      "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
    assert await watch.finish() is True and watch.cut
    assert sent[-1]["more_body"] is False
    assert _events(sent[-1]["body"]) == [
        {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32000, "message": SESSION_ENDED}}
    ]
    assert await watch.finish() is False  # ended once


async def test_an_answered_stream_is_left_as_it_is() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    watch = ResponseWatch(send, 3)
    answer = b'event: message\r\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\r\n\r\n'
    await watch.send({"type": "http.response.start", "status": 200,
                      "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
    await watch.send({"type": "http.response.body", "body": answer, "more_body": True})
    await watch.send({"type": "http.response.body", "body": b"", "more_body": False})
    assert await watch.finish() is False and not watch.cut
    assert [m.get("body") for m in sent[1:]] == [answer, b""]
