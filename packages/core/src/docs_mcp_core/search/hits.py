"""What a search returns: the page of hits, and the hint given instead when there is none.

A hit is made of a row's display columns (chunk id, heading, breadcrumb, path, metadata) and a
snippet of its text around the query's terms. The columns come from the row catalog when they are
held in memory, else from one LanceDB read of the page's rows by row id.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docs_mcp_core.ordering import sort_key
from docs_mcp_core.ranking import COVERAGE_TEXT_CHARS
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.row_catalog import RowCatalog
from docs_mcp_core.search.snippet import make_snippet

__all__ = ["HIT_COLUMNS", "HitReader", "SearchHit", "SearchResult", "display_columns"]

HIT_COLUMNS = ("chunk_id", "heading", "breadcrumb", "content_text", "filepath", "metadata_json")
_COVERAGE_COLUMNS = ("heading", "breadcrumb", "filepath", "content_text")
_HINT_ROWS = 100  # full-text matches, ignoring the filters, whose taxonomy values a hint suggests
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


def display_columns(columns: Collection[str], taxonomy_keys: Sequence[str]) -> list[str]:
    """Columns a hit is made of (the taxonomy columns stand in for unreadable ``metadata_json``)."""
    return [c for c in dict.fromkeys([*HIT_COLUMNS, *taxonomy_keys]) if c in columns]


class HitReader:
    """Reads the rows a page of hits (or a ranking signal) is made of."""

    def __init__(
        self, *, atable: Any, catalog: RowCatalog, columns: Collection[str], taxonomy_keys: Sequence[str]
    ) -> None:
        self._atable = atable
        self._catalog = catalog
        self._columns = columns
        self._taxonomy_keys = list(taxonomy_keys)

    async def rows(self, positions: np.ndarray) -> dict[int, dict[str, Any]]:
        """Display columns of the rows at ``positions``, by row id: from memory, or taken by row id
        (one cheap read)."""
        if not len(positions):
            return {}
        row_ids = [int(r) for r in self._catalog.row_ids[positions]]
        cached = self._catalog.display_rows(positions)
        if cached is not None:
            return dict(zip(row_ids, cached, strict=True))
        rows = (
            await self._atable.take_row_ids(row_ids)
            .with_row_id()
            .select(display_columns(self._columns, self._taxonomy_keys))
            .to_arrow()
        )
        return {int(r["_rowid"]): r for r in rows.to_pylist()}

    def metadata(self, row: Mapping[str, Any]) -> dict[str, str]:
        """A hit's metadata: ``metadata_json``, or the taxonomy columns when it cannot be read."""
        raw = row.get("metadata_json")
        if isinstance(raw, str) and raw.strip():
            try:
                parsed = json.loads(raw)
                if isinstance(parsed, dict):
                    return {str(k): v for k, v in parsed.items() if isinstance(v, str) and v}
            except json.JSONDecodeError:
                pass
        return {k: row[k] for k in self._taxonomy_keys if isinstance(row.get(k), str) and row.get(k)}

    async def hits(self, page: np.ndarray, scores: np.ndarray, query: Query) -> list[SearchHit]:
        """The hits of the rows at ``page`` with their fused ``scores``."""
        rows = await self.rows(page)
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
                    snippet=make_snippet(row.get("content_text") or "", query.key_terms),
                    filepath=row.get("filepath") or "",
                    metadata=self.metadata(row),
                    score=float(score),
                )
            )
        return hits

    async def coverage_texts(self, positions: np.ndarray) -> list[str]:
        """Lower-cased heading, breadcrumb, path and start of the text of the rows at ``positions``
        (what query-term coverage looks in)."""
        columns = _COVERAGE_COLUMNS
        values = self._catalog.display_values(positions, columns)
        if values is None:  # not held in memory: the rows' display columns, taken by row id
            rows = await self.rows(positions)
            found = [rows.get(int(r)) or {} for r in self._catalog.row_ids[positions].tolist()]
            values = [[row.get(c) or "" for row in found] for c in columns]
        head, crumbs, path, text = values
        return [
            f"{h} {c} {p} {t[:COVERAGE_TEXT_CHARS]}".lower()
            for h, c, p, t in zip(head, crumbs, path, text, strict=True)
        ]

    async def hint(self, query: Query, filters: Mapping[str, str]) -> dict[str, Any]:
        """What to say when a search has no hit: whether the query matches anything at all, and the
        other values of each filter that full-text matches carry (``suggested_filters``)."""
        # imported where used: LanceDB is loaded through import_lancedb() when the index opens
        from lancedb.query import FullTextOperator, MultiMatchQuery

        cols = [c for c in ("chunk_id", "metadata_json", *self._taxonomy_keys) if c in self._columns]
        match = MultiMatchQuery(
            query.lexical, ["heading", "content_text"], boosts=[3.0, 1.0], operator=FullTextOperator.OR
        )
        try:
            found = (
                await self._atable.query().nearest_to_text(match).select(cols).limit(_HINT_ROWS).to_arrow()
            )
            rows = found.to_pylist()
        except Exception as exc:
            if "Invalid count value" not in str(exc):
                raise
            rows = []
        if not rows:
            return {"message": NO_MATCH_MESSAGE, "suggested_filters": {}}
        suggestions: dict[str, list[str]] = {}
        for key, active_value in filters.items():
            values = {v for v in (self.metadata(r).get(key) for r in rows) if v and v != active_value}
            if values:
                suggestions[key] = sorted(values, key=sort_key)
        summary = ", ".join(f"{k}='{v}'" for k, v in filters.items())
        message = (
            f"0 results found for query '{query.text}' with filters {summary}."
            if summary
            else f"0 results found for query '{query.text}'."
        )
        return {"message": message, "suggested_filters": suggestions}
