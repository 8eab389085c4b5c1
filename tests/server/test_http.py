"""Streamable HTTP on 127.0.0.1 (a free port), stateful and stateless, against real server processes."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from docs_mcp_server.auth import LOGIN_ATTEMPTS
from tests.support.protocol import INITIALIZE, text
from tests.support.server_process import (
    MCP_HEADERS,
    PROTOCOL,
    ServerProcess,
    post_mcp,
    request,
    run_server,
    start_http_server,
)

HEADER = "name=test-server version=0.1.0 git=abc1234 date=2026-01-02"

pytestmark = pytest.mark.integration  # starts processes or listens on ports


IDENTITY_FLAGS = [
    "--name",
    "test-server",
    "--server-version",
    "0.1.0",
    "--git-commit",
    "abc1234",
    "--build-date",
    "2026-01-02",
]
IDENTITY_ENV = {
    "SERVER_NAME": "test-server",
    "SERVER_VERSION": "0.1.0",
    "GIT_COMMIT": "abc1234",
    "BUILD_DATE": "2026-01-02",
}


def start_http(index: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[ServerProcess, int]:
    """Start an HTTP server on a free port; identity comes from flags, or from ``env`` when given."""
    return start_http_server(index, *([] if env else IDENTITY_FLAGS), *extra, env=env)


@pytest.fixture(scope="module", params=["stateful", "stateless"])
def http_server(request: pytest.FixtureRequest, built_index: Path) -> Iterator[tuple[str, int]]:
    extra = ["--stateless"] if request.param == "stateless" else []
    server, port = start_http(built_index, *extra)
    try:
        yield request.param, port
    finally:
        server.proc.send_signal(signal.SIGTERM)
        assert server.wait() == 0, server.stderr_text()
        server.stop()


def test_healthz_reports_build_and_index(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, headers, body = request(port, "GET", "/healthz")
    assert status == 200
    assert headers["DOCS-MCP"] == HEADER
    health = json.loads(body)
    assert health["build"] == {
        "name": "test-server",
        "version": "0.1.0",
        "gitCommit": "abc1234",
        "buildDate": "2026-01-02",
    }
    assert health["index"]["stats"]["total_files"] > 0
    assert health["index"]["status"] in ("loading", "ready")


def test_unknown_paths_are_404_with_header(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, headers, _ = request(port, "GET", "/nope")
    assert status == 404
    assert headers["DOCS-MCP"] == HEADER
    assert headers["Access-Control-Allow-Origin"] == "*"


def test_cors_preflight(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, headers, body = request(
        port,
        "OPTIONS",
        "/mcp",
        headers={"Origin": "http://localhost:3001", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type, mcp-session-id"},
    )  # fmt: skip
    assert status == 204 and body == b""
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert (
        "POST" in headers["Access-Control-Allow-Methods"]
        and "DELETE" in headers["Access-Control-Allow-Methods"]
    )
    assert headers["Access-Control-Allow-Headers"] == "content-type, mcp-session-id"
    assert headers["Access-Control-Max-Age"] == "86400"
    assert "DOCS-MCP" in headers["Access-Control-Expose-Headers"]
    assert headers["DOCS-MCP"] == HEADER


def test_malformed_body_is_400_parse_error(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, headers, body = request(port, "POST", "/mcp", b"{not json", MCP_HEADERS)
    assert status == 400
    assert headers["DOCS-MCP"] == HEADER
    assert json.loads(body)["error"]["code"] == -32700


def test_oversized_body_is_rejected(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, _, _ = request(port, "POST", "/mcp", b" " * (5 * 1024 * 1024), MCP_HEADERS)
    assert status == 413


def test_sessions_per_mode(http_server: tuple[str, int]) -> None:
    mode, port = http_server
    status, headers, messages = post_mcp(port, INITIALIZE)
    assert status == 200
    assert messages[0]["result"]["serverInfo"]["name"] == "test-server"
    session = headers.get("mcp-session-id")
    if mode == "stateful":
        assert session
        delete_status, _, _ = request(port, "DELETE", "/mcp", headers={"mcp-session-id": session, **PROTOCOL})
        assert delete_status == 200
        gone, _, _ = post_mcp(port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                              {"mcp-session-id": session, **PROTOCOL})  # fmt: skip
        assert gone == 404
    else:
        assert session is None
        delete_status, _, _ = request(port, "DELETE", "/mcp", headers=PROTOCOL)
        assert delete_status == 405
        # no session: any request stands on its own
        status, _, messages = post_mcp(port, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, PROTOCOL)
        assert status == 200 and messages[0]["id"] == 7
        assert [tool["name"] for tool in messages[0]["result"]["tools"]] == ["search_docs", "get_doc"]


@pytest.mark.anyio
@pytest.mark.parametrize("client_mode", ["auto", "legacy"])
async def test_mcp_client_over_http(http_server: tuple[str, int], client_mode: str) -> None:
    _, port = http_server
    async with Client(f"http://127.0.0.1:{port}/mcp", mode=client_mode) as client:
        assert client.server_info is not None and client.server_info.name == "test-server"
        tools = (await client.list_tools()).tools
        assert tools[0].input_schema["properties"]["language"]["enum"] == ["go", "python", "typescript"]
        found = await client.call_tool("search_docs", {"query": "create a customer", "language": "go"})
        assert not found.is_error, found.content
        hit = found.structured_content["hits"][0]
        doc = await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"]})
        assert text(doc.content[0]).startswith(f"--- Chunk: {hit['chunk_id']}")
        bad = await client.call_tool("search_docs", {"query": "x", "limit": 99})
        assert bad.is_error and text(bad.content[0]) == "limit must be between 1 and 50"
        prompts = (await client.list_prompts()).prompts
        assert {prompt.name for prompt in prompts} == {"prompts/debug-webhook", "prompts/integrate-payments"}
        resources = (await client.list_resources()).resources
        read = await client.read_resource(str(resources[0].uri))
        assert text(read.contents[0])


def test_dns_rebinding_protection_on_loopback(http_server: tuple[str, int]) -> None:
    _, port = http_server
    status, _, _ = request(port, "POST", "/mcp", json.dumps(INITIALIZE).encode(),
                           {**MCP_HEADERS, "Host": "evil.example:80"})  # fmt: skip
    assert status == 421
    status, _, _ = request(port, "POST", "/mcp", json.dumps(INITIALIZE).encode(),
                           {**MCP_HEADERS, "Origin": "http://evil.example"})  # fmt: skip
    assert status == 403


@pytest.fixture(scope="module")
def auth_server(built_index: Path) -> Iterator[int]:
    # identity, stateless mode and the token all from the environment this time
    env = {**IDENTITY_ENV, "STATELESS": "true", "DOCS_MCP_AUTH_TOKEN": "s3cret"}
    server, port = start_http(built_index, env=env)
    try:
        yield port
    finally:
        server.proc.send_signal(signal.SIGTERM)
        assert server.wait() == 0
        server.stop()


def test_auth_token_required_on_mcp(auth_server: int) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
        status, response_headers, messages = post_mcp(auth_server, INITIALIZE, headers)
        assert status == 401
        assert response_headers["WWW-Authenticate"] == "Bearer"
        assert response_headers["DOCS-MCP"] == HEADER
        assert messages[0]["error"] == {"code": -32000, "message": "Unauthorized"}
    status, _, messages = post_mcp(auth_server, INITIALIZE, {"Authorization": "Bearer s3cret"})
    assert status == 200 and messages[0]["result"]["serverInfo"]["name"] == "test-server"
    assert request(auth_server, "GET", "/healthz")[0] == 200  # health checks stay open
    assert "mcp-session-id" not in {
        k.lower() for k in post_mcp(auth_server, INITIALIZE, {"Authorization": "Bearer s3cret"})[1]
    }


def test_wrong_tokens_are_throttled_but_valid_ones_and_open_sessions_never_are(built_index: Path) -> None:
    server, port = start_http(built_index, "--auth-token", "right-token")
    right = {"Authorization": "Bearer right-token"}
    try:
        status, headers, _ = post_mcp(port, INITIALIZE, right)
        assert status == 200
        session = {**right, **PROTOCOL, "mcp-session-id": headers["mcp-session-id"]}
        for _ in range(12):  # no credential at all is not a guess
            assert post_mcp(port, INITIALIZE)[0] == 401
        for _ in range(LOGIN_ATTEMPTS):
            assert post_mcp(port, INITIALIZE, {"Authorization": "Bearer guess"})[0] == 401
        status, headers, messages = post_mcp(port, INITIALIZE, {"Authorization": "Bearer guess"})
        assert status == 429
        assert 1 <= int(headers["Retry-After"]) <= 60
        assert messages[0]["error"] == {"code": -32000, "message": "Too many failed authentications"}

        # the same address, with the right token: a new session and the open one both work
        status, _, messages = post_mcp(port, INITIALIZE, right)
        assert status == 200 and messages[0]["result"]["serverInfo"]["name"] == "test-server"
        status, _, messages = post_mcp(port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        assert status == 200 and messages[0]["result"]["tools"]
        assert post_mcp(port, INITIALIZE, {"Authorization": "Bearer guess"})[0] == 429
        assert request(port, "GET", "/healthz")[0] == 200
    finally:
        server.stop()


def test_a_non_ascii_token_matches_its_utf8_and_latin1_bytes(built_index: Path) -> None:
    token = "pässwörd"
    server, port = start_http(built_index, "--stateless", "--auth-token", token)
    try:
        for sent in (token.encode("utf-8"), token.encode("latin-1")):
            status, _, messages = post_mcp(port, INITIALIZE, {"Authorization": b"Bearer " + sent})
            assert status == 200, sent
            assert messages[0]["result"]["serverInfo"]["name"] == "test-server"
        double_encoded = token.encode("utf-8").decode("latin-1").encode("utf-8")
        for sent in (b"passwoerd", double_encoded):
            assert post_mcp(port, INITIALIZE, {"Authorization": b"Bearer " + sent})[0] == 401, sent
    finally:
        server.stop()


@pytest.mark.anyio
async def test_auth_token_with_the_sdk_client(auth_server: int) -> None:
    import httpx2

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http:
        from mcp.client.streamable_http import streamable_http_client

        async with Client(
            streamable_http_client(f"http://127.0.0.1:{auth_server}/mcp", http_client=http)
        ) as client:
            result = await client.call_tool("search_docs", {"query": "webhook"})
    assert not result.is_error


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_lets_the_in_flight_request_finish(
    built_index: Path, signum: signal.Signals
) -> None:
    server, port = start_http(built_index, "--stateless", "--log-level", "debug")
    outcome: dict[str, Any] = {}

    def call() -> None:
        search = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                  "params": {"name": "search_docs", "arguments": {"query": "pagination cursor"}}}  # fmt: skip
        outcome["reply"] = post_mcp(port, search, PROTOCOL)

    try:
        caller = threading.Thread(target=call)
        caller.start()
        server.wait_for_log(lambda r: r.get("message") == "request" and r["properties"].get("path") == "/mcp")
        server.proc.send_signal(signum)
        caller.join(timeout=60)
        assert not caller.is_alive()
        status, _, messages = outcome["reply"]
        assert status == 200
        assert messages[0]["id"] == 9 and messages[0]["result"]["isError"] is False
        assert server.wait() == 0
        assert any('"shutting down http server"' in line for line in server.stderr_lines)
    finally:
        server.stop()


def test_a_request_whose_body_is_still_arriving_at_a_stop_is_told_to_send_it_again(built_index: Path) -> None:
    """Its handler waited for the rest of the body until the 10 s for requests in flight were up,
    was then cancelled (an error logged per request) and the client got no answer at all."""
    server, port = start_http(built_index, "--stateless", "--log-level", "debug")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
            )
            server.wait_for_log(
                lambda r: r.get("message") == "request" and r["properties"].get("path") == "/mcp"
            )
            server.proc.send_signal(signal.SIGTERM)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        assert answer.endswith(b"\r\n\r\nThe server is stopping; send the request again.\n")
        assert server.wait() == 0
        assert not [line for line in server.stderr_lines if '"level": "ERROR"' in line]
    finally:
        server.stop()


def test_an_open_event_stream_ends_whole_when_the_server_stops(built_index: Path) -> None:
    """A GET /mcp event stream open at SIGTERM was cut without the chunked body's last chunk: the
    client read an incomplete body, and the server logged an error for every open stream."""
    server, port = start_http(built_index)
    try:
        status, headers, _ = post_mcp(port, INITIALIZE)
        assert status == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/mcp", headers={"Accept": "text/event-stream", **PROTOCOL,
                                             "Mcp-Session-Id": headers["mcp-session-id"]})  # fmt: skip
        stream = conn.getresponse()
        assert stream.status == 200 and stream.headers["Transfer-Encoding"] == "chunked"
        server.proc.send_signal(signal.SIGTERM)
        assert stream.read() == b""  # http.client.IncompleteRead when the last chunk is missing
        conn.close()
        assert server.wait() == 0
        assert not [line for line in server.stderr_lines if '"level": "ERROR"' in line]
    finally:
        server.stop()


@pytest.mark.integration
def test_a_host_that_is_not_a_name_stops_the_server_with_one_line(built_index: Path) -> None:
    # --host $'\xff': IDNA cannot encode it, and getaddrinfo's UnicodeError ended in a traceback
    result = run_server(
        ["--index-dir", str(built_index), "--transport", "http", "--port", "0", "--host", "\udcff"]
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "docs-mcp-server: error: cannot listen on \\udcff:0: '\\udcff' is not a host name or address"
    ]


@pytest.mark.integration
def test_a_port_in_use_stops_the_server_instead_of_moving(built_index: Path) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_server(["--index-dir", str(built_index), "--transport", "http", "--port", str(port)])
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("docs-mcp-server: error:")]
    assert errors == [
        f"docs-mcp-server: error: cannot listen on 127.0.0.1:{port}: port {port} on 127.0.0.1 is already "
        "in use (by another server or program): stop it, choose another port with --port, or use "
        "--port 0 to let the system pick a free one"
    ]
    assert "started mcp server" not in result.stderr
    assert result.stdout == ""


@pytest.mark.integration
def test_port_zero_picks_a_free_port_and_logs_it(built_index: Path) -> None:
    server, port = start_http(built_index, "--port", "0")
    try:
        assert port > 0
        assert request(port, "GET", "/healthz")[0] == 200
    finally:
        server.stop()
