"""A request whose id is already in flight on its session, over HTTP.

The SDK routes each answer of a session to the stream of the request with that id, so a second
request with the id of one still in flight took its stream: the first never got its answer, and
since the server keeps an open event stream alive with pings, its connection and its session stayed
open for good. The second is now refused; the first is answered.

To keep the first request in flight without timing, its answer is larger than what the kernel and
the server can buffer for a client that does not read (about 1.7 MB on loopback with a 4 KiB
receive buffer; uvicorn holds 64 KiB more before it waits): until the test reads it, the server is
still writing it.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import (
    MCP_HEADERS,
    PROTOCOL,
    ServerProcess,
    post_mcp,
    rpc_messages,
    start_http_server,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

READ_BOUND = 60.0
_LINE = "the lighthouse keeper trims the wick before the harbor lights go on\n"
_SECTION = _LINE * 240  # about 16 KB
SECTIONS = 250  # a 4 MB document: twice what a reader that does not read lets the server write


@pytest.fixture(scope="module")
def big_document_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, int]]:
    root = tmp_path_factory.mktemp("big-document")
    docs = root / "docs"
    docs.mkdir()
    (docs / ".docs-mcp.json").write_text('{"version": "1", "strategy": {"chunk_by": "h2"}}', encoding="utf-8")
    sections = "".join(f"## Part {i}\n\n{_SECTION}\n" for i in range(SECTIONS))
    (docs / "big.md").write_text(f"# Big\n\n{sections}## Last\n\nthe final words\n", encoding="utf-8")
    build_index(BuildOptions(docs_dir=docs, out_dir=root / "out"))
    process, port = start_http_server(root / "out")
    try:
        yield process, port
    finally:
        process.stop()


def _open_session(port: int) -> dict[str, str]:
    status, headers, _ = post_mcp(port, INITIALIZE)
    assert status == 200
    session = {"mcp-session-id": headers["mcp-session-id"], **PROTOCOL}
    assert post_mcp(port, INITIALIZED, session)[0] == 202
    return session


def _get_doc(request_id: object, chunk_id: str, scope: str) -> dict[str, object]:
    arguments = {"chunk_id": chunk_id, "scope": scope}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "get_doc", "arguments": arguments},
    }


def _start_unread(port: int, session: dict[str, str], message: dict[str, object]) -> http.client.HTTPResponse:
    """POST ``message`` on a connection with a small receive buffer, and read only the headers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(READ_BOUND)
    sock.connect(("127.0.0.1", port))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=READ_BOUND)
    conn.sock = sock
    conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers={**MCP_HEADERS, **session})
    response = conn.getresponse()
    assert response.status == 200
    return response


def _read_within(response: http.client.HTTPResponse, seconds: float) -> bytes:
    """The rest of ``response``, or an assertion error after ``seconds`` (the server's keep-alive
    pings would defeat a socket timeout)."""
    deadline = time.monotonic() + seconds
    parts: list[bytes] = []
    try:
        while chunk := response.read1(1 << 16):
            parts.append(chunk)
            assert time.monotonic() < deadline, f"the first answer did not end within {seconds} s"
    finally:
        response.close()
    return b"".join(parts)


def test_a_second_request_with_an_id_in_flight_is_refused_and_the_first_is_answered(
    big_document_server: tuple[ServerProcess, int],
) -> None:
    _, port = big_document_server
    session = _open_session(port)
    first = _start_unread(port, session, _get_doc(7, "big.md#big/part-1", "parent"))
    try:
        # the same id as a string too: the SDK keys answers by the id's text
        for duplicate in (7, "7"):
            status, _, answer = post_mcp(port, _get_doc(duplicate, "big.md#big/last", "chunk"), session)
            assert status == 400, answer
            assert answer == [
                {
                    "jsonrpc": "2.0",
                    "id": duplicate,
                    "error": {
                        "code": -32600,
                        "message": "Invalid Request: the id "
                        + json.dumps(duplicate)
                        + " is already used by a request in flight on this session; give each request an id of its own",
                    },
                }
            ]
        # another id is served meanwhile
        status, _, answer = post_mcp(port, _get_doc(8, "big.md#big/last", "chunk"), session)
        assert status == 200 and "the final words" in answer[0]["result"]["content"][0]["text"]
    finally:
        body = _read_within(first, READ_BOUND)
    assert len(body) > 4_000_000
    [message] = rpc_messages(body, "text/event-stream")
    assert message["id"] == 7
    assert "the final words" in message["result"]["content"][0]["text"]
