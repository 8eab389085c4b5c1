"""Manifests: parsing with precise errors, resolution precedence, override globs, hints, front matter."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.chunking import Strategy
from docs_mcp_core.corpus import ManifestResolver, prepare_file
from docs_mcp_core.corpus_walk import walk_corpus
from docs_mcp_core.errors import FindingError, ManifestError
from docs_mcp_core.globs import glob_match
from docs_mcp_core.json_lines import JsonLines
from docs_mcp_core.manifest import MAX_TOOL_TEXT_LENGTH, find_hint, parse_manifest, resolve_file_config


def parse(data: Any) -> Any:
    return parse_manifest(json.dumps(data))[0]


# ── parsing ──────────────────────────────────────────────────────────────────────────────────────


def test_full_manifest_parses() -> None:
    manifest, issues = parse_manifest(
        json.dumps(
            {
                "$schema": "../schemas/docs-mcp.schema.json",
                "version": "1",
                "strategy": {"chunk_by": "h3", "max_chunk_size": 8000, "min_chunk_size": 100},
                "metadata": {"language": "python"},
                "taxonomy": {
                    "language": {"vector_collapse": True, "properties": {"python": {"mcp_resource": True}}}
                },
                "mcpServerInstructions": "Use search_docs first.",
                "overrides": [{"pattern": "guides/**", "metadata": {"scope": "global-guide"}}],
            }
        )
    )
    assert issues == []
    assert manifest.strategy is not None
    assert manifest.strategy.to_strategy() == Strategy("h3", 8000, 100)
    assert manifest.taxonomy is not None and manifest.taxonomy["language"].vector_collapse
    assert manifest.taxonomy["language"].properties["python"].mcp_resource
    assert manifest.overrides is not None and manifest.overrides[0].pattern == "guides/**"


def test_taxonomy_defaults() -> None:
    manifest = parse({"version": "1", "taxonomy": {"language": {}}})
    assert manifest.taxonomy["language"].vector_collapse is False
    assert manifest.taxonomy["language"].properties == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # a missing ':' is reported on the same line by every Python version (a trailing comma is not)
        ('{\n  "version": "1",\n  "strategy" {}\n}', r"^\.docs-mcp\.json:3: manifest is not valid JSON"),
        ("[]", "manifest must be a JSON object"),
        ('{"version": 2}', r"version must be '1' \(got 2\)"),
        ("{}", "version must be '1'"),
        (
            '{"version": "1", "strategy": {"chunk_by": "h4"}}',
            r'strategy\.chunk_by must be one of: h1, h2, h3, file \(got "h4"\)',
        ),
        ('{"version": "1", "strategy": {}}', "strategy.chunk_by"),
        (
            '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 0}}',
            "max_chunk_size must be a positive integer",
        ),
        (
            '{"version": "1", "strategy": {"chunk_by": "h2", "min_chunk_size": -5}}',
            "min_chunk_size must be a positive integer",
        ),
        (
            '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 1.5}}',
            "max_chunk_size must be a positive integer",
        ),
        ('{"version": "1", "strategy": {"chunk_by": "h2", "size": 1}}', r"strategy\.size: unknown key"),
        ('{"version": "1", "metadata": {"language": 1}}', r"metadata\.language must be a string \(got 1\)"),
        ('{"version": "1", "metadata": {"language": "  "}}', r"metadata\.language cannot be empty"),
        ('{"version": "1", "metadata": {" ": "x"}}', "metadata contains an empty key"),
        (
            '{"version": "1", "overrides": [{"pattern": "  "}]}',
            r"overrides\[0\]\.pattern must be a non-empty string",
        ),
        (
            '{"version": "1", "overrides": [{"strategy": {"chunk_by": "h2"}}]}',
            r"overrides\[0\]\.pattern is required",
        ),
        (
            '{"version": "1", "overrides": [{"pattern": "a", "metadata": {"k": ""}}]}',
            r"overrides\[0\]\.metadata\.k cannot be empty",
        ),
        (
            '{"version": "1", "overrides": [{"pattern": "a", "strategy": {"chunk_by": "x"}}]}',
            r"overrides\[0\]\.strategy\.chunk_by must be one of",
        ),
        (
            '{"version": "1", "mcpServerInstructions": "  "}',
            "mcpServerInstructions must be a non-empty string",
        ),
    ],
)
def test_invalid_manifests_name_the_field(text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as info:
        parse_manifest(text, source=".docs-mcp.json")
    assert str(info.value).startswith(".docs-mcp.json")


@pytest.mark.parametrize(
    ("key", "message"),
    [
        # these two replaced search_docs's own max_tokens and facets arguments in the tool's schema
        ("max_tokens", "metadata.max_tokens would replace search_docs's own 'max_tokens' argument"),
        ("facets", "metadata.facets would replace search_docs's own 'facets' argument"),
        # these ended the build with "failed unexpectedly" from LanceDB when it wrote the table
        ("chunk_id", "metadata key 'chunk_id' cannot be a column of the index's table (the table has one"),
        ("search_text", "metadata key 'search_text' cannot be a column of the index's table (the table has"),
        ("vector", "metadata key 'vector' cannot be a column of the index's table (the table has one of"),
        ("_rowid", "metadata key '_rowid' cannot be a column of the index's table (the table has one of"),
        ("_score", "metadata key '_score' cannot be a column of the index's table (the table has one of"),
        ("sdk.version", "metadata key 'sdk.version' cannot be a column of the index's table (a '.' makes it"),
    ],
)
def test_metadata_keys_the_tool_or_the_table_has_already_are_refused(key: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(json.dumps({"version": "1", "metadata": {key: "v"}}), source=".docs-mcp.json")
    assert str(info.value).startswith(f".docs-mcp.json: {message}")


def test_a_metadata_value_holding_a_nul_is_refused() -> None:
    # a filter on it matched nothing (the filter's SQL drops a NUL), though the tool offered the value
    with pytest.raises(ManifestError) as info:
        parse_manifest(
            json.dumps({"version": "1", "metadata": {"kind": "a\u0000b"}}), source=".docs-mcp.json"
        )
    assert str(info.value) == (
        ".docs-mcp.json: metadata.kind holds a NUL character, which no search_docs filter can match; remove it"
    )


def test_the_table_columns_metadata_keys_may_not_take_are_every_column_of_the_table() -> None:
    from docs_mcp_core.index.table import table_schema
    from docs_mcp_core.manifest import TABLE_COLUMNS

    assert set(table_schema([], 8).names) <= set(TABLE_COLUMNS)


def test_server_instructions_longer_than_every_client_should_receive_are_refused() -> None:
    # a manifest's 12 MB of instructions went into metadata.json and every initialize answer whole
    longest = json.dumps({"version": "1", "mcpServerInstructions": "x" * MAX_TOOL_TEXT_LENGTH})
    assert parse_manifest(longest)[0].mcpServerInstructions == "x" * MAX_TOOL_TEXT_LENGTH
    text = json.dumps({"version": "1", "mcpServerInstructions": "Use search. " * 1_000_000})
    with pytest.raises(ManifestError) as info:
        parse_manifest(text, source="sdk/.docs-mcp.json")
    assert str(info.value).startswith(
        "sdk/.docs-mcp.json: mcpServerInstructions is 11,999,999 characters long; at most 32,768 are allowed"
    )
    assert len(str(info.value)) < 300


def test_unknown_top_level_keys_are_warnings() -> None:
    manifest, issues = parse_manifest('{"version": "1", "instructions": "x"}')
    assert manifest.version == "1"
    assert [(i.severity, i.message) for i in issues] == [
        ("warning", "unknown manifest key 'instructions' is ignored")
    ]


# ── globs ────────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("*.md", "x/a.md", False),
        ("*.md", ".hidden.md", True),  # dot: true
        ("guides/**", "guides/a/b.md", True),
        ("guides/*.md", "guides/a/b.md", False),
        ("a/**/b.md", "a/b.md", True),
        ("{auth,billing}.md", "billing.md", True),
        ("[ab].md", "c.md", False),
        ("?.md", "a.md", True),
        ("./docs/*.md", "docs/x.md", True),
        ("  docs/x.md  ", "docs/x.md", True),
        ("docs/x.md", "docs/x.mdx", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("[]x", "[]x", True),  # an empty class is plain text (it used to fail the build)
        ("[!]", "[!]", True),
        ("{a,b", "{a,b", True),  # so is a brace never closed
        ("{a,b", "a", False),
        ("[z-a].md", "m.md", False),  # an inverted range matches nothing
        ("{" * 5000 + "a" + "}" * 5000, "a", True),  # nesting needs no recursion
        ("{a,{b,{c,d}}}/*.md", "c/x.md", True),
    ],
)
def test_patterns_that_failed_to_compile_are_matched(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_a_glob_that_backtracks_is_matched_in_linear_time() -> None:
    # as a backtracking regex, 10 "*a" took 12 s on a 43-character name, each more ten times longer
    started = time.perf_counter()
    assert not glob_match("*a" * 30 + "b", "a" * 200 + ".md")
    assert not glob_match("**/" * 50 + "{a,a}" * 40 + "b", "a/" * 100 + "a" * 40)
    assert time.perf_counter() - started < 5.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"version": "1", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "nests arrays or objects too deeply",
        ),
        (
            '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": ' + "9" * 5000 + "}}",
            "a number too long",
        ),
    ],
)
def test_json_too_deep_or_too_long_to_read_is_a_manifest_error(text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as info:
        parse_manifest(text, source="docs/.docs-mcp.json")
    assert str(info.value).startswith("docs/.docs-mcp.json: manifest cannot be read: ")


def test_json_lines_finds_keys_and_patterns_in_one_pass() -> None:
    text = '{\n "taxonomy": {\n  "caf\\u00e9": {\n   "properties": {"x": {}}\n  }\n },\n "overrides": [\n  {"pattern": "a/*.md"}\n ]\n}'
    lines = JsonLines(text)
    assert lines.key_line("café", after="taxonomy") == 3
    assert lines.key_line("x", after="properties") == 4
    assert lines.key_line("overrides") == 7
    assert lines.pattern_line("a/*.md") == 8
    assert lines.key_line("missing") is None and lines.key_line("x", after="missing") is None


def test_json_lines_scans_a_huge_string_in_memory_of_its_size() -> None:
    import tracemalloc

    # a 30 MB metadata value in a manifest took validate 4 GB: the key pattern backtracked
    value = "a" * 2_000_000
    text = '{\n "x-note": "' + value + '",\n "pattern": "' + value + '",\n "overrides": []\n}'
    tracemalloc.start()
    try:
        lines = JsonLines(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines.key_line("overrides") == 4 and lines.pattern_line(value) == 3
    assert peak < 5 * len(text)  # copies of the text at most, not a frame per character


# ── resolution precedence ────────────────────────────────────────────────────────────────────────


def resolve(
    manifest: Any, path: str = "guides/example.md", markdown: str = "", front_matter: Any = None
) -> Any:
    return resolve_file_config(
        path, manifest, markdown=markdown, front_matter=front_matter, first_h1=None, source=path
    )


def test_default_strategy_without_manifest() -> None:
    config = resolve(None)
    assert config.strategy == Strategy("h2") and config.metadata == {}


def test_overrides_last_match_wins_and_metadata_merges() -> None:
    manifest = parse(
        {
            "version": "1",
            "strategy": {"chunk_by": "h2", "max_chunk_size": 5000},
            "metadata": {"language": "typescript"},
            "overrides": [
                {
                    "pattern": "guides/**/*.md",
                    "metadata": {"scope": "sdk-specific"},
                    "strategy": {"chunk_by": "h1"},
                },
                {"pattern": "guides/advanced/*.md", "metadata": {"scope": "global-guide"}},
                {"pattern": "guides/advanced/retries.md", "strategy": {"chunk_by": "h3"}},
            ],
        }
    )
    config = resolve(manifest, "guides/advanced/retries.md")
    assert config.metadata == {"language": "typescript", "scope": "global-guide"}
    # strategy replaces wholesale: the manifest's max_chunk_size is gone
    assert config.strategy == Strategy("h3")
    other = resolve(manifest, "guides/intro.md")
    assert other.strategy == Strategy("h1") and other.metadata["scope"] == "sdk-specific"
    untouched = resolve(manifest, "README.md")
    assert untouched.strategy == Strategy("h2", 5000) and untouched.metadata == {"language": "typescript"}


def test_metadata_values_are_trimmed() -> None:
    manifest = parse({"version": "1", "metadata": {" language ": " go "}})
    assert resolve(manifest).metadata == {"language": "go"}


def test_html_hint_replaces_only_chunk_by() -> None:
    manifest = parse(
        {"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 900, "min_chunk_size": 10}}
    )
    markdown = '# T\n\n<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n'
    assert resolve(manifest, markdown=markdown).strategy == Strategy("h3", 900, 10)


def test_hint_is_found_anywhere_but_only_the_first_one_counts() -> None:
    assert find_hint('```\n<!-- mcp_chunking_hint: {"chunk_by": "file"} -->\n```') == "file"
    assert (
        find_hint('<!--mcp_chunking_hint:{"chunk_by":"h1"}--> <!-- mcp_chunking_hint: {"chunk_by": "h3"} -->')
        == "h1"
    )
    # an invalid first hint disables hints for the file
    assert (
        find_hint(
            '<!-- mcp_chunking_hint: {"chunk_by": "h4"} -->\n<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->'
        )
        is None
    )
    assert find_hint("<!-- mcp_chunking_hint: {not json} -->") is None
    assert find_hint("no hint") is None


def test_front_matter_hint_drops_size_limits_and_beats_the_html_hint() -> None:
    manifest = parse(
        {
            "version": "1",
            "strategy": {"chunk_by": "h2", "max_chunk_size": 900},
            "metadata": {"language": "ts"},
        }
    )
    markdown = '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->'
    config = resolve(
        manifest,
        markdown=markdown,
        front_matter={"mcp_chunking_hint": "file", "mcp_metadata": {"scope": "g"}},
    )
    assert config.strategy == Strategy("file")
    assert config.metadata == {"language": "ts", "scope": "g"}


def test_front_matter_strategy_wins_over_hint() -> None:
    config = resolve(
        None,
        markdown='<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->',
        front_matter={"mcp_strategy": {"chunk_by": "h1", "max_chunk_size": 100}, "mcp_chunking_hint": "file"},
    )
    assert config.strategy == Strategy("h1", 100)


def test_front_matter_metadata_then_mcp_metadata() -> None:
    manifest = parse({"version": "1", "metadata": {"language": "typescript", "product": "sdk"}})
    config = resolve(
        manifest,
        front_matter={
            "metadata": {"scope": "global-guide", "product": "docs"},
            "mcp_metadata": {"product": "api"},
        },
    )
    assert config.metadata == {"language": "typescript", "scope": "global-guide", "product": "api"}


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ({"mcp_strategy": "h2"}, "mcp_strategy must be an object"),
        ({"mcp_strategy": {"chunk_by": "h9"}}, "mcp_strategy.chunk_by must be one of"),
        ({"mcp_chunking_hint": "h5"}, "mcp_chunking_hint must be one of"),
        ({"mcp_metadata": ["a"]}, "mcp_metadata must be an object"),
        ({"metadata": {"k": 3}}, "must be a string"),
        ({"mcp_metadata": {"k": ""}}, "cannot be empty"),
    ],
)
def test_bad_front_matter_is_rejected(front_matter: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        resolve(None, front_matter=front_matter)


def test_title_prefers_front_matter_then_first_h1() -> None:
    config = resolve_file_config(
        "a.md", None, markdown="", front_matter={"title": "  FM Title "}, first_h1="H1", source="a.md"
    )
    assert config.title == "FM Title"
    assert (
        resolve_file_config("a.md", None, markdown="", front_matter=None, first_h1="H1", source="a.md").title
        == "H1"
    )


# ── on disk: nearest manifest, relative override paths ──────────────────────────────────────────


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_nearest_manifest_wins_exclusively_and_overrides_are_relative_to_it(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"scope": "global"}}))
    write(
        tmp_path,
        "sdks/ts/.docs-mcp.json",
        json.dumps(
            {
                "version": "1",
                "metadata": {"language": "typescript"},
                "overrides": [{"pattern": "auth.md", "metadata": {"scope": "sdk-specific"}}],
            }
        ),
    )
    write(tmp_path, "sdks/ts/auth.md", "# Auth\n")
    write(tmp_path, "sdks/ts/deep/other.md", "# Other\n")
    write(tmp_path, "guide.md", "---\ntitle: Guide\n---\n# G\n")
    resolver = ManifestResolver(tmp_path)
    auth = prepare_file(tmp_path, "sdks/ts/auth.md", resolver)
    assert auth.config.metadata == {"language": "typescript", "scope": "sdk-specific"}  # no "global" merge
    assert auth.manifest is not None and auth.manifest.path == "sdks/ts/.docs-mcp.json"
    other = prepare_file(tmp_path, "sdks/ts/deep/other.md", resolver)
    assert other.config.metadata == {"language": "typescript"}
    guide = prepare_file(tmp_path, "guide.md", resolver)
    assert guide.config.metadata == {"scope": "global"} and guide.config.title == "Guide"
    assert guide.manifest is not None and guide.manifest.base == ""


def test_broken_manifest_is_reported_once_per_lookup_with_its_path(tmp_path: Path) -> None:
    write(tmp_path, "a/.docs-mcp.json", '{"version": "1",\n "strategy": {"chunk_by": "h7"}}')
    write(tmp_path, "a/x.md", "# X\n")
    resolver = ManifestResolver(tmp_path)
    with pytest.raises(FindingError) as info:
        prepare_file(tmp_path, "a/x.md", resolver)
    assert info.value.finding.path == "a/.docs-mcp.json"
    assert "chunk_by must be one of" in info.value.finding.message
    listed = list(resolver.load_all(walk_corpus(tmp_path).manifests))
    assert [(p, e is not None) for p, e in listed] == [("a/.docs-mcp.json", True)]


def test_front_matter_yaml_error_has_a_line(tmp_path: Path) -> None:
    write(tmp_path, "bad.md", "---\ntitle: ok\nkey: [unclosed\n---\n# B\n")
    with pytest.raises(FindingError) as info:
        prepare_file(tmp_path, "bad.md", ManifestResolver(tmp_path))
    finding = info.value.finding
    assert finding.path == "bad.md" and finding.severity == "error"
    assert finding.message.startswith("front matter is not valid YAML")
    assert finding.line is not None and 2 <= finding.line <= 4


def test_invalid_utf8_reports_the_line(tmp_path: Path) -> None:
    (tmp_path / "latin.md").write_bytes(b"# Title\n\ncaf\xe9\n")
    with pytest.raises(FindingError) as info:
        prepare_file(tmp_path, "latin.md", ManifestResolver(tmp_path))
    assert info.value.finding.line == 3
    assert "not valid UTF-8" in info.value.finding.message


def test_walk_corpus_order_templates_manifests_hidden_and_symlink_loops(tmp_path: Path) -> None:
    for rel in [
        "b.md",
        "A.md",
        "sub/c.md",
        ".hidden/x.md",
        ".hidden/.docs-mcp.json",
        ".dot.md",
        "p/x.template.md",
        "p/y.template.yaml",
        "n.txt",
        ".docs-mcp.json",
        "sub/.docs-mcp.json",
    ]:
        write(tmp_path, rel, "# x\n")
    os.symlink(tmp_path / "sub", tmp_path / "sub" / "loop")
    walked = walk_corpus(tmp_path)
    assert walked.markdown == ["A.md", "b.md", "sub/c.md"]
    assert walked.templates == ["p/x.template.md", "p/y.template.yaml"]
    assert walked.manifests == [".docs-mcp.json", "sub/.docs-mcp.json"]  # none in hidden folders
    assert [(f.path, f.severity) for f in walked.findings] == [("sub/loop", "warning")]
    assert "symbolic link loop" in walked.findings[0].message


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"overrides": [1]}, "overrides[0] must be an object (got 1)"),
        ({"strategy": 5}, "strategy must be an object (got 5)"),
        (
            {"overrides": [{"pattern": "a.md", "strategy": "h2"}]},
            'overrides[0].strategy must be an object (got "h2")',
        ),
        ({"metadata": [1]}, "metadata must be an object (got [1])"),
        ({"taxonomy": {"Language": 5}}, "taxonomy.Language must be an object (got 5)"),
        ({"auto_include": True}, "auto_include must be false or an object (got true)"),
        ({"auto_include": {"shared": 5}}, "auto_include.shared must be a string (got 5)"),
        ({"auto_include": {"when": 5}}, "auto_include.when: unknown key (remove it or check its spelling)"),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_without_the_validators_words(
    manifest: dict[str, Any], message: str
) -> None:
    """It read 'overrides[0]: Input should be a valid dictionary or instance of OverrideModel', and
    for auto_include one error per shape it may take ('auto_include.AutoIncludeConfig.shared must be
    a string (got 5); auto_include.literal[False]: Input should be False')."""
    with pytest.raises(ManifestError) as raised:
        parse_manifest(json.dumps({"version": "1", **manifest}))
    assert str(raised.value) == f".docs-mcp.json: {message}"
