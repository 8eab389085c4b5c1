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

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.index.derived_files import DerivedWriter, Part, StreamedArray
from docs_mcp_core.memory import budget_from_env
from docs_mcp_core.search.analyzer import pc
from docs_mcp_core.search.row_catalog import in_row_order, scan_within
from docs_mcp_core.search.scan_batches import SCAN_BATCH_ROWS, CatalogScan

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CONTENT_CACHE_BYTES", "ContentStore", "content_cache_bytes", "write_content"]

CONTENT_CACHE_BYTES = 256 * 1024 * 1024


def content_cache_bytes() -> int:
    """The budget for chunk contents in memory: ``DOCS_MCP_CONTENT_CACHE_MB`` (0 leaves them in
    the index) or the default."""
    return budget_from_env("DOCS_MCP_CONTENT_CACHE_MB", CONTENT_CACHE_BYTES)


class ContentStore:
    """The ``content`` of every row, in catalog order, as one buffer and its offsets."""

    def __init__(self, values: pa.Array) -> None:
        """``values``: a string or large string array without nulls, one entry per catalog row."""
        import pyarrow as pa

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


def write_content(
    writer: DerivedWriter, name: str, table: Any, row_ids: np.ndarray, budget: int, scan_bytes: int
) -> bool:
    """Add to ``writer`` the part ``name``: the arrays :meth:`ContentStore.to_part` gives of
    :meth:`ContentStore.load` (the same bytes), the text written as the table's batches are read
    rather than held and copied into one buffer (twice the column); its ``meta`` says the bytes
    the store holds plus ``scan_bytes``. False, and nothing added, where ``load`` gives ``None``."""
    if budget <= 0 or "content" not in table.schema.names:
        return False
    offsets, scan = None, CatalogScan(table, ["content"], row_ids)
    data = writer.stream(np.uint8)
    # load holds a column of one batch as it is, of several combined: a small one is loaded
    streamed = table.count_rows() > SCAN_BATCH_ROWS
    if streamed:
        try:
            offsets = _stream_batches(data, iter(scan), budget)
        except _Unusual:
            scan.out_of_order = True
    if not streamed or scan.out_of_order:  # rows out of order or nulls: load sorts and fills them
        store = ContentStore.load(table, row_ids, budget)
        if store is None:
            return False
        writer.add(name, Part(store.to_part().arrays, {"scan_bytes": store.nbytes + scan_bytes}))
        return True
    if offsets is None:
        return False
    meta = {"scan_bytes": data.nbytes + offsets.nbytes + scan_bytes}
    writer.add(name, Part({"offsets": offsets}, meta, {"data": data}))
    return True


class _Unusual(Exception):
    """A batch :func:`_stream_batches` does not write (nulls, where the store holds "")."""


def _stream_batches(data: StreamedArray, batches: Iterator[pa.RecordBatch], budget: int) -> np.ndarray | None:
    """Write the ``content`` of ``batches`` to ``data`` as :meth:`ContentStore.load` holds a column
    of several batches (their texts end to end, offsets from 0) and return its offsets; ``None``
    (what was written is left out) once the batches pass ``budget`` bytes, where ``load``'s scan
    stops, or when there are none."""
    size, end = 0, 0
    offsets: list[np.ndarray] = []
    for batch in batches:
        size += batch.nbytes
        if size > budget:
            return None
        values = batch.column("content")
        if values.null_count:
            raise _Unusual
        at = _offsets(values)
        start, stop = int(at[0]), int(at[-1])
        data.write(_data(values)[start:stop])
        offsets.append(at[1 if offsets else 0 :] - start + end)
        end += stop - start
    return np.concatenate(offsets) if offsets else None


def _offsets(values: pa.Array) -> np.ndarray:
    """The offsets of a string array's values in its data buffer."""
    import pyarrow as pa

    dtype = np.int64 if pa.types.is_large_string(values.type) else np.int32
    buffer = values.buffers()[1]
    assert buffer is not None
    return np.frombuffer(buffer, dtype=dtype)[values.offset : values.offset + len(values) + 1]


def _data(values: pa.Array) -> np.ndarray:
    """A string array's data buffer, whole."""
    buffer = values.buffers()[2]
    return np.frombuffer(buffer if buffer is not None else b"", dtype=np.uint8)
