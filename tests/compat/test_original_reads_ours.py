"""An index written by ``docs-mcp build`` is served by the original's LanceDB (0.26.2 for Node).

Each index is built by the real command line (``examples/docs`` lexical and with ``hash``
embeddings; ``sdk-docs`` with ``hash`` embeddings, which also gets an IVF index on ``vector``), then
``node/original_queries.mjs`` runs on it every query the original server makes, built as it builds
them: the boosted multi-match and the phrase query (with and without a taxonomy prefilter), the
``chunk_id`` lookup and the ``BETWEEN`` range of ``get_doc``, and the vector search.

The reference is the LanceDB docs-mcp itself runs, on the same table: both must find the same rows
with the same scores and distances, and the rows must hold what ``chunks.json`` says. The queries
leave out what the two versions parse differently (``docs/ranking.md``): a term repeated in a query
(0.26 counts it once) and stop words inside a phrase (the versions count the gap they leave
differently). The stop words of LanceDB 0.40's list stay in a match query: the table's
``content_text`` and ``heading`` indexes drop the original's list, which both versions then apply.

And the reference of all: LanceDB 0.26.2 scores on our table of the example corpus what it scores on
a table of the same chunks indexed as the original indexes them (recorded in
``tests/core/data/lancedb-0.26.2-scores.json``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docs_mcp_core.embedding import hash_to_unit_vector
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.table import quote_string
from docs_mcp_core.search.analyzer import LANCEDB_0_26_STOP_WORDS, LANCEDB_STOP_WORDS, analyze
from docs_mcp_core.search.filters import matches_filters, where_clause
from tests.support.compat import original_answers

pytestmark = pytest.mark.integration  # the original's LanceDB runs in node

EXAMPLE_QUERIES = [
    "retry configuration",
    "retries backoff python",
    "create a link",
    "error handling",
    "pagination cursor next page",
    "authentication bearer token",
    "rate limit 429 Too Many Requests",
    "what happens when a request fails",
    "how do I install the SDK with pip",
    "webhooks signature verify",
    "refund a payment",
    "createLink",
    "idempotency key",
]
EXAMPLE_FILTERS: list[dict[str, str]] = [
    {},
    {"language": "python"},  # the auto-include rule: a clause over scope and language
    {"scope": "global-guide"},
    {"language": "typescript", "scope": "sdk-specific"},
]
RECORDED = Path(__file__).parents[1] / "core" / "data" / "lancedb-0.26.2-scores.json"
FETCH = 10_000  # every match, so that the two readers' prefiltering cannot cut differently
VECTOR_LIMIT = 20
IVF_NPROBES = 20  # what LanceDB 0.26.2 probes by default (the original sets nothing)


def without(query: str, stop_words: frozenset[str]) -> str:
    """``query``'s words, less ``stop_words``."""
    return " ".join(w for w in re.findall(r"[^\W_]+", query) if w.lower() not in stop_words)


def repeats_a_term(query: str) -> bool:
    terms = analyze(query, LANCEDB_0_26_STOP_WORDS)
    return len(set(terms)) != len(terms)


class Case:
    """One index, the queries to run on it, and what the answers are compared with."""

    def __init__(self, index: Path, searches: Sequence[tuple[str, Mapping[str, str]]]) -> None:
        self.db = index / ".lancedb"
        self.metadata = json.loads((index / "metadata.json").read_text(encoding="utf-8"))
        self.keys = list(self.metadata["taxonomy"])
        self.chunks: list[dict[str, Any]] = json.loads((index / "chunks.json").read_text(encoding="utf-8"))
        self.by_id = {c["chunk_id"]: c for c in self.chunks}
        self.table = import_lancedb().connect(str(self.db)).open_table("chunks")
        self.queries: list[dict[str, Any]] = []
        for n, (text, filters) in enumerate(searches):
            if repeats_a_term(text):
                continue
            self._search(f"match {n}", "match", filters, query=text, limit=FETCH)
            phrase = without(text, LANCEDB_STOP_WORDS | LANCEDB_0_26_STOP_WORDS)
            for slop in (0, 2) if phrase else ():
                self._search(f"phrase {n} {slop}", "phrase", filters, query=phrase, slop=slop, limit=FETCH)
        dims = int((self.metadata.get("embedding") or {}).get("dimensions") or 0)
        for n, (text, filters) in enumerate(searches[:40] if dims else []):
            vector = hash_to_unit_vector(text, dims)
            self._search(f"vector {n}", "vector", filters, vector=vector, limit=VECTOR_LIMIT)
        for chunk in self.chunks[:: max(1, len(self.chunks) // 150)]:
            chunk_id, filepath, position = chunk["chunk_id"], chunk["filepath"], chunk["chunk_index"]
            low, high = max(0, position - 2), position + 2
            self.queries.append(
                {"name": f"id {chunk_id}", "kind": "rows", "where": f"chunk_id = {quote_string(chunk_id)}"}
            )
            between = f"filepath = {quote_string(filepath)} AND chunk_index BETWEEN {low} AND {high}"
            self.queries.append({"name": f"range {chunk_id}", "kind": "rows", "where": between})

    def _search(self, name: str, kind: str, filters: Mapping[str, str], **query: Any) -> None:
        report = ["chunk_id", "_distance", "vector"] if kind == "vector" else ["chunk_id", "_score"]
        where = where_clause(filters, self.keys)
        self.queries.append(
            {"name": name, "kind": kind, "where": where, "filters": filters, "report": report, **query}
        )

    def reference_search(self, query: dict[str, Any]) -> list[dict[str, Any]]:
        """The same query through docs-mcp's own LanceDB."""
        from lancedb.query import FullTextOperator, MultiMatchQuery, PhraseQuery

        if query["kind"] == "vector":
            builder = self.table.search(query["vector"], vector_column_name="vector")
            if any(i.columns == ["vector"] for i in self.table.list_indices()):
                builder = builder.nprobes(IVF_NPROBES)
            columns = ["chunk_id", "_distance"]
        else:
            if query["kind"] == "match":
                columns, boosts = ["heading", "content_text"], [3.0, 1.0]
                fts: Any = MultiMatchQuery(
                    query["query"], columns, boosts=boosts, operator=FullTextOperator.OR
                )
            else:
                fts = PhraseQuery(
                    query["query"], "content_text", slop=query["slop"], document_granularity=None
                )
            builder = self.table.search(fts, query_type="fts")
            columns = ["chunk_id", "_score"]
        if query["where"]:
            builder = builder.where(query["where"], prefilter=True)
        return builder.select(columns).limit(query["limit"]).to_list()


@pytest.fixture(
    scope="module",
    params=[
        "examples",
        "examples-hash",
        pytest.param("sdk-docs-hash", marks=[pytest.mark.shared, pytest.mark.slow]),
    ],
)
def case(request: pytest.FixtureRequest) -> Case:
    if request.param == "examples":
        searches = [(q, f) for f in EXAMPLE_FILTERS for q in EXAMPLE_QUERIES]
        return Case(request.getfixturevalue("built_index"), searches)
    if request.param == "examples-hash":
        searches = [(q, f) for f in EXAMPLE_FILTERS for q in EXAMPLE_QUERIES]
        return Case(request.getfixturevalue("examples_hash_index"), searches)
    shared_dir: Path = request.getfixturevalue("shared_dir")
    cases = json.loads((shared_dir / "corpora" / "sdk-docs-dev-cases.json").read_text(encoding="utf-8"))
    searches = [(c["query"], c.get("filters") or {}) for c in cases] + [(c["query"], {}) for c in cases]
    return Case(request.getfixturevalue("sdk_docs_hash_index"), searches)


@pytest.fixture(scope="module")
def answers(node: str, case: Case, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return original_answers(node, case.db, case.queries, tmp_path_factory.mktemp("original-queries"))


def rows_of(answers: dict[str, Any], name: str) -> list[dict[str, Any]]:
    result = answers["results"][name]
    if "error" in result:
        # the original treats this error (a phrase that matches nothing) as no rows
        assert "Invalid count value" in result["error"], f"{name}: {result['error']}"
        return []
    return result["rows"]


def test_every_index_is_read(case: Case, answers: dict[str, Any]) -> None:
    assert (case.db / "chunks.derived").is_file()  # read with the derived files beside the table
    indices = {(tuple(i["columns"]), i["indexType"]) for i in answers["indices"]}
    for column in ("content_text", "heading"):
        assert ((column,), "FTS") in indices
    for column in ("chunk_id", "filepath", "chunk_index"):
        assert ((column,), "BTree") in indices
    if len(case.chunks) >= 5_000 and case.metadata.get("embedding"):
        assert (("vector",), "IvfFlat") in indices


def test_full_text_queries_find_what_our_lancedb_finds(case: Case, answers: dict[str, Any]) -> None:
    asked = {"match": 0, "phrase": 0}
    found = {"match": 0, "phrase": 0}
    for query in case.queries:
        if query["kind"] not in asked:
            continue
        theirs = {r["chunk_id"]: r["_score"] for r in rows_of(answers, query["name"])}
        ours = {r["chunk_id"]: r["_score"] for r in case.reference_search(query)}
        assert theirs.keys() == ours.keys(), (query["kind"], query["query"], query["where"])
        for chunk_id, score in ours.items():
            assert theirs[chunk_id] == pytest.approx(score, rel=1e-4), (query["query"], chunk_id)
        for chunk_id in theirs:
            assert matches_filters(case.by_id[chunk_id]["metadata"], query["filters"], case.keys)
        asked[query["kind"]] += 1
        found[query["kind"]] += bool(theirs)
    # the comparisons are not all of empty answers
    assert asked["match"] >= 40 and found["match"] >= 0.8 * asked["match"], (asked, found)
    assert found["phrase"] >= 10, (asked, found)


def test_get_doc_queries_return_whole_rows(case: Case, answers: dict[str, Any]) -> None:
    checked = 0
    for query in case.queries:
        if query["kind"] != "rows":
            continue
        rows = rows_of(answers, query["name"])
        kind, chunk_id = query["name"].split(" ", 1)
        target = case.by_id[chunk_id]
        if kind == "id":
            assert [r["chunk_id"] for r in rows] == [chunk_id]
        else:
            low, high = max(0, target["chunk_index"] - 2), target["chunk_index"] + 2
            expected = {
                c["chunk_id"]
                for c in case.chunks
                if c["filepath"] == target["filepath"] and low <= c["chunk_index"] <= high
            }
            assert {r["chunk_id"] for r in rows} == expected
        for row in rows:
            assert_row_holds_its_chunk(row, case.by_id[row["chunk_id"]], case.keys)
            checked += 1
    assert checked >= min(len(case.chunks), 150)


def assert_row_holds_its_chunk(row: dict[str, Any], chunk: dict[str, Any], keys: list[str]) -> None:
    for column in (
        "filepath",
        "heading",
        "heading_level",
        "content",
        "content_text",
        "breadcrumb",
        "chunk_index",
    ):
        assert row[column] == chunk[column], (chunk["chunk_id"], column)
    assert json.loads(row["metadata_json"]) == chunk["metadata"]
    for key in keys:
        assert row[key] == chunk["metadata"].get(key, ""), (chunk["chunk_id"], key)
    assert re.fullmatch(r"[0-9a-f]{64}", row["file_fingerprint"]), row["file_fingerprint"]


def test_vector_search_finds_what_our_lancedb_finds(case: Case, answers: dict[str, Any]) -> None:
    queries = [q for q in case.queries if q["kind"] == "vector"]
    if not case.metadata.get("embedding"):
        assert not queries
        return
    vectors = case.table.to_arrow().select(["chunk_id", "vector"])
    ids = vectors.column("chunk_id").to_pylist()
    matrix = np.asarray(vectors.column("vector").combine_chunks().flatten()).reshape(len(ids), -1)
    position = {chunk_id: i for i, chunk_id in enumerate(ids)}
    assert len(queries) >= 20
    for query in queries:
        theirs = rows_of(answers, query["name"])
        ours = case.reference_search(query)
        assert theirs, query["name"]
        # the same neighbours: the same distances in the same order (rows at equal distances may
        # come in either order)
        assert [r["_distance"] for r in theirs] == pytest.approx([r["_distance"] for r in ours], rel=1e-4)
        exact = ((matrix - np.asarray(query["vector"], dtype=np.float32)) ** 2).sum(axis=1)
        for row in theirs:
            assert row["_distance"] == pytest.approx(
                float(exact[position[row["chunk_id"]]]), rel=1e-4, abs=1e-6
            )
            assert matches_filters(case.by_id[row["chunk_id"]]["metadata"], query["filters"], case.keys)
            assert len(row["vector"]) == matrix.shape[1]


def test_the_original_scores_our_table_as_its_own(node: str, built_index: Path, tmp_path: Path) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    queries = [
        {"name": f"match {query}", "kind": "match", "query": query, "limit": FETCH}
        for query in recorded["queries"]
    ]
    answers = original_answers(node, built_index / ".lancedb", queries, tmp_path)
    compared = 0
    for query, kinds in recorded["queries"].items():
        if repeats_a_term(query):
            continue  # see the module docstring
        theirs = {r["chunk_id"]: r["_score"] for r in rows_of(answers, f"match {query}")}
        assert theirs.keys() == kinds["match"].keys(), query
        # the same rows; scores within a few per cent, as BM25's row count and average length are
        # the writer's (0.40 counts the rows with a term in the column, 0.26 every row)
        for chunk_id, score in kinds["match"].items():
            assert theirs[chunk_id] == pytest.approx(score, rel=0.1), (query, chunk_id)
        compared += bool(theirs)
    assert compared >= 9
