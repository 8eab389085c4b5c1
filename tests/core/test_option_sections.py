"""A command's page that documents each option in a section of its own is found by command and option.

Reference pages of command-line tools (Docker's, for one) head a page with its command (``# ps``,
file ``container_ls.md``) and give each option an example section whose heading lists the option in
parentheses at its end (``Filtering (--filter)``) or carries an anchor named after it (``<a
name="format">``). The same options, in the same words, are on dozens of pages: only the command
tells them apart, so a query that names both (``docker node ps --filter``) wants that command's
section, end to end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.anchors import chunk_anchors, option_links
from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened


def _page(command: str, noun: str) -> str:
    return (
        f"# {command}\n\nList {noun}s\n\n### Options\n\n| Name | Description |\n|---|---|\n"
        f"| [`-f`](#filter), [`--filter`](#filter) | Filter output based on conditions |\n"
        f"| [`--format`](#format) | Format output using a custom template |\n\n## Examples\n\n"
        f'### <a name="filter"></a> Filtering (--filter)\n\nThe filtering flag takes a key=value pair, '
        f"one per condition on the {noun}s listed.\n\n"
        f'### <a name="format"></a> Format the output\n\nThe formatting option (`--format`) prints each '
        f"{noun} with a Go template.\n"
    )


PAGES = {
    ".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h3"}}',
    "commandline/container_ls.md": _page("ps", "container"),
    "commandline/node_ps.md": _page("node ps", "task"),
    "commandline/image_ls.md": _page("images", "image"),
    "commandline/container_run.md": (
        "# run\n\nCreate and run a new container\n\n### Options\n\n| Name | Description |\n|---|---|\n"
        "| [`-p`](#publish), [`--publish`](#publish) | Publish a container's port(s) to the host |\n"
        "| [`-P`](#publish-all), [`--publish-all`](#publish-all) | Publish all exposed ports |\n\n## Examples\n\n"
        '### <a name="publish"></a> Publish or expose port (-p, --expose)\n\n`docker run -p 127.0.0.1:80:8080 '
        "nginx` binds port 8080 of the container to port 80 of the host.\n\n"
        '### <a name="publish-all"></a> Publish all exposed ports (-P, --publish-all)\n\nEvery exposed port '
        "is published to a random port of the host.\n"
    ),
    "guide/filtering.md": (
        "# Filtering output\n\nMost list commands take `--filter` and `--format`: `docker ps --filter "
        "status=exited`, `docker images --filter dangling=true`, `docker node ps --format json`.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "option-sections", PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("docker ps --filter", "commandline/container_ls.md#ps/examples/a-namefiltera-filtering-filter"),
        ("docker node ps --filter", "commandline/node_ps.md#node-ps/examples/a-namefiltera-filtering-filter"),
        ("docker images --filter", "commandline/image_ls.md#images/examples/a-namefiltera-filtering-filter"),
        (
            "docker run --publish",
            "commandline/container_run.md#run/examples/a-namepublisha-publish-or-expose-port-p-expose",
        ),
        (
            "docker node ps --format",
            "commandline/node_ps.md#node-ps/examples/a-nameformata-format-the-output",
        ),
    ],
)
def test_the_command_and_the_option_find_that_commands_section(
    engine: SearchEngine, query: str, expected: str
) -> None:
    assert engine.search(query, limit=5).hits[0].chunk_id == expected


def test_a_section_the_options_table_links_an_option_to_is_that_options() -> None:
    """``Publish or expose port (-p, --expose)`` never writes ``--publish``; the page's options table
    links ``--publish`` to its anchor, which says the section documents it."""
    heading = '<a name="publish"></a> Publish or expose port (-p, --expose)'
    content = f"### {heading}\n\nUse `-p 8080:80` to publish a port."
    linked = option_links("| [`--publish`](#publish), [`-p`](#publish) | list | Publish a port |")
    assert linked == {"publish": ["--publish", "--p"]}
    assert "run.--publish" in chunk_anchors(heading, content, ["run"], linked)
    assert "run.--publish" not in chunk_anchors(heading, content, ["run"])
    assert "run.--publish" not in chunk_anchors("Examples", content, ["run"], linked)  # not its anchor


def test_an_anchor_is_an_option_only_where_its_section_writes_it() -> None:
    heading = '<a name="output"></a> Choose where it goes'
    assert "run.--output" in chunk_anchors(heading, f"### {heading}\n\nUse `--output file`.", ["run"])
    assert "run.--output" not in chunk_anchors(heading, f"### {heading}\n\nWrites to a file.", ["run"])


def test_options_linked_to_one_section_are_bounded() -> None:
    """A page linking thousands of options to one anchor: the first few are read."""
    from docs_mcp_core.anchors import MAX_LINKED_OPTIONS
    from docs_mcp_core.chunking import Chunk
    from docs_mcp_core.ranking import page_option_links

    table = "".join(f"| [`--opt-{n}`](#x) |\n" for n in range(5_000))
    chunks = [Chunk("a.md#options", "a.md", "Options", 3, table, "", "a.md > Options", 0)] * 3
    links = page_option_links(chunks)
    assert links == {"a.md": {"x": [f"--opt-{n}" for n in range(MAX_LINKED_OPTIONS)]}}
