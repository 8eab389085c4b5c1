"""The in-memory BM25 retriever scores exactly as LanceDB's full-text indexes do.

Every comparison is against a real LanceDB table built from the example corpus: single columns,
the boosted multi-column match of the default ranking, and phrase queries. Then the engine itself:
its answers are the same whichever retriever serves the match and phrase legs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.errors import SearchOptionsError
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.table import SEARCH_TEXT_COLUMNS
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search.lexical_index import FieldIndex, LexicalIndex
from docs_mcp_core.search.row_catalog import scan_in_row_order

QUERIES = [
    "retry configuration",
    "retries backoff python",
    "create a link",
    "error handling",
    "pagination cursor next page",
    "authentication bearer token",
    "rate limit 429 Too Many Requests",
    "typescript",
    "install the SDK with pip",
    "webhooks signature verify",
    "error error error",  # a repeated term counts each time
    "where can you find what they need",  # stop words of LanceDB 0.40 only: content_text keeps them
]
COLUMNS = [*SEARCH_TEXT_COLUMNS, "content_text"]


@pytest.fixture(scope="module")
def index_dir(built_index: Path) -> Path:
    return built_index


@pytest.fixture(scope="module")
def table(index_dir: Path) -> Any:
    return import_lancedb().connect(str(index_dir / ".lancedb")).open_table("chunks")


@pytest.fixture(scope="module")
def rows(table: Any) -> pa.Table:
    return scan_in_row_order(table, [*COLUMNS, "heading", "chunk_id"])


@pytest.fixture(scope="module")
def lexical(rows: pa.Table) -> LexicalIndex:
    return LexicalIndex.build({c: rows.column(c) for c in COLUMNS}, positions=["content_text"])


def lancedb_scores(table: Any, query: Any) -> dict[str, float]:
    found = table.search(query, query_type="fts").select(["chunk_id", "_score"]).limit(10_000).to_arrow()
    return dict(zip(found.column("chunk_id").to_pylist(), found.column("_score").to_pylist(), strict=True))


def mine(rows: pa.Table, positions: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    ids = rows.column("chunk_id").to_pylist()
    return {ids[int(p)]: float(s) for p, s in zip(positions, scores, strict=True)}


def assert_same(ours: dict[str, float], theirs: dict[str, float]) -> None:
    assert ours.keys() == theirs.keys()
    for chunk_id, score in theirs.items():
        assert ours[chunk_id] == pytest.approx(score, rel=2e-3), chunk_id


@pytest.mark.parametrize("column", COLUMNS)
@pytest.mark.parametrize("query", QUERIES)
def test_one_column_scores_equal_lancedb(
    table: Any, rows: pa.Table, lexical: LexicalIndex, column: str, query: str
) -> None:
    from lancedb.query import FullTextOperator, MultiMatchQuery

    positions, scores = lexical.search(query, {column: 1.0}, limit=10_000)
    theirs = MultiMatchQuery(query, [column], boosts=[1.0], operator=FullTextOperator.OR)
    assert_same(mine(rows, positions, scores), lancedb_scores(table, theirs))


@pytest.mark.parametrize("query", QUERIES)
def test_boosted_multi_column_match_equals_lancedb(
    table: Any, rows: pa.Table, lexical: LexicalIndex, query: str
) -> None:
    from lancedb.query import FullTextOperator, MultiMatchQuery

    boosts = {"search_heading": 3.0, "search_text": 1.0, "search_path": 2.0}
    positions, scores = lexical.search(query, boosts, limit=10_000)
    theirs = MultiMatchQuery(query, list(boosts), boosts=list(boosts.values()), operator=FullTextOperator.OR)
    assert_same(mine(rows, positions, scores), lancedb_scores(table, theirs))


@pytest.mark.parametrize(
    "query", [*QUERIES, "the retry configuration", "retries. Configuration", "by id", "zzz unknown"]
)
def test_phrase_rows_and_scores_equal_lancedb(
    table: Any, rows: pa.Table, lexical: LexicalIndex, query: str
) -> None:
    from lancedb.query import PhraseQuery

    positions, scores = lexical.phrase(query, "content_text", limit=10_000)
    theirs = lancedb_scores(table, PhraseQuery(query, "content_text", slop=0, document_granularity=None))
    assert_same(mine(rows, positions, scores), theirs)


def test_a_phrase_must_keep_its_word_order_and_gaps() -> None:
    texts = pa.array(["retry the configuration", "configuration retry", "retry configuration", None, ""])
    index = LexicalIndex.build({"t": texts}, positions=["t"])
    assert index.phrase("retry configuration", "t")[0].tolist() == [2]
    assert index.phrase("retry a configuration", "t")[0].tolist() == [0]  # "a" and "the": one gap
    assert index.phrase("configuration retry", "t")[0].tolist() == [1]
    assert index.phrase("the of", "t")[0].tolist() == []


def test_a_phrase_never_joins_the_end_of_one_row_to_the_start_of_the_next() -> None:
    index = LexicalIndex.build({"t": pa.array(["alpha beta gamma", "delta epsilon"])}, positions=["t"])
    assert index.phrase("gamma delta", "t")[0].tolist() == []
    assert index.phrase("beta gamma", "t")[0].tolist() == [0]


def test_a_field_without_positions_refuses_phrases() -> None:
    field = FieldIndex.build(pa.array(["alpha beta"]))
    with pytest.raises(ValueError, match="without positions"):
        field.phrase_rows([("alpha", 0), ("beta", 1)])


def test_mask_limit_and_ties() -> None:
    texts = pa.array(["retry", "retry", "retry", "retry twice retry", "nothing here", "retry"])
    index = LexicalIndex.build({"t": texts})
    positions, scores = index.search("retry", {"t": 1.0}, limit=10)
    assert sorted(positions.tolist()) == [0, 1, 2, 3, 5]
    assert np.all(np.diff(scores) <= 0)
    equal = [int(p) for p, s in zip(positions, scores, strict=True) if s == scores[-1]]
    assert equal == sorted(equal)  # equal scores in row order

    two, _ = index.search("retry", {"t": 1.0}, limit=2)
    assert len(two) == 2 and set(two.tolist()) <= set(positions.tolist())
    assert two.tolist() == positions[:2].tolist()  # the cut keeps the same rows as the full order

    mask = np.array([False, True, False, True, True, False])
    kept, _ = index.search("retry", {"t": 1.0}, mask=mask, limit=10)
    assert sorted(kept.tolist()) == [1, 3]


def test_queries_without_indexed_terms_find_nothing() -> None:
    index = LexicalIndex.build({"t": pa.array(["alpha beta", "gamma"])}, positions=["t"])
    for query in ["", "the of and", "zeta", "!!!"]:
        assert index.search(query, {"t": 1.0})[0].tolist() == []
        assert index.phrase(query, "t")[0].tolist() == []
    assert index.search("alpha", {"t": 0.0})[0].tolist() == []  # a zero boost leaves a column out


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="same number of rows"):
        LexicalIndex.build({"a": pa.array(["x"]), "b": pa.array(["x", "y"])})


@pytest.mark.parametrize(
    "filters", [{}, {"language": "python"}, {"language": "typescript", "scope": "sdk-specific"}]
)
def test_the_engine_answers_the_same_with_either_retriever(index_dir: Path, filters: dict[str, str]) -> None:
    memory = SearchEngine.open(index_dir, options=SearchOptions(match_retriever="memory"))
    lancedb = SearchEngine.open(index_dir, options=SearchOptions(match_retriever="lancedb"))
    assert memory._retrieval.lexical is not None and lancedb._retrieval.lexical is None
    # the default ranking drops LanceDB 0.40's stop words from a phrase, which the table's
    # content_text index keeps: "upgrade my SDK" is the phrase "upgrade your SDK" in both
    for query in [*QUERIES, "createLink", "dub.links.create", "the", "upgrade my SDK", "tell our server"]:
        a = memory.search(query, limit=10, filters=filters)
        b = lancedb.search(query, limit=10, filters=filters)
        assert [h.chunk_id for h in a.hits] == [h.chunk_id for h in b.hits], query
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], rel=2e-3)
        assert a.hint == b.hint


def test_an_unknown_retriever_is_refused(index_dir: Path) -> None:
    with pytest.raises(
        SearchOptionsError, match=r"unknown match retriever 'tantivy'\. Valid retrievers: memory, lancedb"
    ):
        SearchEngine.open(index_dir, options=SearchOptions(match_retriever="tantivy"))  # pyright: ignore[reportArgumentType]


# ── the original's LanceDB (0.26.2): scores recorded from it ──────────────────────────────────

RECORDED = Path(__file__).parent / "data" / "lancedb-0.26.2-scores.json"


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    import json

    return json.loads(RECORDED.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def original_lexical(rows: pa.Table) -> LexicalIndex:
    from docs_mcp_core.search.scoring import ORIGINAL_SCORING

    columns = {c: rows.column(c) for c in ("heading", "content_text")}
    return LexicalIndex.build(columns, positions=["content_text"], scoring=ORIGINAL_SCORING)


@pytest.mark.parametrize("kind", ["heading", "content_text", "match", "phrase"])
def test_the_original_scoring_reproduces_lancedb_0_26(
    rows: pa.Table, original_lexical: LexicalIndex, recorded: dict[str, Any], kind: str
) -> None:
    """Scores recorded with @lancedb/lancedb 0.26.2 (scripts/record_lancedb_0_26_scores.mjs; re-record
    them when examples/docs changes) on a table of the example corpus, indexed as the original does."""
    assert recorded["rows"] == rows.num_rows, "examples/docs changed: re-record the scores"
    for query, kinds in recorded["queries"].items():
        if kind == "phrase":
            positions, scores = original_lexical.phrase(query, "content_text", limit=10_000)
        else:
            boosts = {"heading": 3.0, "content_text": 1.0} if kind == "match" else {kind: 1.0}
            positions, scores = original_lexical.search(query, boosts, limit=10_000)
        assert_same(mine(rows, positions, scores), kinds[kind])


def test_the_two_scorings_differ_where_the_libraries_do(rows: pa.Table, lexical: LexicalIndex) -> None:
    from docs_mcp_core.search.scoring import ORIGINAL_SCORING

    columns = {c: rows.column(c) for c in ("heading", "content_text", "search_text")}
    legacy = LexicalIndex.build(columns, scoring=ORIGINAL_SCORING)
    current = LexicalIndex.build(columns)
    assert legacy.search("what", {"search_text": 1.0})[0].size > 0  # no stop word in 0.26
    assert current.search("what", {"search_text": 1.0})[0].size == 0
    # the table's content_text and heading drop the original's stop words, whichever LanceDB reads them
    for column in ("content_text", "heading"):
        assert (
            current.search("what", {column: 1.0})[0].tolist()
            == legacy.search("what", {column: 1.0})[0].tolist()
        )
    a, b = legacy.search("retries", {"heading": 1.0}), current.search("retries", {"heading": 1.0})
    assert sorted(a[0].tolist()) == sorted(b[0].tolist())
    assert not np.allclose(np.sort(a[1]), np.sort(b[1]))  # every row counts in N
    once, thrice = (
        legacy.search("error", {"heading": 1.0}),
        legacy.search("error error error", {"heading": 1.0}),
    )
    assert np.allclose(once[1], thrice[1])  # 0.26 counts a repeated query term once
    assert np.allclose(
        current.search("error error", {"heading": 1.0})[1], 2 * current.search("error", {"heading": 1.0})[1]
    )


def test_each_ranking_scores_like_its_lancedb(index_dir: Path) -> None:
    from docs_mcp_core.search.scoring import LANCEDB_SCORING, ORIGINAL_SCORING

    default = SearchEngine.open(index_dir, options=SearchOptions(ranking="default"))
    original = SearchEngine.open(index_dir, options=SearchOptions(ranking="original"))
    assert default._retrieval.lexical is not None and default._retrieval.lexical.scoring is LANCEDB_SCORING
    assert original._retrieval.lexical is not None and original._retrieval.lexical.scoring is ORIGINAL_SCORING
    assert set(original._retrieval.lexical.fields) == {"heading", "content_text"}
    # with slop the phrase leg is LanceDB's, and the engine still answers
    sloppy = SearchEngine.open(index_dir, options=SearchOptions(ranking="original", phrase_slop=2))
    assert sloppy.search("retry configuration", limit=3).hits


def test_postings_derived_before_the_original_stop_words_are_served_as_they_were_written() -> None:
    import dataclasses

    from docs_mcp_core.search.analyzer import LANCEDB_STOP_WORDS
    from docs_mcp_core.search.scoring import LANCEDB_SCORING

    texts = {
        "content_text": pa.array(["what is new", "retry what failed"]),
        "search_text": pa.array(["a", "b"]),
    }
    before = dataclasses.replace(LANCEDB_SCORING, text_stop_words=None)  # content_text as 0.40 analyses it
    part = LexicalIndex.build(texts, positions=["content_text"], scoring=before).to_part()
    del part.meta["text_stop_words"]  # what a build wrote before it recorded them
    served = LexicalIndex.from_part(part, LANCEDB_SCORING)
    assert served is not None  # an older index still opens from its derived files
    assert served.scoring.column_stop_words("content_text") == LANCEDB_STOP_WORDS
    assert served.search("what", {"content_text": 1.0})[0].tolist() == []

    now = LexicalIndex.from_part(
        LexicalIndex.build(texts, positions=["content_text"]).to_part(), LANCEDB_SCORING
    )
    assert now is not None and now.search("what", {"content_text": 1.0})[0].size == 2
    part.meta["text_stop_words"] = 5  # some other list
    assert LexicalIndex.from_part(part, LANCEDB_SCORING) is None
