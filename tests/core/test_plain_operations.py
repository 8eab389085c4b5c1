"""The plain operation: ``delete a link`` finds ``links.delete``, not ``links.deleteMany``, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.plain_operations import displaced_words, plain_operation_factors, said_words
from tests.support.tiny_corpus import build_pages, opened, ranking_weights


def _operation(name: str, sentence: str, call: str) -> str:
    return (
        f"## {name}\n\n{sentence}\n\n### Example Usage\n\n```python\nfrom acme import Acme\n\n"
        f'with Acme(api_key="<key>") as acme:\n    res = acme.{call}\n    print(res)\n```\n\n'
    )


# Generated-reference pages: the plain operation beside narrower ones with the same verb.
PAGES = {
    "sdks/links/README.md": "# Links\n\n"
    + _operation("create", "Create a link for the authenticated workspace.", "links.create(url=url)")
    + _operation(
        "createMany", "Bulk create up to 100 links for the workspace.", "links.create_many(links=links)"
    )
    + _operation("delete", "Delete a link for the authenticated workspace.", 'links.delete(link_id="l_1")')
    + _operation(
        "deleteMany", "Bulk delete up to 100 links for the workspace.", 'links.delete_many(link_ids=["l_1"])'
    ),
    "sdks/tags/README.md": "# Tags\n\n"
    + _operation("list", "Retrieve a list of tags for the authenticated workspace.", "tags.list()")
    + _operation(
        "get", "Retrieve a tag by its id for the authenticated workspace.", 'tags.get(tag_id="t_1")'
    ),
    "sdks/partners/README.md": "# Partners\n\n"
    + _operation("create", "Create a partner for a program.", 'partners.create(email="a@b.c")')
    + _operation(
        "createLink", "Create a link for a partner of a program.", 'partners.create_link(partner_id="p_1")'
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "plain", PAGES)) as engine:
        yield engine


def _first(engine: SearchEngine, query: str) -> str:
    return engine.search(query, limit=3).hits[0].chunk_id


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("delete a link", "sdks/links/README.md#links/delete"),
        ("create partner", "sdks/partners/README.md#partners/create"),
        # the narrower operation when the query says its words, or their group's
        ("delete many links", "sdks/links/README.md#links/deletemany"),
        ("create a partner link", "sdks/partners/README.md#partners/createlink"),
    ],
)
def test_a_short_action_query_finds_the_operation_that_says_nothing_more(
    engine: SearchEngine, query: str, wanted: str
) -> None:
    assert _first(engine, query) == wanted


def test_without_the_signal_a_narrower_operation_ranks_first(engine: SearchEngine) -> None:
    with ranking_weights(engine, plain_operation=0.0):
        firsts = {_first(engine, "delete a link"), _first(engine, "create partner")}
    assert firsts != {"sdks/links/README.md#links/delete", "sdks/partners/README.md#partners/create"}


def test_narrower_names_are_damped_only_beside_a_plain_one() -> None:
    said = said_words(["delete", "a", "link"])
    assert plain_operation_factors(["delete", "deleteMany", "DeleteMany", "Usage"], said, 0.25).tolist() == [
        1.0,
        0.8,
        0.8,
        1.0,
    ]
    # no plain operation among them: nothing to prefer
    assert plain_operation_factors(["deleteMany", "deleteByTransactionId"], said, 0.25).tolist() == [1.0, 1.0]
    # another verb's operation and prose headings are left alone
    assert plain_operation_factors(["delete", "listLinks", "Delete a link"], said, 0.25).tolist() == [1.0] * 3


def test_a_verb_group_says_its_other_words() -> None:
    assert {"mani", "bulk"} <= said_words(["delete", "in", "bulk"])  # the batch group's words, stemmed
    assert "mani" not in said_words(["delete", "a", "link"])


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("show every tag", "sdks/tags/README.md#tags/list"),
        ("get a tag", "sdks/tags/README.md#tags/get"),
        ("get all the details of a tag", "sdks/tags/README.md#tags/get"),
    ],
)
def test_reading_all_of_something_finds_the_list_operation(
    engine: SearchEngine, query: str, wanted: str
) -> None:
    assert _first(engine, query) == wanted


def test_a_two_word_verb_displaces_the_action_its_first_word_names() -> None:
    assert {"get", "fetch", "retriev"} <= displaced_words(["get", "all", "links"])  # lists them
    assert "get" in displaced_words(["get", "rid", "of", "a", "tag"])  # deletes it
    assert displaced_words(["get", "a", "link"]) == frozenset()
    assert displaced_words(["delete", "all", "links"]) == frozenset()
    said, displaced = said_words(["get", "all", "tags"]), displaced_words(["get", "all", "tags"])
    assert plain_operation_factors(["get", "list", "getTags"], said, 0.25, displaced).tolist() == [
        0.8,
        1.0,
        0.8,
    ]
