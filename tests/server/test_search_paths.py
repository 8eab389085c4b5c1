"""The two ways a ``search_docs`` call reaches the engine (the MCP SDK's handler and the early stdio
answer given before the SDK is imported) hand it the same arguments, so they answer alike."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from docs_mcp_server import DocsMcpApp
from docs_mcp_server.arguments import SearchRequest
from docs_mcp_server.early_tools import EarlyTools

pytestmark = pytest.mark.anyio


def test_a_search_request_hands_the_engine_every_argument_it_carries() -> None:
    request = SearchRequest(
        query="retry", limit=3, cursor="abc", filters={"language": "python"}, max_tokens=400, facets=True
    )
    assert request.search_kwargs() == {
        "limit": 3,
        "filters": {"language": "python"},
        "cursor": "abc",
        "max_tokens": 400,
        "facets": True,
    }


def _early_search(early: EarlyTools, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": "search_docs", "arguments": arguments}
    answer = early.answer({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    assert answer is not None, f"the early path left {arguments} to the SDK"
    return answer["result"]


async def test_the_sdk_handler_and_the_early_answer_give_the_same_result_for_every_argument(
    built_app: DocsMcpApp,
) -> None:
    """Each argument changes the answer (a filter, a page size, a token budget, facets, a cursor),
    so an argument one path dropped would show as a different result."""
    early = EarlyTools(built_app.options, built_app.metadata, built_app.engine)
    base = {"query": "retry configuration", "limit": 4}
    cases: list[dict[str, Any]] = [
        base,
        {**base, "language": "python"},
        {**base, "max_tokens": 200},
        {**base, "facets": True},
    ]
    async with Client(built_app.server) as client:
        first = await client.call_tool("search_docs", base)
        cursor = first.structured_content["next_cursor"]
        assert cursor
        cases.append({**base, "cursor": cursor})
        for arguments in cases:
            sdk = await client.call_tool("search_docs", arguments)
            assert not sdk.is_error
            answer = _early_search(early, arguments)
            assert answer["isError"] is False
            assert answer["structuredContent"] == sdk.structured_content, arguments
            assert answer["content"][0]["text"] == sdk.content[0].text, arguments  # type: ignore[union-attr]
    texts = {_early_search(early, arguments)["content"][0]["text"] for arguments in cases}
    assert len(texts) == len(cases)  # every argument made a difference
