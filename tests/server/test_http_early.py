"""The listening socket before uvicorn runs: ``/healthz`` answered at once and truthfully, every
other connection held and then answered by uvicorn, none dropped (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from docs_mcp_server.boot import load_index_metadata
from docs_mcp_server.engine import LazyEngine
from docs_mcp_server.http_early import (
    MAX_HEADER_BYTES,
    EarlyResponder,
    bind_socket,
    read_health_request,
    respond_early,
)
from docs_mcp_server.options import ServerOptions
from tests.support.protocol import INITIALIZE
from tests.support.server_process import MCP_HEADERS, ServerProcess, post_mcp, request

WAIT_SECONDS = 60.0
MCP_BODY = json.dumps(INITIALIZE).encode()
MCP_HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    + b"".join(f"{k}: {v}\r\n".encode() for k, v in MCP_HEADERS.items())
    + f"Content-Length: {len(MCP_BODY)}\r\n\r\n".encode()
)


def test_health_requests_are_read_and_anything_else_is_left_to_uvicorn() -> None:
    def read(text: str) -> tuple[str, bool] | None:
        found = read_health_request(text.replace("\n", "\r\n").encode())
        return None if found is None else (found.method, found.keep_alive)

    assert read("GET /healthz HTTP/1.1\nHost: a") == ("GET", True)
    assert read("HEAD /healthz?probe=1 HTTP/1.1\nHost: a\nConnection: close") == ("HEAD", False)
    assert read("GET /healthz HTTP/1.0") == ("GET", False)
    assert read("GET /healthz HTTP/1.0\nConnection: keep-alive") == ("GET", True)
    for other in (
        "POST /healthz HTTP/1.1\nHost: a",  # 405 from the middleware
        "GET /mcp HTTP/1.1\nHost: a",
        "GET /healthz HTTP/1.1",  # no Host: uvicorn answers 400
        "GET /healthz HTTP/1.1\nHost: a\nContent-Length: 3",
        "GET /healthz HTTP/1.1\nHost: a\nTransfer-Encoding: chunked",
        "GET /healthz HTTP/1.1\nHost: a\nHost: b",
        "GET /healthz HTTP/1.1\nHost: a\n folded",
        "GET /healthz HTTP/2.0\nHost: a",
        "GET  /healthz HTTP/1.1\nHost: a",
        "GET /healthz HTTP/1.1\nHost: a\nX-Padding: " + "a" * MAX_HEADER_BYTES,  # uvicorn answers 400
    ):
        assert read(other) is None, other


def test_a_loopback_server_leaves_health_checks_naming_a_foreign_host_to_the_application() -> None:
    def read(text: str) -> bool:
        return read_health_request(text.replace("\n", "\r\n").encode(), loopback=True) is not None

    assert read("GET /healthz HTTP/1.1\nHost: 127.0.0.1:8000")
    assert read("GET /healthz HTTP/1.1\nHost: LocalHost.")
    assert read("GET /healthz HTTP/1.0")  # a checker that sends no Host
    assert not read("GET /healthz HTTP/1.1\nHost: evil.example")  # refused 421 by the application
    assert not read("GET /healthz HTTP/1.1\nHost: localhost\nOrigin: http://evil.example")
    assert read_health_request(b"GET /healthz HTTP/1.1\r\nHost: evil.example") is not None  # not loopback


@pytest.fixture
def served(built_index: Path) -> Iterator[tuple[EarlyResponder, LazyEngine, ServerOptions]]:
    options = ServerOptions(index_dir=built_index, name="early-test")
    metadata = load_index_metadata(built_index)
    engine = options.open_engine()
    responder = respond_early(bind_socket("127.0.0.1", 0), options, metadata, engine, max_connections=16)
    try:
        yield responder, engine, options
    finally:
        held = responder.hand_over()
        for connection in held:
            connection.sock.close()
        responder.listener.close()
        engine.close()


def _port(responder: EarlyResponder) -> int:
    return int(responder.listener.getsockname()[1])


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)


def _answer(sock: socket.socket) -> bytes:
    """One whole answer read from ``sock``: its head and its body (as long as its content-length
    says, or up to the last chunk of a chunked one)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    fields = dict(line.lower().split(b":", 1) for line in head.split(b"\r\n")[1:])
    if b"content-length" in fields:
        done = lambda: len(body) >= int(fields[b"content-length"])  # noqa: E731
    else:
        done = lambda: body.endswith(b"0\r\n\r\n")  # noqa: E731
    while not done():
        chunk = sock.recv(65536)
        assert chunk, body
        body += chunk
    return head + b"\r\n\r\n" + body


def _nothing_answered(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    finally:
        sock.settimeout(WAIT_SECONDS)
    return False


@pytest.mark.integration
def test_healthz_says_ready_only_once_the_index_is_open(
    served: tuple[EarlyResponder, LazyEngine, ServerOptions],
) -> None:
    responder, engine, _ = served
    port = _port(responder)
    status, headers, body = request(port, "GET", "/healthz")
    assert status == 200 and headers["DOCS-MCP"].startswith("name=early-test ")
    assert headers["Access-Control-Allow-Origin"] == "*"
    health = json.loads(body)
    assert health["index"]["status"] != "ready"  # nothing has opened the index
    assert health["index"]["stats"]["total_files"] > 0 and health["build"]["name"] == "early-test"
    engine.get()
    status, headers, body = request(port, "HEAD", "/healthz")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    health = json.loads(request(port, "GET", "/healthz")[2])
    assert health["index"]["status"] == "ready"
    assert health["index"]["generation"]["number"] == 1


@pytest.mark.integration
@pytest.mark.anyio
async def test_uvicorn_takes_over_every_held_connection_and_answers_it(
    served: tuple[EarlyResponder, LazyEngine, ServerOptions],
) -> None:
    from docs_mcp_server.app import DocsMcpApp
    from docs_mcp_server.http import serve_http

    responder, engine, options = served
    port = _port(responder)
    whole = _connect(port)  # a complete MCP request
    whole.sendall(MCP_HEAD + MCP_BODY)
    partial = _connect(port)  # its head now, its body after the hand-over
    partial.sendall(MCP_HEAD)
    idle = _connect(port)  # nothing sent yet
    unknown = _connect(port)
    unknown.sendall(b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    oversized = _connect(port)  # a health check whose head uvicorn refuses: held for it to refuse
    oversized.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: %s\r\n\r\n" % (b"a" * 20_000))
    kept = _connect(port)  # a health check, then another request on the same connection
    kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert _answer(kept).startswith(b"HTTP/1.1 200 ")
    kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert _answer(kept).startswith(b"HTTP/1.1 200 ")  # two rounds: every earlier event was handled
    assert all(_nothing_answered(s) for s in (whole, partial, idle, unknown, oversized))

    engine.get()
    app = DocsMcpApp(options, load_index_metadata(Path(str(options.index_dir))), engine=engine)
    async with serve_http(app, early=responder, warm_up=False):
        answer = await anyio.to_thread.run_sync(_answer, whole)
        assert answer.startswith(b"HTTP/1.1 200 ") and b'"serverInfo"' in answer
        partial.sendall(MCP_BODY)
        assert (await anyio.to_thread.run_sync(_answer, partial)).startswith(b"HTTP/1.1 200 ")
        assert (await anyio.to_thread.run_sync(_answer, unknown)).startswith(b"HTTP/1.1 404 ")
        assert (await anyio.to_thread.run_sync(_answer, oversized)).startswith(b"HTTP/1.1 400 ")
        for sock in (idle, kept):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = await anyio.to_thread.run_sync(_answer, sock)
            assert answer.startswith(b"HTTP/1.1 200 ") and b'"status": "ready"' in answer
        status, _, messages = await anyio.to_thread.run_sync(post_mcp, port, INITIALIZE)
        assert status == 200 and messages[0]["result"]["serverInfo"]["name"] == "early-test"
    for sock in (whole, partial, idle, unknown, oversized, kept):
        sock.close()


@contextmanager
def _one_slot_taken(built_index: Path) -> Iterator[int]:
    """An early responder allowing one connection, which a held request takes; yields its port."""
    options = ServerOptions(index_dir=built_index)
    engine = options.open_engine()
    responder = respond_early(
        bind_socket("127.0.0.1", 0), options, load_index_metadata(built_index), engine, max_connections=1
    )
    try:
        port = _port(responder)
        with _connect(port) as first:
            first.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # held: takes the one slot
            yield port
    finally:
        for connection in responder.hand_over():
            connection.sock.close()
        responder.listener.close()
        engine.close()


@pytest.mark.integration
def test_connections_beyond_the_limit_get_503(built_index: Path) -> None:
    with _one_slot_taken(built_index) as port, _connect(port) as second:
        assert _answer(second).startswith(b"HTTP/1.1 503 ")


@pytest.mark.integration
def test_a_refused_client_that_already_sent_its_request_still_reads_the_503(built_index: Path) -> None:
    # closing a connection with the client's bytes unread resets it, and the 503 is lost with it
    with _one_slot_taken(built_index) as port, _connect(port) as second:
        body = b"x" * 200_000
        second.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        )
        second.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := second.recv(65536):  # raises ConnectionResetError if the server reset it
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 503 ")


@pytest.mark.integration
def test_a_starting_server_answers_healthz_and_holds_mcp_until_it_can_answer(built_index: Path) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--transport", "http", "--port", "0"])
    try:
        record = server.wait_for_log(lambda r: str(r.get("message", "")).startswith("listening"))
        port = int(record["properties"]["port"])
        status, headers, body = request(port, "GET", "/healthz")
        assert status == 200 and "DOCS-MCP" in headers
        assert json.loads(body)["index"]["status"] in ("idle", "loading", "ready")
        status, _, messages = post_mcp(port, INITIALIZE)  # held until the SDK runs, then answered
        assert status == 200 and messages[0]["result"]["serverInfo"]
    finally:
        server.stop()


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("sh") is None, reason="lowers the open-file limit with a POSIX shell")
def test_a_flood_of_connections_while_starting_leaves_the_descriptors_start_up_needs(
    built_index: Path,
) -> None:
    # with 100 descriptors (ulimit -n: the hard limit too), the responder accepted connections until
    # none was left, retried accept in a busy loop (a warning each time), and the start-up died
    # importing its modules ("Too many open files")
    limited = ["sh", "-c", 'ulimit -n 100 && exec "$0" "$@"']
    args = ["--index-dir", str(built_index), "--transport", "http", "--port", "0"]
    server = ServerProcess(args, wrapper=limited)
    flood: list[socket.socket] = []
    try:
        record = server.wait_for_log(lambda r: str(r.get("message", "")).startswith("listening"))
        port = int(record["properties"]["port"])
        flood = [_connect(port) for _ in range(150)]
        server.wait_for_log(lambda r: r.get("message") == "started mcp server")
        for sock in flood:
            sock.close()
        status, _, messages = post_mcp(port, INITIALIZE)
        assert status == 200 and messages[0]["result"]["serverInfo"]
    finally:
        for sock in flood:
            sock.close()
        server.stop()
    assert "Traceback" not in server.stderr_text()
    assert server.stderr_text().count("accepting a connection failed") <= 2
