"""metadata.json: normalisation rules, limits, error messages, the original's layout, read/write."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.errors import IndexNotFoundError, MetadataError
from docs_mcp_core.metadata import (
    MAX_KEY_LENGTH,
    MAX_TAXONOMY_KEYS,
    MAX_VALUE_LENGTH,
    MAX_VALUES_PER_KEY,
    METADATA_VERSION,
    SUPPORTED_MAJOR,
    CorpusStats,
    EmbeddingInfo,
    IndexMetadata,
    TaxonomyField,
    TaxonomyValueProperties,
    ToolDescriptions,
    check_taxonomy_limits,
    collapse_keys,
    field_description,
    js_length,
    metadata_to_json,
    normalize_metadata,
    parse_metadata_bytes,
    read_metadata,
    resource_values,
    write_metadata,
)
from docs_mcp_core.prompts import PromptContent, PromptDefinition, PromptMessage

# A metadata.json exactly as the original TypeScript build writes it (JSON.stringify(meta, null, 2)):
# every optional section present, keys in the original's order, no trailing newline.
ORIGINAL_METADATA_JSON = """{
  "metadata_version": "1.1.0",
  "corpus_description": "Acme SDK documentation — guides and references",
  "taxonomy": {
    "scope": {
      "description": "Filter results by scope.",
      "values": [
        "global-guide",
        "sdk-specific"
      ],
      "properties": {
        "global-guide": {
          "mcp_resource": true
        }
      }
    },
    "language": {
      "description": "Filter results by language.",
      "values": [
        "go",
        "python",
        "typescript"
      ],
      "vector_collapse": true
    }
  },
  "stats": {
    "total_chunks": 2847,
    "total_files": 312,
    "indexed_at": "2026-02-21T14:32:00.000Z",
    "source_commit": "4d2f9b4d6a42c377815f9f6c7db25a54d2aa9cf9"
  },
  "embedding": {
    "provider": "openai",
    "model": "text-embedding-3-large",
    "dimensions": 3072
  },
  "prompts": [
    {
      "name": "guides/convert-currency",
      "title": "Convert Currency",
      "description": "Convert 100 USD to a target currency.",
      "arguments": [
        {
          "name": "currency",
          "description": "The target currency for conversion",
          "required": true
        }
      ],
      "messages": [
        {
          "role": "user",
          "content": {
            "type": "text",
            "text": "Convert 100 USD to {{currency}}."
          }
        }
      ]
    }
  ],
  "tool_descriptions": {
    "search_docs": "Search the Acme docs."
  },
  "mcpServerInstructions": "Use search_docs first.",
  "files": {
    "guides/auth.md": {
      "title": "Authentication"
    },
    "sdk/python/readme.md": {
      "title": "Python SDK"
    }
  },
  "index": {
    "engine": "lancedb",
    "table": "chunks",
    "path": ".lancedb"
  }
}"""


def valid(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "metadata_version": "1.0.0",
        "corpus_description": "Test corpus",
        "taxonomy": {"language": {"values": ["en", "fr"], "description": "The language of the document"}},
        "stats": {
            "total_chunks": 100,
            "total_files": 10,
            "indexed_at": "2025-01-01T00:00:00Z",
            "source_commit": None,
        },
        "embedding": None,
    }
    doc.update(overrides)
    return doc


def with_stats(**stats: Any) -> dict[str, Any]:
    base = {"total_chunks": 1, "total_files": 1, "indexed_at": "2025-01-01T00:00:00Z"}
    base.update(stats)
    return valid(stats=base)


def error(raw: Any) -> str:
    with pytest.raises(MetadataError) as info:
        normalize_metadata(raw)
    return str(info.value)


def message(role: str = "user", text: str = "hi") -> dict[str, Any]:
    return {"role": role, "content": {"type": "text", "text": text}}


# ------------------------------------------------------------------------------------------------
# the original's file, byte for byte


def test_original_metadata_json_round_trips_byte_for_byte() -> None:
    meta = normalize_metadata(json.loads(ORIGINAL_METADATA_JSON))
    assert metadata_to_json(meta) == ORIGINAL_METADATA_JSON


def test_original_metadata_json_parses_into_the_model() -> None:
    meta = normalize_metadata(json.loads(ORIGINAL_METADATA_JSON))
    assert meta.metadata_version == "1.1.0"
    assert list(meta.taxonomy) == ["scope", "language"]  # first-seen order is kept
    assert meta.taxonomy["language"].vector_collapse is True
    assert meta.taxonomy["scope"].properties == {"global-guide": TaxonomyValueProperties(mcp_resource=True)}
    assert meta.stats.source_commit == "4d2f9b4d6a42c377815f9f6c7db25a54d2aa9cf9"
    assert meta.embedding == EmbeddingInfo(provider="openai", model="text-embedding-3-large", dimensions=3072)
    assert meta.prompts is not None and meta.prompts[0].arguments[0].required is True
    assert meta.tool_descriptions == ToolDescriptions(search_docs="Search the Acme docs.")
    assert meta.mcpServerInstructions == meta.mcp_server_instructions == "Use search_docs first."
    assert meta.files["guides/auth.md"] == {"title": "Authentication"}
    assert (meta.index.engine, meta.index.table, meta.index.path) == ("lancedb", "chunks", ".lancedb")


def test_the_same_bytes_are_parsed_once_and_other_bytes_again() -> None:
    # a server reads metadata.json at start-up and again when the index opens
    data = ORIGINAL_METADATA_JSON.encode("utf-8")
    first = parse_metadata_bytes(data, "a/metadata.json")
    assert parse_metadata_bytes(bytes(data), "b/metadata.json") is first
    other = parse_metadata_bytes(data.replace(b"Acme", b"Apex"), "c/metadata.json")
    assert other is not first and other.tool_descriptions == ToolDescriptions(
        search_docs="Search the Apex docs."
    )
    with pytest.raises(MetadataError, match=r"d/metadata\.json"):
        parse_metadata_bytes(data.replace(b'"1.1.0"', b'"9.0.0"'), "d/metadata.json")
    assert parse_metadata_bytes(data, "e/metadata.json") == first


def test_minimal_original_file_without_optional_sections() -> None:
    raw = {
        "metadata_version": "1.1.0",
        "corpus_description": "Docs",
        "taxonomy": {},
        "stats": {
            "total_chunks": 0,
            "total_files": 0,
            "indexed_at": "2026-01-01T00:00:00.000Z",
            "source_commit": None,
        },
        "embedding": None,
        "files": {},
        "index": {"engine": "lancedb", "table": "chunks", "path": ".lancedb"},
    }
    text = metadata_to_json(normalize_metadata(raw))
    assert json.loads(text) == raw
    assert list(json.loads(text)) == list(raw)


def test_unknown_keys_are_ignored_and_legacy_instructions_are_read() -> None:
    raw = valid(future_field={"x": 1}, instructions="  Legacy text  ")
    raw["stats"]["future_stat"] = 3
    raw["taxonomy"]["language"]["future"] = True
    meta = normalize_metadata(raw)
    assert meta.mcpServerInstructions == "Legacy text"
    assert "future_field" not in metadata_to_json(meta)


def test_mcp_server_instructions_wins_over_legacy_instructions() -> None:
    meta = normalize_metadata(valid(mcpServerInstructions=" new ", instructions="old"))
    assert meta.mcpServerInstructions == "new"


# ------------------------------------------------------------------------------------------------
# metadata_version and corpus_description


def test_constants() -> None:
    assert METADATA_VERSION == "1.1.0"
    assert SUPPORTED_MAJOR == 1
    assert (MAX_TAXONOMY_KEYS, MAX_KEY_LENGTH, MAX_VALUES_PER_KEY, MAX_VALUE_LENGTH) == (64, 64, 512, 128)


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0", "1.99.3", "1.2.0-beta.1", "1.0.0+build.5", " 1.1.0 "])
def test_accepted_versions(version: str) -> None:
    assert normalize_metadata(valid(metadata_version=version)).metadata_version == version.strip()


@pytest.mark.parametrize("version", ["not-semver", "1.0", "1", "01.0.0", "1.0.0.0", "1.x.0"])
def test_invalid_semver(version: str) -> None:
    assert error(valid(metadata_version=version)) == (
        f"metadata_version: must be valid semver (MAJOR.MINOR.PATCH), got '{version}'"
    )


@pytest.mark.parametrize("version", ["2.0.0", "0.9.1"])
def test_unsupported_major_fails_fast(version: str) -> None:
    assert error(valid(metadata_version=version)).startswith(
        f"Unsupported metadata_version major: expected 1.x.x, got {version}"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "metadata_version: must be a non-empty string, got null"),
        (123, "metadata_version: must be a non-empty string, got a number"),
        ("   ", "metadata_version: must be a non-empty string"),
    ],
)
def test_missing_or_blank_version(value: Any, expected: str) -> None:
    assert error(valid(metadata_version=value)) == expected


@pytest.mark.parametrize("value", [None, "   ", 42])
def test_corpus_description_required(value: Any) -> None:
    assert error(valid(corpus_description=value)).startswith("corpus_description: must be a non-empty string")


def test_corpus_description_is_trimmed() -> None:
    assert normalize_metadata(valid(corpus_description="  Docs  ")).corpus_description == "Docs"


@pytest.mark.parametrize("raw", [None, "string", 42, True, []])
def test_non_object_documents(raw: Any) -> None:
    assert error(raw).startswith("metadata must be a JSON object, got ")


# ------------------------------------------------------------------------------------------------
# taxonomy


def test_values_are_trimmed_deduplicated_and_sorted() -> None:
    meta = normalize_metadata(valid(taxonomy={"language": {"values": [" fr ", "en", " en ", "de"]}}))
    assert meta.taxonomy["language"].values == ["de", "en", "fr"]


def test_values_sort_as_the_original_sorts_them_and_keep_casing() -> None:
    """The original's ``localeCompare`` order: punctuation before digits before letters, a
    lower-case letter before its capital (the expected list is Node's order of the same values)."""
    meta = normalize_metadata(
        valid(taxonomy={"k": {"values": ["beta", "Beta", "alpha", "Alpha", "_x", "10", "9"]}})
    )
    assert meta.taxonomy["k"].values == ["_x", "10", "9", "alpha", "Alpha", "beta", "Beta"]


def test_keys_are_trimmed_and_keep_their_order() -> None:
    meta = normalize_metadata(valid(taxonomy={" zeta ": {"values": ["a"]}, "alpha": {"values": ["b"]}}))
    assert list(meta.taxonomy) == ["zeta", "alpha"]


@pytest.mark.parametrize(
    ("taxonomy", "expected"),
    [
        ("not-an-object", "taxonomy: must be an object, got a string"),
        (None, "taxonomy: must be an object, got null"),
        ({"": {"values": ["v"]}}, "taxonomy: taxonomy keys cannot be empty"),
        ({"  ": {"values": ["v"]}}, "taxonomy: taxonomy keys cannot be empty"),
        (
            {"a": {"values": ["v"]}, " a": {"values": ["w"]}},
            "taxonomy.a: duplicate key (keys are compared after trimming)",
        ),
        ({"language": "not-an-object"}, "taxonomy.language: must be an object, got a string"),
        (
            {"language": {"values": "en"}},
            "taxonomy.language.values: must be an array of strings, got a string",
        ),
        ({"language": {}}, "taxonomy.language.values: must be an array of strings, got null"),
        (
            {"language": {"values": ["en", 123]}},
            "taxonomy.language.values[1]: must be a string, got a number",
        ),
        ({"language": {"values": ["en", "fr", "de", ""]}}, "taxonomy.language.values[3]: cannot be empty"),
        ({"language": {"values": ["  "]}}, "taxonomy.language.values[0]: cannot be empty"),
        (
            {"language": {"values": [], "description": 5}},
            "taxonomy.language.description: must be a string, got a number",
        ),
        (
            {"language": {"values": [], "vector_collapse": "yes"}},
            "taxonomy.language.vector_collapse: must be true or false, got a string",
        ),
        (
            {"scope": {"values": [], "properties": []}},
            "taxonomy.scope.properties: must be an object, got an array",
        ),
        (
            {"scope": {"values": [], "properties": {"g": True}}},
            "taxonomy.scope.properties.g: must be an object, got a boolean",
        ),
        (
            {"scope": {"values": [], "properties": {"g": {"mcp_resource": 1}}}},
            "taxonomy.scope.properties.g.mcp_resource: must be true or false, got a number",
        ),
    ],
)
def test_taxonomy_errors_name_the_field(taxonomy: Any, expected: str) -> None:
    assert error(valid(taxonomy=taxonomy)) == expected


def test_taxonomy_key_count_limit() -> None:
    ok = {f"key_{i}": {"values": ["v"]} for i in range(64)}
    assert len(normalize_metadata(valid(taxonomy=ok)).taxonomy) == 64
    too_many = {f"key_{i}": {"values": ["v"]} for i in range(65)}
    assert error(valid(taxonomy=too_many)) == "taxonomy: has 65 keys; at most 64 are allowed"


def test_taxonomy_key_length_limit() -> None:
    assert normalize_metadata(valid(taxonomy={"k" * 64: {"values": ["v"]}})).taxonomy
    assert error(valid(taxonomy={"k" * 65: {"values": ["v"]}})) == (
        f"taxonomy.{'k' * 65}: key is 65 characters long; at most 64 are allowed"
    )


def test_values_per_key_limit_counts_distinct_values() -> None:
    values = [f"v{i}" for i in range(512)]
    assert (
        len(normalize_metadata(valid(taxonomy={"k": {"values": values + values}})).taxonomy["k"].values)
        == 512
    )
    assert error(valid(taxonomy={"k": {"values": [*values, "one-more"]}})) == (
        "taxonomy.k.values: has 513 distinct values; at most 512 are allowed"
    )


def test_value_length_limit_in_utf16_units() -> None:
    assert normalize_metadata(valid(taxonomy={"k": {"values": ["x" * 128]}}))
    assert error(valid(taxonomy={"k": {"values": ["ok", "x" * 129]}})) == (
        "taxonomy.k.values[1]: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is 129 characters long; at most 128 are allowed"
    )
    emoji = "\U0001f600" * 64  # 64 code points, 128 UTF-16 units
    assert js_length(emoji) == 128
    assert normalize_metadata(valid(taxonomy={"k": {"values": [emoji]}}))
    assert "is 130 characters long" in error(valid(taxonomy={"k": {"values": [emoji + "ab"]}}))


def test_description_vector_collapse_and_properties() -> None:
    meta = normalize_metadata(
        valid(
            taxonomy={
                "language": {
                    "values": ["go"],
                    "description": "  Pick a language.  ",
                    "vector_collapse": True,
                },
                "scope": {
                    "values": ["b", "a"],
                    "description": "   ",
                    "vector_collapse": False,
                    "properties": {
                        "z-guide": {"mcp_resource": True},
                        "a-guide": {"mcp_resource": True},
                        "x": {},
                    },
                },
            }
        )
    )
    language, scope = meta.taxonomy["language"], meta.taxonomy["scope"]
    assert language.description == "Pick a language." and language.vector_collapse
    assert scope.description is None and not scope.vector_collapse
    assert list(scope.properties) == ["a-guide", "z-guide"]  # only mcp_resource: true kept, sorted
    assert field_description("language", language) == "Pick a language."
    assert field_description("scope", scope) == "Filter results by scope."
    assert field_description("anything") == "Filter results by anything."
    assert collapse_keys(meta.taxonomy) == ["language"]
    assert resource_values(meta.taxonomy) == [("scope", "a-guide"), ("scope", "z-guide")]


# ------------------------------------------------------------------------------------------------
# stats and embedding


@pytest.mark.parametrize(
    ("stats", "expected"),
    [
        ({"total_chunks": 1.5}, "stats.total_chunks: must be an integer, got a number"),
        ({"total_chunks": "ten"}, "stats.total_chunks: must be an integer, got a string"),
        ({"total_chunks": True}, "stats.total_chunks: must be an integer, got a boolean"),
        ({"total_chunks": -1}, "stats.total_chunks: must be >= 0, got -1"),
        ({"total_files": 2.5}, "stats.total_files: must be an integer, got a number"),
        # JSON's Infinity, -Infinity and NaN (and 1e400, read as infinity): no integer either
        ({"total_chunks": float("inf")}, "stats.total_chunks: must be an integer, got a number"),
        ({"total_chunks": float("-inf")}, "stats.total_chunks: must be an integer, got a number"),
        ({"total_files": float("nan")}, "stats.total_files: must be an integer, got a number"),
        ({"indexed_at": " "}, "stats.indexed_at: must be a non-empty string"),
        (
            {"source_commit": "tooshort"},
            "stats.source_commit: must be null or a 40-char lowercase git SHA-1, got 'tooshort'",
        ),
        (
            {"source_commit": "A" * 40},
            f"stats.source_commit: must be null or a 40-char lowercase git SHA-1, got '{'A' * 40}'",
        ),
        ({"source_commit": 12345}, "stats.source_commit: must be null or a string, got a number"),
    ],
)
def test_stats_errors(stats: dict[str, Any], expected: str) -> None:
    assert error(with_stats(**stats)) == expected


@pytest.mark.parametrize("number", [b"Infinity", b"-Infinity", b"NaN", b"1e400"])
def test_a_number_beyond_integers_in_metadata_json_is_named(number: bytes) -> None:
    data = metadata_to_json(normalize_metadata(valid())).encode()
    hostile = re.sub(rb'"total_chunks": \d+', b'"total_chunks": ' + number, data)
    assert hostile != data
    with pytest.raises(MetadataError) as caught:
        parse_metadata_bytes(hostile, "x/metadata.json")
    assert str(caught.value) == (
        "Invalid metadata.json at 'x/metadata.json': stats.total_chunks: must be an integer, got a number"
    )


def test_non_object_stats() -> None:
    assert error(valid(stats="nope")) == "stats: must be an object, got a string"


def test_stats_values() -> None:
    commit = "abcdef0123456789abcdef0123456789abcdef01"
    assert normalize_metadata(with_stats(source_commit=commit)).stats.source_commit == commit
    assert normalize_metadata(with_stats(source_commit=f" {commit} ")).stats.source_commit == commit
    assert normalize_metadata(with_stats(source_commit=None)).stats.source_commit is None
    zero = normalize_metadata(with_stats(total_chunks=0, total_files=0)).stats
    assert (zero.total_chunks, zero.total_files) == (0, 0)
    assert (
        normalize_metadata(with_stats(total_chunks=3.0)).stats.total_chunks == 3
    )  # JSON 3.0 is an integer in JS


def test_absent_source_commit_is_written_as_null() -> None:
    raw = valid(stats={"total_chunks": 1, "total_files": 1, "indexed_at": "t"})
    meta = normalize_metadata(raw)
    assert meta.stats.source_commit is None
    assert json.loads(metadata_to_json(meta))["stats"] == {
        "total_chunks": 1,
        "total_files": 1,
        "indexed_at": "t",
        "source_commit": None,
    }


@pytest.mark.parametrize(
    ("embedding", "expected"),
    [
        ({"provider": "openai", "model": "m", "dimensions": 0}, "embedding.dimensions: must be >= 1, got 0"),
        (
            {"provider": "openai", "model": "m", "dimensions": -1},
            "embedding.dimensions: must be >= 1, got -1",
        ),
        (
            {"provider": "openai", "model": "m", "dimensions": 1.5},
            "embedding.dimensions: must be an integer, got a number",
        ),
        ({"model": "m", "dimensions": 3}, "embedding.provider: must be a non-empty string, got null"),
        (
            {"provider": "   ", "model": "m", "dimensions": 3},
            "embedding.provider: must be a non-empty string",
        ),
        ({"provider": "openai", "dimensions": 3}, "embedding.model: must be a non-empty string, got null"),
        ("not-an-object", "embedding: must be an object, got a string"),
    ],
)
def test_embedding_errors(embedding: Any, expected: str) -> None:
    assert error(valid(embedding=embedding)) == expected


def test_embedding_null_or_absent() -> None:
    assert normalize_metadata(valid(embedding=None)).embedding is None
    raw = valid()
    del raw["embedding"]
    assert normalize_metadata(raw).embedding is None
    hashed = normalize_metadata(valid(embedding={"provider": "hash", "model": "hash-v1", "dimensions": 256}))
    assert hashed.embedding == EmbeddingInfo(provider="hash", model="hash-v1", dimensions=256)


# ------------------------------------------------------------------------------------------------
# prompts, tool descriptions, files, index


def test_prompts_are_validated_and_names_are_unique() -> None:
    prompts = [
        {"name": "a", "arguments": [], "messages": [message(text="one")]},
        {"name": "a", "arguments": [], "messages": [message(text="two")]},
    ]
    assert error(valid(prompts=prompts)) == "prompts[1].name: Duplicate prompt name 'a'"


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ({"arguments": [], "messages": [message()]}, "prompts[0].name: must be a non-empty string"),
        ({"name": "a", "messages": []}, "prompts[0].messages: must include at least one message"),
        ({"name": "a"}, "prompts[0].messages: must include at least one message"),
        (
            {"name": "a", "messages": [message(role="system")]},
            "prompts[0].messages[0].role: must be 'user' or 'assistant', got 'system'",
        ),
        (
            {"name": "a", "messages": [{"role": "user", "content": {"type": "image", "text": "x"}}]},
            "prompts[0].messages[0].content.type: must be 'text', got 'image'",
        ),
        (
            {"name": "a", "arguments": [{"name": "c", "required": "yes"}], "messages": [message()]},
            "prompts[0].arguments[0].required: must be a boolean (true or false)",
        ),
        (
            {"name": "a", "arguments": [{"description": "d"}], "messages": [message()]},
            "prompts[0].arguments[0].name: must be a non-empty string",
        ),
        (
            {"name": "a", "template": "x", "messages": [message()]},
            "prompts[0].template: use either 'template' or 'messages', not both",
        ),
        ("nope", "prompts[0]: must be an object"),
    ],
)
def test_prompt_errors(prompt: Any, expected: str) -> None:
    assert error(valid(prompts=[prompt])) == expected


def test_malformed_mustache_in_metadata_does_not_block_loading() -> None:
    meta = normalize_metadata(valid(prompts=[{"name": "p", "messages": [message(text="{{#open}}")]}]))
    assert meta.prompts is not None and meta.prompts[0].messages[0].content.text == "{{#open}}"


def test_prompts_must_be_an_array() -> None:
    assert error(valid(prompts={"a": 1})) == "prompts: must be an array, got an object"


def test_prompt_template_shorthand_becomes_one_user_message() -> None:
    meta = normalize_metadata(valid(prompts=[{"name": "p", "template": "  Say {{x}}  "}]))
    assert meta.prompts is not None
    assert [m.to_dict() for m in meta.prompts[0].messages] == [
        {"role": "user", "content": {"type": "text", "text": "Say {{x}}"}}
    ]
    assert json.loads(metadata_to_json(meta))["prompts"] == [
        {
            "name": "p",
            "arguments": [],
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say {{x}}"}}],
        }
    ]


def test_empty_prompt_list_is_omitted() -> None:
    meta = normalize_metadata(valid(prompts=[]))
    assert meta.prompts is None
    assert "prompts" not in json.loads(metadata_to_json(meta))


def test_tool_descriptions() -> None:
    assert normalize_metadata(valid(tool_descriptions={})).tool_descriptions is None
    assert normalize_metadata(valid(tool_descriptions=None)).tool_descriptions is None
    meta = normalize_metadata(valid(tool_descriptions={"get_doc": " Fetch. "}))
    assert meta.tool_descriptions == ToolDescriptions(get_doc="Fetch.")
    assert json.loads(metadata_to_json(meta))["tool_descriptions"] == {"get_doc": "Fetch."}
    assert (
        error(valid(tool_descriptions={"search_docs": ""}))
        == "tool_descriptions.search_docs: must be a non-empty string"
    )
    assert error(valid(tool_descriptions=[])) == "tool_descriptions: must be an object, got an array"


def test_server_instructions_must_be_text() -> None:
    assert error(valid(mcpServerInstructions="  ")) == "mcpServerInstructions: must be a non-empty string"
    assert (
        error(valid(mcpServerInstructions=3))
        == "mcpServerInstructions: must be a non-empty string, got a number"
    )


def test_files_and_index() -> None:
    meta = normalize_metadata(
        valid(files={"a.md": {"title": "A", "extra": 1}, "b.md": {}}, index={"path": "data"})
    )
    assert meta.files == {"a.md": {"title": "A"}, "b.md": {}}
    assert (meta.index.engine, meta.index.table, meta.index.path) == ("lancedb", "chunks", "data")
    assert error(valid(files={"a.md": {"title": 3}})) == "files.a.md.title: must be a string, got a number"
    assert error(valid(files={"a.md": "A"})) == "files.a.md: must be an object, got a string"
    assert error(valid(index={"table": ""})) == "index.table: must be a non-empty string"


@pytest.mark.parametrize("key", ["path", "table"])
@pytest.mark.parametrize("value", ["a\u0000b", "x" * 256, "data/" + "é" * 128])
def test_an_index_location_no_file_system_holds_is_named(key: str, value: str) -> None:
    # the server's first look at it raised ValueError (embedded null byte) or OSError (File name too
    # long): a bare traceback, and docs-mcp search "failed unexpectedly"
    assert error(valid(index={key: value})) == (
        f"index.{key}: must be a path a file system can hold (no NUL character, no name over 255 bytes)"
    )
    assert normalize_metadata(valid(index={key: "x" * 255})).index  # the longest name there may be


# ------------------------------------------------------------------------------------------------
# writing


def build_model() -> IndexMetadata:
    return IndexMetadata(
        corpus_description="Tidewater docs – ünïcode",
        taxonomy={
            "language": TaxonomyField(values=["typescript", "go", "python", "go"], vector_collapse=True),
            "scope": TaxonomyField(
                values=["sdk-specific", "global-guide"],
                properties={
                    "global-guide": TaxonomyValueProperties(mcp_resource=True),
                    "other": TaxonomyValueProperties(),
                },
            ),
        },
        stats=CorpusStats(total_chunks=3, total_files=2, indexed_at="2026-03-01T00:00:00.000Z"),
        prompts=[
            PromptDefinition(
                name="p", messages=[PromptMessage(role="user", content=PromptContent(text="hi"))]
            )
        ],
        tool_descriptions=ToolDescriptions(),
        files={"guides/a.md": {"title": "A"}},
    )


def test_metadata_to_json_normalises_and_orders_keys() -> None:
    text = metadata_to_json(build_model())
    doc = json.loads(text)
    assert list(doc) == [
        "metadata_version",
        "corpus_description",
        "taxonomy",
        "stats",
        "embedding",
        "prompts",
        "files",
        "index",
    ]
    assert doc["metadata_version"] == "1.1.0"
    assert doc["taxonomy"] == {
        "language": {
            "description": "Filter results by language.",
            "values": ["go", "python", "typescript"],
            "vector_collapse": True,
        },
        "scope": {
            "description": "Filter results by scope.",
            "values": ["global-guide", "sdk-specific"],
            "properties": {"global-guide": {"mcp_resource": True}},
        },
    }
    assert doc["stats"]["source_commit"] is None
    assert doc["embedding"] is None
    assert "ünïcode" in text and not text.endswith("\n")
    assert text == json.dumps(doc, indent=2, ensure_ascii=False)


def test_metadata_to_json_is_deterministic_and_idempotent() -> None:
    first = metadata_to_json(build_model())
    assert first == metadata_to_json(build_model())
    assert metadata_to_json(normalize_metadata(json.loads(first))) == first


def test_metadata_to_json_refuses_an_invalid_model() -> None:
    bad = build_model()
    bad.taxonomy["language"] = TaxonomyField(values=["x" * 200])
    with pytest.raises(MetadataError, match=r"^taxonomy\.language\.values\[0\]: "):
        metadata_to_json(bad)
    worse = build_model()
    worse.metadata_version = "2.0.0"
    with pytest.raises(MetadataError, match="Unsupported metadata_version major"):
        metadata_to_json(worse)


def test_normalize_accepts_a_model_instance() -> None:
    meta = normalize_metadata(build_model())
    assert meta.taxonomy["language"].values == ["go", "python", "typescript"]
    assert meta.tool_descriptions is None


def test_normalize_does_not_mutate_its_input() -> None:
    raw = json.loads(ORIGINAL_METADATA_JSON)
    before = copy.deepcopy(raw)
    normalize_metadata(raw)
    assert raw == before


# ------------------------------------------------------------------------------------------------
# reading from disk


def test_write_then_read(tmp_path: Path) -> None:
    path = write_metadata(tmp_path, build_model())
    assert path == tmp_path / "metadata.json"
    assert read_metadata(tmp_path) == normalize_metadata(build_model())
    assert read_metadata(str(tmp_path)).corpus_description == "Tidewater docs – ünïcode"


def test_read_original_file_with_bom(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_bytes(b"\xef\xbb\xbf" + ORIGINAL_METADATA_JSON.encode())
    assert read_metadata(tmp_path).stats.total_chunks == 2847


def test_read_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(MetadataError) as info:
        read_metadata(missing)
    assert isinstance(info.value, IndexNotFoundError)
    assert str(missing) in str(info.value) and "does not exist" in str(info.value)


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError) as info:
        read_metadata(tmp_path)
    assert isinstance(info.value, MetadataError)
    assert str(info.value) == (
        f"metadata.json not found in index directory '{tmp_path.resolve()}'. "
        f"Run `docs-mcp build --docs-dir DOCS --out {tmp_path}` to create the index."
    )


def test_read_a_metadata_json_that_is_a_directory_says_so(tmp_path: Path) -> None:
    # it read "not found ... run docs-mcp build", and the build refuses a folder holding such a name
    (tmp_path / "metadata.json").mkdir()
    with pytest.raises(IndexNotFoundError) as info:
        read_metadata(tmp_path)
    assert str(info.value).endswith(
        "The metadata.json there is a directory: remove it, then run "
        f"`docs-mcp build --docs-dir DOCS --out {tmp_path}` to create the index."
    )


@pytest.mark.parametrize("found", ["guide.md", "sdks/python/README.MD", "nested/.docs-mcp.json"])
def test_read_a_docs_folder_advises_building_from_it_into_another(tmp_path: Path, found: str) -> None:
    docs = tmp_path / "docs"
    (docs / found).parent.mkdir(parents=True)
    (docs / found).write_text("# Guide\n", encoding="utf-8")
    with pytest.raises(IndexNotFoundError) as info:
        read_metadata(docs)
    assert str(info.value) == (
        f"metadata.json not found in index directory '{docs.resolve()}'. That folder holds markdown "
        "files: it is a docs folder, not an index. Build the index into a folder of its own "
        f"(`docs-mcp build --docs-dir {docs} --out ./idx`) and pass that folder as --index-dir."
    )


def test_read_invalid_json(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_text('{\n  "metadata_version": "1.1.0",\n  oops\n}', encoding="utf-8")
    with pytest.raises(MetadataError) as info:
        read_metadata(tmp_path)
    text = str(info.value)
    assert text.startswith(f"Invalid metadata.json at '{tmp_path / 'metadata.json'}': not valid JSON")
    assert "line 3" in text


def test_read_invalid_content_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_text(json.dumps(valid(metadata_version="3.0.0")), encoding="utf-8")
    with pytest.raises(MetadataError) as info:
        read_metadata(tmp_path)
    assert str(info.value).startswith(
        f"Invalid metadata.json at '{tmp_path / 'metadata.json'}': "
        "Unsupported metadata_version major: expected 1.x.x, got 3.0.0"
    )


# ------------------------------------------------------------------------------------------------
# check_taxonomy_limits (used by `validate` on corpus metadata before anything is built)


def test_check_taxonomy_limits_accepts_a_valid_taxonomy() -> None:
    assert check_taxonomy_limits({"language": ["go", " go ", "python"], "scope": ["global-guide"]}) == []


def test_check_taxonomy_limits_reports_every_problem() -> None:
    problems = check_taxonomy_limits(
        {
            "k" * 65: ["ok"],
            "language": ["", "x" * 129, "fine"],
            "many": [f"v{i}" for i in range(513)],
        }
    )
    assert problems == [
        f"taxonomy.{'k' * 65}: key is 65 characters long; at most 64 are allowed",
        "taxonomy.language: value cannot be empty",
        "taxonomy.language: value 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is 129 characters long; at most 128 are allowed",
        "taxonomy.many: has 513 values; at most 512 are allowed",
    ]


def test_check_taxonomy_limits_counts_keys() -> None:
    problems = check_taxonomy_limits({f"k{i}": ["v"] for i in range(65)})
    assert problems == [
        "taxonomy: has 65 keys; at most 64 are allowed (fewer distinct metadata keys are needed)"
    ]
