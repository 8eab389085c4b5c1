"""A query that asks for one environment variable finds the variable's definition."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.coverage import asks_for_variable
from tests.support.tiny_corpus import build_pages, opened

PAGES = {
    "reference/environment.md": (
        "# Environment variables\n\nEvery variable the tool reads, and what it changes.\n\n"
        "## TOOL_CACHE_DIR\n\nThe folder of the cache.\n\n"
        "## TOOL_NO_SYNC\n\nDo not sync the environment before running a command.\n"
    ),
    "concepts/cache.md": (
        "# Caching\n\n## Cache directory\n\nThe cache directory is chosen from the command line "
        "or the settings file, and may be moved.\n"
    ),
    "reference/cli/run.md": (
        "# tool run\n\nRun a command.\n\n## Options\n\n`--no-sync`: skip syncing the environment before "
        "running a command; see the environment variable as well.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "variables", PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        (
            "environment variable for the cache directory",
            "reference/environment.md#environment-variables/toolcachedir",
        ),
        (
            "env var to skip syncing before running a command",
            "reference/environment.md#environment-variables/toolnosync",
        ),
    ],
)
def test_a_query_for_one_variable_finds_its_definition(engine: SearchEngine, query: str, wanted: str) -> None:
    assert engine.search(query, limit=3).hits[0].chunk_id == wanted


def test_one_variable_and_not_the_list_of_them() -> None:
    assert asks_for_variable(["environment", "variable", "for", "the", "cache"])
    assert asks_for_variable(["env", "var", "to", "skip", "syncing"])
    assert not asks_for_variable(["environment", "variables", "uv", "reads"])
    assert not asks_for_variable(["variable", "environment"])
