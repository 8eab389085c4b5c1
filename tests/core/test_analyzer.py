"""The Python analyzer agrees with LanceDB's default full-text analyzer, word for word.

LanceDB reports how it analyzed a query in its plan (``tokenized_query=[("term", position), ...]``),
so every check here asks the real index: the vocabulary of the example corpus, hand-picked hard
cases, and the whole SDK corpus when ``../shared`` is present.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.search.analyzer import (
    LANCEDB_STOP_WORDS,
    analyze,
    analyze_positions,
    analyze_words,
    split_words,
)

_TOKENS = re.compile(r"tokenized_query=\[(.*?)\], metrics", re.S)
_TOKEN = re.compile(r'\("((?:[^"\\]|\\.)*)", (\d+)\)')


@pytest.fixture(scope="module")
def table(built_index: Path) -> Any:
    return import_lancedb().connect(str(built_index / ".lancedb")).open_table("chunks")


def lancedb_positions(table: Any, text: str) -> list[tuple[str, int]]:
    """``(term, position)`` pairs LanceDB's full-text index makes of ``text``."""
    from lancedb.query import FullTextOperator, MultiMatchQuery

    query = MultiMatchQuery(text, ["search_text"], boosts=[1.0], operator=FullTextOperator.OR)
    plan = table.search(query, query_type="fts").limit(1).analyze_plan()
    found = _TOKENS.search(plan)
    assert found, plan
    return [(term, int(pos)) for term, pos in _TOKEN.findall(found.group(1))]


def lancedb_terms(table: Any, words: list[str]) -> list[str]:
    """LanceDB's term for each word (``""`` where it drops the word), many words per query.

    LanceDB counts positions from the first term, so each query starts with a word it keeps.
    """
    terms: list[str] = []
    for start in range(0, len(words), 2000):
        batch = words[start : start + 2000]
        row = [""] * (len(batch) + 1)
        for term, pos in lancedb_positions(table, " ".join(["anchor", *batch])):
            row[pos] = term
        assert row[0] == "anchor"
        terms.extend(row[1:])
    return terms


def assert_analyzed_as_lancedb_does(table: Any, words: list[str], at_least: int) -> None:
    assert len(words) >= at_least
    theirs = lancedb_terms(table, words)
    differences = [(w, a, b) for w, a, b in zip(words, analyze_words(words), theirs, strict=True) if a != b]
    assert differences == []


def vocabulary(texts: list[str]) -> list[str]:
    words = split_words(pa.array(texts, pa.string())).flatten().to_pylist()
    return sorted({w for w in words if w})


def test_every_word_of_the_example_corpus_is_analyzed_as_lancedb_does(table: Any) -> None:
    data = (
        table.search()
        .select(["content_text", "search_text", "search_path", "heading"])
        .limit(None)
        .to_arrow()
    )
    texts = [t for column in data.columns for t in column.to_pylist() if t]
    assert_analyzed_as_lancedb_does(table, vocabulary(texts), at_least=1000)


@pytest.mark.parametrize(
    "text",
    [
        "running runs ran configuration configurations idempotency retries",
        "HTTPError get_user_by_id createMany x86_64 v2 ÜBER 123abc",
        "Café naïve résumé über Ångström",
        "日本語 テキスト 中文",
        "create a link by its id",  # stop words leave gaps in the positions
        "foo.bar/baz-qux (quoted) 'single' \"double\" `tick` a→b c—d e’s",
        "a" * 39 + " " + "b" * 40 + " " + "c" * 41 + " after",  # 40 bytes or more are dropped
        "é" * 20 + " " + "é" * 19 + " short",  # bytes, not characters
        "  leading and trailing separators...  ",
        "the first words are stop words: positions count from the first term",
        "does only very because during once why any above ourselves",  # stems that survive
    ],
)
def test_hard_cases_match_lancedb_with_positions(table: Any, text: str) -> None:
    assert analyze_positions(text) == lancedb_positions(table, text)


def test_stop_words_are_matched_against_stems(table: Any) -> None:
    words = [*sorted(LANCEDB_STOP_WORDS), "would", "could", "must", "might", "shall", "python", "retry"]
    theirs = lancedb_terms(table, words)
    assert analyze_words(words) == theirs
    by_word = dict(zip(words, theirs, strict=True))
    assert by_word["the"] == by_word["and"] == by_word["of"] == ""
    assert by_word["above"] == "abov" and by_word["does"] == "doe"  # their stems are not stop words
    assert by_word["would"] == "would" and by_word["retry"] == "retri"


def test_analyze_is_the_terms_without_positions() -> None:
    assert analyze("Retrying the Configurations") == ["retri", "configur"]
    assert analyze("the of and") == []
    assert analyze("") == []


def test_the_sdk_corpus_vocabulary_matches_lancedb(table: Any, shared_dir: Path) -> None:
    docs = shared_dir / "corpora" / "sdk-docs"
    if not docs.is_dir():
        pytest.skip("../shared/corpora/sdk-docs is not present")
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(docs.rglob("*.md"))]
    assert_analyzed_as_lancedb_does(table, vocabulary(texts), at_least=10_000)


def test_threads_analyze_independently() -> None:
    """PyStemmer instances must not be shared between threads: each thread gets its own."""
    from concurrent.futures import ThreadPoolExecutor

    words = [
        f"{stem}{suffix}"
        for stem in ("configur", "retri", "connect", "generat")
        for suffix in ("ing", "ed", "ation", "s", "ies")
    ]
    words = words * 200
    expected = analyze_words(words)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: analyze_words(words), range(32)))
    assert all(result == expected for result in results)
