"""Pages of a command-line tool: named by the command without the tool's name, introduced by the
man page's description rather than its NAME and SYNOPSIS header."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.command_pages import command_names, is_man_header, tool_prefixes
from tests.support.tiny_corpus import build_pages

COMMANDS = [
    f"cargo-{verb}"
    for verb in [
        "add",
        "bench",
        "build",
        "check",
        "clean",
        "doc",
        "fetch",
        "fix",
        "init",
        "install",
        "login",
        "logout",
    ]
]
COMMANDS += [
    f"cargo-{verb}"
    for verb in ["metadata", "new", "owner", "package", "publish", "remove", "run", "search", "test", "tree"]
]
COMMANDS += ["cargo-uninstall", "cargo-update", "cargo-vendor", "cargo-yank"]


def test_a_folder_whose_file_names_share_a_first_word_has_that_tool_prefix() -> None:
    paths = [f"commands/{c}.md" for c in COMMANDS] + ["commands/index.md", "guide/first-steps.md"]
    assert tool_prefixes(paths) == {"commands": "cargo"}  # not guide/: one file
    prefixes = tool_prefixes(paths)
    assert command_names("commands/cargo-yank.md", prefixes) == {"yank"}
    assert command_names("commands/cargo-generate-lockfile.md", prefixes) == {"generatelockfile"}
    assert command_names("commands/index.md", prefixes) == set()
    assert command_names("guide/first-steps.md", prefixes) == set()
    mixed = [f"cli/tool-{n}.md" for n in range(3)] + [f"cli/other-{n}.md" for n in range(3)]
    assert tool_prefixes(mixed) == {}  # no word most of the folder's names start with


@pytest.mark.parametrize(("heading", "header"), [("NAME", True), ("Synopsis", True), ("DESCRIPTION", False)])
def test_name_and_synopsis_are_a_man_pages_header(heading: str, header: bool) -> None:
    assert is_man_header(heading) is header


def man_page(command: str) -> str:
    verb = command.removeprefix("cargo-")
    options = "\n".join(
        f'<dt id="option-{command}--{n}"><code>--{n}</code></dt><dd>Option {n}.</dd>' for n in "vqji"
    )
    return f"""# {command}(1)

## NAME

{command} --- the {verb} command of the tool

## SYNOPSIS

`cargo {verb}` [_options_]

## DESCRIPTION

This command takes care of {verb} work for the package in the current folder and reports what it did.

## OPTIONS

{options}

## EXAMPLES

1. Run it:

       cargo {verb}

## SEE ALSO

[cargo(1)](cargo.html), [cargo-build(1)](cargo-build.html)
"""


@pytest.fixture(scope="module")
def man_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of a tool's command pages, one man page per command."""
    pages = {f"commands/{command}.md": man_page(command) for command in COMMANDS}
    return build_pages(tmp_path_factory, "man-pages", pages)


def test_a_commands_bare_name_finds_its_pages_description(man_pages: Path) -> None:
    engine = SearchEngine.open(man_pages)
    for verb in ("yank", "vendor", "owner"):
        hits = engine.search(verb, limit=3).hits
        assert hits[0].chunk_id == f"commands/cargo-{verb}.md#cargo-{verb}1/description", verb


CONFIG = "# Configuration\n\n" + "".join(
    f"## [{verb}]\n\nThe `{verb}` table configures cargo {verb}: `{verb}.jobs`, `{verb}.target` and how "
    f"cargo {verb} reports progress.\n\n"
    for verb in ("yank", "vendor", "owner")
)


def test_a_page_cited_as_a_manual_page_with_its_section_finds_its_description(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    pages = {f"commands/{command}.md": man_page(command) for command in COMMANDS}
    engine = SearchEngine.open(
        build_pages(tmp_path_factory, "cited", {**pages, "reference/config.md": CONFIG})
    )
    for query, verb in (
        ("cargo-yank(1)", "yank"),
        ("what does cargo-vendor(1) do", "vendor"),
        ("cargo-owner(1)", "owner"),
    ):
        hits = engine.search(query, limit=3).hits
        assert hits[0].chunk_id == f"commands/cargo-{verb}.md#cargo-{verb}1/description", query


FAQ = """# Frequently asked questions

## Who may publish a new version

Only an owner may publish: an owner added by another owner, a team owner of a GitHub team, or the
owner who first published the crate. Ask an owner to add you as an owner before you publish.
"""


@pytest.mark.parametrize("query", ["owner in cargo", "cargo: owner", "owner with cargo"])
def test_a_topic_with_the_products_name_is_still_that_topic(
    tmp_path_factory: pytest.TempPathFactory, query: str
) -> None:
    # "cargo" is in every command page's text: it names the book, not one page of it; read as a
    # word of the topic, the topic ("ownercargo") named no page
    pages = {f"commands/{command}.md": man_page(command) for command in COMMANDS}
    engine = SearchEngine.open(build_pages(tmp_path_factory, "product", {**pages, "faq.md": FAQ}))
    ranker = engine._ranker
    assert ranker._names_corpus("cargo")
    assert not ranker._names_corpus("owner")
    hits = engine.search(query, limit=3).hits
    assert hits[0].chunk_id == "commands/cargo-owner.md#cargo-owner1/description", query


def test_a_short_flag_with_its_command_finds_that_commands_options(man_pages: Path) -> None:
    engine = SearchEngine.open(man_pages)
    # -i: a stop word once read as a word, leaving "cargo tree", a page's name, as a topic query
    for query in (
        "what does -q do in cargo vendor",
        "cargo yank -i",
        "-v flag for cargo tree",
        "cargo tree -i",
    ):
        command = next(w for w in ("vendor", "yank", "tree") if w in query)
        hits = engine.search(query, limit=3).hits
        assert hits[0].chunk_id == f"commands/cargo-{command}.md#cargo-{command}1/options", query


GUIDE = """# Troubleshooting

## When a command fails

A command that fails returns a status other than zero: the tool prints what went wrong above it,
and a script can stop on that status.
"""


def test_blocks_the_command_pages_share_are_damped_for_a_question_in_own_words(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    exit_status = "\n## EXIT STATUS\n\n* `0`: the tool succeeded.\n* `101`: the tool failed to complete.\n"
    pages = {f"commands/{command}.md": man_page(command) + exit_status for command in COMMANDS}
    engine = SearchEngine.open(
        build_pages(tmp_path_factory, "shared", {**pages, "guide/troubleshooting.md": GUIDE})
    )
    intent = engine._loop.run(engine._ranker._intent_index())
    assert intent is not None
    ids = engine._catalog.chunk_ids
    shared = {ids[int(i)].split("#")[1].split("/")[-1] for i in intent.model.nonzero()[0]}
    assert "exit-status" in shared  # the same words on every page
    assert "description" not in shared  # a page's introduction is its own
    hits = engine.search("which number means the tool succeeded or failed to complete", limit=2).hits
    assert hits[0].chunk_id == "guide/troubleshooting.md#troubleshooting/when-a-command-fails"
    assert hits[1].chunk_id.endswith("/exit-status")
    assert hits[1].score < 0.6 * hits[0].score  # damped as a data model's section is (0.72 undamped)
