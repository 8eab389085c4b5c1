"""A question in the reader's own words reads a section's body at twice the text boost, in an index
with heading-path vectors (the default build), end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened

# A guide whose body says what the question describes, and a section whose heading (and page
# title) names two of its words and whose body says nothing more.
PAGES = {
    "guide/cache.md": (
        "# Cache\n\n## Clearing the cache\n\n"
        "Remove what earlier runs stored, the downloaded archives and the built wheels, to free space.\n"
    ),
    "guide/disk.md": "# Disk space\n\n## Free disk space\n\nSee the limits of your platform.\n",
    "reference/cli.md": "# Commands\n\n## remove\n\nRemove a package.\n\n## run\n\nRun a command.\n",
}
QUESTION = "free disk space by removing what earlier runs stored"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "described-text", PAGES, heading_vectors=True)) as engine:
        yield engine


def test_a_question_in_own_words_finds_the_body_that_says_it(engine: SearchEngine) -> None:
    assert engine.search(QUESTION, limit=3).hits[0].chunk_id == "guide/cache.md#cache/clearing-the-cache"


def test_with_the_text_boost_of_a_name_the_heading_that_names_two_words_wins(engine: SearchEngine) -> None:
    retrieval = engine._retrieval  # pyright: ignore[reportPrivateUsage]
    saved = retrieval.described_boosts
    retrieval.described_boosts = dict(retrieval.match_boosts)
    try:
        first = engine.search(QUESTION, limit=3).hits[0].chunk_id
    finally:
        retrieval.described_boosts = saved
    assert first == "guide/disk.md#disk-space/free-disk-space"


def test_a_short_query_still_finds_the_heading_that_names_it(engine: SearchEngine) -> None:
    retrieval = engine._retrieval  # pyright: ignore[reportPrivateUsage]
    assert retrieval.described_boosts["search_text"] == 2 * retrieval.match_boosts["search_text"]
    assert engine.search("disk space", limit=3).hits[0].chunk_id == "guide/disk.md#disk-space/free-disk-space"


def test_a_lexical_index_keeps_one_text_boost(tmp_path_factory: pytest.TempPathFactory) -> None:
    with opened(build_pages(tmp_path_factory, "described-text-lexical", PAGES)) as engine:
        retrieval = engine._retrieval  # pyright: ignore[reportPrivateUsage]
        assert retrieval.described_boosts == retrieval.match_boosts
