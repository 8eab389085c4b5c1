"""In-memory exact nearest neighbours agree with LanceDB's exact search, and the engine answers the
same whether its vectors are in memory or in LanceDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.options import Ranking
from docs_mcp_core.search.row_catalog import scan_in_row_order
from docs_mcp_core.search.vector_matrix import VECTOR_CACHE_BYTES, VectorMatrix, vector_cache_bytes

ROWS, DIMS = 600, 24


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(12, DIMS))
    vectors = (centres[rng.integers(0, 12, ROWS)] + rng.normal(scale=0.4, size=(ROWS, DIMS))).astype(
        np.float32
    )
    vectors[5] = vectors[4]  # two rows at the same place: equal distances
    data = pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "grp": pa.array(["rare" if i % 20 == 0 else "common" for i in range(ROWS)]),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIMS),
        }
    )
    return import_lancedb().connect(str(tmp_path_factory.mktemp("vectors"))).create_table("chunks", data)


@pytest.fixture(scope="module")
def ordered(table: Any) -> pa.Table:
    return scan_in_row_order(table, ["id", "grp", "vector"])


@pytest.fixture(scope="module")
def matrix(table: Any, ordered: pa.Table) -> VectorMatrix:
    found = VectorMatrix.load(table, ordered.column("_rowid").to_numpy().astype(np.uint64), budget=1 << 30)
    assert found is not None
    return found


def exact(table: Any, query: np.ndarray, limit: int, where: str | None = None) -> pa.Table:
    builder = table.search(query, vector_column_name="vector").bypass_vector_index()
    if where:
        builder = builder.where(where, prefilter=True)
    return builder.select(["id", "_distance"]).limit(limit).to_arrow()


def assert_same_ranking(ours: list[int], theirs: list[int], distance: np.ndarray) -> None:
    """The same ids in the same order, except that ids whose exact distances (``distance[id]``)
    differ by less than float32 rounding may come in either order: the two sides compute distances
    with different kernels, which round differently on different CPUs (this data has neighbours
    2.7e-6 apart, relatively)."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if a != b:
            assert abs(distance[a] - distance[b]) <= 1e-4 * max(1.0, distance[a]), (ours, theirs)


def exact_distances(vectors: np.ndarray, ids: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Squared L2 distance of every row to ``query`` in float64, indexed by the ``id`` column."""
    found = np.empty(len(ids))
    found[ids] = ((vectors.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
    return found


def test_nearest_equals_lancedb_exact_search(table: Any, ordered: pa.Table, matrix: VectorMatrix) -> None:
    ids = ordered.column("id").to_numpy()
    vectors = ordered.column("vector").combine_chunks().flatten().to_numpy().reshape(ROWS, DIMS)
    rng = np.random.default_rng(3)
    for query in [*vectors[:10], *rng.normal(size=(10, DIMS)).astype(np.float32)]:
        positions, distances = matrix.nearest(query.tolist(), limit=25)
        theirs = exact(table, query, 25)
        distance = exact_distances(vectors, ids, query)
        assert_same_ranking(ids[positions].tolist(), theirs.column("id").to_pylist(), distance)
        assert distances == pytest.approx(theirs.column("_distance").to_numpy(), rel=1e-4, abs=1e-4)


def test_the_mask_is_the_prefilter(table: Any, ordered: pa.Table, matrix: VectorMatrix) -> None:
    ids = ordered.column("id").to_numpy()
    vectors = ordered.column("vector").combine_chunks().flatten().to_numpy().reshape(ROWS, DIMS)
    mask = np.asarray(ordered.column("grp").to_pylist()) == "rare"
    for query in np.random.default_rng(5).normal(size=(10, DIMS)).astype(np.float32):
        positions, _ = matrix.nearest(query.tolist(), mask=mask, limit=10)
        assert mask[positions].all()
        theirs = exact(table, query, 10, "grp = 'rare'").column("id").to_pylist()
        assert_same_ranking(ids[positions].tolist(), theirs, exact_distances(vectors, ids, query))


def test_equal_distances_come_in_row_order_and_the_cut_keeps_the_order() -> None:
    vectors = np.array([[1, 0], [0, 1], [1, 0], [0, 0], [1, 0]], dtype=np.float32)
    matrix = VectorMatrix(vectors)
    positions, distances = matrix.nearest([1.0, 0.0], limit=10)
    assert positions.tolist() == [0, 2, 4, 3, 1]
    assert distances.tolist() == pytest.approx([0, 0, 0, 1, 2])
    assert matrix.nearest([1.0, 0.0], limit=2)[0].tolist() == [0, 2]
    assert matrix.nearest([1.0, 0.0], mask=np.array([0, 1, 0, 1, 1], bool), limit=10)[0].tolist() == [4, 3, 1]


def test_a_query_of_other_dimensions_is_refused() -> None:
    with pytest.raises(ValueError, match="query has 3 dimensions, the index 2"):
        VectorMatrix(np.zeros((2, 2), np.float32)).nearest([1.0, 2.0, 3.0])


def test_load_respects_the_budget_and_the_rows(table: Any, ordered: pa.Table) -> None:
    row_ids = ordered.column("_rowid").to_numpy().astype(np.uint64)
    assert VectorMatrix.load(table, row_ids, budget=ROWS * DIMS * 4) is not None
    assert VectorMatrix.load(table, row_ids, budget=ROWS * DIMS * 4 - 1) is None
    assert VectorMatrix.load(table, row_ids[:-1], budget=1 << 30) is None  # not the table's rows


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCS_MCP_VECTOR_CACHE_MB", raising=False)
    assert vector_cache_bytes() == VECTOR_CACHE_BYTES
    monkeypatch.setenv("DOCS_MCP_VECTOR_CACHE_MB", "0")
    assert vector_cache_bytes() == 0
    monkeypatch.setenv("DOCS_MCP_VECTOR_CACHE_MB", "1.5")
    assert vector_cache_bytes() == 1536 * 1024
    monkeypatch.setenv("DOCS_MCP_VECTOR_CACHE_MB", "lots")
    assert vector_cache_bytes() == VECTOR_CACHE_BYTES


@pytest.fixture(scope="module")
def hash_index(examples_hash_index: Path) -> Path:
    return examples_hash_index


@pytest.mark.parametrize("ranking", ["default", "original"])
def test_the_engine_answers_the_same_with_vectors_in_memory_or_in_lancedb(
    hash_index: Path, ranking: Ranking, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docs_mcp_core.search import SearchOptions

    memory = SearchEngine.open(hash_index, options=SearchOptions(ranking=ranking))
    monkeypatch.setenv("DOCS_MCP_VECTOR_CACHE_MB", "0")
    lancedb = SearchEngine.open(hash_index, options=SearchOptions(ranking=ranking))
    memory_leg, lancedb_leg = memory._retrieval.vector, lancedb._retrieval.vector
    assert memory_leg is not None and memory_leg.vectors is not None
    assert lancedb_leg is not None and lancedb_leg.vectors is None
    assert memory.vector_search_enabled and lancedb.vector_search_enabled
    for filters in [{}, {"language": "python"}]:
        for query in ["retry configuration", "create a short link", "pagination", "zzz nothing lexical"]:
            a = memory.search(query, limit=10, filters=filters)
            b = lancedb.search(query, limit=10, filters=filters)
            assert [h.chunk_id for h in a.hits] == [h.chunk_id for h in b.hits], (query, filters)
            assert memory.vector_neighbours(query, 5, filters) == lancedb.vector_neighbours(query, 5, filters)
