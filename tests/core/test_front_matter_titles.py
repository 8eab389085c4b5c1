"""A page whose title only its front matter states is found by that title, end to end.

Documentation sites that render a page's title from its front matter (``title: Release
management``) start the markdown with the first section, so no heading and no breadcrumb holds the
title. The title then stands above the page's chunks as a top heading would: its words are in
their path column.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "versioning.md": (
        "---\ntitle: Release management\n---\n\n## Channels\n\nStable and next channels get a tag on "
        "each publish.\n\n## Support policy\n\nEach major line is supported for a year.\n"
    ),
    "faq.md": (
        "# Frequently asked questions\n\n## Why is the store so large?\n\nThe store keeps every "
        "version and cleans old entries after each release.\n\n## Can I use a "
        "proxy?\n\nYes, set the proxy in the settings.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "front-matter-titles", PAGES)) as engine:
        yield engine


def test_a_front_matter_title_finds_its_page(engine: SearchEngine) -> None:
    hits = engine.search("release management", limit=3).hits
    assert hits[0].filepath == "versioning.md"
