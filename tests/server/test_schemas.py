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
    assert list(schema["properties"]) == ["query", "limit", "cursor", "language", "scope"]
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


def test_get_doc_schema_matches_the_original() -> None:
    schema = get_doc_schema()
    assert schema["required"] == ["chunk_id"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["context"]["minimum"] == 0
    assert schema["properties"]["context"]["maximum"] == 5
    assert schema["properties"]["context"]["default"] == 0


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
