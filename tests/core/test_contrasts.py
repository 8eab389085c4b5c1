"""A query that draws a contrast with what it does not want ranks what it wants, end to end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine, SearchOptions

PAGES = {
    "folders.md": "# Folders\n\n## Update\n\nRename a folder or move it.\n",
    "tags.md": "# Tags\n\n## Update\n\nRename a tag. A tag is not a folder: a tag labels a link, a folder holds it.\n",
    "links.md": "# Links\n\n## Delete\n\nDelete a link.\n\n## Archive\n\nArchive a link and its tag.\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("contrast-docs")
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    out = tmp_path_factory.mktemp("contrast-index")
    build_index(BuildOptions(docs_dir=root, out_dir=out, indexed_at="2026-01-01T00:00:00.000Z"))
    return out


@pytest.fixture(scope="module")
def engine(index: Path) -> Iterator[SearchEngine]:
    opened = SearchEngine.open(index, options=SearchOptions())
    yield opened
    opened.close()


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
