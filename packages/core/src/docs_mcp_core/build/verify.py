"""Checking a freshly written table before it is published, so a broken write never replaces a good index.

The table is opened from scratch (not through the writer's handle), its rows are counted against the
chunks the build wrote, one row is read back and found again through the ``chunk_id`` index, and a
full-text query is run. Any failure is a :class:`~docs_mcp_core.errors.BuildError`; the build then
keeps the previous index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from docs_mcp_core.errors import BuildError
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.live_files import TABLE_NAME
from docs_mcp_core.index.table import quote_string

__all__ = ["verify_table"]


def verify_table(
    db_path: Path | str, expected_rows: int, *, storage_options: Mapping[str, str] | None = None
) -> None:
    """Check a freshly written table before it is published: opened from scratch, it holds
    ``expected_rows`` rows, a row can be read back, and the full-text and ``chunk_id`` indexes find it.

    Raises :class:`~docs_mcp_core.errors.BuildError` naming what is wrong (the caller then keeps the
    previous index).
    """
    lancedb = import_lancedb()
    where = str(db_path)
    try:
        table = lancedb.connect(where, storage_options=dict(storage_options or {})).open_table(TABLE_NAME)
        rows = table.count_rows()
        sample = table.search().select(["chunk_id", "content_text", "heading"]).limit(1).to_list()
    except Exception as exc:  # noqa: BLE001 - any failure means the table cannot be served
        raise BuildError(f"the table written to '{where}' cannot be read back: {exc}") from None
    if rows != expected_rows:
        raise BuildError(
            f"the table written to '{where}' holds {rows:,} rows where {expected_rows:,} chunks were written"
        )
    if not sample:
        return
    chunk_id = str(sample[0]["chunk_id"])
    try:
        found = table.search().where(f"chunk_id = {quote_string(chunk_id)}").select(["chunk_id"]).to_list()
        # the full-text indexes answer (a stop word may find nothing: only errors count)
        word = _probe_word(f"{sample[0]['heading']} {sample[0]['content_text']}") or "docs"
        table.search(word, query_type="fts", fts_columns="content_text").select(["chunk_id"]).limit(
            1
        ).to_list()
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"the table written to '{where}' cannot be searched: {exc}") from None
    if not found:
        raise BuildError(f"the table written to '{where}' does not find its own row '{chunk_id}'")


def _probe_word(text: str) -> str | None:
    """A plain word of ``text`` for a full-text probe query (None when it has none)."""
    words = re.findall(r"[A-Za-z]{4,}", text)
    return max(words, key=len) if words else None
