"""A query that draws a contrast with what it does not want ranks what it wants, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from docs_mcp_core.search import Query, SearchEngine
from docs_mcp_core.search.coverage import neighbour_factors
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "folders.md": "# Folders\n\n## Update\n\nRename a folder or move it.\n",
    "tags.md": "# Tags\n\n## Update\n\nRename a tag. A tag is not a folder: a tag labels a link, a folder holds it.\n",
    "links.md": "# Links\n\n## Delete\n\nDelete a link.\n\n## Archive\n\nArchive a link and its tag.\n",
    # a resource whose folder name holds the other's (partnerapplications), its text the wanted words
    "sdks/partners/README.md": "# Partners\n\n## list\n\nList the partners of a program.\n",
    "sdks/partnerapplications/README.md": (
        "# PartnerApplications\n\n## list\n\nList the partners enrolled in a program who applied, "
        "pending or enrolled.\n"
    ),
    "sdks/links/README.md": (
        "# Links\n\n## update\n\nChange the URL of one link.\n\n"
        "## upsert\n\nChange the URL of a link, or create the link.\n\n"
        "## updateMany\n\nChange the URL of many links in bulk.\n"
    ),
    "sdks/commissions/README.md": (
        "# Commissions\n\n## update\n\nUpdate one commission.\n\n"
        "## updateMany\n\nUpdate many commissions in one call: mark them as paid.\n\n"
        "## list\n\nList many commissions in one call, paid or not.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "contrast", PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("rename a folder, not a tag", "folders.md#folders/update"),
        ("rename a tag rather than a folder", "tags.md#tags/update"),
        ("delete a link instead of archiving its tag", "links.md#links/delete"),
    ],
)
def test_the_contrasted_thing_does_not_outrank_the_wanted_one(
    engine: SearchEngine, query: str, wanted: str
) -> None:
    assert engine.search(query, limit=3).hits[0].chunk_id == wanted


def test_a_row_the_contrast_names_is_damped_even_inside_a_compound_name(engine: SearchEngine) -> None:
    hits = engine.search(
        "list the partners enrolled in a program, not the pending applications", limit=3
    ).hits
    assert hits[0].chunk_id == "sdks/partners/README.md#partners/list"


def test_an_action_the_contrast_rules_out_does_not_damp_the_operation_named_after_it(
    engine: SearchEngine,
) -> None:
    hits = engine.search(
        "mark many commissions as paid in one call instead of updating each one", limit=3
    ).hits
    assert hits[0].chunk_id == "sdks/commissions/README.md#commissions/updatemany"


def test_a_ruled_out_action_does_not_damp_the_operation_that_performs_the_wanted_one(
    engine: SearchEngine,
) -> None:
    hits = engine.search("change the URL of one link, not a bulk update", limit=3).hits
    assert hits[0].chunk_id == "sdks/links/README.md#links/update"


def test_the_rows_a_contrast_names_are_damped_and_action_words_name_none(engine: SearchEngine) -> None:
    reader = engine._rows  # pyright: ignore[reportPrivateUsage]
    every = np.arange(len(engine._catalog.row_ids))  # pyright: ignore[reportPrivateUsage]
    (ids,) = engine._loop.run(reader.values(every, ("chunk_id",)))  # pyright: ignore[reportPrivateUsage]
    rows = np.array([ids.index(c) for c in ("sdks/links/README.md#links/update", "tags.md#tags/update")])

    def factors(terms: list[str]) -> list[float]:
        found = engine._loop.run(neighbour_factors(reader, rows, terms, 0.5))  # pyright: ignore[reportPrivateUsage]
        return [round(f, 3) for f in found]

    assert factors(["tag"]) == [1.0, 0.667]
    assert factors(["bulk", "updat"]) == [1.0, 1.0]  # words of the verb table are left to it
    assert factors([]) == [1.0, 1.0]


def test_the_contrast_terms_are_the_words_only_the_ruled_out_clause_says() -> None:
    assert Query.parse("list the partners, not the pending applications").contrast_terms == [
        "pend",
        "application",
    ]
    assert Query.parse("rename a folder rather than a tag").contrast_terms == ["tag"]
    # the narrower neighbour ``not just`` rules out, without the marker's words
    assert Query.parse("all entries of a conversation, not just the messages").contrast_terms == ["messag"]
    assert Query.parse("rename a folder").contrast_terms == []
