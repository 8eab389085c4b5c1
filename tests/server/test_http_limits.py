"""Slow, idle, abandoned and too many HTTP clients, against real server processes on 127.0.0.1.

The clients are raw sockets, so that a test can stop half-way through a request as a slow or
malicious client would. Every wait is bounded: a socket read times out long after the server's
own deadline would have closed the connection.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.protocol import INITIALIZE
from tests.support.server_process import (
    PROTOCOL,
    ServerProcess,
    post_mcp,
    request,
    run_server,
    start_http_server,
)

pytestmark = pytest.mark.integration

READ_BOUND = 20.0  # far beyond the one-second deadlines of the fast server


@pytest.fixture(scope="module")
def fast_deadlines(built_index: Path) -> Iterator[tuple[ServerProcess, int]]:
    server, port = start_http_server(
        built_index,
        "--header-timeout", "1", "--body-timeout", "1", "--session-idle-timeout", "1",
        "--log-level", "debug",  # the MCP SDK reports expired sessions at info, shown with debug
    )  # fmt: skip
    try:
        yield server, port
    finally:
        server.stop()


@pytest.fixture(scope="module")
def few_slots(built_index: Path) -> Iterator[int]:
    server, port = start_http_server(
        built_index, "--header-timeout", "60", "--max-connections", "3", "--max-sessions", "2"
    )
    try:
        yield port
    finally:
        server.stop()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND)
    sock.settimeout(READ_BOUND)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by READ_BOUND)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def trickle_until_answered(sock: socket.socket, filler: bytes) -> bytes:
    """Send ``filler`` a byte at a time, a quarter of a second apart, as a slow client does, until
    the server answers and closes (or READ_BOUND passes: then the test fails)."""
    deadline = time.monotonic() + READ_BOUND
    sock.settimeout(0.25)
    for byte in filler * 1000:
        try:
            sock.sendall(bytes([byte]))
            answer = sock.recv(65536)
        except TimeoutError:
            assert time.monotonic() < deadline, "the server kept a trickling request open"
            continue
        except (BrokenPipeError, ConnectionResetError):
            return b""
        sock.settimeout(READ_BOUND)
        return answer + read_until_closed(sock)
    raise AssertionError("the server kept a trickling request open")


def test_a_connection_that_sends_nothing_is_closed(fast_deadlines: tuple[ServerProcess, int]) -> None:
    with connect(fast_deadlines[1]) as sock:
        assert read_until_closed(sock) == b""


def test_headers_sent_a_byte_at_a_time_get_408(fast_deadlines: tuple[ServerProcess, int]) -> None:
    server, port = fast_deadlines
    with connect(port) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        answer = trickle_until_answered(sock, b"X-Slow: abcdefghijklmnopqrstuvwxyz\r\n")
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    record = server.wait_for_log(lambda r: r.get("message", "").startswith("closed a connection"))
    assert record["properties"]["waiting_for"] == "headers"


def test_a_body_sent_a_byte_at_a_time_gets_408(fast_deadlines: tuple[ServerProcess, int]) -> None:
    server, port = fast_deadlines
    body = json.dumps(INITIALIZE).encode()
    with connect(port) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:10]
        )
        answer = trickle_until_answered(sock, body[10:])
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    record = server.wait_for_log(lambda r: r.get("message", "").startswith("closed a connection"))
    assert record["properties"]["waiting_for"] == "body"


def test_a_kept_alive_connection_serves_requests_then_is_closed_when_idle(
    fast_deadlines: tuple[ServerProcess, int],
) -> None:
    with connect(fast_deadlines[1]) as sock:
        for _ in range(2):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            head = sock.recv(65536)
            assert head.startswith(b"HTTP/1.1 200 OK\r\n")
            length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(head.split(b"\r\n\r\n", 1)[1]) < length:
                head += sock.recv(65536)
        assert read_until_closed(sock) == b""


def test_an_abandoned_session_expires(fast_deadlines: tuple[ServerProcess, int]) -> None:
    server, port = fast_deadlines
    status, headers, _ = post_mcp(port, INITIALIZE)
    assert status == 200
    session = headers["mcp-session-id"]
    # the SDK's own idle rule or the server's (which also ends sessions holding an event stream)
    server.wait_for_log(
        lambda r: (
            ("idle timeout" in r.get("message", "") and session in r["message"])
            or (r.get("message", "").startswith("ended a session") and r["properties"]["session"] == session)
        )
    )
    gone = post_mcp(
        port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {**PROTOCOL, "mcp-session-id": session}
    )
    assert gone[0] == 404


def test_connections_beyond_the_limit_get_503_until_one_closes(few_slots: int) -> None:
    held = [connect(few_slots) for _ in range(3)]
    try:
        with connect(few_slots) as extra:
            answer = read_until_closed(extra)
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        assert b"retry-after: 1" in answer.lower()
        held.pop().close()
        deadline = time.monotonic() + READ_BOUND  # the server sees the close on its next loop turn
        while True:
            with connect(few_slots) as again:
                again.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = read_until_closed(again)
            if answer.startswith(b"HTTP/1.1 200 OK\r\n") or time.monotonic() > deadline:
                break
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer
    finally:
        for sock in held:
            sock.close()


def test_a_client_reconnecting_as_fast_as_it_is_refused_reads_every_503_and_then_a_free_slot(
    few_slots: int,
) -> None:
    # A refused client that retries at once must not keep the server from seeing the other
    # connections: each retry reads its 503 (a reset would lose it), and the slot freed meanwhile
    # is given to the next retry.
    held = [connect(few_slots) for _ in range(3)]
    try:
        for _ in range(40):
            with connect(few_slots) as again:
                again.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = read_until_closed(again)  # raises ConnectionResetError if it was reset
            assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        held.pop().close()
        deadline = time.monotonic() + READ_BOUND
        while True:
            with connect(few_slots) as again:
                again.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = read_until_closed(again)
            if not answer.startswith(b"HTTP/1.1 503 ") or time.monotonic() > deadline:
                break
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer
    finally:
        for sock in held:
            sock.close()


def test_refused_clients_that_never_close_delay_the_next_one_but_never_reset_it(few_slots: int) -> None:
    # Three refused clients keep their connections open: a fourth waits until one of them is
    # closed for it (after the linger time), then reads its own 503.
    held = [connect(few_slots) for _ in range(3)]
    refused = [connect(few_slots) for _ in range(3)]
    try:
        for sock in refused:
            assert sock.recv(65536).startswith(b"HTTP/1.1 503 "), "a refused client reads its 503"
        with connect(few_slots) as late:
            late.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert read_until_closed(late).startswith(b"HTTP/1.1 503 ")
    finally:
        for sock in held + refused:
            sock.close()


def test_a_body_over_the_limit_is_answered_413_and_its_connection_ends_before_the_body_deadline(
    few_slots: int,
) -> None:
    # the answer comes before the body is read; the rest of the body is worth nothing, so the
    # connection must not stay open until the body deadline (30 s here, beyond READ_BOUND)
    chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
    deadline = time.monotonic() + READ_BOUND  # slots an earlier test used are freed meanwhile
    while True:
        with connect(few_slots) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            with contextlib.suppress(OSError):  # the server may stop reading once it has answered
                for _ in range(80):  # 5 MiB, over the 4 MiB limit
                    sock.sendall(chunk)
            answer = read_until_closed(sock)  # times out (READ_BOUND) if the server keeps it open
        if not answer.startswith(b"HTTP/1.1 503 ") or time.monotonic() > deadline:
            break
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:80]


def _chunked(body: bytes, size: int) -> bytes:
    pieces = (body[i : i + size] for i in range(0, len(body), size))
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


_CHUNKED_HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
)


def test_a_body_sent_a_byte_per_chunk_is_refused_once_past_its_free_chunks(
    fast_deadlines: tuple[ServerProcess, int],
) -> None:
    """h11 parses a chunk for about 5 µs however small it is: 4 MiB a byte per chunk held the
    server for 24 s of CPU, a quarter of a second per read, and every other client waited."""
    _, port = fast_deadlines
    short = json.dumps(INITIALIZE).encode()  # fewer chunks than the free ones: served
    with connect(port) as sock:
        sock.sendall(_CHUNKED_HEAD + _chunked(short, 1))
        assert read_until_closed(sock).startswith(b"HTTP/1.1 200 OK\r\n")
    padded = dict(
        INITIALIZE, params=dict(INITIALIZE["params"], clientInfo={"name": "x" * 300_000, "version": "1"})
    )
    started = time.monotonic()
    with connect(port) as sock:
        with contextlib.suppress(OSError):  # the server stops reading once it has answered
            sock.sendall(_CHUNKED_HEAD + _chunked(json.dumps(padded).encode(), 1))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer[:200]  # was 408, a second later
    assert answer.endswith(
        b"The request body arrives in chunks of fewer than 256 bytes on average; send it with "
        b"Content-Length, or in larger chunks.\n"
    ), answer
    assert time.monotonic() - started < READ_BOUND
    with connect(port) as sock:  # the same body in chunks of 64 KiB is served
        sock.sendall(_CHUNKED_HEAD + _chunked(json.dumps(padded).encode(), 0x10000))
        assert read_until_closed(sock).startswith(b"HTTP/1.1 200 OK\r\n")


def test_a_session_beyond_the_limit_ends_the_longest_idle_one(few_slots: int) -> None:
    # (a newcomer is refused only while every session has a request in flight: test_http_fairness)
    sessions = []
    for _ in range(3):
        status, headers, _ = post_mcp(few_slots, INITIALIZE)
        assert status == 200
        sessions.append(headers["mcp-session-id"])
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert post_mcp(few_slots, listing, {**PROTOCOL, "mcp-session-id": sessions[0]})[0] == 404
    assert post_mcp(few_slots, listing, {**PROTOCOL, "mcp-session-id": sessions[2]})[0] == 200


def test_limits_that_make_no_sense_are_usage_errors(built_index: Path) -> None:
    for flag, value, message in [
        ("--header-timeout", "0", "--header-timeout must be a number of seconds > 0, got 0.0"),
        ("--body-timeout", "inf", "--body-timeout must be a number of seconds > 0, got inf"),
        ("--send-timeout", "0", "--send-timeout must be a number of seconds > 0, got 0.0"),
        ("--max-connections", "0", "--max-connections must be a whole number >= 1, got 0"),
        ("--max-sessions", "1.5", "invalid integer value '1.5'"),
        ("--session-idle-timeout", "-1", "--session-idle-timeout must be a number of seconds > 0"),
    ]:
        result = run_server(["--index-dir", str(built_index), "--transport", "http", flag, value])
        assert result.returncode == 2, (flag, result.stderr)
        assert message in result.stderr, (flag, result.stderr)


def test_a_stateless_server_answers_get_with_405(built_index: Path) -> None:
    server, port = start_http_server(built_index, "--stateless")
    try:
        with connect(port) as sock:  # raw: an event stream, if one were opened, would never end
            sock.sendall(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                b"MCP-Protocol-Version: 2025-06-18\r\n\r\n"
            )
            head = b""
            while b"\r\n\r\n" not in head and (chunk := sock.recv(65536)):
                head += chunk
        assert head.startswith(b"HTTP/1.1 405 Method Not Allowed\r\n"), head
        assert b"\r\nallow: POST\r\n" in head.lower().replace(b"post", b"POST")
        assert post_mcp(port, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, PROTOCOL)[0] == 200
    finally:
        server.stop()


@pytest.mark.anyio
async def test_every_connection_sends_without_waiting_for_acknowledgements(built_index: Path) -> None:
    # Nagle's algorithm would hold a response's body until the client acknowledged its headers
    import anyio
    import httpx2

    from docs_mcp_server import create_app, serve_http

    app = create_app(built_index)
    with anyio.fail_after(60):
        async with serve_http(app, warm_up=False) as http, httpx2.AsyncClient() as client:
            for _ in range(2):  # the same kept-alive connection
                assert (await client.get(f"http://127.0.0.1:{http.port}/healthz")).status_code == 200
            connections = list(http.uvicorn_server.server_state.connections)
            assert connections
            for protocol in connections:
                sock = protocol.transport.get_extra_info("socket")
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("sh") is None, reason="lowers the open-file limit with a POSIX shell")
def test_running_out_of_descriptors_is_one_warning_not_a_flood_of_errors(built_index: Path) -> None:
    # asyncio reported each failed accept once per connection in uvicorn's backlog, again whenever
    # the listener was readable: about 8,000 error records a second under this flood
    limited = ["sh", "-c", 'ulimit -n 200 && exec "$0" "$@"']
    args = ["--index-dir", str(built_index), "--transport", "http", "--port", "0", "--max-connections", "100"]
    server = ServerProcess(args, wrapper=limited)
    flood: list[socket.socket] = []
    try:
        port = int(server.wait_for_log(lambda r: "port" in r.get("properties", {}))["properties"]["port"])
        server.wait_for_log(lambda r: r.get("message") == "started mcp server")
        flood = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(400)]
        server.wait_for_log(lambda r: "out of" in str(r.get("message")))
        for sock in flood:
            sock.close()
        status, _, _ = request(port, "GET", "/healthz")  # accepting again once descriptors are free
        assert status == 200
    finally:
        for sock in flood:
            sock.close()
        server.stop()
    errors = server.stderr_text()
    assert errors.count("out of system resource") + errors.count("out of file descriptors") == 1, errors[
        -2000:
    ]
