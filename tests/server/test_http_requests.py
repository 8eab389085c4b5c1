"""What ``/mcp`` answers to malformed, foreign, oversized and unauthenticated requests, against real
server processes on 127.0.0.1 (raw HTTP, so that a test sends exactly the bytes it means)."""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_server.auth import LOGIN_ATTEMPTS
from docs_mcp_server.http_checks import is_loopback_name, rebinding_refusal
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import (
    MCP_HEADERS,
    ServerProcess,
    post_mcp,
    request,
    rpc_messages,
    start_http_server,
)

pytestmark = pytest.mark.integration

READ_BOUND = 20.0

# Messages no transport may accept, each with the id its answer must carry.
MALFORMED: list[tuple[bytes, Any, int]] = [
    (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', 1, -32600),  # a batch
    (b"[]", None, -32600),
    (b'"tools/list"', None, -32600),
    (b'{"jsonrpc":"1.0","id":5,"method":"tools/list"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}', 6, -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, -32600),
    (b'{"a":1}', None, -32600),
    (b"true", None, -32600),
    (b'{"jsonrpc":"2.0","id":{"x":1},"method":"notifications/initialized"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":"p","method":"tools/list",', "p", -32700),
    # bytes that are not UTF-8 inside a string: refused over both (stdio once read them as U+FFFD)
    (b'{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"search_docs",'
     b'"arguments":{"query":"caf\xe9 retry"}}}', "u", -32700),
]  # fmt: skip


@pytest.fixture(scope="module", params=["stateful", "stateless"])
def server(request: pytest.FixtureRequest, built_index: Path) -> Iterator[tuple[str, ServerProcess, int]]:
    extra = ["--stateless"] if request.param == "stateless" else []
    process, port = start_http_server(built_index, *extra)
    try:
        yield request.param, process, port
    finally:
        process.stop()


def _session(mode: str, port: int) -> dict[str, str]:
    """Headers for a request inside an open session (nothing extra when stateless)."""
    status, headers, _ = post_mcp(port, INITIALIZE)
    assert status == 200
    if mode == "stateless":
        return {"MCP-Protocol-Version": "2025-06-18"}
    session = {"mcp-session-id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
    assert post_mcp(port, INITIALIZED, session)[0] == 202
    return session


def test_malformed_messages_get_the_answers_stdio_gives(
    server: tuple[str, ServerProcess, int], stdio_session: ServerProcess
) -> None:
    mode, _, port = server
    session = _session(mode, port)
    for body, request_id, code in MALFORMED:
        for headers in (MCP_HEADERS, {**MCP_HEADERS, **session}):  # opening a session, and inside one
            status, response_headers, answer = request(port, "POST", "/mcp", body, headers)
            assert status == 400, (body, status, answer)
            assert answer.count(b"\n") == 0 and b"errors.pydantic.dev" not in answer, answer
            assert "mcp-session-id" not in response_headers, body
            http_answer = json.loads(answer)
            stdio_session.send_raw(body)
            stdio_answer = stdio_session.receive_any()
            if code == -32700:  # the parser's position differs by stdio's newline
                http_answer["error"]["message"] = stdio_answer["error"]["message"] = "parse error"
            assert http_answer == stdio_answer, body
            answers = http_answer if isinstance(http_answer, list) else [http_answer]
            assert all(a["id"] == request_id and a["error"]["code"] == code for a in answers), answers


def test_a_valid_request_still_gets_its_answer_after_the_screen(
    server: tuple[str, ServerProcess, int],
) -> None:
    mode, _, port = server
    session = _session(mode, port)
    status, _, messages = post_mcp(port, {"jsonrpc": "2.0", "id": 41, "method": "tools/list"}, session)
    assert status == 200 and messages[0]["id"] == 41 and messages[0]["result"]["tools"]


@pytest.mark.parametrize("arguments", [[1], "query", 7, True], ids=repr)
def test_tool_arguments_that_are_not_an_object_get_the_documented_answer(
    server: tuple[str, ServerProcess, int], arguments: object
) -> None:
    mode, _, port = server
    session = _session(mode, port)
    for tool in ("search_docs", "get_doc"):
        call = {
            "jsonrpc": "2.0",
            "id": 43,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        status, _, messages = post_mcp(port, call, session)
        assert status == 200, messages
        assert messages == [
            {
                "jsonrpc": "2.0",
                "id": 43,
                "result": {
                    "content": [{"type": "text", "text": f"{tool} input must be an object"}],
                    "isError": True,
                },
            }
        ]
    status, _, messages = post_mcp(port, {"jsonrpc": "2.0", "id": 44, "method": "tools/list"}, session)
    assert status == 200 and messages[0]["id"] == 44 and messages[0]["result"]["tools"]  # the session goes on


def test_a_406_makes_no_session_and_names_none(server: tuple[str, ServerProcess, int]) -> None:
    _, _, port = server
    body = json.dumps(INITIALIZE).encode()
    status, headers, answer = request(
        port, "POST", "/mcp", body, {"Content-Type": "application/json", "Accept": "text/html"}
    )
    assert status == 406, answer
    assert "mcp-session-id" not in headers


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_by_its_type_gets_415_with_a_jsonrpc_error(
    server: tuple[str, ServerProcess, int], content_type: str | None
) -> None:
    # the SDK answered 400 with the bare text 'Invalid Content-Type header' and no content type
    _, _, port = server
    headers = {"Accept": "application/json, text/event-stream"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    status, response_headers, answer = request(port, "POST", "/mcp", json.dumps(INITIALIZE).encode(), headers)
    assert status == 415 and response_headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response_headers
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": "Unsupported Media Type: Content-Type must be application/json"}}  # fmt: skip


@pytest.mark.parametrize("content_type", ["Application/JSON", "APPLICATION/JSON; charset=utf-8"])
def test_a_json_content_type_in_capitals_is_json(
    server: tuple[str, ServerProcess, int], content_type: str
) -> None:
    # media types are case-insensitive (RFC 9110): the screen read such a body as JSON, then the MCP
    # SDK refused it with 415 and code -32600
    mode, _, port = server
    headers = {**_session(mode, port), "Content-Type": content_type, "Accept": MCP_HEADERS["Accept"]}
    ping = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}).encode()
    status, response_headers, answer = request(port, "POST", "/mcp", ping, headers)
    assert status == 200, answer
    content = response_headers.get("content-type", "")
    assert rpc_messages(answer, content) == [{"jsonrpc": "2.0", "id": 4, "result": {}}]


def _raw(port: int, data: bytes) -> bytes:
    """Send ``data`` in one write and read the whole answer (the server closes, or the bound ends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_oversized_headers_are_refused_when_they_arrive_in_one_write(
    server: tuple[str, ServerProcess, int],
) -> None:
    _, _, port = server
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
        + b"a" * 100_000
        + b"\r\nConnection: close\r\n\r\n"
    )
    try:
        answer = _raw(port, head)
    except ConnectionResetError:
        # refused before its answer could be read back (the kernel resets a connection closed with
        # input unread): what matters is that the request was not served
        answer = b"HTTP/1.1 431 (connection reset)"
    assert answer.split(b" ", 2)[1] in (b"400", b"431"), answer[:200]
    small = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert small.startswith(b"HTTP/1.1 200"), small[:200]


def test_a_body_framed_both_by_chunks_and_by_length_is_refused(
    server: tuple[str, ServerProcess, int],
) -> None:
    # read by its chunks here and by its length in a proxy in front, the bytes after the empty
    # chunk would be a second request to one of the two (request smuggling)
    _, _, port = server
    body = json.dumps(INITIALIZE).encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: %d\r\n\r\n" % len(chunked)
    )
    try:
        answer = _raw(port, head + chunked)
    except ConnectionResetError:
        answer = b"HTTP/1.1 400 (connection reset)"
    assert answer.split(b" ", 2)[1] == b"400", answer[:200]
    assert b'"result"' not in answer
    status, _, _ = post_mcp(port, INITIALIZE)  # the server goes on
    assert status == 200


@pytest.mark.parametrize("last_event_id", [b"1", b"x" * 5_000])
def test_an_event_stream_asked_to_resume_is_opened_afresh(
    server: tuple[str, ServerProcess, int], last_event_id: bytes
) -> None:
    # the server keeps no events to replay: the MCP SDK answered a GET /mcp with Last-Event-ID
    # (what a client sends when it reconnects) with nothing at all, which uvicorn turned into a 500
    # logged as an error
    mode, process, port = server
    if mode == "stateless":
        pytest.skip("a stateless server has no event stream (405)")
    session = _session(mode, port)
    head = (
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\nLast-Event-ID: %s\r\n\r\n"
        % (session["mcp-session-id"].encode(), last_event_id)
    )
    with socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND) as sock:
        sock.sendall(head)
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b"content-type: text/event-stream" in answer.lower()
    call = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    status, _, messages = post_mcp(port, call, session)
    assert status == 200 and messages == [{"jsonrpc": "2.0", "id": 3, "result": {}}]
    assert not [line for line in process.stderr_lines if "without starting response" in line]


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST", "localhost.", "LocalHost.", "127.0.0.1", "127.0.0.2", "[::1]", "127.1.2.3"],
)
def test_every_spelling_of_loopback_is_a_valid_host(
    server: tuple[str, ServerProcess, int], host: str
) -> None:
    _, _, port = server
    status, _, _ = post_mcp(port, INITIALIZE, {"Host": f"{host}:{port}"})
    assert status == 200


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "localhost.evil.example:80"}, 421),
        ({"Host": "127.0.0.1.nip.io"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example:80"}, 403),
        ({"Origin": "null"}, 403),
    ],
)
def test_foreign_hosts_and_origins_are_refused(
    server: tuple[str, ServerProcess, int], headers: dict[str, str], expected: int
) -> None:
    _, _, port = server
    status, _, _ = post_mcp(port, INITIALIZE, headers)
    assert status == expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"Host": "evil.example"}, 421), ({"Origin": "http://evil.example"}, 403), ({}, 200)],
)
def test_healthz_is_refused_to_a_page_on_another_site(
    server: tuple[str, ServerProcess, int], headers: dict[str, str], expected: int
) -> None:
    _, _, port = server
    status, _, body = request(port, "GET", "/healthz", headers=headers)
    assert status == expected
    assert (b"build" in body) == (expected == 200)


def test_rebinding_protection_holds_on_every_loopback_address(built_index: Path) -> None:
    process, port = start_http_server(built_index, "--host", "127.0.0.2")
    try:
        conn = socket.create_connection(("127.0.0.2", port), timeout=READ_BOUND)
        body = json.dumps(INITIALIZE).encode()
        conn.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: evil.com\r\nOrigin: http://evil.com\r\n"
            b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        conn.close()
        assert answer.startswith(b"HTTP/1.1 421"), answer[:200]
    finally:
        process.proc.send_signal(signal.SIGTERM)
        process.wait()
        process.stop()


def test_loopback_names() -> None:
    assert all(map(is_loopback_name, ["127.0.0.2", "::1", "[::1]", "LOCALHOST.", "::ffff:127.0.0.1"]))
    assert not any(map(is_loopback_name, ["0.0.0.0", "10.0.0.1", "evil.com", "localhost.evil.com", ""]))
    assert rebinding_refusal({"headers": []}) is not None  # no Host header at all


def test_a_throttled_address_is_asked_to_authenticate_when_it_sends_no_credential(built_index: Path) -> None:
    process, port = start_http_server(built_index, "--auth-token", "s3cret")
    try:
        for _ in range(LOGIN_ATTEMPTS):
            assert post_mcp(port, INITIALIZE, {"Authorization": "Bearer wrong"})[0] == 401
        assert post_mcp(port, INITIALIZE, {"Authorization": "Bearer wrong"})[0] == 429
        status, headers, _ = post_mcp(port, INITIALIZE)
        assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
        assert post_mcp(port, INITIALIZE, {"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        process.stop()


def test_an_unknown_protocol_version_header_is_named_with_the_versions_accepted(
    server: tuple[str, ServerProcess, int],
) -> None:
    """Not the SDK's request for a 2026-07-28 ``params._meta`` envelope the client never meant to send."""
    mode, _, port = server
    session = _session(mode, port)
    ping = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode()
    for version in ("1999-01-01", "2025-06-1"):
        headers = {**MCP_HEADERS, **session, "MCP-Protocol-Version": version}
        status, _, answer = request(port, "POST", "/mcp", ping, headers)
        assert status == 400, answer
        assert json.loads(answer)["error"] == {
            "code": -32600,
            "message": f'Bad Request: unsupported MCP-Protocol-Version header "{version}"; send the version'
            " initialize agreed on, one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28",
        }
    status, _, answer = request(port, "POST", "/mcp", ping, {**MCP_HEADERS, **session})
    assert status == 200 and b'"result":{}' in answer, answer
