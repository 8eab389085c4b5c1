"""Reading the display columns of rows by catalog position: from memory, or from the table.

A hit is made of a row's display columns (chunk id, heading, breadcrumb, text, path, metadata);
the ranking's query-term coverage reads some of the same columns. They come from the row catalog
when it holds them in memory, else from one LanceDB read of the rows by row id.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from docs_mcp_core.search.row_catalog import RowCatalog

__all__ = ["HIT_COLUMNS", "RowReader", "display_columns", "text_column"]

HIT_COLUMNS = ("chunk_id", "heading", "breadcrumb", "content_text", "filepath", "metadata_json")
PLAIN_TEXT_COLUMN = "search_plain"


def text_column(columns: Collection[str]) -> str:
    """The text snippets and coverage read: our plain text (words apart, no markup) when the index
    has it, else ``content_text`` (an index the original built)."""
    return PLAIN_TEXT_COLUMN if PLAIN_TEXT_COLUMN in columns else "content_text"


def display_columns(columns: Collection[str], taxonomy_keys: Sequence[str]) -> list[str]:
    """Columns a hit is made of (the taxonomy columns stand in for unreadable ``metadata_json``)."""
    text = text_column(columns)
    wanted = [text if c == "content_text" else c for c in HIT_COLUMNS]
    if text != PLAIN_TEXT_COLUMN:
        wanted.append("content")  # an index the original built: snippets are rendered from it
    return [c for c in dict.fromkeys([*wanted, *taxonomy_keys]) if c in columns]


class RowReader:
    """Display columns of rows by catalog position."""

    def __init__(
        self, *, atable: Any, catalog: RowCatalog, columns: Collection[str], taxonomy_keys: Sequence[str]
    ) -> None:
        self._atable = atable
        self.catalog = catalog
        self._columns = columns
        self._taxonomy_keys = list(taxonomy_keys)
        self.text_column = text_column(columns)

    async def rows(self, positions: np.ndarray) -> dict[int, dict[str, Any]]:
        """Display columns of the rows at ``positions``, by row id: from memory, or taken by row id
        (one cheap read)."""
        if not len(positions):
            return {}
        row_ids = [int(r) for r in self.catalog.row_ids[positions]]
        cached = self.catalog.display_rows(positions)
        if cached is not None:
            return dict(zip(row_ids, cached, strict=True))
        rows = (
            await self._atable.take_row_ids(row_ids)
            .with_row_id()
            .select(display_columns(self._columns, self._taxonomy_keys))
            .to_arrow()
        )
        return {int(r["_rowid"]): r for r in rows.to_pylist()}

    async def markdown(self, positions: np.ndarray) -> list[str]:
        """The markdown ``content`` of the rows at ``positions``, taken from the table by row id
        (the intent signals read the introductions' link lists from it, once per index)."""
        if not len(positions):
            return []
        row_ids = [int(r) for r in self.catalog.row_ids[positions]]
        rows = await self._atable.take_row_ids(row_ids).with_row_id().select(["content"]).to_arrow()
        found = dict(zip(rows["_rowid"].to_pylist(), rows["content"].to_pylist(), strict=True))
        return [found.get(r) or "" for r in row_ids]

    async def values(self, positions: np.ndarray, columns: Sequence[str]) -> list[list[Any]]:
        """Values of display ``columns`` at ``positions``, one list per column (``""`` for none)."""
        values = self.catalog.display_values(positions, columns)
        if values is None:  # not held in memory: the rows' display columns, taken by row id
            rows = await self.rows(positions)
            found = [rows.get(int(r)) or {} for r in self.catalog.row_ids[positions].tolist()]
            values = [[row.get(c) or "" for row in found] for c in columns]
        return values

    def snippet_text(self, row: Mapping[str, Any]) -> str:
        """The text a hit's snippet is cut from: our plain text (words apart, no markup), rendered
        from the markdown when the index does not hold it, so that an index the original built
        gives the same snippets as ours."""
        if self.text_column == PLAIN_TEXT_COLUMN:
            return row.get(PLAIN_TEXT_COLUMN) or ""
        # only an index the original built needs the markdown parser: a search of ours never imports it
        from docs_mcp_core.markdown_text import markdown_plain_text

        return markdown_plain_text(row.get("content") or "")

    def metadata(self, row: Mapping[str, Any]) -> dict[str, str]:
        """A hit's metadata: ``metadata_json``, or the taxonomy columns when it cannot be read."""
        raw = row.get("metadata_json")
        if isinstance(raw, str) and raw.strip():
            try:
                parsed = json.loads(raw)
                if isinstance(parsed, dict):
                    return {str(k): v for k, v in parsed.items() if isinstance(v, str) and v}
            except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
                pass
        return {k: row[k] for k in self._taxonomy_keys if isinstance(row.get(k), str) and row.get(k)}
