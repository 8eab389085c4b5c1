"""The spans a search matched in a text: whole tokens by their index terms, identifier parts, no
stop words, no fragments of other words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.search import Query, SearchEngine
from docs_mcp_core.search.analyzer import LANCEDB_0_26_STOP_WORDS, analyze
from docs_mcp_core.search.highlight import match_spans

QUESTION = "how do I retry failed requests in the python sdk"
TEXT = (
    "However, some endpoints support retries. How: pass a single RetryConfig to the Python SDK; "
    "it links the retried request in the log."
)


def marked(query: Query, text: str) -> list[str]:
    return [text[start:end] for start, end in match_spans(query, text)]


def test_whole_tokens_by_their_stems_and_never_stop_words_or_fragments() -> None:
    assert marked(Query.parse(QUESTION), TEXT) == [
        "retries",
        "Retry",  # the part of RetryConfig the identifier-aware columns hold
        "Python",
        "SDK",
        "retried",
        "request",
    ]


def test_identifier_parts_only_where_the_ranking_searches_them() -> None:
    text = "Pass a RetryConfig, or set retry_config."
    assert marked(Query.parse("retry"), text) == ["Retry", "retry"]
    # the original ranking reads RetryConfig as one word; retry_config is two words for both
    assert marked(Query.parse("retry", expand=False), text) == ["retry"]
    assert marked(Query.parse("RetryConfig", expand=False), text) == ["RetryConfig"]


def test_a_compound_query_marks_the_whole_identifier_and_its_parts_elsewhere() -> None:
    text = "Call links.createMany to create many links at once."
    assert marked(Query.parse("createMany"), text) == ["createMany", "create", "many"]


def test_spans_that_overlap_are_merged_and_touching_ones_kept_apart() -> None:
    text = "retry_config and RetryConfig"
    spans = match_spans(Query.parse("retry_config"), text)
    assert spans == [(0, 5), (6, 12), (17, 22), (22, 28)]


def test_the_project_stop_words_are_never_marked_even_where_the_index_keeps_them() -> None:
    # the LanceDB the original ranking reproduces keeps "how" and "what" as index terms
    query = Query.parse("how does what work", analyzer_stop_words=LANCEDB_0_26_STOP_WORDS)
    assert "how" in analyze(query.match, LANCEDB_0_26_STOP_WORDS)
    assert marked(query, "How does it work? What works, and how?") == ["work", "works"]
    assert match_spans(Query.parse("how to do it"), "How to do it") == []


def test_spans_count_characters_of_the_text_as_given() -> None:
    text = "😀 Le café, CAFÉ."  # accents folded as the index folds them
    spans = match_spans(Query.parse("cafe"), text)
    assert [text[start:end] for start, end in spans] == ["café", "CAFÉ"]
    assert spans[0] == (5, 9)


def test_a_token_the_index_drops_for_its_length_still_has_its_parts_matched() -> None:
    long_name = "retryConfigurationForEveryOperationOfTheClient"  # 40 bytes or more: no index term
    assert marked(Query.parse("retry"), long_name) == ["retry"]
    assert marked(Query.parse("retry", expand=False), long_name) == []


def test_nothing_to_mark() -> None:
    assert match_spans(Query.parse("retry"), "") == []
    assert match_spans(Query.parse("retry"), "nothing here") == []


def test_every_mark_in_a_search_result_is_one_of_the_terms_the_search_looked_up(
    built_index: Path,
) -> None:
    chunks = {c["chunk_id"]: c for c in json.loads((built_index / "chunks.json").read_text("utf-8"))}
    engine = SearchEngine.open(built_index)
    try:
        for text in (QUESTION, "webhook signature verification", "idempotency keys"):
            query = engine.parse_query(text)
            looked_up = set(analyze(query.match, query.analyzer_stop_words))
            hits = engine.search(text, limit=5).hits
            assert hits
            words = [
                body[start:end].lower()
                for hit in hits
                for body in (hit.heading, chunks[hit.chunk_id]["content_text"])
                for start, end in match_spans(query, body)
            ]
            assert words, text  # (a hit may match by its path alone)
            assert set(analyze(" ".join(words), query.analyzer_stop_words)) <= looked_up
    finally:
        engine.close()


@pytest.mark.parametrize("word", ["endpoints", "single", "links", "However", "within", "shows"])
def test_no_fragment_of_another_word(word: str) -> None:
    assert match_spans(Query.parse("in how show"), word) == ([(0, 5)] if word == "shows" else [])
