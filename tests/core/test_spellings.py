"""Identifier spellings: what a chunk stores, what a query asks for, and the spelling leg on a real index.

The engine tests build a three-language corpus in which one operation is documented identically
except for how each language spells the call, so identifier expansion alone makes the three tie.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.anchors import (
    PAGE_MARK,
    chunk_anchors,
    defined_names,
    element_ids,
    query_anchors,
    query_constants,
    query_option_names,
    table_keys,
)
from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.ranking import command_of
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search.spelling_leg import HEADING_BONUS, SpellingIndex
from docs_mcp_core.spellings import (
    MAX_FORM_SEGMENTS,
    chunk_spellings,
    code_text,
    is_compound,
    query_spellings,
    spelling_forms,
)
from tests.support.tiny_corpus import build_pages


@pytest.mark.parametrize(
    ("name", "compound"),
    [
        ("createMany", True),
        ("NotFound", True),
        ("APIError", True),
        ("create_many", True),
        ("links.list", True),
        ("std::vector", True),
        ("create", False),
        ("Links", False),
        ("HTTP", False),
        ("URLs", False),
        ("IDs", False),
        ("_private", False),
    ],
)
def test_compound_names(name: str, compound: bool) -> None:
    assert is_compound(name) is compound


def test_forms_run_from_the_whole_spelling_to_its_last_compound_part() -> None:
    assert spelling_forms("dub.links.createMany") == (
        "dub.links.createMany",
        "links.createMany",
        "createMany",
    )
    assert spelling_forms("s.Links.Upsert") == ("s.Links.Upsert", "Links.Upsert")  # "Upsert" alone is a word
    assert spelling_forms("std::vector") == ("std.vector",)
    assert spelling_forms("Links") == ()


def test_a_name_of_thousands_of_parts_gives_forms_linear_in_its_length() -> None:
    """Every dotted suffix of a name of k parts is k forms of up to its length: a 140 KB inline
    span of 20,000 dotted parts wrote gigabytes of spellings and took a minute to build (10,000
    parts: 14 s). The whole name, and its suffixes of at most MAX_FORM_SEGMENTS parts."""
    assert MAX_FORM_SEGMENTS >= 8  # the longest names of the evaluation corpora have 6 parts
    name = ".".join(f"part{i}" for i in range(5_000))
    forms = spelling_forms(name)
    assert forms[0] == name and forms[-1] == "part4998.part4999"
    assert len(forms) == MAX_FORM_SEGMENTS
    assert forms[1] == ".".join(f"part{i}" for i in range(5_000 - MAX_FORM_SEGMENTS, 5_000))
    content = f"Call `{name}` once.\n"
    assert len(chunk_spellings("A", "p.md > A", content)) < 20 * len(content)
    short = ".".join(f"p{i}" for i in range(MAX_FORM_SEGMENTS + 1))
    assert len(spelling_forms(short)) == MAX_FORM_SEGMENTS  # every compound suffix, as before


def test_code_is_read_from_fences_and_inline_spans_only() -> None:
    markdown = (
        "TypeScript prose mentions createMany here.\n\n"
        "```ts\nconst res = await dub.links.createMany([]);\n```\n\n"
        "Then call `res.next()`.\n\n"
        "~~~~go\ns.Links.CreateMany(ctx)\n```\nstill go\n~~~~\n"
    )
    code = code_text(markdown)
    assert "dub.links.createMany" in code
    assert "res.next()" in code
    assert "s.Links.CreateMany" in code and "still go" in code  # a ``` line does not close a ~~~~ fence
    assert "TypeScript prose" not in code


def test_a_chunk_stores_its_code_spellings_and_marks_those_its_headings_are() -> None:
    stored = chunk_spellings(
        "createMany",
        "sdks/ts/README.md > Links > createMany",
        "Create many links with TypeScript.\n\n```ts\nawait dub.links.createMany([]);\n```\n",
    ).split()
    assert stored == [*sorted(stored[:-1]), "#createMany"]
    assert {"dub.links.createMany", "links.createMany", "createMany", "#createMany"} == set(stored)
    assert "TypeScript" not in stored  # prose, not code


def test_a_query_asks_for_each_compound_identifier_once() -> None:
    asked = query_spellings("how do I call dub.links.createMany() or create_many, dub.links.createMany")
    assert asked[:2] == [["dub.links.createMany", "links.createMany", "createMany"], ["create_many"]]
    assert [g for g in asked[2:] if not g[0].startswith(PAGE_MARK)] == []
    assert query_spellings("retry failed requests") == [
        ["=retry.failed.requests", "=failed.requests", "=retry.failed"]
    ]


def test_ids_and_key_headings_are_stored_as_anchors_with_their_trailing_words() -> None:
    content = '<dt id="option-tool-sync---frozen"><a href="#other-page"><code>--frozen</code></a></dt>'
    assert chunk_anchors("Options", content) == [
        "option.tool.sync.--frozen",
        "sync.--frozen",
        "tool.sync.--frozen",
    ]
    assert chunk_anchors("[`cache-dir`](#cache-dir) {: #cache-dir }", "Path to the cache.") == ["cache.dir"]
    assert chunk_anchors("Caching in CI", "No ids here, {not one}.") == []
    # a variable is asked for in its own spelling; slugged, it would answer a key (tool.uv.no-cache)
    assert chunk_anchors("UV_NO_CACHE", "Avoid reading from or writing to the cache.") == []
    assert chunk_anchors("tool.cache_dir", "Where the cache lives.") == ["cache.dir", "tool.cache.dir"]
    stored = chunk_spellings("uv sync", "reference/cli/uv-sync.md > uv sync", content).split()
    assert {"~tool.sync.--frozen", "=uv.sync"} <= set(stored)


def test_the_options_a_command_page_defines_by_headings_are_named_with_its_command() -> None:
    assert command_of("pnpm add <pkg>") == "pnpm add" and command_of("tool install") == "tool install"
    assert command_of("Release management") == "" and command_of(None) == ""
    assert command_of("a b c d e") == "" and command_of("<pkg>") == ""
    content = (
        "## Options\n\n### --frozen-lockfile\n\nFail.\n\n### --offline, -o\n\nStore only.\n\n### Notes\n"
    )
    assert chunk_anchors("Options", content, ["tool install"]) == [
        "--frozen.lockfile",
        "install.--frozen.lockfile",
        "install.--o",
        "install.--offline",
        "tool.install.--frozen.lockfile",
        "tool.install.--o",
        "tool.install.--offline",
    ]
    assert chunk_anchors("Options", content) == ["--frozen.lockfile"]  # a page with no command


def test_a_headings_one_word_id_is_stored_as_an_anchor_of_one_word() -> None:
    # a key of one word: the id its heading's attribute list gives it is that word
    heading = "[`package`](#package) {: #package }"
    assert chunk_anchors(heading, "Whether the project is a package.") == ["package"]
    # marked as a heading's, and not in the search text: the word is the text's own word
    assert "#~package" in chunk_spellings(heading, "settings.md > Settings > package", "Whether.").split()
    assert element_ids(heading, "Whether the project is a package.") == []
    # an id in the text may mark anything (a span kept for old links): not stored
    pip_strict = '#### [`strict`](#pip_strict) {: #pip_strict }\n<span id="strict"></span>\nValidate.'
    assert chunk_anchors("[`strict`](#pip_strict) {: #pip_strict }", pip_strict) == ["pip.strict"]


@pytest.mark.parametrize(
    ("query", "anchors"),
    [
        ("tool sync --frozen", ["tool.sync.--frozen", "sync.--frozen"]),
        ("[pip] torch-backend", ["pip.torch.backend", "torch.backend"]),
        ("project.requires-python", ["project.requires.python", "requires.python"]),
        ("how do I retry failed requests", []),  # no key- or flag-shaped word
        ("links.createMany", []),  # an identifier: the spelling forms' business
        # a bracketed table and a key of one word
        (
            "[tool.uv.pip] strict",
            ["tool.uv.pip.strict", "tool.uv.pip", "uv.pip.strict", "pip.strict", "uv.pip", "strict"],
        ),
        ("build a package", []),  # the word in prose
        # a query that is a key of one word in a configuration file
        ("managed in uv.toml", ["managed"]),
        ("`index` in pyproject.toml", ["index"]),
        ("set the cache directory in uv.toml", []),  # a word of prose before "in"
        ("managed in main.py", []),  # not a configuration file
    ],
)
def test_key_and_flag_shaped_query_words_ask_for_anchors(query: str, anchors: list[str]) -> None:
    assert query_anchors(query) == anchors


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        # a dotted key whose last part is one word: its spelling forms, then its tails' anchors down to that word
        (
            "tool.uv.package",
            [["tool.uv.package", "uv.package", "~tool.uv.package", "~uv.package", "~package"]],
        ),
        (
            "what is tool.uv.package?",
            [["tool.uv.package", "uv.package", "~tool.uv.package", "~uv.package", "~package"]],
        ),
        # the word in prose, a file's name, an abbreviation, a name in code: no anchor is asked for
        ("build a package", []),
        ("the package setting in uv.toml", [["uv.toml"]]),
        ("e.g. a package", []),
        ("links.createMany", [["links.createMany", "createMany"]]),
    ],
)
def test_a_dotted_key_asks_for_the_anchors_of_its_tails(query: str, asked: list[list[str]]) -> None:
    assert [g for g in query_spellings(query) if not g[0].startswith(PAGE_MARK)] == asked


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("tool sync --frozen", "tool.sync.--frozen"),
        ("what does --frozen do in tool sync", "tool.sync.--frozen"),
        ("--offline flag for tool run", "tool.run.--offline"),
        ("what does -q do in tool clean", "tool.clean.--q"),  # as option-tool-clean--q slugs it
    ],
)
def test_an_option_is_named_with_the_words_around_it(query: str, named: str) -> None:
    found = query_option_names(query)
    assert named in found
    assert all(name.count(".") >= found[-1].count(".") for name in found)  # most specific first
    assert "does.do.in.--frozen" not in found  # no run of words spans the flag


@pytest.mark.parametrize("query", ["[cache] dir", "--frozen", "how do I freeze the lock file"])
def test_no_option_is_named_without_a_flag_and_other_words(query: str) -> None:
    assert query_option_names(query) == []


def _index(rows: list[str]) -> SpellingIndex:
    return SpellingIndex.build(pa.chunked_array([pa.array(rows[:2]), pa.array(rows[2:])]))


def test_rarer_longer_and_defining_spellings_earn_more() -> None:
    index = _index(
        [
            "createMany dub.links.createMany links.createMany",  # writes the whole spelling
            "createMany",  # only the last part
            "createMany #createMany",  # a heading that is the name
            "other_name",
        ]
    )
    positions, credit = index.leg(query_spellings("dub.links.createMany"), None, 10)
    by_row = dict(zip(positions.tolist(), credit.tolist(), strict=True))
    assert set(by_row) == {0, 1, 2}
    assert by_row[0] > by_row[1]
    assert by_row[2] == pytest.approx(by_row[1] * (1 + HEADING_BONUS))
    assert positions[0] == 0  # best first


def test_the_leg_keeps_to_the_filter_and_the_limit() -> None:
    index = _index(["fooBar", "fooBar", "fooBar", "fooBar"])
    mask = np.array([False, True, False, True])
    positions, _ = index.leg([["fooBar"]], mask, 10)
    assert positions.tolist() == [1, 3]
    assert len(index.leg([["fooBar"]], None, 2)[0]) == 2
    assert index.leg([["noSuchName"]], None, 10)[0].size == 0


SECTION = """# Links

## createMany

Create many links in one request.

```{lang}
{call}
```
"""
CALLS = {
    "typescript": "res = client.links.createMany(links)",
    "python": "res = client.links.create_many(links)",
    "go": "res = client.Links.CreateMany(links)",
}


@pytest.fixture(scope="module")
def three_languages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("spelling-docs")
    for lang, call in CALLS.items():
        folder = docs / "sdks" / lang
        folder.mkdir(parents=True)
        manifest = {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"language": lang}}
        (folder / ".docs-mcp.json").write_text(json.dumps(manifest), encoding="utf-8")
        (folder / "links.md").write_text(SECTION.format(lang=lang, call=call), encoding="utf-8")
    out = tmp_path_factory.mktemp("spelling-index")
    build_index(BuildOptions(docs_dir=docs, out_dir=out))
    return out


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("client.links.createMany", "typescript"),
        ("links.create_many example", "python"),
        ("client.Links.CreateMany", "go"),
        ("CreateMany", "go"),
    ],
)
def test_the_spelling_of_a_call_picks_the_language_that_writes_it(
    three_languages: Path, query: str, language: str
) -> None:
    engine = SearchEngine.open(three_languages)
    hits = engine.search(query, limit=3).hits
    assert hits[0].chunk_id == f"sdks/{language}/links.md#links/createmany"
    assert hits[0].score > hits[1].score  # not a tie


def test_a_filter_still_decides_what_the_spelling_leg_may_return(three_languages: Path) -> None:
    engine = SearchEngine.open(three_languages)
    hits = engine.search("client.links.createMany", limit=3, filters={"language": "go"}).hits
    assert hits[0].chunk_id == "sdks/go/links.md#links/createmany"
    assert {h.metadata["language"] for h in hits} == {"go"}


def test_the_original_recipe_has_no_spelling_leg(three_languages: Path) -> None:
    engine = SearchEngine.open(three_languages, options=SearchOptions(ranking="original"))

    def ranked(query: str) -> list[tuple[str, float]]:
        return [(h.chunk_id, h.score) for h in engine.search(query, limit=3).hits]

    # full-text search folds case: the two spellings are the same query to it
    assert ranked("client.links.createMany") == ranked("client.Links.CreateMany")
    assert engine.vector_search_enabled is False


def test_query_constants_are_the_words_written_as_environment_variables() -> None:
    assert query_constants("what does UV_CACHE_DIR do?") == ["UV_CACHE_DIR"]
    assert query_constants("set `NODE_ENV` and HTTP2_MAX_STREAMS") == ["NODE_ENV", "HTTP2_MAX_STREAMS"]
    # one capitalised word, snake_case of code and a constant without an underscore are not
    assert query_constants("PATH cache_dir HTTP Uv_Cache_Dir _PRIVATE") == []


def test_headings_inside_a_chunk_and_setting_lists_define_names() -> None:
    content = (
        "### `[build]`\n\nThe build table.\n\n#### `build.jobs`\n* Type: integer\n\n"
        "```toml\n# build.target = 'x'\n```\n\n"
        "* `APP_HOME` --- where the app keeps its cache.\n"
        "* `build.target-dir`: where output goes.\n"
        "- `agent_id`: the agent to call.\n"
        '* `"warn"`: a value, not a name.\n'
    )
    assert defined_names(content) == ["`build.jobs`", "APP_HOME", "build.target-dir"]
    # a chunk that opens with its list
    assert defined_names("* `APP_LOG` --- the log level.\n") == ["APP_LOG"]
    stored = chunk_spellings("[build]", "reference/config.md > Configuration > [build]", content).split()
    assert {"#build.jobs", "#APP_HOME", "~build.jobs", "~build.target.dir"} <= set(stored)
    assert "#agent_id" not in stored  # a call's argument, not a setting
    assert "#build.target" not in stored  # a comment in code is no heading


H2_MANIFEST = json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}})
FILLER = " ".join(["Each paragraph here says a little more about how the tool behaves."] * 8)
SETTINGS_REFERENCE = f"""# Configuration

## `[build]`

The build table holds what the build does. {FILLER}

### `build.jobs`

The number of parallel compiler processes.

### `build.target`

The platform to compile for.

## Environment

The variables below change how the tool behaves on your machine. {FILLER}

* `APP_HOME` --- the folder where the tool keeps its downloads and its registry copies.
* `APP_LOG` --- the level of the log messages.
* `APP_TARGET_DIR` --- where the output of every build goes.
"""

GUIDE = f"""# Faster builds

## Jobs

Set `build.jobs` to use more cores. {FILLER}

## Home

Your `APP_HOME` holds what the tool downloads. {FILLER}
"""


@pytest.fixture(scope="module")
def settings_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A settings reference (keys inside a table's section, a list of variables) and a guide that
    mentions both in passing."""
    pages = {
        "reference/config.md": SETTINGS_REFERENCE,
        "guide/speed.md": GUIDE,
        ".docs-mcp.json": H2_MANIFEST,
    }
    return build_pages(tmp_path_factory, "settings", pages)


def test_a_name_defined_inside_a_chunk_ranks_that_chunk_above_a_passing_mention(settings_index: Path) -> None:
    hits = SearchEngine.open(settings_index).search("build.jobs", limit=3).hits
    assert hits[0].chunk_id == "reference/config.md#configuration/build"
    assert hits[0].score > hits[1].score  # not a tie broken by the chunk id


def test_a_variable_asked_by_its_name_finds_the_list_that_defines_it(settings_index: Path) -> None:
    engine = SearchEngine.open(settings_index)
    for query in ("APP_HOME", "what does APP_HOME do"):
        assert (
            engine.search(query, limit=3).hits[0].chunk_id == "reference/config.md#configuration/environment"
        ), query
    # a question that only mentions the variable is not a look-up: the guide about it stays first
    hits = engine.search("why does my APP_HOME hold what the tool downloads in the guide", limit=3).hits
    assert hits[0].chunk_id == "guide/speed.md#faster-builds/home"


UNSTABLE = f"""# Unstable features

## target-dir

The `build.target-dir` setting was stabilized long ago; the target-dir option and its target-dir
history are kept here. {FILLER}
"""


def test_a_key_asked_by_its_name_finds_its_table_not_a_section_named_after_its_tail(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    reference = SETTINGS_REFERENCE.replace("### `build.target`", "### `build.target-dir`")
    pages = {
        "reference/config.md": reference,
        "reference/unstable.md": UNSTABLE,
        ".docs-mcp.json": H2_MANIFEST,
    }
    engine = SearchEngine.open(build_pages(tmp_path_factory, "tails", pages))
    for query in ("build.target-dir", "[build] target-dir"):
        assert engine.search(query, limit=3).hits[0].chunk_id == "reference/config.md#configuration/build", (
            query
        )


MANIFEST_REFERENCE = f"""# The manifest format

## The `[package]` section

The first section of a manifest is the package. {FILLER}

### The `name` field

The package's name.

### The `edition` field

The edition the package is compiled with.

### The `license` and `license-file` fields

The licence, by its name or by a file.
"""

GLOSSARY = f"""# Glossary

## edition

An edition is a release of the language that may change its edition rules; every package picks an
edition. {FILLER}
"""


def test_a_key_written_with_its_table_finds_the_tables_section(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert table_keys("The [package] section", ["The `license` and `license-file` fields"]) == [
        "package.license",
        "package.license.file",
    ]
    assert table_keys("Keys", ["The `edition` field"]) == []  # no table named: no key
    pages = {
        "reference/manifest.md": MANIFEST_REFERENCE,
        "reference/glossary.md": GLOSSARY,
        ".docs-mcp.json": H2_MANIFEST,
    }
    engine = SearchEngine.open(build_pages(tmp_path_factory, "tables", pages))
    for query in ("[package] edition", "package.edition"):
        hit = engine.search(query, limit=3).hits[0]
        assert hit.chunk_id == "reference/manifest.md#the-manifest-format/the-package-section", query
