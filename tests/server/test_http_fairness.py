"""One client hoarding MCP sessions must not keep the others out, against real servers on 127.0.0.1.

A client that opened sessions and held each one's ``GET /mcp`` event stream used to keep them for
good: once ``--max-sessions`` were open, every other client got 503, indefinitely. Clients are told
apart by their address: the hoarder connects from 127.0.0.1, the others from 127.0.0.2 (the whole
127.0.0.0/8 block is loopback on Linux). Event streams are held on raw sockets so that a test sees
exactly when the server ends one; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import MCP_HEADERS, PROTOCOL, ServerProcess, rpc_messages, start_http_server

pytestmark = pytest.mark.integration

HOARDER, OTHER = "127.0.0.1", "127.0.0.2"
READ_BOUND = 20.0  # far beyond the deadlines the servers below are given
SEARCH = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "search_docs", "arguments": {"query": "retry"}},
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _other_address_works() -> bool:
    try:
        with socket.socket() as probe:
            probe.bind((OTHER, 0))
    except OSError:
        return False
    return True


needs_second_loopback = pytest.mark.skipif(
    not _other_address_works(), reason="127.0.0.2 is not a usable loopback address here"
)


@pytest.fixture
def crowded(built_index: Path) -> Iterator[tuple[ServerProcess, int]]:
    """A server with room for four sessions, and a long idle timeout."""
    server, port = start_http_server(built_index, "--max-sessions", "4", "--session-idle-timeout", "300")
    try:
        yield server, port
    finally:
        server.stop()


@pytest.fixture
def quick_idle(built_index: Path) -> Iterator[tuple[ServerProcess, int]]:
    """A server that ends sessions after one second without a request."""
    server, port = start_http_server(built_index, "--session-idle-timeout", "1")
    try:
        yield server, port
    finally:
        server.stop()


def post(port: int, message: dict[str, Any], session: str | None = None, source: str = HOARDER) -> Any:
    """POST one message from ``source``: the status, the headers and the JSON-RPC messages."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=READ_BOUND, source_address=(source, 0))
    headers = {**MCP_HEADERS, **PROTOCOL, **({"mcp-session-id": session} if session else {})}
    try:
        conn.request("POST", "/mcp", json.dumps(message).encode(), headers)
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    messages = rpc_messages(body, response.headers.get("content-type", "")) if body else []
    return response.status, response.headers, messages


def open_session(port: int, source: str = HOARDER) -> str:
    status, headers, _ = post(port, INITIALIZE, source=source)
    assert status == 200, status
    session = headers["mcp-session-id"]
    assert post(port, INITIALIZED, session, source)[0] == 202
    return session


def hold_stream(port: int, session: str, source: str = HOARDER) -> socket.socket:
    """Open the session's event stream (``GET /mcp``) and return its socket once the 200 is in."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND, source_address=(source, 0))
    sock.sendall(
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        b"MCP-Protocol-Version: 2025-06-18\r\nmcp-session-id: " + session.encode() + b"\r\n\r\n"
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the event stream before answering"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200 "), head
    return sock


def stream_ended(sock: socket.socket) -> bool:
    """Whether the server has ended the event stream (its last chunk, or the connection closed);
    reads what has arrived without waiting."""
    sock.setblocking(False)
    try:
        data = sock.recv(65536)
    except BlockingIOError:
        return False
    finally:
        sock.setblocking(True)
    return data == b"" or data.endswith(b"0\r\n\r\n")


def wait_until_stream_ends(sock: socket.socket) -> None:
    """Read the event stream until the server ends it (the test fails after READ_BOUND: the stream
    may carry pings meanwhile)."""
    deadline = time.monotonic() + READ_BOUND
    received = b""
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        received += chunk
        if not chunk or received.endswith(b"0\r\n\r\n"):
            return
    raise AssertionError(f"the server kept the event stream open for {READ_BOUND} s")


@needs_second_loopback
def test_a_client_holding_every_session_cannot_keep_another_out(crowded: tuple[ServerProcess, int]) -> None:
    server, port = crowded
    streams = [hold_stream(port, open_session(port)) for _ in range(4)]
    try:
        started = time.monotonic()
        session = open_session(
            port, OTHER
        )  # was: 503 "Too many open sessions", for as long as they were held
        status, _, messages = post(port, SEARCH, session, OTHER)
        assert status == 200
        assert messages[0]["result"]["isError"] is False
        assert "retry" in json.dumps(messages[0]["result"]).lower()
        assert time.monotonic() - started < READ_BOUND
        record = server.wait_for_log(lambda r: str(r.get("message", "")).startswith("ended the longest idle"))
        assert record["properties"]["client"] == HOARDER
        assert record["properties"]["new_client"] == OTHER
        assert record["properties"]["client_sessions"] == 4
        wait_until_stream_ends(streams[0])  # the hoarder's longest idle session went
        assert not any(stream_ended(sock) for sock in streams[1:])
    finally:
        for sock in streams:
            sock.close()


@needs_second_loopback
def test_the_client_holding_the_most_sessions_loses_its_own_first(crowded: tuple[ServerProcess, int]) -> None:
    _, port = crowded
    # the other client's session is the longest idle one: plain "oldest first" would end it
    other = open_session(port, OTHER)
    other_stream = hold_stream(port, other, OTHER)
    hoarded = [open_session(port) for _ in range(3)]
    try:
        for _ in range(6):  # the limit is reached; every new session of the hoarder ends one of its own
            hoarded.append(open_session(port))
        assert post(port, TOOLS_LIST, hoarded[0])[0] == 404  # its longest idle session was ended
        assert post(port, TOOLS_LIST, hoarded[-1])[0] == 200
        status, _, messages = post(port, TOOLS_LIST, other, OTHER)
        assert status == 200
        assert any(tool["name"] == "search_docs" for tool in messages[0]["result"]["tools"])
        assert not stream_ended(other_stream)
    finally:
        other_stream.close()


def test_a_session_that_only_holds_its_event_stream_is_ended_after_the_idle_timeout(
    quick_idle: tuple[ServerProcess, int],
) -> None:
    server, port = quick_idle
    session = open_session(port)
    started = time.monotonic()
    with hold_stream(port, session) as stream:
        wait_until_stream_ends(stream)  # was: held open for as long as the client liked
    waited = time.monotonic() - started
    assert waited < 1 + 5, waited  # the timeout, plus checks every quarter of it, plus slack for a busy CPU
    record = server.wait_for_log(lambda r: str(r.get("message", "")).startswith("ended a session that sent"))
    assert record["properties"]["session"] == session
    assert record["properties"]["event_stream"] is True
    assert record["properties"]["client"] == HOARDER
    assert post(port, TOOLS_LIST, session)[0] == 404  # the client starts a new session, as MCP specifies


def test_a_client_that_keeps_sending_requests_keeps_its_session_and_its_stream(
    quick_idle: tuple[ServerProcess, int],
) -> None:
    _, port = quick_idle
    session = open_session(port)
    with hold_stream(port, session) as stream:
        ends = time.monotonic() + 3  # three idle timeouts
        while time.monotonic() < ends:
            status, _, messages = post(port, SEARCH, session)
            assert status == 200
            assert messages[0]["result"]["isError"] is False
            assert not stream_ended(stream)
            time.sleep(0.2)  # pacing: a request every fifth of the timeout, not a wait for the server
        assert not stream_ended(stream)


@needs_second_loopback
@pytest.mark.anyio
async def test_when_every_session_is_busy_a_newcomer_is_refused_unless_one_client_holds_many_more(
    built_index: Path,
) -> None:
    import anyio
    import httpx2

    from docs_mcp_server import create_app, serve_http
    from docs_mcp_server.http_checks import SESSION_ENDED
    from docs_mcp_server.options import CustomTool, HttpLimits

    entered = anyio.Semaphore(0)
    release = anyio.Event()

    async def hold(arguments: dict[str, Any]) -> str:
        entered.release()
        await release.wait()
        return "released"

    app = create_app(
        built_index, custom_tools=[CustomTool("hold", "Answers when released", {"type": "object"}, hold)]
    )
    headers = {**MCP_HEADERS, **PROTOCOL}
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hold", "arguments": {}}}
    with anyio.fail_after(60):
        async with (
            serve_http(app, warm_up=False, limits=HttpLimits(max_sessions=2)) as http,
            httpx2.AsyncClient(timeout=READ_BOUND) as client,
        ):

            async def initialize() -> Any:
                return await client.post(http.url, json=INITIALIZE, headers=headers)

            answers: list[str] = []

            async def held_call(session: str) -> None:
                answered = await client.post(
                    http.url, json=call, headers={**headers, "mcp-session-id": session}
                )
                assert answered.status_code == 200
                answers.append(answered.text)

            async with anyio.create_task_group() as tasks:
                for _ in range(2):
                    session = (await initialize()).headers["mcp-session-id"]
                    tasks.start_soon(held_call, session)
                    await entered.acquire()  # its call is in flight
                refused = await initialize()
                assert refused.status_code == 503
                assert refused.headers["retry-after"] == "1"
                assert "mcp-session-id" not in refused.headers
                error = refused.json()["error"]
                assert error["message"].startswith("Too many open sessions: all 2 (--max-sessions)")
                # another client holds none: the client keeping both busy loses one all the same
                async with httpx2.AsyncClient(
                    timeout=READ_BOUND, transport=httpx2.AsyncHTTPTransport(local_address=OTHER)
                ) as other:
                    assert (await other.post(http.url, json=INITIALIZE, headers=headers)).status_code == 200
                release.set()
            assert sorted("released" in text for text in answers) == [False, True]
            assert any(SESSION_ENDED in text for text in answers)


@needs_second_loopback
def test_a_client_holding_every_connection_cannot_keep_another_out(built_index: Path) -> None:
    server, port = start_http_server(built_index, "--max-connections", "4", "--header-timeout", "60")
    hoarded: list[socket.socket] = []
    try:
        for _ in range(4):  # each waits, its request half sent, as a slowloris client's do
            sock = socket.create_connection(
                ("127.0.0.1", port), timeout=READ_BOUND, source_address=(HOARDER, 0)
            )
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            hoarded.append(sock)
        with socket.create_connection(
            ("127.0.0.1", port), timeout=READ_BOUND, source_address=(HOARDER, 0)
        ) as own:
            assert read_all(own).startswith(b"HTTP/1.1 503 ")  # its own connections are not closed for it
        with socket.create_connection(
            ("127.0.0.1", port), timeout=READ_BOUND, source_address=(OTHER, 0)
        ) as other:
            other.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert read_all(other).startswith(b"HTTP/1.1 200 OK\r\n")  # was: 503 until one of them closed
        assert read_all(hoarded[0]).startswith(b"HTTP/1.1 503 ")  # the longest waiting one made room
        record = server.wait_for_log(
            lambda r: str(r.get("message", "")).startswith("connections at the limit")
        )
        assert record["properties"]["client"] == HOARDER
        assert record["properties"]["new_client"] == OTHER
    finally:
        for sock in hoarded:
            sock.close()
        server.stop()


def test_a_client_that_stops_reading_its_answers_loses_its_connection_and_then_its_session(
    built_index: Path,
) -> None:
    server, port = start_http_server(built_index, "--send-timeout", "1", "--max-sessions", "1")
    try:
        session = open_session(port)
        with socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND) as reader:
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            reader.setblocking(False)
            body = json.dumps(
                {**SEARCH, "params": {**SEARCH["params"], "arguments": {"query": "retry", "limit": 50}}}
            )
            pipelined = (
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n"
                b"mcp-session-id: " + session.encode() + b"\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body.encode()
            )
            with contextlib.suppress(BlockingIOError):  # until the server stops reading: it is stuck
                for _ in range(5000):
                    reader.send(pipelined)
            # was: its request stayed in flight for good, so the session could never make room
            server.wait_for_log(
                lambda r: r.get("message") == "closed a connection whose client stopped reading its response"
            )
        # its request ends as the server notices the connection gone; the session, idle then, makes
        # room for a new one (the newcomer retries on 503, as its Retry-After asks)
        deadline = time.monotonic() + READ_BOUND
        while (status := post(port, INITIALIZE)[0]) == 503 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status == 200
    finally:
        server.stop()


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (bounded by READ_BOUND)."""
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)
