"""The query of a request, read once: what each leg searches, its words and its terms."""

from __future__ import annotations

import pytest

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search.analyzer import LANCEDB_0_26_STOP_WORDS, analyze, analyze_positions
from docs_mcp_core.search.query import MAX_QUERY_TERMS, STOP_WORDS, Query


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t"])
def test_an_empty_query_is_refused(text: str | None) -> None:
    with pytest.raises(SearchError, match=r"^query is required$"):
        Query.parse(text)


def test_the_text_is_trimmed_and_the_full_text_legs_search_at_most_64_words() -> None:
    words = [f"w{i}" for i in range(MAX_QUERY_TERMS + 6)]
    query = Query.parse("  " + " ".join(words) + "  ")
    assert query.text == " ".join(words)
    assert query.lexical == " ".join(words[:MAX_QUERY_TERMS])
    short = Query.parse("retry\0config")
    assert short.text == "retry\0config"  # what a cursor is signed for
    assert short.lexical == "retry config"


def test_the_match_text_adds_identifier_parts_only_when_asked() -> None:
    assert Query.parse("links.createMany now").match == "links.createMany now\nlinks create many"
    assert Query.parse("links.createMany now", expand=False).match == "links.createMany now"


def test_words_keep_their_case_and_terms_are_lower_case_and_distinct() -> None:
    query = Query.parse("Retries in the Go SDK: go, GO!")
    assert query.words == ("Retries", "in", "the", "Go", "SDK", "go", "GO")
    assert query.terms == ("retries", "in", "the", "go", "sdk")


def test_key_terms_drop_stop_words_and_single_letters_unless_nothing_else_is_left() -> None:
    assert Query.parse("how do I create a link in Go").key_terms == ["create", "link", "go"]
    assert Query.parse("where is it").key_terms == ["where"]
    assert Query.parse("is it to").key_terms == ["is", "it", "to"]
    assert Query.parse("a b").key_terms == ["a", "b"]
    assert {"how", "the", "what"} <= STOP_WORDS


def test_coverage_terms_cut_common_endings_and_keep_each_word_once() -> None:
    assert Query.parse("How do I verify the Webhook signature?").coverage_terms == [
        "verify",
        "webhook",
        "signature",
    ]
    assert Query.parse("tags TAG Tags").coverage_terms == ["tag"]
    assert Query.parse("fetching pages").coverage_terms == ["fetch", "pag"]
    assert Query.parse("go to it").coverage_terms == []


def test_analysed_terms_are_the_full_text_analyzers_with_the_given_stop_words() -> None:
    text = "the retries of createMany"
    query = Query.parse(text)
    assert query.match_terms == analyze(query.match)
    assert query.phrase == analyze_positions(query.lexical)
    legacy = Query.parse(text, analyzer_stop_words=LANCEDB_0_26_STOP_WORDS)
    assert legacy.match_terms == analyze(legacy.match, LANCEDB_0_26_STOP_WORDS)
