"""The search engine over real LanceDB indexes: ranking contract, filters, collapse, paging, cursors,
zero-result hints, get_doc and hostile input.

The example corpus (``examples/docs``) is built once per session; two small hand-made corpora cover
what it cannot show (collapse skipped under a filter, ids with spaces).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.errors import SearchError, SearchOptionsError
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.search import MAX_QUERY_CHARS, MAX_QUERY_TERMS, SearchEngine, SearchOptions, SearchResult
from docs_mcp_core.search.filters import matches_filters
from docs_mcp_core.search.options import Ranking
from docs_mcp_core.search.row_catalog import collapse_key as dedup_key

INDEXED_AT = "2026-01-01T00:00:00.000Z"
NO_MATCH = "0 results found. No matches were found for this query in the indexed corpus."
DELIMITER = re.compile(
    r"^--- Chunk: (\S.*) \(Chunk (\d+) of (\d+)\) \((Target|Context: [+-]\d+)\) ---$", re.M
)


@pytest.fixture(scope="session")
def example_index(built_index: Path) -> Path:
    return built_index


@pytest.fixture(scope="session", params=["default", "original"])
def engine(request: pytest.FixtureRequest, example_index: Path) -> SearchEngine:
    """The engine under each ranking: every contract below holds for both."""
    return SearchEngine.open(example_index, options=SearchOptions(ranking=request.param))


@pytest.fixture(scope="session")
def original(example_index: Path) -> SearchEngine:
    """The original's recipe (reciprocal-rank fusion), for the tests that pin its arithmetic."""
    return SearchEngine.open(example_index, options=SearchOptions(ranking="original"))


@pytest.fixture(scope="session")
def chunks(example_index: Path) -> list[dict[str, Any]]:
    return json.loads((example_index / "chunks.json").read_text(encoding="utf-8"))


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _manifest(metadata: dict[str, str], taxonomy: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": metadata}
    if taxonomy:
        body["taxonomy"] = taxonomy
    return json.dumps(body)


@pytest.fixture(scope="module")
def odd_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two languages with a duplicated heading, two guides sharing a heading, a path with spaces."""
    root = tmp_path_factory.mktemp("odd-docs")
    sdk = "# Guide\n\n## Example\n\nwidget frobnicate {lang} first\n\n## Example\n\nwidget frobnicate {lang} second\n"
    _write(
        root,
        {
            ".docs-mcp.json": _manifest({"scope": "global-guide"}, {"language": {"vector_collapse": True}}),
            "sdks/python/.docs-mcp.json": _manifest({"language": "python", "scope": "sdk-specific"}),
            "sdks/go/.docs-mcp.json": _manifest({"language": "go", "scope": "sdk-specific"}),
            "sdks/python/guide.md": sdk.format(lang="python"),
            "sdks/go/guide.md": sdk.format(lang="go"),
            "guides/a.md": "# A\n\n## Setup\n\nquokka setup steps for a\n",
            "guides/b.md": "# B\n\n## Setup\n\nquokka setup steps for b\n",
            "getting started/my guide.md": "# My guide\n\n## First steps\n\nzanzibar first steps\n\n"
            "## Next steps\n\nzanzibar next steps\n",
        },
    )
    out = tmp_path_factory.mktemp("odd-index")
    build_index(BuildOptions(docs_dir=root, out_dir=out, indexed_at=INDEXED_AT))
    return out


def _ids(result: SearchResult) -> list[str]:
    return [h.chunk_id for h in result.hits]


def _walk(
    engine: SearchEngine, query: str, limit: int, filters: dict[str, str] | None = None
) -> list[tuple[str, float]]:
    seen: list[tuple[str, float]] = []
    cursor: str | None = None
    for _ in range(500):
        result = engine.search(query, limit=limit, filters=filters, cursor=cursor)
        assert len(result.hits) <= limit
        seen.extend((h.chunk_id, h.score) for h in result.hits)
        cursor = result.next_cursor
        if cursor is None:
            return seen
        assert result.hits, "a page with a next_cursor must not be empty"
    raise AssertionError("pagination did not end")


# ── ranking contract ───────────────────────────────────────────────────────────────────────────


def test_retry_configuration_for_python(engine: SearchEngine) -> None:
    result = engine.search("retry configuration", filters={"language": "python"})
    assert result.hint is None
    assert set(_ids(result)[:2]) == {
        "sdks/python/README.md#tidewater/retries",
        "guides/retries.md#retries-and-idempotency/retry-configuration-in-each-sdk",
    }
    for hit in result.hits:
        assert hit.metadata.get("language") in (None, "python")
        assert matches_filters(hit.metadata, {"language": "python"}, list(engine.metadata.taxonomy))


def test_hits_carry_the_contract_fields(engine: SearchEngine, chunks: list[dict[str, Any]]) -> None:
    by_id = {c["chunk_id"]: c for c in chunks}
    result = engine.search("webhook signature", limit=5)
    assert result.to_dict().keys() == {"hits", "next_cursor", "hint"}
    for hit in result.hits:
        chunk = by_id[hit.chunk_id]
        assert hit.to_dict().keys() == {
            "chunk_id",
            "heading",
            "breadcrumb",
            "snippet",
            "filepath",
            "metadata",
            "score",
        }
        assert (hit.heading, hit.breadcrumb, hit.filepath) == (
            chunk["heading"],
            chunk["breadcrumb"],
            chunk["filepath"],
        )
        assert hit.metadata == chunk["metadata"]
        assert 0 < len(hit.snippet) <= 226


def test_scores_are_rrf_rounded_sorted_and_ties_ordered_by_id(original: SearchEngine) -> None:
    hits = original.search("payment", limit=50).hits
    assert len(hits) == 50
    keys = [(-h.score, sort_key(h.chunk_id)) for h in hits]
    assert keys == sorted(keys)
    for h in hits:
        assert h.score == round(h.score, 6)
        assert 0 < h.score <= round((1 + 1.25) / 61, 6)  # at best rank 1 in both lexical legs


def test_scores_are_rounded_and_sorted(engine: SearchEngine) -> None:
    hits = engine.search("create a payment", limit=50).hits
    assert hits
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score == round(h.score, 6) and h.score > 0 for h in hits)


def test_unknown_ranking_is_refused(example_index: Path) -> None:
    with pytest.raises(
        SearchOptionsError, match=r"^unknown ranking 'best'\. Valid rankings: default, original$"
    ):
        SearchEngine.open(example_index, options=SearchOptions(ranking="best"))  # pyright: ignore[reportArgumentType]


def test_results_are_deterministic(engine: SearchEngine) -> None:
    first = engine.search("create a refund", limit=20).to_dict()
    assert engine.search("create a refund", limit=20).to_dict() == first


def test_phrase_weight_is_configurable(example_index: Path) -> None:
    plain = SearchEngine.open(example_index, options=SearchOptions(ranking="original", proximity_weight=0))
    hits = plain.search("payment", limit=5).hits
    assert hits[0].score == round(1 / 61, 6)  # match leg only


@pytest.mark.parametrize(("limit", "expected"), [(0, 1), (-5, 1), (1, 1), (3, 3), (500, 50), ("7", 10)])
def test_limit_is_clamped(engine: SearchEngine, limit: Any, expected: int) -> None:
    assert len(engine.search("payment", limit=limit).hits) == expected


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_refused(engine: SearchEngine, query: str) -> None:
    with pytest.raises(SearchError, match=r"^query is required$"):
        engine.search(query)


# ── filters ────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "filters",
    [
        {"language": "go"},
        {"language": "typescript"},
        {"scope": "global-guide"},
        {"scope": "sdk-specific", "language": "python"},
        {"topic": "onboarding"},
    ],
)
def test_every_hit_passes_the_filters(engine: SearchEngine, filters: dict[str, str]) -> None:
    hits = [cid for cid, _ in _walk(engine, "payment customer", 50, filters)]
    assert hits
    keys = list(engine.metadata.taxonomy)
    result = engine.search("payment customer", limit=50, filters=filters)
    assert all(matches_filters(h.metadata, filters, keys) for h in result.hits)


def test_language_filter_auto_includes_global_guides(engine: SearchEngine) -> None:
    ids = [cid for cid, _ in _walk(engine, "payment", 50, {"language": "go"})]
    assert any(i.startswith("guides/") for i in ids)
    assert any(i.startswith("sdks/go/") for i in ids)
    assert not any(i.startswith(("sdks/python/", "sdks/typescript/")) for i in ids)


def test_explicit_scope_turns_auto_include_off(engine: SearchEngine) -> None:
    ids = [cid for cid, _ in _walk(engine, "payment", 50, {"language": "go", "scope": "sdk-specific"})]
    assert ids and all(i.startswith("sdks/go/") for i in ids)


def test_unknown_filter_key_lists_the_valid_ones(engine: SearchEngine) -> None:
    with pytest.raises(
        SearchError, match=r"^Unknown filter 'platform'\. Valid filters: scope, topic, language$"
    ):
        engine.search("payment", filters={"platform": "ios"})


def test_empty_filter_values_are_ignored(engine: SearchEngine) -> None:
    assert engine.search("payment", filters={"language": ""}).to_dict() == engine.search("payment").to_dict()


# ── vector collapse ────────────────────────────────────────────────────────────────────────────


CAPTURE = re.compile(r"^sdks/(typescript|python|go)/docs/sdks/payments/README\.md#payments/capture$")


def test_collapse_returns_a_method_documented_in_three_languages_once(engine: SearchEngine) -> None:
    assert engine.metadata.taxonomy["language"].vector_collapse
    ids = [cid for cid, _ in _walk(engine, "capture a payment", 50)]
    assert len(ids) == len(set(ids))
    assert len([i for i in ids if CAPTURE.match(i)]) == 1
    # also with a filter on another key
    ids = [cid for cid, _ in _walk(engine, "capture a payment", 50, {"scope": "sdk-specific"})]
    assert len([i for i in ids if CAPTURE.match(i)]) == 1


@pytest.mark.parametrize("language", ["typescript", "python", "go"])
def test_language_filter_finds_that_languages_copy(engine: SearchEngine, language: str) -> None:
    ids = [cid for cid, _ in _walk(engine, "capture a payment", 50, {"language": language})]
    assert [i for i in ids if CAPTURE.match(i)] == [
        f"sdks/{language}/docs/sdks/payments/README.md#payments/capture"
    ]


def test_collapse_is_skipped_when_its_key_is_filtered(odd_index: Path) -> None:
    engine = SearchEngine.open(odd_index)
    # unfiltered: the four `## Example` chunks (2 languages x 2 duplicates) share one collapse key
    assert len(engine.search("widget frobnicate").hits) == 1
    # filtered on language: no collapse, both duplicates of that language come back
    assert sorted(_ids(engine.search("widget frobnicate", filters={"language": "python"}))) == [
        "sdks/python/guide.md#guide/example",
        "sdks/python/guide.md#guide/example-2",
    ]
    # a filter on the other key leaves collapse on
    assert len(engine.search("widget frobnicate", filters={"scope": "sdk-specific"}).hits) == 1


def test_chunks_without_the_collapse_value_are_never_collapsed(odd_index: Path) -> None:
    engine = SearchEngine.open(odd_index)
    assert sorted(_ids(engine.search("quokka setup"))) == ["guides/a.md#a/setup", "guides/b.md#b/setup"]


def test_dedup_key() -> None:
    keys = ["language"]
    a = dedup_key(
        "sdks/python/docs/x.md", "create", "sdks/python/docs/x.md#x/create", {"language": "python"}, keys
    )
    b = dedup_key("sdks/go/docs/x.md", "create", "sdks/go/docs/x.md#x/create", {"language": "go"}, keys)
    assert a == b == "sdks/*/docs/x.md:create"
    assert dedup_key("python/python/x.md", "h", "python/python/x.md#h", {"language": "python"}, keys) == (
        "*/python/x.md:h"
    )
    assert dedup_key("a/go/x.md", "h", "a/go/x.md#h-part-3", {"language": "go"}, keys) == "a/*/x.md:h:3"
    assert dedup_key("guides/x.md", "h", "guides/x.md#h", {}, keys) is None
    assert dedup_key("guides/x.md", "h", "guides/x.md#h", {"language": "go"}, keys) is None
    assert dedup_key("guides/x.md", "h", "guides/x.md#h", {"language": "go"}, []) == "guides/x.md:h"


# ── pagination and cursors ─────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("query", "filters"),
    [
        ("payment", {}),
        ("retry configuration", {}),
        ("create customer", {"language": "python"}),
        ("errors", {}),
    ],
)
def test_pages_neither_repeat_nor_skip(engine: SearchEngine, query: str, filters: dict[str, str]) -> None:
    whole = _walk(engine, query, 50, filters)
    first_page = engine.search(query, limit=50, filters=filters)
    assert [(h.chunk_id, h.score) for h in first_page.hits] == whole[:50]
    assert len({cid for cid, _ in whole}) == len(whole)
    for size in (3, 7):
        assert _walk(engine, query, size, filters) == whole


def test_last_page_has_no_cursor(engine: SearchEngine) -> None:
    everything = _walk(engine, "webhook", 50)
    result = engine.search("webhook", limit=len(everything))
    assert result.next_cursor is None and len(result.hits) == len(everything)


def _first_cursor(engine: SearchEngine, query: str = "payment", filters: dict[str, str] | None = None) -> str:
    cursor = engine.search(query, limit=5, filters=filters).next_cursor
    assert cursor is not None
    return cursor


@pytest.mark.parametrize(
    ("query", "filters"),
    [
        ("payments", None),
        ("refund", None),
        ("payment", {"language": "go"}),
        ("payment", {"scope": "global-guide"}),
    ],
)
def test_cursor_is_refused_for_another_query_or_filters(
    engine: SearchEngine, query: str, filters: dict[str, str] | None
) -> None:
    cursor = _first_cursor(engine)
    with pytest.raises(SearchError, match=r"^Invalid cursor: does not match current query or filters$"):
        engine.search(query, limit=5, filters=filters, cursor=cursor)


def test_cursor_survives_whitespace_around_the_query(engine: SearchEngine) -> None:
    cursor = _first_cursor(engine)
    assert _ids(engine.search("  payment ", limit=5, cursor=cursor)) == _ids(
        engine.search("payment", limit=5, cursor=cursor)
    )


def test_forged_and_truncated_cursors_are_refused(engine: SearchEngine) -> None:
    import base64

    cursor = _first_cursor(engine)
    body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    body["offset"] = 15
    forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    for bad in (forged, cursor[:-4], cursor[: len(cursor) // 2], "bad-cursor", "x" * 10_000):
        with pytest.raises(SearchError) as info:
            engine.search("payment", limit=5, cursor=bad)
        assert str(info.value).startswith("Invalid cursor")


def test_replicas_of_an_index_accept_each_others_cursors(example_index: Path, engine: SearchEngine) -> None:
    other = SearchEngine.open(example_index, options=engine.options)
    cursor = _first_cursor(engine)
    assert _ids(other.search("payment", limit=5, cursor=cursor)) == _ids(
        engine.search("payment", limit=5, cursor=cursor)
    )


def test_configured_secret_signs_cursors(example_index: Path, engine: SearchEngine) -> None:
    a1 = SearchEngine.open(example_index, options=SearchOptions(cursor_secret="s3cret-a"))
    a2 = SearchEngine.open(example_index, options=SearchOptions(cursor_secret="s3cret-a"))
    b = SearchEngine.open(example_index, options=SearchOptions(cursor_secret="s3cret-b"))
    cursor = _first_cursor(a1)
    assert _ids(a2.search("payment", limit=5, cursor=cursor))
    for stranger in (b, engine):
        with pytest.raises(SearchError, match=r"^Invalid cursor"):
            stranger.search("payment", limit=5, cursor=cursor)


# ── zero-result hints ──────────────────────────────────────────────────────────────────────────


def test_hint_suggests_the_filter_values_that_would_match(engine: SearchEngine) -> None:
    # "goroutines" appears only in the Go SDK docs
    result = engine.search("goroutines", filters={"language": "python"})
    assert result.hits == [] and result.next_cursor is None
    assert result.hint == {
        "message": "0 results found for query 'goroutines' with filters language='python'.",
        "suggested_filters": {"language": ["go"]},
    }
    result = engine.search("goroutines", filters={"scope": "global-guide", "language": "go"})
    assert result.hint == {
        "message": "0 results found for query 'goroutines' with filters scope='global-guide', language='go'.",
        "suggested_filters": {"scope": ["sdk-specific"]},
    }


def test_hint_when_nothing_matches_anywhere(engine: SearchEngine) -> None:
    for filters in ({}, {"language": "go"}):
        result = engine.search("xylophonic zymurgy", filters=filters)
        assert result.hits == []
        assert result.hint == {"message": NO_MATCH, "suggested_filters": {}}


def test_no_hint_when_there_are_hits(engine: SearchEngine) -> None:
    assert engine.search("payment").hint is None


# ── get_doc ────────────────────────────────────────────────────────────────────────────────────


def _expected_doc(chunks: list[dict[str, Any]], chunk_id: str, context: int) -> str:
    target = next(c for c in chunks if c["chunk_id"] == chunk_id)
    same = [c for c in chunks if c["filepath"] == target["filepath"]]
    i = target["chunk_index"]
    blocks = []
    for c in same:
        delta = c["chunk_index"] - i
        if abs(delta) <= context:
            role = "Target" if delta == 0 else f"Context: {delta:+d}"
            blocks.append(
                f"--- Chunk: {c['chunk_id']} (Chunk {c['chunk_index'] + 1} of {len(same)}) ({role}) ---\n{c['content']}"
            )
    return "\n\n".join(blocks)


ERRORS_REF = "guides/errors.md#errors/error-code-reference"


def test_get_doc_target_only(engine: SearchEngine, chunks: list[dict[str, Any]]) -> None:
    text = engine.get_doc(ERRORS_REF)
    assert text.startswith(f"--- Chunk: {ERRORS_REF} (Chunk 3 of 13) (Target) ---\n## Error code reference\n")
    assert text == _expected_doc(chunks, ERRORS_REF, 0)


def test_get_doc_with_neighbours(engine: SearchEngine, chunks: list[dict[str, Any]]) -> None:
    text = engine.get_doc(ERRORS_REF, context=1)
    assert [m.group(4) for m in DELIMITER.finditer(text)] == ["Context: -1", "Target", "Context: +1"]
    assert [m.group(2) for m in DELIMITER.finditer(text)] == ["2", "3", "4"]
    assert text == _expected_doc(chunks, ERRORS_REF, 1)


@pytest.mark.parametrize(
    ("chunk_id", "context", "effective"),
    [
        ("guides/errors.md#_preamble", 2, 2),  # first chunk: nothing before it
        ("guides/errors.md#errors/error-code-reference-part-2", 5, 5),
        (ERRORS_REF, 9, 5),  # clamped to 5
        (ERRORS_REF, -3, 0),  # clamped to 0
        ("guides/environments.md", 3, 3),  # a one-chunk file
    ],
)
def test_get_doc_bounds(
    engine: SearchEngine, chunks: list[dict[str, Any]], chunk_id: str, context: int, effective: int
) -> None:
    text = engine.get_doc(chunk_id, context=context)
    assert text == _expected_doc(chunks, chunk_id, effective)
    roles = [m.group(4) for m in DELIMITER.finditer(text)]
    assert roles.count("Target") == 1 and len(roles) <= 2 * effective + 1


def test_get_doc_whole_file_with_context_minus_one(
    engine: SearchEngine, chunks: list[dict[str, Any]]
) -> None:
    expected = "\n\n".join(c["content"] for c in chunks if c["filepath"] == "guides/errors.md")
    assert engine.get_doc(ERRORS_REF, context=-1) == expected
    assert engine.file_content("guides/errors.md") == expected
    assert "--- Chunk:" not in expected


@pytest.mark.parametrize(
    "chunk_id", ["a b", "guides/errors.md#", "#errors", "a#b#c", " guides/errors.md", "x' OR '1'='1"]
)
def test_get_doc_invalid_format(engine: SearchEngine, chunk_id: str) -> None:
    with pytest.raises(SearchError) as info:
        engine.get_doc(chunk_id)
    assert str(info.value) == (
        f"Chunk ID '{chunk_id}' has invalid format. Expected {{filepath}} or {{filepath}}#{{heading-path}}."
    )


@pytest.mark.parametrize(
    "chunk_id", ["guides/nope.md", "guides/errors.md#errors/nope", "GUIDES/ERRORS.MD#_PREAMBLE"]
)
def test_get_doc_not_found(engine: SearchEngine, chunk_id: str) -> None:
    with pytest.raises(SearchError) as info:
        engine.get_doc(chunk_id)
    assert str(info.value) == f"Chunk ID '{chunk_id}' not found. Use search_docs to discover valid chunk IDs."


def test_get_doc_empty_id(engine: SearchEngine) -> None:
    for bad in ("", "  "):
        with pytest.raises(SearchError, match="non-empty"):
            engine.get_doc(bad)


def test_ids_with_spaces_can_be_searched_and_fetched(odd_index: Path) -> None:
    engine = SearchEngine.open(odd_index)
    ids = _ids(engine.search("zanzibar"))
    assert sorted(ids) == [
        "getting started/my guide.md#my-guide/first-steps",
        "getting started/my guide.md#my-guide/next-steps",
    ]
    text = engine.get_doc("getting started/my guide.md#my-guide/next-steps", context=1)
    assert [m.group(1) for m in DELIMITER.finditer(text)] == [
        "getting started/my guide.md#my-guide/first-steps",
        "getting started/my guide.md#my-guide/next-steps",
    ]
    assert "(Chunk 3 of 3) (Target)" in text and "zanzibar first steps" in text
    assert engine.file_content("getting started/my guide.md").count("zanzibar") == 2


# ── files ──────────────────────────────────────────────────────────────────────────────────────


def test_list_filepaths(engine: SearchEngine, chunks: list[dict[str, Any]]) -> None:
    everything = engine.list_filepaths({})
    assert everything == sorted({c["filepath"] for c in chunks}, key=sort_key)
    assert len(everything) == 20
    assert engine.list_filepaths({"language": "python"}) == [
        "sdks/python/docs/sdks/customers/README.md",
        "sdks/python/docs/sdks/payments/README.md",
        "sdks/python/docs/sdks/refunds/README.md",
        "sdks/python/README.md",
    ]
    assert engine.list_filepaths({"scope": "x' OR '1'='1"}) == []


def test_file_content_of_an_unknown_file(engine: SearchEngine) -> None:
    with pytest.raises(SearchError, match=r"^File 'nope\.md' not found in the index\.$"):
        engine.file_content("nope.md")


# ── hostile input ──────────────────────────────────────────────────────────────────────────────

HOSTILE_QUERIES = [
    "'",
    '"',
    "`",
    "%",
    "_",
    "\\",
    "\0",
    "retry\0configuration",
    "x' OR '1'='1",
    "'; DROP TABLE chunks; --",
    'he said "retry',
    "`language` = 'go'",
    "(",
    "retry~2",
    "title:foo",
    "AND OR NOT",
    "*",
    "payment^10",
    "\u200b",
    "é ü 日本語 🙂",
    "retry" * 2000,
    "payments " * 1200,
    " ".join(f"w{i}" for i in range(2000)),
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_are_answered_safely(engine: SearchEngine, query: str) -> None:
    try:
        result = engine.search(query, limit=10)
    except SearchError:
        return
    assert isinstance(result, SearchResult)
    assert (result.hint is None) == bool(result.hits)


def test_a_query_at_the_limits_still_finds_things_and_a_ten_kilobyte_one_is_refused(
    engine: SearchEngine,
) -> None:
    assert engine.search(" ".join(["payments"] * MAX_QUERY_TERMS)).hits
    longest = "payments " + "x" * (MAX_QUERY_CHARS - len("payments "))
    assert len(longest) == MAX_QUERY_CHARS
    assert engine.search(longest).hits
    query = "payments " * 1200
    assert len(query) > 10_000
    with pytest.raises(SearchError, match=r"^query is too long: 10,799 characters, at most 2,000;"):
        engine.search(query)


@pytest.mark.parametrize(
    "value",
    ["x' OR '1'='1", "python' OR 'a'='a", "x\\' OR 1=1 --", "') OR ('1'='1", "%", "_", "`", "py\\thon"],
)
def test_filter_injection_never_widens_results(engine: SearchEngine, value: str) -> None:
    baseline = set(_ids(engine.search("payment", limit=50, filters={"language": "cobol"})))
    got = set(_ids(engine.search("payment", limit=50, filters={"language": value})))
    assert got == baseline
    assert all(i.startswith("guides/") for i in got)  # only the auto-included global guides
    assert engine.search("payment", limit=50, filters={"scope": value}).hits == []
    assert engine.search("payment", limit=50, filters={"topic": value}).hits == []


@pytest.mark.parametrize("key", ["nope", "language'", "`language`", "scope OR 1=1", "", "\0"])
def test_unknown_or_odd_filter_keys(engine: SearchEngine, key: str) -> None:
    with pytest.raises(SearchError, match=r"^Unknown filter"):
        engine.search("payment", filters={key: "python"})


@pytest.mark.parametrize(
    "chunk_id", ["'", "\0", "%", "guides/%", "guides/errors.md#_preamble' OR '1'='1", "x" * 10_000]
)
def test_hostile_chunk_ids(engine: SearchEngine, chunk_id: str) -> None:
    with pytest.raises(SearchError):
        engine.get_doc(chunk_id)


# ── paging on a real corpus ────────────────────────────────────────────────────────────────────


@pytest.mark.slow
@pytest.mark.parametrize("ranking", ["default", "original"])
@pytest.mark.integration
def test_pages_are_consistent_on_sdk_docs(sdk_docs_index: Path, shared_dir: Path, ranking: Ranking) -> None:
    engine = SearchEngine.open(sdk_docs_index, options=SearchOptions(ranking=ranking))
    cases = json.loads((shared_dir / "corpora" / "sdk-docs-dev-cases.json").read_text(encoding="utf-8"))
    inconsistent: list[str] = []
    for case in cases:
        whole = [h.chunk_id for h in engine.search(case["query"], limit=50, filters=case["filters"]).hits]
        walked: list[str] = []
        cursor: str | None = None
        for _ in range(10):
            result = engine.search(case["query"], limit=5, filters=case["filters"], cursor=cursor)
            walked.extend(h.chunk_id for h in result.hits)
            cursor = result.next_cursor
            if cursor is None:
                break
        if walked != whole[: len(walked)]:
            inconsistent.append(case["name"])
    assert inconsistent == []


def test_a_row_whose_metadata_json_is_nested_past_the_recursion_limit_falls_back_to_its_columns(
    built_index: Path, tmp_path: Path
) -> None:
    # the search failed with RecursionError (the fallback to the taxonomy columns caught only
    # JSONDecodeError)
    import shutil

    import lancedb

    from tests.support.hostile_json import TOO_DEEP

    index = tmp_path / "index"
    shutil.copytree(built_index, index)
    lancedb.connect(str(index / ".lancedb")).open_table("chunks").update(values={"metadata_json": TOO_DEEP})
    plain, damaged = SearchEngine.open(built_index), SearchEngine.open(index)
    try:
        expected = plain.search("install the sdk", limit=5, filters={"language": "python"})
        got = damaged.search("install the sdk", limit=5, filters={"language": "python"})
    finally:
        plain.close()
        damaged.close()
    assert [(h.chunk_id, h.metadata) for h in got.hits] == [(h.chunk_id, h.metadata) for h in expected.hits]
    assert any(h.metadata.get("language") == "python" for h in got.hits)  # from the columns
