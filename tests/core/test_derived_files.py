"""Derived files: the build writes what the engine derives at start, the engine maps them, and every
way they can be unusable falls back to deriving from the table with the same answers."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, EmbeddingOptions, build_index
from docs_mcp_core.index.derived_files import (
    FORMAT_VERSION,
    MAGIC,
    DerivedWriter,
    Part,
    arrays_from_arrow,
    arrays_from_strings,
    read_derived,
    stored_strings,
    strings_from_arrays,
    write_derived,
)
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.metadata import read_metadata
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.derived import Budgets, build_wanted, derive_from_table
from docs_mcp_core.search.row_catalog import RowCatalog, rank_in_order
from docs_mcp_core.search.scoring import LANCEDB_SCORING
from tests.support.hostile_json import TOO_DEEP

QUERIES = [
    ("retry configuration", None),
    ("authentication token", None),
    ("createMany", None),
    ("install the sdk", {"language": "python"}),
    ("error handling", None),
]
NO_DERIVED_NOTE = "no derived files"
INDEXED_AT = "2026-01-01T00:00:00.000Z"  # as the session's built_index


def _answers(index: Path, notes: list[str] | None = None) -> tuple[str, list[Any]]:
    engine = SearchEngine.open(index, on_warning=(notes.append if notes is not None else None))
    try:
        answers: list[Any] = []
        for query, filters in QUERIES:
            result = engine.search(query, limit=10, filters=filters)
            answers.append(result.to_dict())
            if result.hits:
                answers.append(engine.get_doc(result.hits[0].chunk_id, context=1))
        answers.append(engine.list_filepaths({}))
        return engine.opened_from, answers
    finally:
        engine.close()


def _derived(index: Path) -> Path:
    return index / ".lancedb" / "chunks.derived"


def _copy(index: Path, tmp_path: Path) -> Path:
    target = tmp_path / "index"
    shutil.copytree(index, target)
    return target


@pytest.fixture(scope="module")
def reference(built_index: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """The answers of the engine deriving everything from the table."""
    plain = _copy(built_index, tmp_path_factory.mktemp("plain"))
    _derived(plain).unlink()
    source, answers = _answers(plain)
    assert source == "table"
    return answers


def test_the_build_writes_derived_files_and_the_engine_opens_from_them(
    built_index: Path, reference: list[Any]
) -> None:
    assert _derived(built_index).is_file()
    notes: list[str] = []
    source, answers = _answers(built_index, notes)
    assert source == "derived files"
    assert answers == reference
    assert notes == []


def test_an_index_without_derived_files_is_served_with_one_note(
    built_index: Path, tmp_path: Path, reference: list[Any]
) -> None:
    index = _copy(built_index, tmp_path)
    _derived(index).unlink()
    notes: list[str] = []
    source, answers = _answers(index, notes)
    assert (source, answers) == ("table", reference)
    assert len(notes) == 1 and NO_DERIVED_NOTE in notes[0] and "rebuild" in notes[0]


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _other_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(MAGIC) : len(MAGIC) + 4] = (FORMAT_VERSION + 1).to_bytes(4, "little")
    path.write_bytes(bytes(data))


def _garbage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(MAGIC) + 8 : len(MAGIC) + 40] = b"\xff" * 32
    path.write_bytes(bytes(data))


def _garbage_arrays(path: Path) -> None:
    """Every array's bytes overwritten after the build, the sizes and the header left as they were."""
    data = bytearray(path.read_bytes())
    header = int.from_bytes(data[len(MAGIC) + 4 : len(MAGIC) + 8], "little")
    start = len(MAGIC) + 8 + header
    data[start:] = b"\xff" * (len(data) - start)
    path.write_bytes(bytes(data))


def _other_table(path: Path) -> None:
    binding = path.with_name(path.name + ".json")
    document = json.loads(binding.read_text())
    document["table"] = "0" * 64
    binding.write_text(json.dumps(document))


def _header_replaced(path: Path, header: str) -> None:
    """The header's JSON replaced by ``header`` (padded to its length, so nothing else moves)."""
    data = bytearray(path.read_bytes())
    length = int.from_bytes(data[len(MAGIC) + 4 : len(MAGIC) + 8], "little")
    text = header.encode().ljust(length)
    assert len(text) == length
    data[len(MAGIC) + 8 : len(MAGIC) + 8 + length] = text
    path.write_bytes(bytes(data))


def _deep_binding(path: Path) -> None:
    path.with_name(path.name + ".json").write_text(TOO_DEEP)


def _deep_header(path: Path) -> None:
    _header_replaced(path, "[" * 2000 + "]" * 2000)


def _parts_not_an_object(path: Path) -> None:
    length = int.from_bytes(path.read_bytes()[len(MAGIC) + 4 : len(MAGIC) + 8], "little")
    header = json.loads(path.read_bytes()[len(MAGIC) + 8 : len(MAGIC) + 8 + length])
    _header_replaced(path, json.dumps({**header, "parts": [1]}))


def _infinite_size(path: Path) -> None:
    _header_replaced(path, '{"parts": {}, "rows": 1, "sha256": "", "size": Infinity}')


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (_truncate, "truncated"),
        (_other_version, "format version"),
        (_garbage_header, "unreadable"),
        (_garbage_arrays, "damaged"),
        (_other_table, "another version of the table"),
        (_deep_binding, "unreadable"),
        (_deep_header, "unreadable"),
        (_parts_not_an_object, "unreadable"),
        (_infinite_size, "unreadable"),
    ],
)
def test_unusable_derived_files_fall_back_to_the_table_with_the_same_answers(
    built_index: Path, tmp_path: Path, reference: list[Any], damage: Any, why: str
) -> None:
    index = _copy(built_index, tmp_path)
    damage(_derived(index))
    notes: list[str] = []
    source, answers = _answers(index, notes)
    assert (source, answers) == ("table", reference)
    assert len(notes) == 1 and why in notes[0] and "rebuild" in notes[0]


def test_derived_files_of_another_build_of_the_table_are_not_used(
    built_index: Path, examples_docs: Path, tmp_path: Path
) -> None:
    """A table rebuilt (new version manifests) next to derived files from the earlier build."""
    index = _copy(built_index, tmp_path)
    rebuilt = tmp_path / "rebuilt"
    build_index(BuildOptions(docs_dir=examples_docs, out_dir=rebuilt, indexed_at=INDEXED_AT))
    # the rebuilt table's own answers: its heading vectors were computed again, and a float's last
    # bit may differ from the first build's where the model ran on a loaded machine
    own = _copy(rebuilt, tmp_path / "own")
    _derived(own).unlink()
    _, expected = _answers(own)
    shutil.copy(_derived(index), _derived(rebuilt))
    shutil.copy(_derived(index).with_suffix(".derived.json"), _derived(rebuilt).with_suffix(".derived.json"))
    notes: list[str] = []
    source, answers = _answers(rebuilt, notes)
    assert (source, answers) == ("table", expected)
    assert "another version of the table" in notes[0]


def test_two_builds_of_the_same_corpus_write_the_same_derived_file(
    examples_docs: Path, tmp_path: Path
) -> None:
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        build_index(
            BuildOptions(docs_dir=examples_docs, out_dir=out, embedding=EmbeddingOptions(provider="hash"))
        )
    first, second = (_derived(out).read_bytes() for out in outs)
    assert first == second
    files, why = read_derived(outs[0] / ".lancedb", "chunks")
    assert why == "ok" and files is not None
    assert {
        "table",
        "catalog",
        "display",
        "content",
        "lexical.lancedb-0.40",
        "spelling",
        "vectors",
        "intent",
    } <= set(files.parts)


def test_intent_attributes_of_an_earlier_version_are_derived_again_with_one_note(
    built_index: Path, reference: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # an index built before the intent attributes last changed: the engine derives them at start
    import docs_mcp_core.search.intent as intent

    monkeypatch.setattr(intent, "INTENT_VERSION", intent.INTENT_VERSION + 1)
    notes: list[str] = []
    source, answers = _answers(built_index, notes)
    assert (source, answers) == ("derived files", reference)
    assert len(notes) == 1 and "earlier one" in notes[0] and "rebuild" in notes[0]


def test_the_intent_attributes_come_from_the_derived_files_as_the_first_search_derives_them(
    built_index: Path, tmp_path: Path
) -> None:
    plain = _copy(built_index, tmp_path)
    _derived(plain).unlink()
    derived, table = SearchEngine.open(built_index), SearchEngine.open(plain)
    try:
        assert derived._ranker._intent_loaded  # read at open: the first search derives nothing
        assert not table._ranker._intent_loaded
        table.search("retry", limit=5)
        stored, computed = derived._ranker._intent, table._ranker._intent
        assert stored is not None and computed is not None
        for name in ("verbs", "model", "lead"):
            assert np.array_equal(getattr(stored, name), getattr(computed, name))
        assert stored.topics.keys() == computed.topics.keys() and stored.topics
        assert all(np.array_equal(stored.topics[k], computed.topics[k]) for k in computed.topics)
    finally:
        derived.close()
        table.close()


def test_a_search_from_derived_files_needs_no_lancedb_table(built_index: Path) -> None:
    engine = SearchEngine.open(built_index)
    try:
        assert engine.search("retry", limit=5).hits
        assert not engine._table.is_open  # the table was never opened: LanceDB stayed unused
    finally:
        engine.close()


def test_arrays_round_trip_through_a_derived_file(tmp_path: Path) -> None:
    (tmp_path / "t.lance" / "_versions").mkdir(parents=True)
    (tmp_path / "t.lance" / "_versions" / "1.manifest").write_bytes(b"manifest")
    values = ["", "é", "createMany", "a b"]
    part = Part(
        {
            "ints": np.arange(5, dtype=np.int32),
            "floats": np.linspace(0, 1, 7),
            **arrays_from_strings("s", values),
        },
        {"n": 3},
    )
    write_derived(tmp_path, "t", {"p": part}, rows=5)
    files, why = read_derived(tmp_path, "t")
    assert why == "ok" and files is not None
    read = files.parts["p"]
    assert read.meta == {"n": 3}
    assert np.array_equal(read.arrays["ints"], part.arrays["ints"])
    assert np.array_equal(read.arrays["floats"], part.arrays["floats"])
    assert not read.arrays["ints"].flags.writeable
    assert strings_from_arrays(read.arrays, "s") == values


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ["", ""],
        ["one"],
        ["a\x00b", "", "ü"],
        ["x", "\x00", "\x00\x00y", ""],
        ["é" * 5, "", "日本", "a b"],
    ],
)
def test_strings_come_back_as_they_were_stored_whatever_bytes_they_hold(values: list[str]) -> None:
    assert strings_from_arrays(arrays_from_strings("s", values), "s") == values


def test_stored_strings_are_decoded_as_they_are_read() -> None:
    values = ["docs/a.md#_preamble", "ünïcödé/ß.md#h", "", "z" * 300]
    stored = stored_strings(arrays_from_strings("ids", values), "ids")
    assert len(stored) == 4 and bool(stored)
    assert [stored[i] for i in range(4)] == values
    assert stored[-1] == values[-1] and stored[-4] == values[0]
    assert stored[1:3] == values[1:3] and stored[::-1] == values[::-1]
    assert list(stored) == values and stored == values and stored != values[:3]
    assert values.index("") == 2 and "" in stored
    for outside in (4, -5):
        with pytest.raises(IndexError):
            stored[outside]
    assert not stored_strings(arrays_from_strings("none", []), "none")


def test_stored_strings_read_again_are_the_same_past_the_kept_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    import docs_mcp_core.index.derived_files as derived_files

    monkeypatch.setattr(derived_files, "DECODED_KEPT", 3)  # kept strings are dropped every 3 reads
    values = [f"docs/{n}.md#h" for n in range(10)]
    stored = stored_strings(arrays_from_strings("ids", values), "ids")
    reads = [stored[i % 10] for i in range(0, 70, 7)] * 3
    assert reads == [values[i % 10] for i in range(0, 70, 7)] * 3


def test_a_derived_file_written_part_by_part_is_the_same_in_any_order(tmp_path: Path) -> None:
    (tmp_path / "t.lance" / "_versions").mkdir(parents=True)
    (tmp_path / "t.lance" / "_versions" / "1.manifest").write_bytes(b"manifest")
    written: list[bytes] = []
    for order in (["a", "b", "c"], ["c", "b", "a"]):
        parts = {
            "b": Part({"z": np.arange(3, dtype=np.int8), "a": np.linspace(0, 1, 5)}, {"k": [1, 2]}),
            "a": Part(arrays_from_strings("s", ["x", "yé"]), {"n": 1}),
            "c": Part(meta={"only": "meta"}),
        }
        writer = DerivedWriter(tmp_path, "t")
        for name in order:
            writer.add(name, parts[name])
            parts[name].meta["later"] = 1  # a change after add is not written
        assert writer.scratch_path.exists()
        writer.finish(rows=5)
        assert not writer.scratch_path.exists()
        written.append(_derived_bytes(tmp_path))
    assert written[0] == written[1]
    files, why = read_derived(tmp_path, "t")
    assert why == "ok" and files is not None
    assert [files.parts[name].meta for name in "abc"] == [{"n": 1}, {"k": [1, 2]}, {"only": "meta"}]
    assert np.array_equal(files.parts["b"].arrays["a"], np.linspace(0, 1, 5))
    assert strings_from_arrays(files.parts["a"].arrays, "s") == ["x", "yé"]
    header_length = int.from_bytes(written[0][12:16], "little")
    header = json.loads(written[0][16 : 16 + header_length])
    start = -(-(16 + header_length) // 64) * 64
    arrays = [entry for name in sorted(header["parts"]) for entry in header["parts"][name]["arrays"].values()]
    assert all(entry["offset"] % 64 == 0 for entry in arrays)
    digest = hashlib.sha256()
    for entry in arrays:  # the header's digest is of the arrays, in the file's order
        at = start + entry["offset"]
        digest.update(written[0][at : at + entry["nbytes"]])
    assert header["sha256"] == digest.hexdigest()


def test_a_derived_writer_given_up_leaves_no_scratch_file(tmp_path: Path) -> None:
    writer = DerivedWriter(tmp_path, "t")
    writer.add("p", Part({"x": np.zeros(4)}))
    with pytest.raises(ValueError, match="already written"):
        writer.add("p", Part({"x": np.zeros(4)}))
    with pytest.raises(TypeError, match="Python objects"):
        writer.add("q", Part({"x": np.array([object()])}))
    writer.discard()
    assert list(tmp_path.iterdir()) == []


def _derived_bytes(folder: Path) -> bytes:
    return (folder / "t.derived").read_bytes()


@pytest.mark.parametrize("index", ["built_index", "examples_hash_index"])
def test_the_parts_a_build_writes_one_by_one_are_those_the_engine_derives_from_the_table(
    index: str, request: pytest.FixtureRequest
) -> None:
    folder: Path = request.getfixturevalue(index)
    metadata = read_metadata(folder)
    table = import_lancedb().connect(str(folder / ".lancedb")).open_table("chunks")
    columns = frozenset(table.schema.names)
    wanted = build_wanted(columns)
    budgets = Budgets(1 << 30, 1 << 30, 1 << 30)
    engine = derive_from_table(table, metadata, wanted, budgets, columns)
    files, why = read_derived(folder / ".lancedb", "chunks")
    assert why == "ok" and files is not None
    assert engine.catalog.display is not None and engine.content is not None
    assert engine.lexical is not None and engine.spelling is not None
    expected = {
        "catalog": engine.catalog.to_part().arrays,
        "display": arrays_from_arrow("display", engine.catalog.display),
        "content": engine.content.to_part().arrays,
        f"lexical.{LANCEDB_SCORING.name}": engine.lexical.to_part().arrays,
        "spelling": engine.spelling.to_part().arrays,
    }
    if engine.vectors is not None:
        expected["vectors"] = engine.vectors.to_part().arrays
    assert ("vectors" in expected) == (index == "examples_hash_index")
    for name, arrays in expected.items():
        assert arrays is not None
        stored = files.parts[name].arrays
        assert sorted(stored) == sorted(arrays), name
        for key, array in arrays.items():
            assert np.array_equal(stored[key], np.ascontiguousarray(array).reshape(stored[key].shape)), (
                f"{name}.{key}"
            )


def test_tie_ranks_stored_in_an_earlier_string_order_are_made_again(built_index: Path) -> None:
    """A build before the order was the original's stored each chunk id's place in code-point
    order; the catalog read from it ranks chunk ids in today's order, not the stored one."""
    derived, why = read_derived(built_index / ".lancedb", "chunks")
    assert derived is not None, why
    stored = derived.parts["catalog"]
    chunk_ids = stored_strings(stored.arrays, "chunk_ids")
    today = rank_in_order(chunk_ids)
    assert np.array_equal(RowCatalog.from_part(stored).sort_rank, today)

    earlier = np.argsort(np.argsort(np.array(list(chunk_ids), dtype=object), kind="stable")).astype(np.int32)
    assert not np.array_equal(earlier, today)  # the example corpus has ids the two orders disagree on
    meta = {k: v for k, v in stored.meta.items() if k != "order"}  # as an earlier build wrote it
    old = Part({**stored.arrays, "sort_rank": earlier}, meta)
    assert np.array_equal(RowCatalog.from_part(old).sort_rank, today)
