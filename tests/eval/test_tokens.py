"""The eval counts what an agent read with the tokenizer the server's budgets use."""

from __future__ import annotations

from docs_mcp_core.tokens import count_tokens as core_count
from docs_mcp_eval import tokens

SAMPLES = [
    "",
    "Retry with exponential backoff and jitter.",
    '{"hits":[{"chunk_id":"guides/retries.md#retries/backoff","snippet":"...wait 500 ms..."}]}',
    "--- Chunk: a.md#x (Chunk 1 of 2) (Target) ---\n| code | meaning |\n| --- | --- |\n| 429 | slow down |",
    "Ünïcödé, 日本語, emoji 🚀 and <|endoftext|> as plain text",
]


def test_the_shipped_table_is_used_so_counting_needs_no_network() -> None:
    assert tokens._shipped_table() is not None


def test_counts_agree_with_the_servers_o200k_base() -> None:
    for text in SAMPLES:
        assert tokens.count_tokens(text) == core_count(text, "o200k_base"), text
    assert tokens.count_tokens("hello world") == 2
