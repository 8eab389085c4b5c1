"""Result snippets: original casing, a window around the best cluster of query terms, clean cuts."""

from __future__ import annotations

import re

import pytest

from docs_mcp_core.search.query import MAX_QUERY_CHARS, Query
from docs_mcp_core.search.snippet import SNIPPET_LENGTH, make_snippet

FILLER = " ".join(f"Filler{i} word number {i} of the padding." for i in range(80))


def snippet_for(text: str, query: str) -> str:
    """The snippet a search for ``query`` shows of ``text``."""
    return make_snippet(text, Query.parse(query).key_terms)


def _body(snippet: str) -> str:
    return snippet.removeprefix("...").removesuffix("...")


def test_short_text_is_returned_whole_with_whitespace_collapsed_and_casing_kept() -> None:
    text = "  Configure   RetryConfig\n\twith `BackoffStrategy`.  "
    assert snippet_for(text, "retry") == "Configure RetryConfig with `BackoffStrategy`."


def test_long_text_gives_a_window_around_the_match() -> None:
    text = f"{FILLER} The RetryConfig object sets the BackoffStrategy of every call. {FILLER}"
    snippet = snippet_for(text, "backoffstrategy")
    assert "BackoffStrategy" in snippet  # original casing, found case-insensitively
    assert snippet.startswith("...") and snippet.endswith("...")
    assert len(snippet) <= SNIPPET_LENGTH + 6


def test_cuts_fall_on_word_boundaries() -> None:
    text = f"{FILLER} The RetryConfig object sets the BackoffStrategy of every call. {FILLER}"
    normal = re.sub(r"\s+", " ", text).strip()
    body = _body(snippet_for(text, "retryconfig"))
    start = normal.index(body)
    end = start + len(body)
    assert start == 0 or normal[start - 1] == " "
    assert end == len(normal) or normal[end] == " "


def test_window_prefers_the_densest_cluster_of_distinct_terms() -> None:
    lone = "The word webhook appears alone here."
    cluster = "Verify the webhook signature with the signing secret and a timestamp tolerance."
    text = f"{lone} {FILLER} {cluster} {FILLER}"
    snippet = snippet_for(text, "webhook signature signing tolerance")
    for term in ("webhook", "signature", "signing", "tolerance"):
        assert term in snippet.lower()
    assert "appears alone" not in snippet


def test_no_match_gives_the_start_of_the_text() -> None:
    snippet = snippet_for(FILLER, "zebra")
    assert snippet.startswith("Filler0 word number 0")
    assert snippet.endswith("...") and not snippet.startswith("...")


def test_match_at_the_very_end_has_no_trailing_ellipsis() -> None:
    text = f"{FILLER} Finally the Idempotency-Key header"
    snippet = snippet_for(text, "idempotency")
    assert snippet.startswith("...") and not snippet.endswith("...")
    assert snippet.endswith("Idempotency-Key header")


def test_query_terms_are_lowercased_alphanumeric_and_unique() -> None:
    assert Query.parse("Retry-Config retry CONFIG (v2)").terms == ("retry", "config", "v2")
    assert Query.parse("`%'\"").terms == ()


@pytest.mark.parametrize("query", ["'", "%", "\0", ".*(", "a" * MAX_QUERY_CHARS, "é ü"])
def test_odd_queries_never_fail(query: str) -> None:
    snippet = snippet_for(FILLER, query)
    assert 0 < len(snippet) <= SNIPPET_LENGTH + 6


def test_stop_words_do_not_pull_the_window_away_from_the_words_that_matter() -> None:
    chatter = "How do I get to the start of it in the end? It is in the docs, and the docs are on the site."
    answer = "Create a payment link with payment_links.create and share the returned URL."
    text = f"{chatter} {FILLER} {answer} {FILLER}"
    snippet = snippet_for(text, "how do I create a payment link in the python sdk")
    assert "payment_links.create" in snippet
    assert "start of it" not in snippet


def test_a_query_of_stop_words_only_still_anchors_on_them() -> None:
    text = f"{FILLER} Where is it? {FILLER}"
    assert "Where is it" in snippet_for(text, "where is it")


def test_a_term_longer_than_the_window_gives_a_window_at_its_match() -> None:
    # a long hash or base64 blob searched for: its match cannot fit, and it must not end the search
    blob = "a" * 300
    snippet = make_snippet("x " * 2000 + blob + " tail", [blob])
    assert snippet.startswith("...") and "aaaa" in snippet
    assert len(snippet) <= SNIPPET_LENGTH + 10
