"""Tool descriptions and input schemas are built from metadata.json exactly like the original's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docs_mcp_core.metadata import normalize_metadata
from docs_mcp_server.app import DocsMcpApp
from docs_mcp_server.metadata_view import MetadataView
from docs_mcp_server.schemas import (
    DEFAULT_CHUNK_ID_EXAMPLE,
    GET_DOC_DESCRIPTION,
    example_chunk_id,
    get_doc_description,
    get_doc_schema,
    search_docs_description,
    search_docs_schema,
)
from tests.support.index_stubs import metadata_document


def view(**overrides: Any) -> MetadataView:
    return MetadataView.from_metadata(normalize_metadata(metadata_document(**overrides)))


def test_search_schema_has_one_enum_per_taxonomy_key_in_metadata_order() -> None:
    schema = search_docs_schema(view())
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["query"]
    assert list(schema["properties"]) == [
        "query",
        "limit",
        "cursor",
        "language",
        "scope",
        "max_tokens",
        "facets",
    ]
    assert schema["properties"]["language"] == {
        "type": "string",
        "description": "Filter results by language.",
        "enum": ["go", "python", "typescript"],
    }
    assert schema["properties"]["scope"]["description"] == "Documentation scope."
    assert schema["properties"]["scope"]["enum"] == ["global-guide", "sdk-specific"]
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "description": "Maximum number of results to return. Default is 10.",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }


def test_search_schema_adds_the_optional_budget_and_facets_after_the_filters() -> None:
    properties = search_docs_schema(view(), "cl100k_base")["properties"]
    assert properties["max_tokens"]["type"] == "integer"
    assert (properties["max_tokens"]["minimum"], properties["max_tokens"]["maximum"]) == (200, 1_000_000)
    assert "cl100k_base" in properties["max_tokens"]["description"]
    assert properties["facets"] == {
        "type": "boolean",
        "description": properties["facets"]["description"],
        "default": False,
    }
    assert "top 50 candidates" in properties["facets"]["description"]


def test_a_taxonomy_key_named_like_a_new_argument_keeps_its_filter() -> None:
    taxonomy = {"facets": {"values": ["a", "b"]}, "language": {"values": ["go"]}}
    schema = search_docs_schema(view(taxonomy=taxonomy))
    assert schema["properties"]["facets"]["enum"] == ["a", "b"]
    assert list(schema["properties"])[-1] == "max_tokens"


def test_get_doc_schema_matches_the_original() -> None:
    schema = get_doc_schema()
    assert schema["required"] == ["chunk_id"]
    assert schema["additionalProperties"] is False
    assert list(schema["properties"])[:2] == ["chunk_id", "context"]
    assert schema["properties"]["context"]["minimum"] == 0
    assert schema["properties"]["context"]["maximum"] == 5
    assert schema["properties"]["context"]["default"] == 0


def test_get_doc_schema_adds_scope_budget_and_cursor() -> None:
    properties = get_doc_schema()["properties"]
    assert list(properties) == ["chunk_id", "context", "scope", "max_tokens", "cursor"]
    assert properties["scope"]["enum"] == ["chunk", "section", "parent"]
    assert properties["scope"]["default"] == "chunk"
    assert properties["max_tokens"]["minimum"] == 200
    assert "o200k_base" in properties["max_tokens"]["description"]
    assert properties["cursor"]["type"] == "string"


def test_the_servers_copies_of_core_constants_agree_with_core() -> None:
    from docs_mcp_core.search import budget, facets, sections
    from docs_mcp_core.tokens import ENCODINGS
    from docs_mcp_server import schemas
    from docs_mcp_server.options import TOKEN_ENCODINGS

    assert (schemas.MAX_TOKENS_MIN, schemas.MAX_TOKENS_MAX) == (budget.MIN_MAX_TOKENS, budget.MAX_MAX_TOKENS)
    assert schemas.SCOPES == sections.SCOPES
    assert schemas.FACET_DEPTH == facets.FACET_DEPTH
    assert sorted(TOKEN_ENCODINGS) == sorted(ENCODINGS)


def test_search_description_names_the_corpus_and_depends_on_vectors() -> None:
    lexical = search_docs_description(view(), vector_search_available=False)
    assert lexical == (
        "Search the pre-indexed Tidewater SDK docs — the authoritative, complete reference for this "
        "documentation set. Contains API docs, code examples, and guides. Use exact identifiers and method "
        "names. Apply taxonomy filters to narrow results."
    )
    hybrid = search_docs_description(view(), vector_search_available=True)
    assert "Use exact identifiers, method names, or conceptual queries." in hybrid
    assert "conceptual queries" not in lexical


def test_tool_description_overrides_come_from_metadata() -> None:
    overridden = view(tool_descriptions={"search_docs": "Find Tidewater docs.", "get_doc": "Read a section."})
    assert search_docs_description(overridden, vector_search_available=False) == "Find Tidewater docs."
    assert get_doc_description(overridden) == "Read a section."
    assert get_doc_description(view()) == GET_DOC_DESCRIPTION


def test_the_chunk_id_example_is_an_id_of_the_index(built_app: DocsMcpApp, built_index: Path) -> None:
    """The example in get_doc's schema has the id format (path#h1/h2) and, when the index's own
    chunks can be read, is one of them."""
    import json

    described = built_app._get_doc_args.schema["properties"]["chunk_id"]["description"]
    example = described.split("(e.g., '")[1].split("')")[0]
    ids = {
        chunk["chunk_id"] for chunk in json.loads((built_index / "chunks.json").read_text(encoding="utf-8"))
    }
    assert example in ids
    path, _, fragment = example.partition("#")
    assert path.endswith(".md") and "/" in fragment and not fragment.startswith("_preamble")


def test_without_readable_chunks_the_example_still_has_the_id_format(tmp_path: Path) -> None:
    assert example_chunk_id(tmp_path) is None
    assert example_chunk_id("s3://bucket/prefix") is None
    described = get_doc_schema()["properties"]["chunk_id"]["description"]
    assert f"(e.g., '{DEFAULT_CHUNK_ID_EXAMPLE}')" in described
    assert "#" in DEFAULT_CHUNK_ID_EXAMPLE and "/" in DEFAULT_CHUNK_ID_EXAMPLE.partition("#")[2]


def test_both_schemas_are_valid_json_schema_with_valid_defaults() -> None:
    from jsonschema import Draft202012Validator

    for schema in (search_docs_schema(view()), get_doc_schema("guides/a.md#a/b")):
        Draft202012Validator.check_schema(schema)  # raises on an invalid schema
        for name, spec in schema["properties"].items():
            assert spec.get("type") in ("string", "integer", "boolean"), name
            assert spec.get("description"), name
            if "default" in spec:
                Draft202012Validator(spec).validate(spec["default"])
        assert set(schema["required"]) <= set(schema["properties"])


def test_the_chunk_id_example_splits_a_path_that_holds_a_hash(tmp_path: Path) -> None:
    """A path may hold ``#`` (``c#/guide.md``): the example is a section, not the preamble."""
    from docs_mcp_core.build import BuildOptions, build_index

    docs = tmp_path / "docs"
    (docs / "c#").mkdir(parents=True)
    (docs / "c#" / "guide.md").write_text(
        "Intro words.\n\n# Guide\n\nSome text.\n\n## Install\n\nMore text.\n", encoding="utf-8"
    )
    build_index(BuildOptions(docs_dir=docs, out_dir=tmp_path / "idx"))
    assert example_chunk_id(tmp_path / "idx") == "c#/guide.md#guide/install"
