"""The query of a request, read once: what each leg searches, its words and its terms."""

from __future__ import annotations

import re

import pytest

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search.analyzer import LANCEDB_0_26_STOP_WORDS, analyze, analyze_positions
from docs_mcp_core.search.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, STOP_WORDS, Query, contrast_pattern


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t"])
def test_an_empty_query_is_refused(text: str | None) -> None:
    with pytest.raises(SearchError, match=r"^query is required$"):
        Query.parse(text)


def test_the_text_is_trimmed_and_the_full_text_legs_search_it_without_nul_characters() -> None:
    words = [f"w{i}" for i in range(MAX_QUERY_TERMS)]
    query = Query.parse("  " + " ".join(words) + "  ")
    assert query.text == query.lexical == " ".join(words)
    short = Query.parse("retry\0config")
    assert short.text == "retry\0config"  # what a cursor is signed for
    assert short.lexical == "retry config"


def test_a_query_of_up_to_the_limits_is_read_whole() -> None:
    longest = "x" * MAX_QUERY_CHARS
    assert Query.parse(f"  {longest}\n").text == longest
    words = [f"word{i}" for i in range(MAX_QUERY_TERMS)]
    query = Query.parse(" ".join(words))
    assert query.terms == tuple(words)
    assert query.match_terms == words  # every word reaches the full-text legs
    assert len(query.coverage_terms) == MAX_QUERY_TERMS


def test_a_query_longer_than_the_limit_is_refused_with_its_length() -> None:
    with pytest.raises(SearchError) as refused:
        Query.parse("y" * (MAX_QUERY_CHARS + 1))
    assert str(refused.value) == (
        "query is too long: 2,001 characters, at most 2,000; search for the names and words that matter"
    )


@pytest.mark.parametrize(
    "text",
    [
        " ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 1)),  # separated by spaces
        ".".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 1)),  # one whitespace-free run
        " ".join("é" for _ in range(MAX_QUERY_TERMS + 1)),  # words of any script count
    ],
)
def test_a_query_of_more_words_than_the_limit_is_refused_with_its_count(text: str) -> None:
    with pytest.raises(SearchError) as refused:
        Query.parse(text)
    assert str(refused.value) == (
        "query has too many words: 65, at most 64; search for the names and words that matter"
    )


@pytest.mark.parametrize(
    ("word", "splits"),
    [
        ("कैसे", 2),  # Hindi: a vowel sign is a combining mark, not a letter
        ("كَيْفَ", 3),  # Arabic written with its vowel marks
        ("பணத்தை", 2),  # Tamil
        ("vie\u0302\u0323t", 2),  # Vietnamese with its accents as combining characters (NFD)
    ],
)
def test_a_word_with_combining_marks_counts_once_toward_the_limit(word: str, splits: int) -> None:
    # each mark split the word for the count: 20 such words of Hindi were refused as 40
    assert len(re.findall(r"[^\W_]+", word)) == splits
    Query.parse(" ".join([word] * MAX_QUERY_TERMS))
    with pytest.raises(SearchError, match=r"^query has too many words: 65, at most 64;"):
        Query.parse(" ".join([word] * (MAX_QUERY_TERMS + 1)))


def test_a_huge_query_of_distinct_words_is_refused_by_its_length_first() -> None:
    huge = " ".join(f"w{i:06d}" for i in range(400_000))  # 3.2 MB, 400,000 distinct words
    with pytest.raises(SearchError, match=r"^query is too long: 3,199,999 characters, at most 2,000;"):
        Query.parse(huge)


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


def test_a_query_names_an_identifier_when_it_writes_one_from_code() -> None:
    assert Query.parse("how to call links.createMany").names_identifier
    assert Query.parse("create_many in Python").names_identifier
    # so does a flag or a key, copied from a reference
    assert Query.parse("what does --target-dir do in cargo check").names_identifier
    assert Query.parse("[build] jobs").names_identifier
    # words of the reader's own (which the page-name cue still reads as a slug) are not
    assert not Query.parse("group my short links under a named collection").names_identifier
    assert not Query.parse("re-open a closed issue").names_identifier


@pytest.mark.parametrize(
    ("text", "focus"),
    [
        ("rename a folder, not a tag", "rename a folder"),
        ("delete a batch job rather than cancel it", "delete a batch job"),
        ("fetch one link by its key instead of listing links", "fetch one link by its key"),
        (
            "create a link for a partner (plain create, not upsert)",
            "create a link for a partner (plain create)",
        ),
        ("list partners; not the applications, with pagination", "list partners, with pagination"),
        # ``not just`` rules out the narrower neighbour (the operation that returns only messages)
        ("all entries including tool calls, not just the messages", "all entries including tool calls"),
        ("delete an entire dataset, not only one record", "delete an entire dataset"),
        ("python retries -- not go", "python retries"),
    ],
)
def test_a_contrast_with_what_is_not_wanted_is_left_out_of_what_the_legs_search(
    text: str, focus: str
) -> None:
    query = Query.parse(text)
    assert query.text == text  # what a cursor is signed for and a hint quotes
    assert query.focus == query.lexical == focus
    assert set(query.terms) == set(re.findall(r"[a-z0-9]+", focus.lower()))


@pytest.mark.parametrize(
    "text",
    [
        "why is my hook not called",  # a negation that describes the problem
        "return the body, not just the status but also the headers",  # asks for more
        "the warnings, not only the errors as well",
        "not only errors, also warnings",
        ", not a thing",  # nothing would be left
        "-- not go",
    ],
)
def test_negations_that_are_no_contrast_stay(text: str) -> None:
    assert Query.parse(text).focus == text


def test_the_ablation_s_pattern_without_narrower_neighbours_keeps_not_just_clauses() -> None:
    """``contrast_pattern(narrower=False)`` is how contrasts were read before narrower neighbours
    (``benchmarks/ablation.py`` switches them off with it); every other contrast still goes."""
    before = contrast_pattern(narrower=False)
    text = "all entries including tool calls, not just the messages"
    assert before.sub("", text) == text
    assert before.sub("", "rename a folder, not a tag") == "rename a folder"
    assert contrast_pattern().sub("", text) == "all entries including tool calls"


def test_the_original_ranking_reads_the_whole_query() -> None:
    query = Query.parse("rename a folder, not a tag", expand=False)
    assert query.focus == query.lexical == "rename a folder, not a tag"
    assert "tag" in query.terms


@pytest.mark.parametrize(
    ("text", "focus"),
    [
        ("cargo-build(1)", "cargo-build"),
        ("what does printf(3p) print", "what does printf print"),
        ("see git-commit(1), not git-add(1)", "see git-commit"),
        ("getUser()", "getUser()"),  # a call, no section
        ("links.create(id)", "links.create(id)"),
        ("retry (2) times", "retry (2) times"),  # apart from a word
        ("x(10)", "x(10)"),  # sections are one digit
    ],
)
def test_a_manual_pages_section_number_is_no_word_of_the_query(text: str, focus: str) -> None:
    query = Query.parse(text)
    assert query.focus == focus
    assert Query.parse(text, expand=False).focus == text  # the original recipe reads it whole


@pytest.mark.parametrize(
    ("text", "focus", "embedded"),
    [
        ("vendoring?", "vendoring?", "vendoring"),
        ('"vendoring"?', "vendoring", "vendoring"),
        ("\u201crename a tag, not a folder\u201d", "rename a tag", "rename a tag"),
        ("set the cache in `uv.toml`!", "set the cache in `uv.toml`!", "set the cache in  uv.toml"),
        ("it's done", "it's done", "it's done"),  # an apostrophe is no quote around the query
        ("...", "...", "..."),  # nothing but punctuation: as asked
    ],
)
def test_the_vector_legs_embed_the_question_without_its_closing_punctuation_or_quotes(
    text: str, focus: str, embedded: str
) -> None:
    query = Query.parse(text)
    assert (query.focus, query.embedded) == (focus, embedded)
    assert Query.parse(text, expand=False).embedded == text  # the original recipe embeds it as asked


def test_a_functions_own_name_gives_the_reader_no_verb() -> None:
    def verbs(text: str) -> tuple[str, ...]:
        return Query.parse(text, expand=True).verb_terms

    assert verbs("get_execution_id()") == ()  # what the function does, not an action asked for
    assert verbs("when_done(callback)") == ("callback",)
    assert verbs("dub.links.list example") == ("dub", "links", "list", "example")  # a method on its path
    assert verbs("delete a link") == ("delete", "a", "link")
