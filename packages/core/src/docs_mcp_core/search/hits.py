"""What a search returns: the page of hits, and the hint given instead when there is none.

A hit is made of a row's display columns (chunk id, heading, breadcrumb, path, metadata, read by
:class:`~docs_mcp_core.search.rows.RowReader`) and a snippet of its text around the query's terms.
The hint reads the taxonomy values of the best full-text matches without the filters, which
:meth:`~docs_mcp_core.search.retrieval.Retrieval.hint_matches` finds with the configured match
retriever.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docs_mcp_core.ordering import sort_key
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.snippet import make_snippet

__all__ = ["HINT_ROWS", "HitReader", "SearchHit", "SearchResult"]

HINT_ROWS = 100  # full-text matches, ignoring the filters, whose taxonomy values a hint suggests
NO_MATCH_MESSAGE = "0 results found. No matches were found for this query in the indexed corpus."


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    heading: str
    breadcrumb: str
    snippet: str
    filepath: str
    metadata: dict[str, str]
    score: float
    # rendered without the fields other fields already carry (an answer fitted to a token budget):
    # filepath (the chunk_id's path), heading (the breadcrumb's end), the breadcrumb's leading file
    # path, and score (the order of the hits is the ranking)
    lean: bool = False

    def to_dict(self) -> dict[str, Any]:
        if self.lean:
            prefix = f"{self.filepath} > "
            crumb = self.breadcrumb[len(prefix) :] if self.breadcrumb.startswith(prefix) else self.breadcrumb
            return {
                "chunk_id": self.chunk_id,
                "breadcrumb": crumb,
                "snippet": self.snippet,
                "metadata": dict(self.metadata),
            }
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
    facets: dict[str, dict[str, int]] | None = None  # when asked for: per key, value -> candidates
    cut: str | None = None  # what a token budget left out or shortened
    compact: bool = False  # rendered without indentation (answers within a token budget)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "hits": [h.to_dict() for h in self.hits],
            "next_cursor": self.next_cursor,
            "hint": self.hint,
        }
        if self.facets is not None:
            data["facets"] = self.facets
        if self.cut is not None:
            data["cut"] = self.cut
        return data

    def text(self) -> str:
        """The result as the ``search_docs`` tool returns it: JSON, 2-space indented, or compact
        when it was fitted to a token budget."""
        if self.compact:
            return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


class HitReader:
    """Makes the page of hits of a ranking, or the hint given instead when there is none."""

    def __init__(self, reader: RowReader) -> None:
        self._reader = reader
        self._catalog = reader.catalog

    async def hits(self, page: np.ndarray, scores: np.ndarray, query: Query) -> list[SearchHit]:
        """The hits of the rows at ``page`` with their fused ``scores``."""
        rows = await self._reader.rows(page)
        hits: list[SearchHit] = []
        for row_id, score in zip(self._catalog.row_ids[page].tolist(), scores.tolist(), strict=True):
            row = rows.get(int(row_id))
            if row is None:
                continue
            hits.append(
                SearchHit(
                    chunk_id=row["chunk_id"],
                    heading=row.get("heading") or "",
                    breadcrumb=row.get("breadcrumb") or "",
                    snippet=make_snippet(self._reader.snippet_text(row), query.key_terms),
                    filepath=row.get("filepath") or "",
                    metadata=self._reader.metadata(row),
                    score=float(score),
                )
            )
        return hits

    async def hint(self, query: Query, filters: Mapping[str, str], matches: np.ndarray) -> dict[str, Any]:
        """What to say when a search has no hit: whether the query matches anything at all, and the
        other values of each filter that the full-text ``matches`` (catalog positions of the best
        :data:`HINT_ROWS` rows of the match leg, without the filters) carry (``suggested_filters``)."""
        if not len(matches):
            return {"message": NO_MATCH_MESSAGE, "suggested_filters": {}}
        rows = list((await self._reader.rows(matches[:HINT_ROWS])).values())
        suggestions: dict[str, list[str]] = {}
        for key, active_value in filters.items():
            found = (self._reader.metadata(r).get(key) for r in rows)
            values = {v for v in found if v and v != active_value}
            if values:
                suggestions[key] = sorted(values, key=sort_key)
        summary = ", ".join(f"{k}='{v}'" for k, v in filters.items())
        message = (
            f"0 results found for query '{query.text}' with filters {summary}."
            if summary
            else f"0 results found for query '{query.text}'."
        )
        return {"message": message, "suggested_filters": suggestions}
