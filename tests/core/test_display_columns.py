"""The display columns a server reads its hits from: the same values from the derived files'
buffers with NumPy alone as from a pyarrow table, missing values and wide offsets included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.index.derived_files import read_derived, write_derived
from docs_mcp_core.search.display_columns import DisplayColumns, held_display, stored_display


def _table() -> pa.Table:
    return pa.table(
        {
            "chunk_id": pa.array(["a.md#x", "b.md#_preamble", "ü.md#ß", "d.md#y"], pa.string()),
            "heading": pa.array(["X", None, "", "Ÿ"], pa.string()),
            "breadcrumb": pa.array(["a > X", "b", None, None], pa.large_string()),
        }
    )


def _stored_and_read(tmp_path: Path, table: pa.Table) -> pa.Table | DisplayColumns:
    (tmp_path / "t.lance" / "_versions").mkdir(parents=True)
    (tmp_path / "t.lance" / "_versions" / "1.manifest").write_bytes(b"manifest")
    part = stored_display(table, 16 * table.num_rows)
    assert part is not None
    write_derived(tmp_path, "t", {"display": part}, rows=table.num_rows)
    files, why = read_derived(tmp_path, "t")
    assert why == "ok" and files is not None
    return held_display(files.parts["display"])


def test_string_columns_are_read_back_without_pyarrow_as_pyarrow_reads_them(tmp_path: Path) -> None:
    table = _table()
    held = _stored_and_read(tmp_path, table)
    assert isinstance(held, DisplayColumns)
    assert held.column_names == table.column_names
    positions = np.array([3, 0, 2, 1, 2])
    assert held.rows(positions) == table.take(pa.array(positions)).to_pylist()
    assert held.values(positions, ["breadcrumb", "chunk_id"]) == [
        ["", "a > X", "", "b", ""],
        ["d.md#y", "a.md#x", "ü.md#ß", "b.md#_preamble", "ü.md#ß"],
    ]
    assert held.select(["heading"]).rows(np.array([1, 3])) == [{"heading": None}, {"heading": "Ÿ"}]
    for name in table.column_names:
        assert held.column(name).equals(table.column(name).combine_chunks())
    assert held.to_arrow().equals(table)


def test_a_stored_display_of_held_columns_is_the_same_part_again(tmp_path: Path) -> None:
    held = _stored_and_read(tmp_path, _table())
    assert isinstance(held, DisplayColumns)
    again = stored_display(held, 64)
    assert again is not None and again.meta["layout"] == [
        ["chunk_id", "string"],
        ["heading", "string"],
        ["breadcrumb", "large_string"],
    ]


def test_a_column_that_is_not_text_keeps_the_pyarrow_table(tmp_path: Path) -> None:
    table = _table().append_column("count", pa.array([1, 2, 3, 4], pa.int64()))
    held = _stored_and_read(tmp_path, table)
    assert not isinstance(held, DisplayColumns)
    assert held.equals(table)


@pytest.mark.parametrize("rows", [0, 1])
def test_few_rows_read_back_alike(tmp_path: Path, rows: int) -> None:
    table = _table().slice(0, rows)
    table = pa.table({name: table.column(name).combine_chunks() for name in table.column_names})
    held = _stored_and_read(tmp_path, table)
    assert isinstance(held, DisplayColumns)
    assert held.rows(np.arange(rows)) == table.to_pylist()
