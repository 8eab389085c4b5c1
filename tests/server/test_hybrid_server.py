"""Hybrid search through the MCP server, against the fake OpenAI API (``tests/fakes``).

The server embeds each query with the index's provider and model (key from
``--query-embedding-api-key`` or ``OPENAI_API_KEY``, base URL from ``--query-embedding-base-url``),
so a query that shares no word with a chunk but has its vector (see
:func:`tests.support.hybrid_corpus.vector_twin`) finds it. An API outage gives lexical answers, one
warning in the log and a cool-down without API calls, then recovery. Without a key the server
starts lexical-only and says so once.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from docs_mcp_server import DocsMcpApp, ServerOptions, create_app
from docs_mcp_server.boot import load_index_metadata
from docs_mcp_server.engine import LazyEngine
from tests.fakes.openai_server import FakeOpenAI, Fault
from tests.support.hybrid_corpus import LEXICAL_QUERY, TWIN_CHUNK, twin_query
from tests.support.programs import server_env
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.integration  # starts processes or listens on ports

DEGRADED = "vector search degraded to lexical-only"


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def embedding_count(api: FakeOpenAI) -> int:
    return len(api.requests_to("embeddings"))


async def search(client: Client, query: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("search_docs", {"query": query, **arguments})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def ids(data: dict[str, Any]) -> list[str]:
    return [hit["chunk_id"] for hit in data["hits"]]


def hybrid_app(index: Path, api: FakeOpenAI, **search_options: Any) -> DocsMcpApp:
    """The app as ``create_app`` makes it, with engine options the command line does not expose."""
    options = ServerOptions(
        index_dir=index, query_embedding_api_key=api.api_key, query_embedding_base_url=api.base_url
    )
    engine = LazyEngine(options.index_dir, search_options=replace(options.search_options(), **search_options))
    return DocsMcpApp(options, load_index_metadata(options.index_dir), engine=engine)


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "docs_mcp_server" and r.levelno == logging.WARNING
    ]


# ── in memory, the real MCP client ─────────────────────────────────────────────────────────────


@pytest.mark.anyio
async def test_vector_only_hit_through_mcp(hybrid_index: Path, api: FakeOpenAI, no_key: None) -> None:
    query = twin_query(hybrid_index)
    app = create_app(hybrid_index, query_embedding_api_key=api.api_key, query_embedding_base_url=api.base_url)
    async with Client(app.server) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "search_docs")
        assert tool.description is not None and "conceptual queries" in tool.description
        data = await search(client, query, limit=3)
    assert ids(data)[0] == TWIN_CHUNK
    assert api.embedding_inputs == [[query]]
    request = api.requests_to("embeddings")[0]
    assert (request.json["model"], request.json["dimensions"]) == ("text-embedding-3-small", 256)

    # the same query without the vector leg finds nothing at all
    async with Client(create_app(hybrid_index).server) as client:
        lexical = await search(client, query, limit=3)
    assert lexical["hits"] == [] and lexical["hint"] is not None
    assert embedding_count(api) == 1


@pytest.mark.anyio
async def test_outage_through_mcp_answers_lexically_warns_once_rests_and_recovers(
    hybrid_index: Path, api: FakeOpenAI, no_key: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="docs_mcp_server")
    query = twin_query(hybrid_index)
    async with Client(create_app(hybrid_index).server) as client:
        lexical = ids(await search(client, LEXICAL_QUERY))
    assert lexical
    caplog.clear()

    cooldown = 1.0
    app = hybrid_app(hybrid_index, api, vector_cooldown_seconds=cooldown)
    api.script("embeddings", Fault(status=503), Fault(status=503))
    async with Client(app.server) as client:
        # the API is down: the search answers from the lexical legs; one warning
        assert ids(await search(client, LEXICAL_QUERY)) == lexical
        assert embedding_count(api) == 2  # one try and one retry
        assert len(warnings_in(caplog)) == 1 and DEGRADED in warnings_in(caplog)[0]

        # cool-down: no request to the API, the same lexical answers, no second warning
        assert ids(await search(client, LEXICAL_QUERY)) == lexical
        assert (await search(client, query))["hits"] == []
        assert embedding_count(api) == 2

        # after the cool-down the vector leg is tried again and recovers (bounded polling)
        deadline = time.monotonic() + 15
        data: dict[str, Any] = {}
        while embedding_count(api) == 2:
            assert time.monotonic() < deadline, "the vector leg was never tried again"
            data = await search(client, query)
        assert ids(data)[0] == TWIN_CHUNK
        assert api.requests_to("embeddings")[2].started - api.requests_to("embeddings")[1].started >= cooldown
        assert ids(await search(client, query))[0] == TWIN_CHUNK
    assert embedding_count(api) == 4
    assert len(warnings_in(caplog)) == 1


# ── a real server process over stdio ───────────────────────────────────────────────────────────


def _call(server: ServerProcess, request_id: int, query: str) -> dict[str, Any]:
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                 "params": {"name": "search_docs", "arguments": {"query": query, "limit": 3}}})  # fmt: skip
    reply = server.receive(timeout=60)
    assert reply["id"] == request_id and reply["result"]["isError"] is False, reply
    return json.loads(reply["result"]["content"][0]["text"])


def _serve(index: Path, *args: str, **env: str) -> ServerProcess:
    environment = server_env(**env)
    environment.pop("OPENAI_API_KEY", None)
    environment.update(env)
    server = ServerProcess(["--index-dir", str(index), *args], env=environment)
    server.send(INITIALIZE)
    assert server.receive()["id"] == 1
    server.send(INITIALIZED)
    return server


def test_stdio_server_embeds_queries_with_the_flags(hybrid_index: Path, api: FakeOpenAI) -> None:
    query = twin_query(hybrid_index)
    server = _serve(
        hybrid_index, "--query-embedding-api-key", api.api_key, "--query-embedding-base-url", api.base_url
    )
    try:
        assert _call(server, 2, query)["hits"][0]["chunk_id"] == TWIN_CHUNK
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert api.embedding_inputs == [[query]]
    assert api.requests_to("embeddings")[0].headers["authorization"] == f"Bearer {api.api_key}"
    assert not any(json.loads(line)["level"] == "WARN" for line in server.stderr_lines)


def test_stdio_server_takes_the_key_from_openai_api_key(hybrid_index: Path, api: FakeOpenAI) -> None:
    query = twin_query(hybrid_index)
    server = _serve(hybrid_index, "--query-embedding-base-url", api.base_url, OPENAI_API_KEY=api.api_key)
    try:
        assert _call(server, 2, query)["hits"][0]["chunk_id"] == TWIN_CHUNK
    finally:
        server.stop()
    assert embedding_count(api) == 1


def test_stdio_server_without_a_key_is_lexical_only_and_says_so_once(hybrid_index: Path) -> None:
    server = _serve(hybrid_index)
    try:
        for request_id in (2, 3, 4):
            assert _call(server, request_id, LEXICAL_QUERY)["hits"]
        assert _call(server, 5, twin_query(hybrid_index))["hits"] == []
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    records = [json.loads(line) for line in server.stderr_lines]
    warnings = [r["message"] for r in records if r["level"] == "WARN"]
    assert len(warnings) == 1, warnings
    assert "query embedding disabled" in warnings[0] and "--query-embedding-api-key" in warnings[0]
