"""An operation's section outranks its own subsection when both match, end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.subsections import ancestors, is_operation_heading
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

# ``sendReply`` says what the operation does; its example repeats the question's words. The guide's
# subsection sits under a prose heading: a topic of its own. Sections longer than the chunk size are
# chunked by their subsections, as a generated reference's operations are.
PAGES = {
    ".docs-mcp.json": json.dumps({"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 200}}),
    "sdks/agents/README.md": (
        "# Agents\n\n## sendReply\n\nSend a reply in an agent conversation, as the agent, from your "
        "backend: the message is delivered to the channel the conversation started on.\n\n"
        "### Example Usage: resolve\n\nReply in an agent conversation and resolve the agent "
        "conversation with the reply.\n\n"
        "## list\n\nList the agents.\n"
    ),
    "guides/deploy.md": (
        "# Deploy\n\n## Containers\n\nDeploy the server in a container: build an image, push it to "
        "a registry and run the container where your platform runs containers, with its environment "
        "variables.\n\n"
        "### Environment variables\n\nSet environment variables for the container: environment "
        "variables such as the port, variables read at start.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "subsections", PAGES)) as engine:
        yield engine


def _hits(engine: SearchEngine, query: str, subsection: float | None = None) -> dict[str, float]:
    """The hits' chunk ids and scores, best first; with ``subsection`` as the signal's weight."""
    with ranking_weights(engine, **({} if subsection is None else {"subsection": subsection})):
        return {hit.chunk_id: hit.score for hit in engine.search(query, limit=3).hits}


def test_the_operation_outranks_its_subsection_that_repeats_the_words(engine: SearchEngine) -> None:
    query = "reply in an agent conversation"
    operation = "sdks/agents/README.md#agents/sendreply"
    assert next(iter(_hits(engine, query))) == operation
    # without the signal the example's repeated words win
    assert next(iter(_hits(engine, query, subsection=0.0))) == f"{operation}/example-usage-resolve"


def test_a_guide_s_subsection_under_a_prose_heading_keeps_its_score(engine: SearchEngine) -> None:
    query = "environment variables for the container"
    wanted = "guides/deploy.md#deploy/containers/environment-variables"
    with_signal, without = _hits(engine, query), _hits(engine, query, subsection=0.0)
    assert "guides/deploy.md#deploy/containers" in with_signal  # its section ranks too
    assert next(iter(with_signal)) == wanted
    assert with_signal[wanted] == pytest.approx(without[wanted], rel=1e-6)


def test_the_sections_a_chunk_sits_under() -> None:
    assert ancestors("sdks/agents/README.md#agents/sendreply/example-usage") == [
        "sdks/agents/README.md#agents/sendreply",
        "sdks/agents/README.md#agents",
    ]
    assert ancestors("guide.md#_preamble") == []
    assert ancestors("guide.md") == []


@pytest.mark.parametrize(
    ("heading", "operation"),
    [
        ("delete", True),
        ("sendReply", True),
        ("create_many", True),
        ("Usage", False),
        ("Send a reply", False),
        ("", False),
    ],
)
def test_an_operation_heading_is_one_word_in_lower_case(heading: str, operation: bool) -> None:
    assert is_operation_heading(heading) is operation
