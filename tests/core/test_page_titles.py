"""A page's title names its introduction: ``TLS certificates`` finds the page's opening, end to end.

A page chunked below its title keeps the title and its introduction in a preamble whose breadcrumb
is the file alone; the title is in the breadcrumbs of the page's sections. A reader who types the
title (a topic of two words) wants the page from its start, not the section whose heading repeats
one of its words.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "concepts/certificates.md": (
        "# TLS certificates\n\nBy default the tool loads certificates from its bundled roots, which are "
        "portable and safe across platforms.\n\n## System certificates\n\nUse the platform's native "
        "certificate store with `--native-tls`, for example behind a corporate proxy.\n\n## Custom "
        "certificates\n\nSet `SSL_CERT_FILE` to a bundle of custom certificates when a direct path to "
        "the certificate is required.\n"
    ),
    "guides/audio.md": (
        "# Text to Speech\n\nTurn written text into natural audio in dozens of voices, streamed or as a "
        "file.\n\n## Streaming\n\nStream the speech as it is generated with `tool say --stream`.\n\n## Voices\n\nList the voices with `tool voices`.\n"
    ),
    "concepts/cache.md": (
        "# Caching\n\n## Cache directory\n\nThe cache lives in the user's cache folder.\n\n## Clearing "
        "the cache\n\nRemove every entry with `tool cache clean`.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "titles", PAGES)) as engine:
        yield engine


def test_a_pages_title_of_two_words_finds_its_opening(engine: SearchEngine) -> None:
    assert engine.search("TLS certificates", limit=3).hits[0].chunk_id == "concepts/certificates.md#_preamble"


def test_the_file_name_still_names_the_page(engine: SearchEngine) -> None:
    assert engine.search("certificates", limit=3).hits[0].chunk_id == "concepts/certificates.md#_preamble"


def test_a_title_with_a_small_word_names_its_page_without_it(engine: SearchEngine) -> None:
    # the query's small words are dropped (text to speech: text, speech), so is the title's
    assert engine.search("text to speech", limit=3).hits[0].chunk_id == "guides/audio.md#_preamble"


# A manifest whose taxonomy values are everyday words: ``api`` is also a word of a page's title.
KINDS_MANIFEST = (
    '{"version": "1", "taxonomy": {"kind": {"description": "Kind of page"}}, "overrides": ['
    '{"pattern": "**", "metadata": {"kind": "guide"}}, {"pattern": "guide/api-*.md", "metadata": {"kind": "api"}}]}'
)
KIND_PAGES = {
    ".docs-mcp.json": KINDS_MANIFEST,
    "guide/api-reload.md": (
        "# Reload API\n\nThe tool exposes its manual reload API on a special object of every module.\n\n"
        "## reload.accept(cb)\n\nAccept the module's own updates; the reload API calls `cb` with the new "
        "module.\n\n## reload.dispose(cb)\n\nClean up side effects before the reload API swaps the module.\n\n"
        "## reload.data\n\nData kept across reload API swaps of the same module.\n"
    ),
    "guide/features.md": (
        "# Features\n\nWhat the tool does out of the box.\n\n## Reloading\n\nEdits reach the browser at once "
        "through the reload API.\n"
    ),
}


@pytest.fixture(scope="module")
def kinds_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "kinds", KIND_PAGES)) as engine:
        yield engine


def test_a_title_whose_word_is_a_taxonomy_value_still_names_its_page(kinds_engine: SearchEngine) -> None:
    # ``api`` is read as the kind the reader wants, and the title without it (``reload``) names no
    # page; the whole title does
    assert kinds_engine.search("Reload API", limit=3).hits[0].chunk_id == "guide/api-reload.md#_preamble"


CONFIG_PAGES = {
    "config/index.md": (
        "# Configuring Widgets\n\nWhen it starts, the tool reads a file named `tool.config.js` from "
        "the project root, whose default export holds its options. Options given on the command line "
        "win over the file's, and the file's over the defaults.\n\n"
        "## Config intellisense\n\nEditors complete the options when configuring widgets.\n\n"
        "## Conditional config\n\nExport a function when configuring widgets per command.\n\n"
        "## Async config\n\nExport a promise when configuring widgets needs a lookup.\n"
    ),
    "guide/features.md": (
        "# Features\n\nWhat the tool does out of the box.\n\n## Reloading\n\nEdits reach the browser at once.\n"
    ),
}


@pytest.fixture(scope="module")
def config_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "config", CONFIG_PAGES)) as engine:
        yield engine


def test_a_page_named_by_its_title_opens_above_its_sections(config_engine: SearchEngine) -> None:
    # every section says the title's words, in its breadcrumb and its text; the opening in its heading only
    assert (
        config_engine.search("configuring widgets", limit=3).hits[0].chunk_id == "config/index.md#_preamble"
    )


LONG_TITLE_PAGES = {
    "guides/github.md": (
        "# Using widgets in GitHub Actions\n\nA workflow installs the tool once and reuses its cache "
        "between jobs.\n\n## Installation\n\nInstall widgets in GitHub Actions with the setup step.\n\n"
        "## Caching\n\nCache widgets between GitHub Actions runs.\n\n## Publishing\n\nPublish widgets "
        "from GitHub Actions with a token.\n"
    ),
    "pip/compatibility.md": (
        "# Compatibility with pip and pip-tools\n\nThe interface accepts most arguments the older tools "
        "take; the differences follow.\n\n## Configuration files\n\npip and pip-tools read their own "
        "files; the tool reads none of them.\n\n## Pre-releases\n\npip and pip-tools accept a "
        "pre-release where the tool asks for a flag.\n"
    ),
}


@pytest.fixture(scope="module")
def long_titles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "long-titles", LONG_TITLE_PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # four words of its own: longer than a topic, but the page's whole name
        ("Using widgets in GitHub Actions", "guides/github.md#_preamble"),
        # a query says each word once (pip), the title twice (pip and pip-tools)
        ("Compatibility with pip and pip-tools", "pip/compatibility.md#_preamble"),
    ],
)
def test_a_title_asked_whole_opens_its_page(long_titles: SearchEngine, query: str, expected: str) -> None:
    assert long_titles.search(query, limit=3).hits[0].chunk_id == expected
