"""Document access: a chunk with its neighbours (``get_doc``), a whole file, the files of a filter.

``get_doc`` answers in the original's delimiter grammar, one block per chunk:
``--- Chunk: <id> (Chunk i of n) (Target|Context: +k|-k) ---`` followed by the chunk's markdown.
The chunk and its file's other chunks are found in the row catalog; only their contents are read
from the table, by row id.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from docs_mcp_core.errors import SearchError
from docs_mcp_core.index.table import quote_identifier, quote_string
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.search.row_catalog import RowCatalog

__all__ = ["MAX_CONTEXT", "Documents", "is_chunk_id_format"]

MAX_CONTEXT = 5  # neighbouring chunks on each side
WHOLE_FILE = -1  # the context value that asks for the whole file
_CHUNK_ID_RE = re.compile(r"^(?!\s)([^#\s]+)(#[^#\s]+)?$")


def is_chunk_id_format(chunk_id: str) -> bool:
    return _CHUNK_ID_RE.match(chunk_id) is not None


class Documents:
    """The chunks and files of an open index."""

    def __init__(self, *, table: Any, catalog: RowCatalog, columns: Collection[str]) -> None:
        self._table = table
        self._atable = table._table  # the AsyncTable behind LanceDB's synchronous table
        self._catalog = catalog
        self._columns = columns

    async def get_doc(self, chunk_id: str, context: int = 0) -> str:
        """The chunk's content, with up to ``context`` neighbours (0-5) on each side; ``-1``: the
        whole file."""
        if not chunk_id or not chunk_id.strip():
            raise SearchError("chunk_id must be a non-empty string")
        if context == WHOLE_FILE:
            return await self.file_content(chunk_id.split("#", 1)[0])
        c = max(0, min(MAX_CONTEXT, int(context)))
        located = self._catalog.locate(chunk_id)
        if located is None:
            if not is_chunk_id_format(chunk_id):
                raise SearchError(
                    f"Chunk ID '{chunk_id}' has invalid format. Expected {{filepath}} or {{filepath}}#{{heading-path}}."
                )
            raise SearchError(
                f"Chunk ID '{chunk_id}' not found. Use search_docs to discover valid chunk IDs."
            )
        siblings, index = located  # every chunk of the file: chunk_index -> (row id, chunk id)
        total = len(siblings)
        wanted = [i for i in range(max(0, index - c), index + c + 1) if i in siblings]
        contents = await (
            self._atable.take_row_ids([siblings[i][0] for i in wanted])
            .with_row_id()
            .select(["content"])
            .to_arrow()
        )
        by_row = dict(
            zip(contents.column("_rowid").to_pylist(), contents.column("content").to_pylist(), strict=True)
        )
        blocks = []
        for i in wanted:  # ascending chunk_index
            delta = i - index
            role = "Target" if delta == 0 else f"Context: {'+' if delta > 0 else ''}{delta}"
            content = by_row.get(siblings[i][0], "")
            blocks.append(f"--- Chunk: {siblings[i][1]} (Chunk {i + 1} of {total}) ({role}) ---\n{content}")
        return "\n\n".join(blocks)

    async def file_content(self, filepath: str) -> str:
        """Every chunk of one file, in order, joined by blank lines (the whole document)."""
        found = await (
            self._atable.query()
            .where(f"filepath = {quote_string(filepath)}")
            .select(["chunk_index", "content"])
            .limit(100_000)
            .to_arrow()
        )
        rows = found.to_pylist()
        if not rows:
            raise SearchError(f"File '{filepath}' not found in the index.")
        return "\n\n".join(r["content"] for r in sorted(rows, key=lambda r: r["chunk_index"]))

    def filepaths(self, filters: Mapping[str, str]) -> list[str]:
        """Files that have a chunk matching every ``key = value`` in ``filters`` (no auto-include)."""
        clauses = [
            f"{quote_identifier(k)} = {quote_string(v)}" for k, v in filters.items() if k in self._columns
        ]
        clauses.append("chunk_index = 0")
        rows = (
            self._table.search().where(" AND ".join(clauses)).select(["filepath"]).limit(1_000_000).to_arrow()
        )
        return sorted(set(rows.column("filepath").to_pylist()), key=sort_key)
