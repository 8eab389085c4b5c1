"""The build's parts made a batch at a time: the same arrays as made at once, in less memory.

The postings (a counting sort of each batch into place) are compared with one stable sort of
every token of the column, the way they used to be made; the content store written batch by batch
with the one buffer it used to be copied into; a derived file with streamed arrays with one
written at once.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.index.derived_files import DerivedWriter, Part
from docs_mcp_core.search.content_store import ContentStore, _stream_batches, _Unusual, write_content
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.postings_builder import K1, MAX_PHRASE_SPAN, B, PostingsBuilder, _tokens
from docs_mcp_core.search.scoring import LANCEDB_SCORING, ORIGINAL_SCORING, Scoring

WORDS = ["alpha", "beta", "gamma", "the", "and", "running", "runs", "run", "Straße", "x1", "a-b"]


def _sorted_at_once(texts: pa.Array, positions: bool, scoring: Scoring) -> dict[str, object]:
    """The postings as the build made them before: every token of the column, one stable sort."""
    size = len(texts)
    terms: dict[str, int] = {}
    token_terms, token_rows, token_positions = _tokens(texts, 0, terms, {}, scoring.stop_words)
    row_lengths = np.bincount(token_rows, minlength=size).astype(np.float64)
    order = np.argsort(token_terms, kind="stable")
    sorted_terms, sorted_rows = token_terms[order], token_rows[order]
    sorted_positions = token_positions[order]
    bounds = np.searchsorted(sorted_terms, np.arange(len(terms) + 1)).astype(np.int64)
    first = np.ones(len(sorted_terms), dtype=bool)
    first[1:] = (sorted_terms[1:] != sorted_terms[:-1]) | (sorted_rows[1:] != sorted_rows[:-1])
    starts = np.flatnonzero(first)
    tf = np.diff(np.append(starts, len(sorted_terms))).astype(np.float64)
    pair_rows = sorted_rows[starts]
    offsets = np.searchsorted(starts, bounds).astype(np.int64)
    counted = size if scoring.counts_every_row else int(np.count_nonzero(row_lengths))
    average = float(row_lengths.sum()) / counted if counted else 1.0
    norm = 1.0 - B + B * row_lengths[pair_rows] / average
    df = np.diff(offsets).astype(np.float64)
    made: dict[str, object] = {
        "terms": list(terms),
        "offsets": offsets,
        "rows": pair_rows.astype(np.int32),
        "weights": (tf * (K1 + 1.0) / (tf + K1 * norm)).astype(np.float32),
        "idf": np.log1p((counted - df + 0.5) / (df + 0.5)),
    }
    if positions:
        stride = (int(sorted_positions.max()) + 1 if len(sorted_positions) else 1) + MAX_PHRASE_SPAN
        made["keys"] = sorted_rows.astype(np.int64) * stride + sorted_positions
        made["bounds"] = bounds
        made["stride"] = stride
    return made


def _random_texts(rng: random.Random, rows: int) -> pa.Array:
    """Rows of a few words from a small vocabulary (many ties: a word repeated in a row, in many
    rows), with empty rows, stop-word-only rows and nulls."""
    values: list[str | None] = []
    for _ in range(rows):
        kind = rng.random()
        if kind < 0.08:
            values.append(None)
        elif kind < 0.16:
            values.append("" if kind < 0.12 else "the and the")
        else:
            values.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))))
    return pa.array(values, type=pa.string())


def _batch_sizes(rng: random.Random, rows: int) -> list[int]:
    """Sizes adding up to ``rows``, empty batches among them."""
    sizes = []
    while rows > 0:
        size = min(rows, rng.choice([0, 0, 1, 2, 3, 7, 20]))
        sizes.append(size)
        rows -= size
    return [0, *sizes, 0]


@pytest.mark.parametrize("seed", range(12))
def test_postings_built_batch_by_batch_are_those_of_one_stable_sort(seed: int) -> None:
    rng = random.Random(seed)
    texts = _random_texts(rng, rng.choice([0, 1, 5, 40, 150]))
    positions = seed % 2 == 0
    scoring = ORIGINAL_SCORING if seed % 3 == 0 else LANCEDB_SCORING
    builder = PostingsBuilder(positions=positions, stop_words=scoring.stop_words)
    start = 0
    for size in _batch_sizes(rng, len(texts)):
        builder.add(texts.slice(start, size))
        start += size
    made = builder.finish(counts_every_row=scoring.counts_every_row)
    expected = _sorted_at_once(texts, positions, scoring)
    assert list(made.terms) == expected["terms"]
    assert list(made.terms.values()) == list(range(len(made.terms)))
    for name in ("offsets", "rows", "weights", "idf"):
        array, wanted = getattr(made, name), expected[name]
        assert isinstance(wanted, np.ndarray)
        assert array.dtype == wanted.dtype and array.tobytes() == wanted.tobytes(), name
    if positions:
        assert made.keys is not None and made.bounds is not None
        assert made.stride == expected["stride"]
        assert made.keys.tobytes() == expected["keys"].tobytes()  # type: ignore[union-attr]
        assert made.bounds.tobytes() == expected["bounds"].tobytes()  # type: ignore[union-attr]
    else:
        assert made.keys is None and made.bounds is None
    assert builder.rows == 0 and not builder.terms  # emptied by finish


def test_an_index_built_from_batches_is_the_index_built_from_whole_columns() -> None:
    rng = random.Random(7)
    rows = 3000  # more than one slice of BUILD_BATCH_ROWS in a batch
    columns = {name: _random_texts(rng, rows) for name in ("p", "a", "b")}
    whole = LexicalIndex.build(columns, positions=["p"])
    start, batches = 0, []
    for size in [0, 2500, 1, 0, 499]:
        batches.append(pa.record_batch({name: texts.slice(start, size) for name, texts in columns.items()}))
        start += size
    streamed = LexicalIndex.build_batches(batches, ["p", "a", "b"], positions=["p"])
    assert streamed.size == whole.size == rows
    one, other = whole.to_part(), streamed.to_part()
    assert one.meta == other.meta
    assert sorted(one.arrays) == sorted(other.arrays)
    for key, array in one.arrays.items():
        assert array.dtype == other.arrays[key].dtype and array.tobytes() == other.arrays[key].tobytes(), key


def _content(values: list[str], offset: int = 0) -> pa.Array:
    """``values`` as a string array that starts ``offset`` values into its buffers."""
    return pa.array(["pad"] * offset + values, type=pa.string()).slice(offset, len(values))


def _batches(arrays: list[pa.Array]) -> list[pa.RecordBatch]:
    return [pa.record_batch({"content": a, "_rowid": pa.array(range(len(a)), pa.uint64())}) for a in arrays]


@pytest.mark.parametrize(
    "arrays",
    [
        [_content(["# a", "b é", ""])],
        [_content(["# a", "b é"], offset=2), _content([]), _content(["c", "", "dd"], offset=1)],
        [_content(["x"]), _content(["y" * 70])],
    ],
)
def test_the_content_written_batch_by_batch_is_the_store_held_whole(
    tmp_path: Path, arrays: list[pa.Array]
) -> None:
    batches = _batches(arrays)
    column = pa.Table.from_batches(batches).column("content")
    held = ContentStore(column.combine_chunks()).to_part()
    writer = DerivedWriter(tmp_path, "t")
    data = writer.stream(np.uint8)
    offsets = _stream_batches(data, iter(batches), budget=1 << 20)
    assert offsets is not None
    assert offsets.dtype == held.arrays["offsets"].dtype
    assert offsets.tobytes() == held.arrays["offsets"].tobytes()
    writer.add("content", Part({"offsets": offsets}, {}, {"data": data}))
    writer.finish(rows=len(column))
    stored = _arrays(tmp_path)
    assert stored["offsets"] == held.arrays["offsets"].tobytes()
    assert stored["data"] == held.arrays["data"].tobytes()
    texts = ContentStore.from_part(
        Part({k: np.frombuffer(v, dtype=held.arrays[k].dtype) for k, v in stored.items()})
    )
    assert texts.texts(range(len(column))) == column.to_pylist()


def _arrays(folder: Path) -> dict[str, bytes]:
    """The arrays of the one part of ``folder/t.derived``, by name (read without its binding)."""
    import json

    raw = (folder / "t.derived").read_bytes()
    length = int.from_bytes(raw[12:16], "little")
    header = json.loads(raw[16 : 16 + length])
    start = -(-(16 + length) // 64) * 64
    (part,) = header["parts"].values()
    return {
        key: raw[start + entry["offset"] : start + entry["offset"] + entry["nbytes"]]
        for key, entry in part["arrays"].items()
    }


@pytest.mark.parametrize("rows_at_a_time", [7, 8192])
def test_the_build_reads_the_content_and_postings_of_a_table_in_catalog_order(
    built_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows_at_a_time: int
) -> None:
    from docs_mcp_core.index.lancedb_import import import_lancedb
    from docs_mcp_core.metadata import read_metadata
    from docs_mcp_core.search import content_store, scan_batches
    from docs_mcp_core.search.derived import (
        Budgets,
        _lexical_for_build,
        _lexical_from_table,
        _load_catalog,
        build_wanted,
    )

    table = import_lancedb().connect(str(built_index / ".lancedb")).open_table("chunks")
    assert 7 < table.count_rows() <= 8192  # read a range of rows at a time, or at once
    monkeypatch.setattr(scan_batches, "SCAN_BATCH_ROWS", rows_at_a_time)
    monkeypatch.setattr(content_store, "SCAN_BATCH_ROWS", rows_at_a_time)
    columns = frozenset(table.schema.names)
    catalog = _load_catalog(table, read_metadata(built_index), columns, Budgets(0, 0, 0))
    wanted = build_wanted(columns)
    held = ContentStore.load(table, catalog.row_ids, 1 << 30)
    assert held is not None
    writer = DerivedWriter(tmp_path, "t")
    assert write_content(writer, "content", table, catalog.row_ids, 1 << 30, 8)
    assert not write_content(writer, "small", table, catalog.row_ids, 100, 8)  # over the budget
    assert not write_content(writer, "other", table, catalog.row_ids[::-1].copy(), 1 << 30, 8)
    writer.finish(rows=len(catalog))
    stored = _arrays(tmp_path)
    assert stored == {k: v.tobytes() for k, v in held.to_part().arrays.items()}
    made, whole = (
        _lexical_for_build(table, catalog, wanted, columns),
        _lexical_from_table(table, catalog, wanted, columns),
    )
    assert made is not None and whole is not None
    assert {k: v.tobytes() for k, v in made.to_part().arrays.items()} == {
        k: v.tobytes() for k, v in whole.to_part().arrays.items()
    }
    catalog.row_ids = catalog.row_ids[::-1].copy()  # not the scan's order: read whole, and not the catalog's
    assert _lexical_for_build(table, catalog, wanted, columns) is None


@pytest.mark.parametrize("rows_at_a_time", [7, 8192])
def test_the_build_reads_the_display_columns_of_a_table_as_the_catalog_holds_them(
    built_index: Path, monkeypatch: pytest.MonkeyPatch, rows_at_a_time: int
) -> None:
    from docs_mcp_core.index.derived_files import arrays_from_arrow
    from docs_mcp_core.index.lancedb_import import import_lancedb
    from docs_mcp_core.metadata import read_metadata
    from docs_mcp_core.search import derived, scan_batches
    from docs_mcp_core.search.derived import Budgets, _catalog_for_build, _load_catalog
    from docs_mcp_core.search.display_columns import DisplayColumns

    table = import_lancedb().connect(str(built_index / ".lancedb")).open_table("chunks")
    monkeypatch.setattr(scan_batches, "SCAN_BATCH_ROWS", rows_at_a_time)
    monkeypatch.setattr(derived, "SCAN_BATCH_ROWS", rows_at_a_time)
    metadata, columns = read_metadata(built_index), frozenset(table.schema.names)
    budgets = Budgets(1 << 30, 1 << 30, 1 << 30)
    held, read = (
        _load_catalog(table, metadata, columns, budgets),
        _catalog_for_build(table, metadata, columns, budgets),
    )
    # a build reads the display columns from the table, as pyarrow tables
    shown, built = held.display, read.display
    assert shown is not None and built is not None
    assert not isinstance(shown, DisplayColumns) and not isinstance(built, DisplayColumns)
    assert built.schema == shown.schema and built.num_rows == table.count_rows()
    stored, expected = arrays_from_arrow("d", built), arrays_from_arrow("d", shown)
    assert stored is not None and expected is not None
    assert {k: v.tobytes() for k, v in stored.items()} == {k: v.tobytes() for k, v in expected.items()}
    assert read.to_part().arrays.keys() == held.to_part().arrays.keys()
    over = Budgets(shown.nbytes // 2, 1 << 30, 1 << 30)  # more than the budget: none held
    assert _catalog_for_build(table, metadata, columns, over).display is None


def test_the_intent_attributes_read_with_fewer_display_columns_are_the_same(
    built_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docs_mcp_core.index.lancedb_import import import_lancedb
    from docs_mcp_core.metadata import read_metadata
    from docs_mcp_core.search import derived
    from docs_mcp_core.search.intent import _NAME_COLUMNS
    from docs_mcp_core.search.memory_budgets import build_budgets

    table = import_lancedb().connect(str(built_index / ".lancedb")).open_table("chunks")
    written = []
    # the columns the intent attributes read, and too few of them (all are then read again)
    for number, read in enumerate([_NAME_COLUMNS, ("breadcrumb",)]):
        monkeypatch.setattr(derived, "INTENT_COLUMNS", read)
        writer = DerivedWriter(tmp_path, f"t{number}")
        rows = derived.derive_into(writer, table, read_metadata(built_index), build_budgets())
        writer.finish(rows, manifests={"1.manifest": b"m"})
        written.append((tmp_path / f"t{number}.derived").read_bytes())
    assert written[0] == written[1]


def test_content_over_the_budget_or_with_nulls_is_not_streamed(tmp_path: Path) -> None:
    writer = DerivedWriter(tmp_path, "t")
    batches = _batches([_content(["a" * 100]), _content(["b" * 100])])
    assert _stream_batches(writer.stream(np.uint8), iter(batches), budget=batches[0].nbytes + 10) is None
    assert _stream_batches(writer.stream(np.uint8), iter([]), budget=1 << 20) is None
    with pytest.raises(_Unusual):
        _stream_batches(writer.stream(np.uint8), iter(_batches([pa.array(["a", None])])), budget=1 << 20)
    writer.discard()


def test_a_streamed_array_is_written_as_the_same_array_given_whole(tmp_path: Path) -> None:
    values = np.arange(1000, dtype=np.int32)
    written = []
    for streamed in (False, True):
        folder = tmp_path / str(streamed)
        folder.mkdir()
        writer = DerivedWriter(folder, "t")
        writer.add("a", Part({"x": np.ones(3)}))
        if streamed:
            left_out = writer.stream(np.int32)  # given up: takes room in the scratch file only
            left_out.write(values[:10])
            array = writer.stream(np.int32)
            for piece in (values[:0], values[:300], values[300:301], values[301:]):
                array.write(piece)
            writer.add("b", Part({"y": values[:5]}, {"m": 1}, {"z": array}))
        else:
            writer.add("b", Part({"y": values[:5], "z": values}, {"m": 1}))
        writer.finish(rows=3)
        written.append((folder / "t.derived").read_bytes())
    assert written[0] == written[1]


def test_nothing_may_be_written_between_the_pieces_of_a_streamed_array(tmp_path: Path) -> None:
    writer = DerivedWriter(tmp_path, "t")
    array = writer.stream(np.uint8)
    array.write(np.zeros(4, dtype=np.uint8))
    writer.add("other", Part({"x": np.zeros(2)}))
    with pytest.raises(ValueError, match="between"):
        array.write(np.zeros(4, dtype=np.uint8))
    with pytest.raises(TypeError):
        array.write(np.zeros(4, dtype=np.int64))
    other = DerivedWriter(tmp_path, "u")
    with pytest.raises(ValueError, match="not this writer's"):
        other.add("p", Part(streamed={"d": array}))
    other.discard()
    writer.discard()
