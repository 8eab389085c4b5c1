"""A server keeps serving while its index folder is rebuilt, and picks the new index up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import build_with_cli

from .conftest import SERVER_COMMAND, server_env, text

NEW_GUIDE = "# Zephyr quokkas\n\n## Feeding zephyr quokkas\n\nZephyrquokka rations are served at dawn.\n"


@pytest.mark.anyio
async def test_a_rebuilt_index_is_served_without_a_restart(tmp_path: Path, examples_docs: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(examples_docs, docs)
    out = tmp_path / "idx"
    build_with_cli(docs, out)
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(out), "--log-level", "warning"],
        env=server_env(DOCS_MCP_RELOAD_CHECK_SECONDS="0"),
    )
    async with Client(params) as client:
        before = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not before.is_error
        assert before.structured_content["hits"] == []
        retries = await client.call_tool("search_docs", {"query": "retry configuration"})
        assert retries.structured_content["hits"]

        (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
        build_with_cli(docs, out)

        after = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not after.is_error, text(after.content[0])
        hit = after.structured_content["hits"][0]
        assert hit["chunk_id"] == "guides/quokkas.md#zephyr-quokkas/feeding-zephyr-quokkas"
        doc = await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"]})
        assert "served at dawn" in text(doc.content[0])

        # a metadata.json that cannot be read leaves the last good index serving
        (out / "metadata.json").write_text("{not json", encoding="utf-8")
        still = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not still.is_error
        assert still.structured_content["hits"][0]["chunk_id"] == hit["chunk_id"]


def test_metadata_json_is_written_last_by_abuild_with_cli(tmp_path: Path, examples_docs: Path) -> None:
    """The reload signal is metadata.json: it must not be older than the table it describes."""
    out = tmp_path / "idx"
    build_with_cli(examples_docs, out)
    metadata_time = (out / "metadata.json").stat().st_mtime_ns
    newest_table_file = max(p.stat().st_mtime_ns for p in (out / ".lancedb").rglob("*") if p.is_file())
    assert metadata_time >= newest_table_file
    assert json.loads((out / "metadata.json").read_text(encoding="utf-8"))["stats"]["total_chunks"] > 0


def test_a_change_seen_by_the_non_blocking_check_is_reloaded_by_the_next_get(
    tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async path asks ``opened()`` first and falls back to ``get()``: the change that
    ``opened()`` noticed must not be forgotten until the next check interval."""
    from docs_mcp_server.engine import LazyEngine

    monkeypatch.setenv("DOCS_MCP_RELOAD_CHECK_SECONDS", "3600")
    docs = tmp_path / "docs"
    shutil.copytree(examples_docs, docs)
    out = build_with_cli(docs, tmp_path / "idx")
    lazy = LazyEngine(out)
    first = lazy.get()
    (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
    build_with_cli(docs, out)
    lazy._next_check = 0.0  # the check interval has run out
    assert lazy.opened() is None
    fresh = lazy.get()
    assert fresh is not first
    assert fresh.search("zephyrquokka rations", limit=1).hits
    assert lazy.opened() is fresh
