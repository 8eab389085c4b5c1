"""``search_docs`` with ``max_tokens``, as the real MCP client receives it: the text content fits
the budget under both shipped tokenizers, and a tight page keeps fewer hits with snippets rather
than more hits without."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from docs_mcp_core.search.budget import MIN_SNIPPET
from docs_mcp_core.tokens import count_tokens
from docs_mcp_server import DocsMcpApp
from tests.support.protocol import text

pytestmark = pytest.mark.anyio

QUERIES = [
    "retry backoff",
    "webhook signature verification",
    "paginate list of payments with cursor",
    "TidewaterClient createPayment idempotency key",
    "refund a payment in Go",
    "error code reference rate_limited",
    "environments sandbox production base URL",
    "authentication API key header",
    "python async client timeout",
    "typescript install npm package",
    "customers.list filter by email",
    "handle validation errors",
]
BUDGETS = [200, 230, 250, 300, 400, 600]


async def _call(client: Client, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool("search_docs", arguments)
    assert not result.is_error and len(result.content) == 1
    body = text(result.content[0])
    return body, json.loads(body)


async def test_the_text_content_fits_whichever_shipped_tokenizer_counts_it(built_app: DocsMcpApp) -> None:
    over: list[tuple[str, int, int, int]] = []
    async with Client(built_app.server) as client:
        for query in QUERIES:
            for budget in BUDGETS:
                body, _ = await _call(client, {"query": query, "max_tokens": budget})
                counts = count_tokens(body), count_tokens(body, "o200k_base")
                if max(counts) > budget:
                    over.append((query, budget, *counts))
    assert over == []


async def test_a_tight_page_drops_hits_before_their_snippets(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        _, plain = await _call(client, {"query": "retry backoff", "limit": 10})
        body, page = await _call(client, {"query": "retry backoff", "limit": 10, "max_tokens": 400})
        kept = len(page["hits"])
        assert 0 < kept < 10
        for hit, full in zip(page["hits"], plain["hits"], strict=False):
            assert hit["chunk_id"] == full["chunk_id"]
            # shortened at a word boundary, to at most MIN_SNIPPET characters and never to nothing
            assert len(hit["snippet"]) >= min(MIN_SNIPPET // 2, len(full["snippet"])), hit
        assert page["cut"].endswith(f"{10 - kept} hits left out (next_cursor starts with them).")
        _, rest = await _call(client, {"query": "retry backoff", "limit": 10, "cursor": page["next_cursor"]})
    assert rest["hits"][0]["chunk_id"] == plain["hits"][kept]["chunk_id"]
    assert count_tokens(body) <= 400
