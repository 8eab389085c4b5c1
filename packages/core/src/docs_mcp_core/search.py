"""Hybrid search over a docs-mcp LanceDB index: the public engine API.

INTERFACE CONTRACT (implementation in progress). Other packages code against exactly this surface:

    engine = SearchEngine.open(index_dir, options=SearchOptions(...), on_warning=log.warning)
    result = engine.search("retry configuration", limit=10, filters={"language": "python"}, cursor=None)
    result.to_dict()  # {"hits": [...], "next_cursor": str | None, "hint": {...} | None}
    text = engine.get_doc("guides/retries.md#backoff", context=1)
    paths = engine.list_filepaths({"scope": "global-guide"})
    whole = engine.file_content("guides/retries.md")
    engine.metadata  # IndexMetadata read from metadata.json

Every method is synchronous and thread-safe; async callers run them with ``anyio.to_thread``.
User-facing failures raise :class:`docs_mcp_core.errors.SearchError` whose message is the exact
text an MCP client gets back as an ``isError`` result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SearchOptions:
    """Ranking and runtime knobs of the engine (server flags map onto these)."""

    proximity_weight: float = 1.25
    phrase_slop: int = 0
    vector_weight: float = 1.0
    cursor_secret: str | None = None
    ranking: str = "default"  # "default" (ours) or "original" (upstream recipe)
    query_embedding_api_key: str | None = None
    query_embedding_base_url: str | None = None


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    heading: str
    breadcrumb: str
    snippet: str
    filepath: str
    metadata: dict[str, str]
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "heading": self.heading,
            "breadcrumb": self.breadcrumb,
            "snippet": self.snippet,
            "filepath": self.filepath,
            "metadata": dict(self.metadata),
            "score": self.score,
        }


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    next_cursor: str | None
    hint: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.to_dict() for h in self.hits],
            "next_cursor": self.next_cursor,
            "hint": self.hint,
        }


class SearchEngine:
    """Read-only engine over ``<index_dir>/metadata.json`` + ``<index_dir>/.lancedb``."""

    @classmethod
    def open(
        cls,
        index_dir: str | Path,
        *,
        options: SearchOptions | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> SearchEngine:
        raise NotImplementedError

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, str] | None = None,
        cursor: str | None = None,
    ) -> SearchResult:
        raise NotImplementedError

    def get_doc(self, chunk_id: str, context: int = 0) -> str:
        raise NotImplementedError

    def list_filepaths(self, filters: Mapping[str, str]) -> list[str]:
        raise NotImplementedError

    def file_content(self, filepath: str) -> str:
        raise NotImplementedError
