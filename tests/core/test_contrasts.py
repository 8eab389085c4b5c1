"""A query that draws a contrast with what it does not want ranks what it wants, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "folders.md": "# Folders\n\n## Update\n\nRename a folder or move it.\n",
    "tags.md": "# Tags\n\n## Update\n\nRename a tag. A tag is not a folder: a tag labels a link, a folder holds it.\n",
    "links.md": "# Links\n\n## Delete\n\nDelete a link.\n\n## Archive\n\nArchive a link and its tag.\n",
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
