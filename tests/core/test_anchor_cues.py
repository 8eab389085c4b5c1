"""Command-line and configuration references: element ids, key headings and page names as cues.

A small book in the shape generated references take: one page per command whose option groups
repeat nearly verbatim (only the element ids name the command), a configuration reference with one
section per key, and a guide that mentions the same names in passing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages

OPTIONS = """## Common options

<dl>
<dt id="option-tool-{cmd}---frozen"><a href="#option-tool-{cmd}---frozen"><code>--frozen</code></a></dt>
<dd><p>Run without updating the lock file.</p></dd>
<dt id="option-tool-{cmd}---offline"><a href="#option-tool-{cmd}---offline"><code>--offline</code></a></dt>
<dd><p>Disable network access.</p></dd>
</dl>
"""

CONFIG = """# Configuration

## `[cache]`

### dir {{: #cache-dir }}

Where the cache lives.

## `[build]`

### dir {{: #build-dir }}

Where build output goes.
"""

GUIDE = """# Working offline

## Frozen and offline runs

Use `--frozen` with `tool sync` and `tool lock` to keep the lock file: `tool sync --frozen`, then
`tool lock --frozen`, or `--offline`. The cache dir (see `[cache] dir`) holds what a frozen,
offline run needs; frozen runs read the cache dir only; the cache dir is never frozen.
"""


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("cli-book")
    (docs / "commands").mkdir()
    for cmd in ("sync", "lock", "run"):
        page = f"# tool {cmd}\n\nThe {cmd} command.\n\n" + OPTIONS.format(cmd=cmd)
        (docs / "commands" / f"tool-{cmd}.md").write_text(page, encoding="utf-8")
    (docs / "config.md").write_text(CONFIG.format(), encoding="utf-8")
    (docs / "offline.md").write_text(GUIDE, encoding="utf-8")
    out = tmp_path_factory.mktemp("cli-index")
    build_index(BuildOptions(docs_dir=docs, out_dir=out))
    return out


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # repeated option groups, told apart by the ids that name the command
        ("tool lock --frozen", "commands/tool-lock.md#tool-lock/common-options"),
        ("tool run --offline", "commands/tool-run.md#tool-run/common-options"),
        # a bracketed or dotted key: the section whose id is the table and the key
        ("[cache] dir", "config.md#configuration/cache"),
        ("build.dir", "config.md#configuration/build"),
    ],
)
def test_a_name_finds_the_block_that_defines_it(book: Path, query: str, expected: str) -> None:
    engine = SearchEngine.open(book)
    assert engine.search(query, limit=5).hits[0].chunk_id == expected


def test_repeated_option_groups_are_not_collapsed_into_one(book: Path) -> None:
    engine = SearchEngine.open(book)
    ids = {h.chunk_id for h in engine.search("--frozen", limit=10).hits}
    assert {f"commands/tool-{cmd}.md#tool-{cmd}/common-options" for cmd in ("sync", "lock", "run")} <= ids


MANY_OPTIONS = "".join(
    f'<dt id="tool-{{cmd}}--{name}"><a href="#tool-{{cmd}}--{name}"><code>--{name}</code></a></dt>'
    f"<dd><p>{text}</p></dd>\n"
    for name, text in [
        ("offline", "Disable network access."),
        *(
            (f"option-{n}", f"Setting number {n} of the command, with a description of its own.")
            for n in range(120)
        ),
    ]
)
SETTINGS = """# Settings

### offline {: #offline }

Disable network access, offline: only the cache is read. Set `offline = true`, or use the offline
flag of any tool command.
"""
ENVIRONMENT = """# Environment variables

### TOOL_RUN_OFFLINE

Tool run offline: equivalent to the offline flag of tool run.
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Long command pages (one option block among a hundred and twenty) beside a key and a variable of the same name."""
    pages = {"settings.md": SETTINGS, "environment.md": ENVIRONMENT}
    for cmd in ("run", "sync"):
        intro = f"# tool {cmd}\n\nThe tool {cmd} command: usage `tool {cmd} [OPTIONS]`.\n\n## Options\n\n"
        pages[f"cli/tool-{cmd}.md"] = intro + "<dl>\n" + MANY_OPTIONS.format(cmd=cmd) + "</dl>\n"
    return build_pages(tmp_path_factory, "cli-reference", pages)


@pytest.mark.parametrize(
    "query", ["tool run --offline", "what does --offline do in tool run", "--offline flag for tool run"]
)
def test_an_option_named_with_its_command_finds_that_commands_page(reference: Path, query: str) -> None:
    # the command's short introduction, the key and the variable match the words better; only the
    # options block's element id names the option with its command, wherever the query puts the two
    engine = SearchEngine.open(reference)
    assert engine.search(query, limit=5).hits[0].chunk_id.startswith("cli/tool-run.md#tool-run/options")


KEY = """## [`{key}`](#{key}) {{: #{key} }}

{text}

**Default value**: `{default}`

**Type**: `{kind}`

**Example usage**:

```toml
[tool.config]
{key} = {default}
```

"""
KEYS = "# Settings\n\n" + "".join(
    KEY.format(key=key, text=text, default=default, kind=kind)
    for key, text, default, kind in [
        ("package", "Whether the project is built and installed into the environment.", "true", "bool"),
        ("package-name", "The name the project is published under, when not its folder's.", '"demo"', "str"),
        ("managed", "Whether the tool manages the project's environment and lock file.", "true", "bool"),
    ]
)
PACKAGING = """# Packaging

## Building a package

To build a package, run the build command: the package is written to the dist folder. A package
can be built again; every package has a version. To keep a project from being built as a package,
write `package = false` in the `[tool.config]` table of `project.toml`.
"""


@pytest.fixture(scope="module")
def keys_of_one_word(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A key of one word (its id one word) beside a guide that writes the key in code and the word in prose."""
    return build_pages(tmp_path_factory, "one-word-keys", {"settings.md": KEYS, "packaging.md": PACKAGING})


@pytest.mark.parametrize(
    "query", ["tool.config.package", "[tool.config] package", "what does tool.config.package do?"]
)
def test_a_key_of_one_word_written_with_its_table_finds_its_section(
    keys_of_one_word: Path, query: str
) -> None:
    # the guide writes the key's whole spelling and the word five times; only the section's id,
    # one word, names the key, and only a query that writes the key with its table asks for it
    engine = SearchEngine.open(keys_of_one_word)
    assert engine.search(query, limit=5).hits[0].chunk_id == "settings.md#settings/package-package"


def test_the_word_of_a_one_word_key_in_prose_asks_for_no_anchor(keys_of_one_word: Path) -> None:
    engine = SearchEngine.open(keys_of_one_word)
    assert engine.search("build a package", limit=5).hits[0].chunk_id.startswith("packaging.md#")


def test_a_key_in_a_file_named_by_its_stem_finds_its_section(keys_of_one_word: Path) -> None:
    # a reader names project.toml by its stem; "in dist" names no file the corpus writes, so the
    # word stays a word of prose
    engine = SearchEngine.open(keys_of_one_word)
    assert (
        engine.search("package in project", limit=5).hits[0].chunk_id
        == "settings.md#settings/package-package"
    )
    assert engine.search("package in dist", limit=5).hits[0].chunk_id.startswith("packaging.md#")
