"""A table's columns read a batch of rows at a time, in the row catalog's order, for the build.

The build derives the lexical index and the content store from the table's columns
(:mod:`~docs_mcp_core.search.derived`); reading a column whole holds all of its text at once (the
search columns of ten copies of sdk-docs are 125 MiB, their markdown 175 MiB) beside what is made
of it. Read a batch at a time, a part is made, or written, as the rows come, and the build holds
one batch of text. The rows must come in the catalog's order, as a scan's usually do;
:attr:`CatalogScan.out_of_order` says when they do not, and the caller then reads the columns
whole and sorts them as the engine does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["SCAN_BATCH_ROWS", "CatalogScan", "combined_within"]

SCAN_BATCH_ROWS = 8192  # rows read of the table at a time


class CatalogScan:
    """``columns`` (and ``_rowid``) of a LanceDB ``table``, a batch of rows at a time, as long as
    the rows are ``row_ids`` (ascending) in that order: iterating stops at the first batch that is
    not, and :attr:`out_of_order` is then True (as when rows are missing at the end)."""

    def __init__(self, table: Any, columns: Sequence[str], row_ids: np.ndarray) -> None:
        self.table, self.columns, self.row_ids = table, list(columns), row_ids
        self.out_of_order = False

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        self.out_of_order = False
        total = self.table.count_rows()
        seen = 0
        # a query per range of rows: the reader of one query of every row reads ahead nearly the
        # whole column (RSS +190 MiB for the 175 MiB of markdown at ten copies of sdk-docs; a
        # query per range of rows, +60 MiB)
        for start in range(0, total, SCAN_BATCH_ROWS):
            query = self.table.search().with_row_id(True).select(self.columns)
            for batch in query.offset(start).limit(SCAN_BATCH_ROWS).to_arrow().to_batches():
                ids = batch.column("_rowid").to_numpy().astype(np.uint64)
                if not np.array_equal(ids, self.row_ids[seen : seen + len(ids)]):
                    self.out_of_order = True
                    return
                seen += len(ids)
                yield batch
        self.out_of_order = seen != len(self.row_ids)


def combined_within(scan: CatalogScan, budget: int) -> pa.Table | None:
    """The columns ``scan`` reads (without ``_rowid``) as one table of one chunk per column, or
    ``None`` as soon as they pass ``budget`` bytes or when there are no rows; check
    :attr:`CatalogScan.out_of_order` after. Each column is combined as the one before it is let
    go (combining the table at once would hold it twice)."""
    import pyarrow as pa

    batches, size = [], 0
    for batch in scan:
        size += batch.nbytes
        if size > budget:
            return None
        batches.append(batch)
    if not batches or scan.out_of_order:
        return None
    read = batches[0].schema  # the columns in the order asked for, as the scan gives them
    schema = pa.schema([read.field(name) for name in scan.columns], metadata=read.metadata)
    chunked = [pa.chunked_array([batch.column(name) for batch in batches]) for name in scan.columns]
    batches.clear()
    columns = []
    for number in range(len(chunked)):
        column, chunked[number] = chunked[number], None
        columns.append(column.combine_chunks())
        del column
    return pa.Table.from_arrays(columns, schema=schema)
