"""Every chunk's markdown held in memory, so ``get_doc`` and whole-file reads never query the table.

A LanceDB read by row id costs 2-3 ms (the query is planned, the pages decoded, a result table
built); the markdown of the whole sdk-docs corpus is 18 MB. :class:`ContentStore` reads the
``content`` column once when the engine opens and keeps it as one UTF-8 buffer with an offset per
row, in catalog order, so a chunk's text is one slice and one decode (about a microsecond) and the
process holds the text's bytes plus 8 bytes a row, not 11,000 Python strings with their headers.

The column is kept when it fits :func:`content_cache_bytes` (256 MiB unless
``DOCS_MCP_CONTENT_CACHE_MB`` says otherwise; ten copies of sdk-docs hold 175 MB); a larger corpus
leaves it in the table and :mod:`~docs_mcp_core.search.documents` reads the rows it needs by row id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from docs_mcp_core.index.derived_files import Part
from docs_mcp_core.memory import budget_from_env
from docs_mcp_core.search.analyzer import pc
from docs_mcp_core.search.row_catalog import in_row_order, scan_within

__all__ = ["CONTENT_CACHE_BYTES", "ContentStore", "content_cache_bytes"]

CONTENT_CACHE_BYTES = 256 * 1024 * 1024


def content_cache_bytes() -> int:
    """The budget for chunk contents in memory: ``DOCS_MCP_CONTENT_CACHE_MB`` (0 leaves them in
    the index) or the default."""
    return budget_from_env("DOCS_MCP_CONTENT_CACHE_MB", CONTENT_CACHE_BYTES)


class ContentStore:
    """The ``content`` of every row, in catalog order, as one buffer and its offsets."""

    def __init__(self, values: pa.Array) -> None:
        """``values``: a string or large string array without nulls, one entry per catalog row."""
        if values.null_count:
            values = pc.fill_null(values, "")
        offset_type = np.int64 if pa.types.is_large_string(values.type) else np.int32
        _, offsets, data = values.buffers()
        assert offsets is not None
        self._values: pa.Array | None = values  # owns the buffers below
        self._offsets = np.frombuffer(offsets, dtype=offset_type)[
            values.offset : values.offset + len(values) + 1
        ]
        self._data = memoryview(data) if data is not None else memoryview(b"")

    @classmethod
    def load(cls, table: Any, row_ids: np.ndarray, budget: int) -> ContentStore | None:
        """The ``content`` column of a LanceDB ``table`` whose rows are ``row_ids`` (ascending), or
        ``None`` when it is larger than ``budget`` bytes, the table has no such column, or the
        table changed since ``row_ids`` were read."""
        if budget <= 0 or "content" not in table.schema.names:
            return None
        scanned = scan_within(table, ["content"], budget)
        if scanned is None:
            return None
        scanned = in_row_order(scanned)
        if not np.array_equal(scanned.column("_rowid").to_numpy().astype(np.uint64), row_ids):
            return None
        column = scanned.column("content")
        values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        return cls(values)

    def to_part(self) -> Part:
        """The buffer and its offsets, for the derived files."""
        return Part({"offsets": self._offsets, "data": np.frombuffer(self._data, dtype=np.uint8)})

    @classmethod
    def from_part(cls, part: Part) -> ContentStore:
        """The store :meth:`to_part` stored (its arrays are used as they are)."""
        store = cls.__new__(cls)
        store._values = None
        store._offsets = part.arrays["offsets"]
        store._data = part.arrays["data"].data.cast("B")
        return store

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @property
    def nbytes(self) -> int:
        """Bytes held: the text and the offsets."""
        return len(self._data) + self._offsets.nbytes

    def text(self, position: int) -> str:
        """The markdown of the row at catalog ``position``."""
        start, end = self._offsets[position], self._offsets[position + 1]
        return str(self._data[start:end], "utf-8")

    def texts(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """The markdown of the rows at ``positions``, in that order."""
        return [self.text(int(p)) for p in positions]
