"""Chunk contents held in memory: the same documents as the table gives, without reading it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.content_store import ContentStore


def _chunks(index: Path) -> list[dict[str, Any]]:
    return json.loads((index / "chunks.json").read_text(encoding="utf-8"))


def _documents(engine: SearchEngine, chunks: list[dict[str, Any]]) -> list[str]:
    files = sorted({c["filepath"] for c in chunks})
    out = [engine.get_doc(c["chunk_id"], context) for c in chunks for context in (0, 2)]
    out += [engine.file_content(f) for f in files]
    out += [engine.get_doc(chunks[0]["chunk_id"], -1)]
    return out


def test_documents_are_the_same_from_memory_and_from_the_table(
    built_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = _chunks(built_index)
    held = SearchEngine.open(built_index)
    assert held.documents.in_memory  # the example corpus fits the budget
    monkeypatch.setenv("DOCS_MCP_CONTENT_CACHE_MB", "0")
    read = SearchEngine.open(built_index)
    assert not read.documents.in_memory
    monkeypatch.setenv("DOCS_MCP_CONTENT_CACHE_MB", "0.01")  # smaller than the corpus: given up
    over_budget = SearchEngine.open(built_index)
    assert not over_budget.documents.in_memory
    over_budget.close()
    try:
        from_memory = _documents(held, chunks)
        assert from_memory == _documents(read, chunks)
        by_id = {c["chunk_id"]: c["content"] for c in chunks}
        assert all(held.get_doc(cid).endswith("---\n" + text) for cid, text in by_id.items())
    finally:
        held.close()
        read.close()


@pytest.mark.anyio
async def test_the_async_answers_match_the_synchronous_ones(built_index: Path) -> None:
    engine = SearchEngine.open(built_index)
    chunk = _chunks(built_index)[3]
    try:
        assert await engine.get_doc_async(chunk["chunk_id"], 1) == engine.get_doc(chunk["chunk_id"], 1)
        assert await engine.file_content_async(chunk["filepath"]) == engine.file_content(chunk["filepath"])
        positions = engine.documents.file_positions(chunk["filepath"])
        assert positions is not None
        texts = await engine.documents.contents(positions)
        assert "\n\n".join(texts) == engine.file_content(chunk["filepath"])
    finally:
        engine.close()


def test_documents_held_in_memory_outlive_the_index_files(tmp_path: Path, examples_docs: Path) -> None:
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=examples_docs, out_dir=out))
    chunks = _chunks(out)
    engine = SearchEngine.open(out)
    try:
        expected = [engine.get_doc(c["chunk_id"], 1) for c in chunks[:20]]
        shutil.rmtree(out / ".lancedb")
        assert [engine.get_doc(c["chunk_id"], 1) for c in chunks[:20]] == expected
    finally:
        engine.close()


def test_text_is_cut_at_the_right_bytes_whatever_the_encoding() -> None:
    values = ["", "plain", "naïve café — ünïcödé", "😀 emoji\nline", None, "end"]
    for kind in (pa.string(), pa.large_string()):
        array = pa.array(values, type=kind)
        for store in (ContentStore(array), ContentStore(array.slice(1))):
            start = len(values) - len(store)
            assert store.texts(range(len(store))) == [v or "" for v in values[start:]]
    store = ContentStore(pa.array(values))
    assert store.nbytes == sum(len((v or "").encode()) for v in values) + 4 * (len(values) + 1)


def test_an_answer_without_a_budget_is_the_text_a_budget_that_fits_gives(built_index: Path) -> None:
    # without max_tokens the chunks are not cut into blocks (nothing would be cut): same text
    from docs_mcp_core.search.budget import MAX_MAX_TOKENS

    engine = SearchEngine.open(built_index)
    try:
        for c in _chunks(built_index)[::3]:
            for scope, context in (("chunk", 0), ("chunk", 2), ("section", 0), ("parent", 0)):
                plain = engine.get_doc(c["chunk_id"], context, scope=scope)
                fitted = engine.get_doc(c["chunk_id"], context, scope=scope, max_tokens=MAX_MAX_TOKENS)
                if "--- Cut at max_tokens" not in fitted and "more than max_tokens" not in fitted:
                    assert plain == fitted
    finally:
        engine.close()


@pytest.mark.parametrize("value", ["inf", "1e400", "-inf"])
@pytest.mark.parametrize(
    "variable", ["DOCS_MCP_CONTENT_CACHE_MB", "DOCS_MCP_DISPLAY_CACHE_MB", "DOCS_MCP_VECTOR_CACHE_MB"]
)
def test_an_infinite_memory_budget_still_opens_the_index(
    built_index: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """A budget no integer holds is not a reason to refuse the index: "inf" is no limit, "-inf"
    none at all (as any number below 0), and the answers are the same."""
    chunk = _chunks(built_index)[3]["chunk_id"]
    plain = SearchEngine.open(built_index)
    monkeypatch.setenv(variable, value)
    engine = SearchEngine.open(built_index)
    try:
        assert engine.get_doc(chunk) == plain.get_doc(chunk)
        assert engine.search("customers", limit=5) == plain.search("customers", limit=5)
    finally:
        engine.close()
        plain.close()
