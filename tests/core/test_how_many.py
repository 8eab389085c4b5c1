"""``how many`` asks for a count: its ``many`` names no batch operation, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import Query, SearchEngine
from docs_mcp_core.search.intent import VERB_GROUPS, query_verbs
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "sdks/links/README.md": (
        "# Links\n\n## count\n\nCount the links.\n\n"
        "## createMany\n\nCreate many links in one call.\n\n"
        "## updateMany\n\nUpdate many links in one call.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "how-many", PAGES)) as engine:
        yield engine


def test_how_many_finds_the_count_not_the_batch_operations(engine: SearchEngine) -> None:
    assert (
        engine.search("how many links do I have", limit=3).hits[0].chunk_id
        == "sdks/links/README.md#links/count"
    )


@pytest.mark.parametrize("text", ["how many links do I have", "How much storage is used"])
def test_the_quantifier_of_how_many_is_neither_a_match_term_nor_a_coverage_word(text: str) -> None:
    query = Query.parse(text)
    assert "mani" not in query.match_terms and "much" not in query.match_terms
    assert "many" not in query.coverage_terms and "much" not in query.coverage_terms
    assert query.focus == text  # the other legs read the question as asked


def test_many_elsewhere_stays_and_how_many_still_names_the_count() -> None:
    assert "mani" in Query.parse("create many links").match_terms
    assert "many" in Query.parse("create many links").coverage_terms
    count = 1 << next(bit for bit, group in enumerate(VERB_GROUPS) if "count" in group)
    assert query_verbs(Query.parse("how many links do I have").terms) & count
