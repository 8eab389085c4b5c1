"""A section split into parts is read from its first part when both parts match, end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.parts import first_part, part_factors
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

# ``stream`` is longer than the chunk size: its second part repeats the question's words (a
# parameter list), its first part says what the operation does.
PAGES = {
    ".docs-mcp.json": json.dumps({"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 200}}),
    "agents.md": (
        "# Agents\n\n## stream\n\nStream the events of an agent by its id.\n\n"
        "Call it with the client you created first, and read what comes back as it arrives.\n\n"
        "Parameters: the agent id, the agent id of the agent; events: the events, every event, "
        "each event of the events of the agent id.\n\n"
        "## complete\n\nComplete a prompt with an agent.\n"
    ),
    "chat.md": "# Chat\n\n## stream\n\nStream a chat completion as events.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "parts", PAGES)) as engine:
        yield engine


def test_the_first_part_of_a_section_outranks_a_later_part_that_repeats_the_words(
    engine: SearchEngine,
) -> None:
    query = "stream the events of an agent by its agent id"
    ids = [h.chunk_id for h in engine.search(query, limit=3).hits]
    assert ids[:2] == ["agents.md#agents/stream", "agents.md#agents/stream-part-2"]
    with ranking_weights(engine, later_part=0.0):  # without the signal the later part's repeated words win
        first = engine.search(query, limit=3).hits[0].chunk_id
    assert first == "agents.md#agents/stream-part-2"


def test_the_first_part_of_a_later_part() -> None:
    assert first_part("links.md#links/create/parameters-part-2") == "links.md#links/create/parameters"
    assert first_part("guide.md#_preamble-part-3") == "guide.md#_preamble"
    assert first_part("links.md#links/create/parameters") is None
    assert first_part("guide.md#migration/part-1") is None  # a heading's own words, no part


def test_a_later_part_is_damped_only_beside_its_first_part_and_unless_kept() -> None:
    ids = ["a.md#s", "a.md#s-part-2", "a.md#t-part-2", "a.md#s-part-3"]
    assert part_factors(ids, np.zeros(4, bool), 0.25).tolist() == [1.0, 0.8, 1.0, 0.8]
    keep = np.array([False, False, False, True])  # the option leg named it
    assert part_factors(ids, keep, 0.25).tolist() == [1.0, 0.8, 1.0, 1.0]


OPTION_PAGES = {
    ".docs-mcp.json": PAGES[".docs-mcp.json"],
    "reference/cli/uv-add.md": (
        "# uv add\n\n## Options\n\nOptions of uv add: how uv add links, copies and installs packages.\n\n"
        '<dl class="cli-reference"><dt id="uv-add--frozen"><code>--frozen</code></dt>'
        "<dd>Add without locking.</dd></dl>\n\n"
        '<dl class="cli-reference"><dt id="uv-add--link-mode"><code>--link-mode</code></dt>'
        "<dd>The method used to install packages.</dd></dl>\n"
    ),
}


def test_a_later_part_that_defines_the_option_the_query_names_keeps_its_score(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with opened(build_pages(tmp_path_factory, "option-parts", OPTION_PAGES)) as engine:
        hits = engine.search("uv add --link-mode", limit=3).hits
        assert [h.chunk_id for h in hits[:2]] == [
            "reference/cli/uv-add.md#uv-add/options-part-2",
            "reference/cli/uv-add.md#uv-add/options",
        ]
        with ranking_weights(engine, later_part=0.0):
            undamped = engine.search("uv add --link-mode", limit=3).hits[0].score
        assert hits[0].score == pytest.approx(undamped, rel=1e-6)
