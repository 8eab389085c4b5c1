"""A query that says all or every finds the operation named for all items at once, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.every import asks_for_every
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

PAGES = {
    "sdks/notifications/README.md": (
        "# Notifications\n\n## archive\n\nArchive a notification in the inbox.\n\n"
        "## archiveAll\n\nArchive the notifications in the inbox of a subscriber.\n\n"
        "## deleteAll\n\nDelete the notifications of a subscriber.\n"
    ),
    "sdks/credentials/README.md": "# Credentials\n\n## update\n\nReplace the device tokens of a subscriber.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "every", PAGES)) as engine:
        yield engine


def _first(engine: SearchEngine, query: str, every: float | None = None) -> str:
    with ranking_weights(engine, **({} if every is None else {"every": every})):
        return engine.search(query, limit=3).hits[0].chunk_id


def test_every_item_at_once_finds_the_all_form_of_the_verb(engine: SearchEngine) -> None:
    query = "archive every notification in the inbox"
    assert _first(engine, query) == "sdks/notifications/README.md#notifications/archiveall"
    # without the signal the single operation, which says every word, wins
    assert _first(engine, query, every=0.0) == "sdks/notifications/README.md#notifications/archive"


def test_a_verb_the_query_does_not_say_raises_nothing(engine: SearchEngine) -> None:
    query = "replace all the device tokens of a subscriber"
    assert (
        _first(engine, query)
        == _first(engine, query, every=0.0)
        == "sdks/credentials/README.md#credentials/update"
    )


def test_all_or_every_is_asked() -> None:
    assert asks_for_every(["archive", "every", "notification"])
    assert asks_for_every(["mark", "all", "as", "read"])
    assert not asks_for_every(["archive", "a", "notification"])
