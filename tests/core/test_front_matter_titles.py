"""A page whose title only its front matter states is found by that title, end to end.

Documentation sites that render a page's title from its front matter (``title: Release
management``) start the markdown with the first section, so no heading and no breadcrumb holds the
title. The title then stands above the page's chunks as a top heading would: its words are in
their path column.
"""

from __future__ import annotations

import json
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


def test_a_megabyte_title_is_cut_as_a_heading_is(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A front-matter title stands above every chunk of its page: uncut, a 100 KB title over 100
    sections wrote 10 MB of path words (its size times the page's chunks). It is cut to a
    heading's length, with the same ellipsis, so the index grows with the file, not its square."""
    import lancedb

    from docs_mcp_core.chunking import MAX_HEADING_LENGTH

    title = " ".join(f"word{i}" for i in range(12_500))
    sections = "".join(f"## Section {i}\n\nText of section {i}.\n\n" for i in range(100))
    out = build_pages(
        tmp_path_factory, "long-title", {"page.md": f'---\ntitle: "{title}"\n---\n\n{sections}'}
    )
    table = lancedb.connect(str(out / ".lancedb")).open_table("chunks").to_arrow()
    paths = table.column("search_path").to_pylist()
    assert len(paths) == 100
    assert all("word0 word1" in p and len(p) < MAX_HEADING_LENGTH + 100 for p in paths)
    titles = json.loads((out / "metadata.json").read_text(encoding="utf-8"))["files"]
    assert len(titles["page.md"]["title"]) == MAX_HEADING_LENGTH
    assert titles["page.md"]["title"].endswith("…")


COMMAND_PAGES = {
    "cli/install.md": (
        "---\ntitle: tool install\n---\n\nInstalls every dependency of the project.\n\n## Options\n\n"
        "### --frozen\n\nFail instead of updating the lockfile.\n\n### --offline, -o\n\nUse only the store.\n"
    ),
    "cli/add.md": (
        "---\ntitle: tool add <pkg>\n---\n\nAdds a package.\n\n## Options\n\n### --frozen\n\nFail instead "
        "of updating the lockfile.\n\n### --offline, -o\n\nUse only the store.\n"
    ),
    "continuous-integration.md": (
        "# Continuous integration\n\n## Installing\n\nIn CI, run `tool install --frozen` so that the "
        "install fails when the lockfile is out of date: `tool install --frozen` never writes the "
        "lockfile, and `tool install --frozen --offline` reads only the store.\n"
    ),
}


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "command-titles", COMMAND_PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tool install --frozen", "cli/install.md#options"),
        ("tool add --frozen", "cli/add.md#options"),
        ("tool install -o", "cli/install.md#options"),
    ],
)
def test_an_option_named_with_the_command_a_page_is_titled_with_finds_that_page(
    commands: SearchEngine, query: str, expected: str
) -> None:
    """A command's page titled in its front matter (``title: tool install``) defines its options by
    headings (``### --frozen``); the option named with the command is that page's, not a guide's
    that writes the whole command line."""
    assert commands.search(query, limit=3).hits[0].chunk_id == expected


SETTINGS_PAGES = {
    ".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h3"}}',
    "settings/build.md": (
        "---\ntitle: Build Settings\n---\n\n### ignoreScripts\n\nDo not run any script of the project "
        "or its dependencies.\n\n### childConcurrency\n\nThe most child processes to run at once.\n\n"
        "### allowBuilds\n\nThe dependencies whose build scripts may run during a build; settings of "
        "other builds are kept.\n\n### strictDepBuilds\n\nFail when a dependency's build has scripts "
        "that were not reviewed; build settings are read from the workspace.\n"
    ),
    "settings/store.md": (
        "---\ntitle: Store Settings\n---\n\n### storeDir\n\nWhere the store lives.\n\n### verifyStore\n\n"
        "Check the store's files before linking them.\n"
    ),
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "front-matter-settings", SETTINGS_PAGES)) as engine:
        yield engine


def test_a_page_named_by_its_front_matter_title_opens_with_its_first_section(settings: SearchEngine) -> None:
    # the reader names the page; its first key opens it, not the keys whose text says the title's words
    assert settings.search("Build Settings", limit=3).hits[0].chunk_id == "settings/build.md#ignorescripts"


SECTIONS_PAGES = {
    "global-packages.md": (
        "---\ntitle: Global Packages\n---\n\nGlobal packages are command-line tools installed for the "
        "whole system.\n\n## Installing global packages\n\nRun `tool add -g <pkg>`.\n\n## Listing global "
        "packages\n\nRun `tool list -g`.\n\n## Removing global packages\n\nRun `tool remove -g <pkg>`.\n"
    ),
    "faq.md": "# FAQ\n\n## Where do global packages go?\n\nInto the global folder.\n",
}


@pytest.fixture(scope="module")
def sections(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "front-matter-sections", SECTIONS_PAGES)) as engine:
        yield engine


def test_the_first_section_of_a_page_without_a_top_heading_is_not_its_title(sections: SearchEngine) -> None:
    # the breadcrumbs of such a page start with each section's own heading; the first is no title
    hits = sections.search("Installing global packages", limit=3).hits
    assert hits[0].chunk_id == "global-packages.md#installing-global-packages"
