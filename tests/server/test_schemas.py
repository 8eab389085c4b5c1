"""Tool descriptions and input schemas are built from metadata.json exactly like the original's."""

from __future__ import annotations

from typing import Any

from docs_mcp_core.metadata import normalize_metadata
from docs_mcp_server.metadata_view import MetadataView
from docs_mcp_server.schemas import (
    GET_DOC_DESCRIPTION,
    get_doc_description,
    get_doc_schema,
    search_docs_description,
    search_docs_schema,
)

from .conftest import metadata_document


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
