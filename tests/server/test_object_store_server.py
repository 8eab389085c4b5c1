"""Stateless HTTP replicas serving one index from an S3-compatible object store.

``docs-mcp build --out s3://...`` publishes the index once (endpoint and credentials from the AWS
environment variables); two ``docs-mcp-server --transport http --stateless`` processes read it, one
configured through the environment and one through ``--storage-option`` flags, and answer
alternating pages of one paginated search with a shared cursor secret, as replicas behind a load
balancer would. Against a real S3 server (moto) on 127.0.0.1; skipped when moto is not installed.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.s3_server import S3Endpoint, s3_server
from tests.support.programs import BUILD_COMMAND, server_env
from tests.support.server_process import ServerProcess, run_server

pytestmark = pytest.mark.integration  # starts processes or listens on ports

BUCKET = "docs-mcp-server-tests"
URI = f"s3://{BUCKET}/replicas/examples"
SECRET = "shared-cursor-secret"
QUERY = "payment"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
AWS_VARIABLES = (
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
    "AWS_ALLOW_HTTP",
)


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with s3_server() as endpoint:
        endpoint.create_bucket(BUCKET)
        yield endpoint


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in server_env().items() if not k.startswith("AWS_")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def published(s3: S3Endpoint, examples_docs: Path) -> str:
    result = subprocess.run(
        [BUILD_COMMAND, "build", "--docs-dir", str(examples_docs), "--out", URI],
        capture_output=True,
        text=True,
        timeout=300,
        env=_clean_env(**s3.environment()),
    )
    assert result.returncode == 0, result.stderr
    assert URI in result.stdout
    return URI


def _start(args: list[str], env: dict[str, str]) -> tuple[ServerProcess, int]:
    server = ServerProcess(args, env=env)
    try:
        started = server.wait_for_log(
            lambda record: record.get("message") == "started mcp server", timeout=60
        )
    except BaseException:
        server.stop()
        raise
    return server, int(started["properties"]["port"])


@pytest.fixture(scope="module")
def replicas(s3: S3Endpoint, published: str) -> Iterator[list[int]]:
    common = [
        "--index-dir",
        published,
        "--transport",
        "http",
        "--port",
        "0",
        "--stateless",
        "--cursor-secret",
        SECRET,
    ]
    flags = [f"--storage-option={key}={value}" for key, value in s3.storage_options().items()]
    started: list[ServerProcess] = []
    ports: list[int] = []
    try:
        for args, env in (
            (common, _clean_env(**s3.environment())),  # configured by the AWS environment variables
            ([*common, *flags], _clean_env()),  # configured by flags alone
        ):
            server, port = _start(args, env)
            started.append(server)
            ports.append(port)
        yield ports
    finally:
        for server in started:
            if server.proc.poll() is None:
                server.proc.send_signal(signal.SIGTERM)
                server.wait(timeout=30)
            server.stop()


def _search(port: int, arguments: dict[str, Any], request_id: int) -> dict[str, Any]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": arguments},
        }
    ).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/mcp", body=body, headers=HEADERS)
        response = conn.getresponse()
        raw = response.read()
        assert response.status == 200, raw
        content_type = response.headers.get("content-type", "")
    finally:
        conn.close()
    if content_type.startswith("application/json"):
        message = json.loads(raw)
    else:
        message = next(json.loads(line[5:]) for line in raw.decode().splitlines() if line.startswith("data:"))
    result = message["result"]
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


def _pages(ports: list[int], limit: int = 2, max_pages: int = 6) -> list[list[str]]:
    """One paginated search, page i answered by ``ports[i % len(ports)]``."""
    pages: list[list[str]] = []
    cursor: str | None = None
    for i in range(max_pages):
        arguments: dict[str, Any] = {"query": QUERY, "limit": limit}
        if cursor:
            arguments["cursor"] = cursor
        page = _search(ports[i % len(ports)], arguments, i + 1)
        pages.append([hit["chunk_id"] for hit in page["hits"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return pages


def test_replicas_answer_alternating_pages_of_one_search(replicas: list[int]) -> None:
    alternating = _pages(replicas)
    assert len(alternating) >= 3, alternating  # the cursor really travelled between the replicas
    ids = [chunk_id for page in alternating for chunk_id in page]
    assert len(ids) == len(set(ids))  # no page repeats a hit
    # each replica alone pages through the very same results
    assert _pages([replicas[0]]) == alternating
    assert _pages([replicas[1]]) == alternating


def test_server_refuses_a_missing_remote_index(s3: S3Endpoint) -> None:
    missing = f"s3://{BUCKET}/not/published"
    result = run_server(["--index-dir", missing], env=_clean_env(**s3.environment()), timeout=60)
    assert result.returncode == 1
    assert f"metadata.json not found at '{missing}/metadata.json'" in result.stderr


def test_server_rejects_an_unsupported_scheme() -> None:
    result = run_server(["--index-dir", "ftp://host/index"], env=_clean_env(), timeout=60)
    assert result.returncode == 2
    assert "unsupported index location 'ftp://host/index'" in result.stderr
