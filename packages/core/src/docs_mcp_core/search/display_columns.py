"""The display columns of every row, read from the derived files with NumPy alone.

A hit is made of its row's display columns (chunk id, heading, breadcrumb, path, metadata, the
taxonomy values), which the derived files hold in Arrow's string layout: per column an offsets
buffer, a data buffer and, when some value is missing, a validity bitmap. Reading them back as a
pyarrow table costs a starting server PyArrow's import (25-45 ms on a 2-core machine, a fifth of
the time between its handshake and its first answer), and a search only ever slices a few dozen
strings out of those buffers. :class:`DisplayColumns` slices them itself.

The build records each column's name and Arrow type beside the buffers
(:func:`stored_display`); an index built before that has no such record and is read as a pyarrow
table, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.index.derived_files import Part, arrays_from_arrow, arrow_from_arrays

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["DisplayColumns", "held_display", "stored_display"]

_OFFSETS = {"string": np.int32, "large_string": np.int64}
_PREFIX = "display"


def stored_display(display: pa.Table | DisplayColumns, extra_bytes: int) -> Part | None:
    """The derived files' part for a display table: its buffers, the bytes a scan of it takes
    (``extra_bytes`` more than the table's) and, when every column holds strings, each column's
    name and Arrow type, by which :func:`held_display` reads it without PyArrow. ``None`` when a
    column cannot be stored (a nested type)."""
    table = display.to_arrow() if isinstance(display, DisplayColumns) else display
    arrays = arrays_from_arrow(_PREFIX, table)
    if arrays is None:
        return None
    meta: dict[str, Any] = {"scan_bytes": int(table.nbytes) + extra_bytes}
    layout = [[field.name, str(field.type)] for field in table.schema]
    if all(kind in _OFFSETS for _, kind in layout):
        meta["layout"] = layout
    return Part(arrays, meta)


def held_display(part: Part) -> pa.Table | DisplayColumns:
    """The display columns :func:`stored_display` stored: read with NumPy when the part records
    their layout, else (an index built before it did) as a pyarrow table."""
    return DisplayColumns.from_arrays(part.arrays, part.meta, _PREFIX) or arrow_from_arrays(
        part.arrays, _PREFIX
    )


class _Column:
    __slots__ = ("data", "offsets", "valid")

    def __init__(self, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None) -> None:
        self.offsets = offsets
        self.data = data
        self.valid = valid  # Arrow's validity bitmap (least significant bit first), or None

    @property
    def nbytes(self) -> int:
        return self.offsets.nbytes + self.data.nbytes + (self.valid.nbytes if self.valid is not None else 0)

    def value(self, row: int) -> str | None:
        if self.valid is not None and not (int(self.valid[row >> 3]) >> (row & 7)) & 1:
            return None
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        return self.data[start:end].tobytes().decode("utf-8")


class DisplayColumns:
    """String columns in Arrow's layout, by name: what :class:`~.row_catalog.RowCatalog` reads a
    hit's display values from (the same values, ``None`` for a missing one, as the pyarrow table)."""

    def __init__(self, columns: Mapping[str, _Column]) -> None:
        self._columns = dict(columns)
        self.nbytes = sum(column.nbytes for column in self._columns.values())

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], prefix: str
    ) -> DisplayColumns | None:
        """The columns the derived files stored under ``prefix``; None when they hold no layout."""
        layout = meta.get("layout")
        if not layout:
            return None
        columns: dict[str, _Column] = {}
        for index, (name, kind) in enumerate(layout):
            length = int(arrays[f"{prefix}.{index}.length"][0])
            offsets = arrays[f"{prefix}.{index}.1"].view(_OFFSETS[kind])[: length + 1]
            data = arrays.get(f"{prefix}.{index}.2", np.empty(0, dtype=np.uint8))
            columns[name] = _Column(offsets, data, arrays.get(f"{prefix}.{index}.0"))
        return cls(columns)

    @property
    def column_names(self) -> list[str]:
        return list(self._columns)

    def select(self, names: Sequence[str]) -> DisplayColumns:
        return DisplayColumns({name: self._columns[name] for name in names})

    def rows(self, positions: np.ndarray) -> list[dict[str, str | None]]:
        """Every column's value at each of ``positions``, one dict per row."""
        return [{name: column.value(int(p)) for name, column in self._columns.items()} for p in positions]

    def values(self, positions: np.ndarray, names: Sequence[str]) -> list[list[str]]:
        """The values of ``names`` at ``positions``, one list per column (``""`` for a missing one)."""
        picked = [self._columns[name] for name in names]
        return [[column.value(int(p)) or "" for p in positions] for column in picked]

    def column(self, name: str) -> pa.Array:
        """One column as a pyarrow array over the same buffers (for deriving from it)."""
        import pyarrow as pa

        column = self._columns[name]
        length = len(column.offsets) - 1
        kind = pa.string() if column.offsets.dtype == np.int32 else pa.large_string()
        buffers = [
            pa.py_buffer(column.valid) if column.valid is not None else None,
            pa.py_buffer(column.offsets),
            pa.py_buffer(column.data),
        ]
        return pa.Array.from_buffers(kind, length, buffers)

    def to_arrow(self) -> pa.Table:
        """The columns as a pyarrow table over the same buffers."""
        import pyarrow as pa

        return pa.table({name: self.column(name) for name in self._columns})
