"""The two built-in tools' descriptions and JSON input schemas, built from an index's metadata.

The search schema carries one enum-constrained property per taxonomy key (in metadata order), so an
agent sees exactly which ``language``/``scope``/... values exist in this corpus. Texts match the
original server word for word, so agents and evaluations behave the same against either.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from docs_mcp_core.chunk_ids import split_chunk_id
from docs_mcp_server.metadata_view import MetadataView

_CHUNK_ID = re.compile(r'"chunk_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_EXAMPLE_SCAN_BYTES = 64 * 1024

QUERY_DESCRIPTION = (
    "The search query — use method names, class names, error types, or describe what you want to do "
    "(e.g., 'links.create', 'RateLimitError', 'how to paginate')."
)
LIMIT_DESCRIPTION = "Maximum number of results to return. Default is 10."
CURSOR_DESCRIPTION = "Opaque pagination token returned from a previous search. Omit for the first page."
# a chunk id has the form <file path>#<h1 slug>/<h2 slug>/...; the example is one from the index when
# the server can read one (see example_chunk_id), else this one
DEFAULT_CHUNK_ID_EXAMPLE = "guides/retries.md#retries/backoff-strategy"
CHUNK_ID_DESCRIPTION = (
    "The exact ID of the chunk to retrieve, as returned by search_docs (e.g., '{example}')."
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
# the range docs_mcp_core.search.budget accepts (named here to keep core off the start-up path)
MAX_TOKENS_MIN, MAX_TOKENS_MAX = 200, 1_000_000
SCOPES = ("chunk", "section", "parent")
SCOPE_DEFAULT = "chunk"
FACET_DEPTH = 50  # docs_mcp_core.search.facets.FACET_DEPTH

SEARCH_MAX_TOKENS_DESCRIPTION = (
    "Optional. Most tokens ({encoding}) the answer may take. To fit, it comes as compact JSON, hits "
    "leave out filepath, heading and score (chunk_id and breadcrumb carry them), snippets are shortened "
    "and, if need be, hits are left out from the end (next_cursor then starts with them); a 'cut' field "
    "says so. Omit for the full page."
)
FACETS_DESCRIPTION = (
    "Optional. Also return 'facets': for every filter not set, how many of the top {depth} "
    "candidates have each value (e.g. language: python 14, go 11), to pick a filter for a vague "
    "question. Default false."
)
SCOPE_DESCRIPTION = (
    "'chunk' (default): the chunk, with 'context' neighbours. 'section': the whole section the chunk "
    "belongs to (every part of it and its sub-sections, joined as the page reads), in one call. "
    "'parent': the same one heading level up."
)
GET_DOC_MAX_TOKENS_DESCRIPTION = (
    "Optional. Most tokens ({encoding}) the answer may take. A longer answer is cut between blocks "
    "(never inside a code block or table row) and ends with a line giving the cursor for the rest."
)
GET_DOC_CURSOR_DESCRIPTION = (
    "Opaque token from the end of a get_doc answer cut to max_tokens: fetches the rest. Repeat the "
    "same chunk_id, scope and context with it."
)


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


def vector_search_available(metadata: MetadataView, api_key: str | None) -> bool:
    """Whether queries are embedded (decides the search description's guidance, as in the original)."""
    provider = metadata.embedding_provider
    if provider in (None, "", "none", "hash"):
        return False
    if provider == "openai":
        return bool(api_key or os.environ.get("OPENAI_API_KEY"))
    return True


def example_chunk_id(index_dir: Path | str) -> str | None:
    """A chunk id of a local index to show as the ``chunk_id`` example: the first section below a
    top-level heading (``path#h1/h2``) among the first chunks of its ``chunks.json``, else the first
    id other than a preamble; None when there is none to read (an object store, no chunks.json)."""
    if isinstance(index_dir, str):
        return None
    try:  # a regular file only: a named pipe there was waited on forever, before the first call
        fd = os.open(
            Path(index_dir) / "chunks.json",
            os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0),
        )
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = fh.read(_EXAMPLE_SCAN_BYTES).decode("utf-8", errors="ignore")
    except OSError:
        return None
    fallback = None
    for match in _CHUNK_ID.finditer(head):
        try:
            chunk_id = json.loads(f'"{match.group(1)}"')
        except ValueError:
            continue
        _, fragment = split_chunk_id(chunk_id)  # a path may hold "#" (sdks/c#/README.md)
        if not fragment or fragment.startswith("_preamble") or any(c.isspace() for c in chunk_id):
            continue
        if "/" in fragment:
            return chunk_id
        fallback = fallback or chunk_id
    return fallback


def search_docs_schema(metadata: MetadataView, token_encoding: str = "o200k_base") -> dict[str, Any]:
    """The ``search_docs`` input schema: ``query``, ``limit``, ``cursor``, one enum per taxonomy key,
    then ``max_tokens`` and ``facets`` (a taxonomy key of the same name takes precedence)."""
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
    properties.setdefault(
        "max_tokens",
        {
            "type": "integer",
            "description": SEARCH_MAX_TOKENS_DESCRIPTION.format(encoding=token_encoding),
            "minimum": MAX_TOKENS_MIN,
            "maximum": MAX_TOKENS_MAX,
        },
    )
    properties.setdefault(
        "facets",
        {"type": "boolean", "description": FACETS_DESCRIPTION.format(depth=FACET_DEPTH), "default": False},
    )
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": ["query"]}


def get_doc_schema(example_chunk_id: str | None = None, token_encoding: str = "o200k_base") -> dict[str, Any]:
    """The ``get_doc`` input schema; ``example_chunk_id`` (a real id of the index) illustrates ``chunk_id``."""
    example = example_chunk_id or DEFAULT_CHUNK_ID_EXAMPLE
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "chunk_id": {"type": "string", "description": CHUNK_ID_DESCRIPTION.format(example=example)},
            "context": {
                "type": "integer",
                "description": CONTEXT_DESCRIPTION,
                "minimum": CONTEXT_MIN,
                "maximum": CONTEXT_MAX,
                "default": CONTEXT_DEFAULT,
            },
            "scope": {
                "type": "string",
                "description": SCOPE_DESCRIPTION,
                "enum": list(SCOPES),
                "default": SCOPE_DEFAULT,
            },
            "max_tokens": {
                "type": "integer",
                "description": GET_DOC_MAX_TOKENS_DESCRIPTION.format(encoding=token_encoding),
                "minimum": MAX_TOKENS_MIN,
                "maximum": MAX_TOKENS_MAX,
            },
            "cursor": {"type": "string", "description": GET_DOC_CURSOR_DESCRIPTION},
        },
        "required": ["chunk_id"],
    }
