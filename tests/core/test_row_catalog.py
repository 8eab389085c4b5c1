"""The in-memory row catalog behind fusion: same answers with and without its display cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.errors import SearchError
from docs_mcp_core.index.derived_files import read_derived
from docs_mcp_core.search import SearchEngine, SearchOptions, row_catalog
from docs_mcp_core.search.options import Ranking

QUERIES = [
    ("retry configuration", {}),
    ("create a payment", {"language": "python"}),
    ("webhook signature", {}),
    ("pagination cursor", {"language": "go"}),
    ("idempotency key", {"scope": "global-guide"}),
]


def _answers(engine: SearchEngine) -> list[object]:
    out: list[object] = []
    for query, filters in QUERIES:
        first = engine.search(query, limit=5, filters=filters)
        second = (
            engine.search(query, limit=5, filters=filters, cursor=first.next_cursor)
            if first.next_cursor
            else None
        )
        out.append([h.to_dict() for h in first.hits])
        out.append([h.to_dict() for h in second.hits] if second else None)
    return out


@pytest.mark.parametrize("ranking", ["default", "original"])
def test_pages_are_the_same_whether_rows_come_from_memory_or_the_table(
    built_index: Path, ranking: Ranking, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = SearchEngine.open(built_index, options=SearchOptions(ranking=ranking))
    assert cached._catalog.display is not None  # the example corpus fits the budget
    monkeypatch.setenv("DOCS_MCP_DISPLAY_CACHE_MB", "0")
    uncached = SearchEngine.open(built_index, options=SearchOptions(ranking=ranking))
    assert uncached._catalog.display is None
    monkeypatch.setenv("DOCS_MCP_DISPLAY_CACHE_MB", "0.1")  # smaller than the corpus: given up
    over_budget = SearchEngine.open(built_index, options=SearchOptions(ranking=ranking))
    assert over_budget._catalog.display is None
    over_budget.close()
    try:
        answers = _answers(cached)
        assert any(answers)
        assert answers == _answers(uncached)
    finally:
        cached.close()
        uncached.close()


def test_hit_text_past_the_memory_budget_is_mapped_from_what_the_build_wrote(
    examples_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a corpus whose hit text is more than a server would hold of its own still assembles its hits
    # without reading the table: the build writes the text for the server to map, not to hold
    monkeypatch.setattr(row_catalog, "DISPLAY_CACHE_BYTES", 1024)
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=examples_docs, out_dir=out))
    files, why = read_derived(out / ".lancedb", "chunks")
    assert why == "ok" and files is not None and "display" in files.parts
    assert files.parts["display"].meta["scan_bytes"] > row_catalog.display_cache_bytes()
    mapped = SearchEngine.open(out)
    monkeypatch.setenv("DOCS_MCP_DISPLAY_CACHE_MB", "0")  # set: neither held nor mapped
    from_table = SearchEngine.open(out)
    try:
        assert mapped.opened_from == "derived files" and mapped._catalog.display is not None
        assert from_table._catalog.display is None
        answers = _answers(mapped)
        assert any(answers) and answers == _answers(from_table)
    finally:
        mapped.close()
        from_table.close()


def test_catalog_row_ids_are_sorted_and_cover_the_table(built_index: Path) -> None:
    engine = SearchEngine.open(built_index)
    try:
        catalog = engine._catalog
        assert len(catalog) == engine.metadata.stats.total_chunks
        assert np.all(np.diff(catalog.row_ids.astype(np.int64)) > 0)
        assert np.array_equal(catalog.positions(catalog.row_ids), np.arange(len(catalog)))
        # the tie-break order is a permutation of the rows
        assert sorted(catalog.sort_rank.tolist()) == list(range(len(catalog)))
    finally:
        engine.close()


def test_get_doc_finds_a_chunk_whose_path_holds_a_hash(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "c#-notes.md").write_text("# Notes\n\n## First\n\nalpha text\n\n## Second\n\nbeta text\n")
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=docs, out_dir=out))
    engine = SearchEngine.open(out)
    try:
        hit = engine.search("beta text", limit=1).hits[0]
        assert hit.chunk_id.startswith("c#-notes.md#")
        text = engine.get_doc(hit.chunk_id, context=1)
        assert f"--- Chunk: {hit.chunk_id} (Chunk 3 of 3) (Target) ---" in text
        assert "(Chunk 2 of 3) (Context: -1)" in text
        with pytest.raises(SearchError, match=r"c#-notes\.md#missing"):
            engine.get_doc("c#-notes.md#missing")
    finally:
        engine.close()


def test_warm_up_primes_the_full_text_indexes_without_changing_answers(built_index: Path) -> None:
    cold = SearchEngine.open(built_index)
    warmed = SearchEngine.open(built_index)
    try:
        warmed.warm()
        assert _answers(warmed) == _answers(cold)
    finally:
        cold.close()
        warmed.close()


def test_positions_find_a_chunk_and_every_chunk_of_its_file_in_order(built_index: Path) -> None:
    import json

    engine = SearchEngine.open(built_index)
    catalog = engine._catalog
    chunks = json.loads((built_index / "chunks.json").read_text(encoding="utf-8"))
    by_file: dict[str, list[tuple[int, str]]] = {}
    for c in chunks:
        by_file.setdefault(c["filepath"], []).append((c["chunk_index"], c["chunk_id"]))
    try:
        for c in chunks[:: max(1, len(chunks) // 25)]:
            position = catalog.position(c["chunk_id"])
            assert position is not None
            assert catalog.chunk_ids[position] == c["chunk_id"]
            expected = [cid for _, cid in sorted(by_file[c["filepath"]])]
            siblings = catalog.file_positions(position).tolist()
            assert [catalog.chunk_ids[p] for p in siblings] == expected
            of_file = catalog.positions_of_file(c["filepath"])
            assert of_file is not None and of_file.tolist() == siblings
        assert catalog.position("no/such/file.md#nothing") is None
        assert catalog.position("") is None
        assert catalog.positions_of_file("no/such/file.md") is None
    finally:
        engine.close()
