"""A command known by another name is found by that name with its options.

Command-line references list the other names a command answers to: Docker's pages under an
``Aliases`` heading (`` `docker container ls`, `docker container list`, `docker ps` ``), pnpm's on a
line (``Aliases: `i` ``, a word that stands for the command's last one). A reader asks with the
name they know (``docker container list --format``, ``pnpm i --frozen-lockfile``), and the option's
section of that command's page is the answer, not the same option of a command that shares words.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.chunking import Chunk
from docs_mcp_core.ranking import MAX_ALIASES, page_aliases, page_commands
from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, opened


def _docker_page(command: str, aliases: str, noun: str) -> str:
    return (
        f"# {command}\n\nList {noun}s\n\n### Aliases\n\n{aliases}\n\n### Options\n\n| Name | Description |\n"
        f"|---|---|\n| [`--format`](#format) | Format output using a custom template |\n\n## Examples\n\n"
        f'### <a name="format"></a> Format the output\n\nThe formatting option (`--format`) prints each '
        f"{noun} with a Go template.\n"
    )


def _pnpm_page(title: str, aliases: str, flag: str, what: str) -> str:
    return (
        f"---\ntitle: {title}\n---\n\n{aliases}\n\n{what.capitalize()}.\n\n## Options\n\n"
        f"### {flag}\n\nWith this flag pnpm will {what} and never touch the lockfile.\n"
    )


PAGES = {
    ".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h3"}}',
    "commandline/container_ls.md": _docker_page(
        "docker container ls", "`docker container ls`, `docker container list`, `docker ps`", "container"
    ),
    "commandline/network_ls.md": _docker_page(
        "docker network ls", "`docker network ls`, `docker network list`", "network"
    ),
    "commandline/volume_ls.md": _docker_page(
        "docker volume ls", "`docker volume ls`, `docker volume list`", "volume"
    ),
    "cli/install.md": _pnpm_page("pnpm install", "Aliases: `i`", "--offline", "install from the store only"),
    "cli/add.md": _pnpm_page(
        "pnpm add <pkg>", "Aliases: `a`", "--offline", "add packages from the store only"
    ),
    "cli/update.md": _pnpm_page(
        "pnpm update", "Aliases: `up`, `upgrade`", "--offline", "update from the store only"
    ),
    "cli/remove.md": _pnpm_page(
        "pnpm remove", "Aliases: `rm`, `uninstall`", "--global", "remove packages globally"
    ),
    "guide/installation.md": (
        "# Installation\n\n## Uninstalling pnpm\n\nTo uninstall pnpm from your system, rm its home folder "
        "(`rm -rf $PNPM_HOME`) and uninstall the global pnpm package; pnpm rm and pnpm uninstall remove "
        "dependencies of a project, not pnpm.\n"
    ),
    "guide/list.md": (
        "# Listing things\n\nEvery list command takes `--format`: `docker ps --format json`, "
        "`docker network list --format json`, `docker volume list --format json`.\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "command-aliases", PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "docker container list --format",
            "commandline/container_ls.md#docker-container-ls/examples/a-nameformata-format-the-output",
        ),
        (
            "docker ps --format",
            "commandline/container_ls.md#docker-container-ls/examples/a-nameformata-format-the-output",
        ),
        (
            "docker network list --format",
            "commandline/network_ls.md#docker-network-ls/examples/a-nameformata-format-the-output",
        ),
        (
            "docker volume list --format",
            "commandline/volume_ls.md#docker-volume-ls/examples/a-nameformata-format-the-output",
        ),
        ("pnpm i --offline", "cli/install.md#options/offline"),
        ("pnpm up --offline", "cli/update.md#options/offline"),
        ("pnpm upgrade --offline", "cli/update.md#options/offline"),
    ],
)
def test_a_command_asked_by_another_name_finds_its_option(
    engine: SearchEngine, query: str, expected: str
) -> None:
    assert engine.search(query, limit=5).hits[0].chunk_id == expected


def _chunk(filepath: str, heading: str, content: str, breadcrumb: str = "") -> Chunk:
    return Chunk(
        chunk_id=f"{filepath}#{heading.lower()}",
        filepath=filepath,
        heading=heading,
        heading_level=3,
        content=content,
        content_text=content,
        breadcrumb=breadcrumb or f"{filepath} > {heading}",
        chunk_index=0,
        metadata={},
    )


def test_aliases_are_the_commands_in_code_under_an_aliases_heading_or_on_an_aliases_line() -> None:
    chunks = [
        _chunk("a.md", "Aliases", "### Aliases\n\n`docker container run`, `docker run`"),
        _chunk("b.md", "Usage", "**Aliases:** `i`, `install-test`\n\nRun `pnpm i --force` to reinstall."),
        _chunk("c.md", "Notes", "Some tools have aliases: `ll` is one, and `alias ll='ls -l'` makes it."),
    ]
    assert page_aliases(chunks) == {
        "a.md": ("docker container run", "docker run"),
        "b.md": ("i", "install-test"),
    }


def test_a_short_alias_stands_for_the_last_word_of_the_titled_command() -> None:
    chunk = _chunk("cli/install.md", "--offline", "### --offline", "cli/install.md > Options > --offline")
    # the title's command, the file name's, the alias of the title's last word, a whole command
    commands = ["pnpm install", "install", "pnpm i", "docker run"]
    assert page_commands(chunk, "pnpm install", ("i", "docker run")) == commands


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pnpm upgrade", "cli/update.md#_preamble"),
        ("pnpm rm", "cli/remove.md#_preamble"),
    ],
)
def test_a_command_asked_alone_by_another_name_opens_its_page(
    engine: SearchEngine, query: str, expected: str
) -> None:
    assert engine.search(query, limit=5).hits[0].chunk_id == expected


def test_a_page_lists_a_bounded_number_of_aliases() -> None:
    """Each alias is slugged with every option of its page in every chunk: a list of thousands
    (a hostile or generated page) is cut, not multiplied into every chunk's spellings."""
    many = ", ".join(f"`tool cmd{n}`" for n in range(5000))
    aliases = page_aliases([_chunk("a.md", "Aliases", f"### Aliases\n\n{many}")])["a.md"]
    assert aliases == tuple(f"tool cmd{n}" for n in range(MAX_ALIASES))
