"""The two built-in tools' descriptions and JSON input schemas, built from an index's metadata.

The search schema carries one enum-constrained property per taxonomy key (in metadata order), so an
agent sees exactly which ``language``/``scope``/... values exist in this corpus. Texts match the
original server word for word, so agents and evaluations behave the same against either.
"""

from __future__ import annotations

from typing import Any

from docs_mcp_server.metadata_view import MetadataView

QUERY_DESCRIPTION = (
    "The search query — use method names, class names, error types, or describe what you want to do "
    "(e.g., 'links.create', 'RateLimitError', 'how to paginate')."
)
LIMIT_DESCRIPTION = "Maximum number of results to return. Default is 10."
CURSOR_DESCRIPTION = "Opaque pagination token returned from a previous search. Omit for the first page."
CHUNK_ID_DESCRIPTION = (
    "The exact ID of the chunk to retrieve, as returned by search_docs "
    "(e.g., 'guides/retries.md#backoff-strategy')."
)
CONTEXT_DESCRIPTION = (
    "Number of adjacent chunks to include before and after the target chunk. Default 0 (recommended). "
    "Chunks are self-contained; only increase after an initial read if you need broader page context."
)
GET_DOC_DESCRIPTION = (
    "Retrieve the full content of a documentation page by its chunk_id (returned by search_docs). "
    "Each chunk is self-contained — do NOT set context on your first read. Only use context=1..3 if, "
    "after reading, you find the chunk references adjacent sections you need."
)
LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT = 1, 50, 10
CONTEXT_MIN, CONTEXT_MAX, CONTEXT_DEFAULT = 0, 5, 0


def search_docs_description(metadata: MetadataView, *, vector_search_available: bool) -> str:
    """The ``search_docs`` description; ``tool_descriptions.search_docs`` in metadata.json overrides it."""
    override = metadata.tool_description("search_docs")
    if override:
        return override
    guidance = (
        "Use exact identifiers, method names, or conceptual queries."
        if vector_search_available
        else "Use exact identifiers and method names."
    )
    return (
        f"Search the pre-indexed {metadata.corpus_description} — the authoritative, complete reference for "
        f"this documentation set. Contains API docs, code examples, and guides. {guidance} "
        "Apply taxonomy filters to narrow results."
    )


def get_doc_description(metadata: MetadataView) -> str:
    """The ``get_doc`` description; ``tool_descriptions.get_doc`` in metadata.json overrides it."""
    return metadata.tool_description("get_doc") or GET_DOC_DESCRIPTION


def search_docs_schema(metadata: MetadataView) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query": {"type": "string", "description": QUERY_DESCRIPTION},
        "limit": {
            "type": "integer",
            "description": LIMIT_DESCRIPTION,
            "minimum": LIMIT_MIN,
            "maximum": LIMIT_MAX,
            "default": LIMIT_DEFAULT,
        },
        "cursor": {"type": "string", "description": CURSOR_DESCRIPTION},
    }
    for key, field in metadata.taxonomy.items():
        properties[key] = {
            "type": "string",
            "description": field.description or f"Filter results by {key}.",
            "enum": list(field.values),
        }
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": ["query"]}


def get_doc_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "chunk_id": {"type": "string", "description": CHUNK_ID_DESCRIPTION},
            "context": {
                "type": "integer",
                "description": CONTEXT_DESCRIPTION,
                "minimum": CONTEXT_MIN,
                "maximum": CONTEXT_MAX,
                "default": CONTEXT_DEFAULT,
            },
        },
        "required": ["chunk_id"],
    }
