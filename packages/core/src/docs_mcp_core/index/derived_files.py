"""Derived files: what a server derives from the table at start, written once by the build.

Opening an index used to mean reading the search columns and building in memory the structures a
search works on (postings, per-row attributes, the content buffer). ``docs-mcp build`` now writes
them beside the table, and a server maps them read-only, so opening costs page faults instead of
work, and the processes of one host (``--workers``, replicas) share those pages.

The format is generic over named NumPy arrays: a *part* (one structure: the row catalog, the
lexical index, ...) is a mapping of array names to arrays plus a small JSON-able ``meta``; any
structure that can give its arrays and take them back can be stored (see ``docs/derived-format``
in ``docs/scaling.md``). Two files sit in the table's folder (``index.path``), so every copy of the
table (the swap of a local build, an object-store generation, a replica, a server's snapshot)
carries them:

* ``<table>.derived``: ``MAGIC``, the format version (uint32), the header length (uint32), the
  header (JSON: per part its meta and, per array, dtype, shape, offset and length), then each array
  aligned to 64 bytes. Deterministic: the same table contents give the same bytes.
* ``<table>.derived.json``: which table it was derived from (a digest of the table's version
  manifests, which name its data files) and the digest of the arrays, tying the two files together.

:func:`read_derived` returns ``None`` with the reason (missing, truncated, another format version,
derived from another table) and the engine then derives at start, as for an index built before
derived files existed. The original's LanceDB ignores both files (it only reads ``*.lance``).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import mmap
import os
import stat
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from docs_mcp_core.index.live_files import read_regular_file

__all__ = [
    "BINDING_SUFFIX",
    "DERIVED_SUFFIX",
    "FORMAT_VERSION",
    "DerivedFiles",
    "DerivedWriter",
    "Part",
    "StoredStrings",
    "StreamedArray",
    "arrays_from_arrow",
    "arrays_from_strings",
    "arrow_from_arrays",
    "manifests_identity",
    "read_derived",
    "stored_strings",
    "strings_from_arrays",
    "table_identity",
    "write_derived",
]

FORMAT_VERSION = 1
MAGIC = b"DOCSMCPD"
ALIGN = 64
_PREFIX = struct.Struct("<8sII")  # magic, format version, header length
DERIVED_SUFFIX = ".derived"
BINDING_SUFFIX = ".derived.json"


@dataclass
class Part:
    """One derived structure: named arrays and small JSON-able facts about them."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    # arrays a DerivedWriter already holds, written piece by piece (DerivedWriter.stream)
    streamed: dict[str, StreamedArray] = field(default_factory=dict)


@dataclass
class DerivedFiles:
    """The parts of a derived file, as read-only arrays over its memory map."""

    parts: dict[str, Part]
    rows: int
    path: Path


def table_identity(table_dir: Path) -> str | None:
    """A digest of the table's version manifests (names and bytes): another write of the table,
    or another table, gives another digest. ``None`` when the table has no manifest."""
    versions = table_dir / "_versions"
    try:
        names = [n for n in os.listdir(versions) if n.endswith(".manifest")]
        return manifests_identity({name: (versions / name).read_bytes() for name in names})
    except OSError:
        return None


def _data_files(table_dir: Path) -> list[str]:
    """The names of the table's data files (none when it has no data folder)."""
    try:
        return sorted(n for n in os.listdir(table_dir / "data") if (table_dir / "data" / n).is_file())
    except OSError:
        return []


def manifests_identity(manifests: Mapping[str, bytes]) -> str | None:
    """:func:`table_identity` of a table whose ``_versions`` manifests are ``manifests`` (name -> bytes)."""
    if not manifests:
        return None
    digest = hashlib.sha256()
    for name in sorted(manifests):
        digest.update(name.encode() + b"\0" + manifests[name])
    return digest.hexdigest()


def write_derived(
    folder: Path,
    table: str,
    parts: Mapping[str, Part],
    rows: int,
    *,
    manifests: Mapping[str, bytes] | None = None,
) -> list[Path]:
    """Write ``<folder>/<table>.derived`` and its binding to the table ``<folder>/<table>.lance``
    (or to the table whose version ``manifests`` are given); returns both paths."""
    writer = DerivedWriter(folder, table)
    try:
        for name, part in parts.items():
            writer.add(name, part)
        return writer.finish(rows, manifests=manifests)
    finally:
        writer.discard()


class DerivedWriter:
    """Writes a derived file one part at a time, so that a part can be freed as soon as it is
    written and a build holds one part, not all of them.

    :meth:`add` appends a part's arrays to a scratch file beside the derived file (in the order
    they come); :meth:`finish` writes the derived file itself in its layout (parts by name, each
    part's arrays by name, the header first), copying the arrays from the scratch file, which it
    then deletes. The bytes are those :func:`write_derived` writes of the same parts, in any order
    of :meth:`add`.
    """

    COPY_BYTES = 8 * 1024 * 1024  # read from the scratch file this much at a time

    def __init__(self, folder: Path, table: str) -> None:
        self.folder, self.table = folder, table
        self.scratch_path = folder / f"{table}{DERIVED_SUFFIX}.parts"
        self._scratch = open(self.scratch_path, "w+b")  # noqa: SIM115 - closed by finish()/discard()
        self._parts: dict[
            str, tuple[dict[str, Any], dict[str, tuple[np.dtype[Any], list[int], int, int]]]
        ] = {}
        self._end = 0  # bytes in the scratch file

    def add(self, name: str, part: Part) -> None:
        """Write ``part``'s arrays to the scratch file (its ``streamed`` ones are already there:
        :meth:`stream`); its ``meta`` is encoded as it is now."""
        if name in self._parts:
            raise ValueError(f"derived part {name} was already written")
        arrays: dict[str, tuple[np.dtype[Any], list[int], int, int]] = {}
        for key, array in part.streamed.items():
            if array.writer is not self or key in part.arrays:
                raise ValueError(f"derived array {name}.{key} is not this writer's, or given twice")
            arrays[key] = (array.dtype, [array.nbytes // array.dtype.itemsize], array.start, array.nbytes)
        for key in sorted(part.arrays):
            array = np.ascontiguousarray(part.arrays[key])
            if array.dtype.hasobject:
                raise TypeError(f"derived array {name}.{key} holds Python objects")
            self._scratch.write(array.data.cast("B"))
            arrays[key] = (array.dtype, list(array.shape), self._end, int(array.nbytes))
            self._end += array.nbytes
        self._parts[name] = (copy.deepcopy(part.meta), dict(sorted(arrays.items())))

    def stream(self, dtype: np.dtype[Any] | type) -> StreamedArray:
        """A one-dimensional array of ``dtype`` written to the scratch file as its pieces come
        (:meth:`StreamedArray.write`), so a part larger than what a build should hold at once is
        never held whole; it joins a part by :meth:`add`. Nothing else may be written while its
        pieces are; one left out of every part takes room in the scratch file only."""
        return StreamedArray(self, np.dtype(dtype), self._end)

    def finish(self, rows: int, *, manifests: Mapping[str, bytes] | None = None) -> list[Path]:
        """Write ``<folder>/<table>.derived`` from the parts added and its binding to the table
        ``<folder>/<table>.lance`` (or to the table whose version ``manifests`` are given); delete
        the scratch file; returns both paths."""
        header_parts: dict[str, Any] = {}
        layout: list[tuple[int, int]] = []  # (scratch offset, bytes), in the file's order
        offset = 0
        for name in sorted(self._parts):
            meta, arrays = self._parts[name]
            entries: dict[str, Any] = {}
            for key, (dtype, shape, at, nbytes) in arrays.items():  # already by name
                offset = -(-offset // ALIGN) * ALIGN
                entries[key] = {"dtype": dtype.str, "shape": shape, "offset": offset, "nbytes": nbytes}
                layout.append((at, nbytes))
                offset += nbytes
            header_parts[name] = {"meta": meta, "arrays": entries}
        self._scratch.flush()
        # the header (first) holds the digest of the arrays (after it): written with a stand-in of
        # the same length, the arrays copied and hashed, then the header written again
        header = {"rows": rows, "size": offset, "sha256": "0" * 64, "parts": header_parts}
        encoded = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        start = -(-(_PREFIX.size + len(encoded)) // ALIGN) * ALIGN
        folder, table = self.folder, self.table
        path = folder / f"{table}{DERIVED_SUFFIX}"
        digest = hashlib.sha256()
        with open(path, "wb") as fh:
            fh.write(b"\0" * start)
            position = 0
            for at, nbytes in layout:
                pad = -position % ALIGN
                fh.write(b"\0" * pad)
                for block in self._read(at, nbytes):
                    digest.update(block)
                    fh.write(block)
                position += pad + nbytes
            header["sha256"] = digest.hexdigest()
            final = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
            assert len(final) == len(encoded)
            fh.seek(0)
            fh.write(_PREFIX.pack(MAGIC, FORMAT_VERSION, len(final)) + final)
            fh.flush()
            os.fsync(fh.fileno())
        self.discard()
        identity = (
            manifests_identity(manifests)
            if manifests is not None
            else table_identity(folder / f"{table}.lance")
        )
        binding: dict[str, Any] = {"format": FORMAT_VERSION, "sha256": header["sha256"], "table": identity}
        if manifests is None:  # a local table: its data files, which a reader checks are all there
            binding["data"] = _data_files(folder / f"{table}.lance")
        bound = folder / f"{table}{BINDING_SUFFIX}"
        with open(bound, "w", encoding="utf-8") as fh:
            json.dump(binding, fh, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        return [path, bound]

    def _read(self, at: int, nbytes: int) -> Iterator[bytes]:
        """The scratch file's ``nbytes`` bytes from ``at``, a block at a time."""
        self._scratch.seek(at)
        while nbytes > 0:
            block = self._scratch.read(min(nbytes, self.COPY_BYTES))
            if not block:
                raise OSError(f"{self.scratch_path} is shorter than what was written to it")
            nbytes -= len(block)
            yield block

    def discard(self) -> None:
        """Close and delete the scratch file (idempotent)."""
        if not self._scratch.closed:
            self._scratch.close()
        self.scratch_path.unlink(missing_ok=True)


@dataclass
class StreamedArray:
    """An array a :class:`DerivedWriter` writes piece by piece (:meth:`DerivedWriter.stream`)."""

    writer: DerivedWriter
    dtype: np.dtype[Any]
    start: int  # where it starts in the scratch file
    nbytes: int = 0

    def write(self, piece: np.ndarray) -> None:
        """Append ``piece`` (of this array's dtype) to the array."""
        if piece.dtype != self.dtype:
            raise TypeError(f"a piece of {piece.dtype} for an array of {self.dtype}")
        writer = self.writer
        if writer._end != self.start + self.nbytes:
            raise ValueError("something else was written to the scratch file between an array's pieces")
        writer._scratch.write(np.ascontiguousarray(piece).data.cast("B"))
        self.nbytes += piece.nbytes
        writer._end += piece.nbytes


_NOT_A_FILE = "not a regular file"


def read_derived(folder: Path, table: str) -> tuple[DerivedFiles | None, str]:
    """The derived file of ``<folder>/<table>.lance``, mapped read-only, or ``(None, why not)``."""
    path = folder / f"{table}{DERIVED_SUFFIX}"
    binding_path = folder / f"{table}{BINDING_SUFFIX}"
    if not binding_path.exists():
        return None, "missing"
    # only regular files: a named pipe at either name was waited on forever (by a server's start,
    # docs-mcp search and the next build)
    binding_bytes = read_regular_file(binding_path)
    if binding_bytes is None:
        return None, f"unreadable ({binding_path.name} is {_NOT_A_FILE})"
    try:
        binding = json.loads(binding_bytes.decode("utf-8"))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"unreadable ({exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"unreadable ({path.name} is {_NOT_A_FILE})"
        size = info.st_size
        if size < _PREFIX.size:
            return None, "truncated"
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    magic, version, length = _PREFIX.unpack_from(mapped, 0)
    if magic != MAGIC or not isinstance(binding, dict):
        return None, "not a derived file"
    if version != FORMAT_VERSION or binding.get("format") != FORMAT_VERSION:
        return None, f"format version {version}, this server reads {FORMAT_VERSION}"
    try:
        header = json.loads(mapped[_PREFIX.size : _PREFIX.size + length])
        start = -(-(_PREFIX.size + length) // ALIGN) * ALIGN
        if start + int(header["size"]) != size:
            return None, "truncated"
        if header["sha256"] != binding.get("sha256"):
            return None, "its two files belong to different builds"
        if binding.get("table") != table_identity(folder / f"{table}.lance"):
            return None, "derived from another version of the table"
        data = folder / f"{table}.lance" / "data"
        if any(not (data / name).is_file() for name in binding.get("data") or []):
            return None, "the table's data files are missing"
        parts = {
            name: Part(
                {key: _view(mapped, start, entry) for key, entry in spec["arrays"].items()}, spec["meta"]
            )
            for name, spec in header["parts"].items()
        }
        return DerivedFiles(parts, int(header["rows"]), path), "ok"
    # a header of another shape (a list for an object, Infinity for a size, arrays nested past
    # the recursion limit) is as unreadable as broken JSON
    except (LookupError, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError) as exc:
        return None, f"unreadable ({exc})"


def _view(mapped: mmap.mmap, start: int, entry: Mapping[str, Any]) -> np.ndarray:
    dtype = np.dtype(entry["dtype"])
    shape = tuple(int(n) for n in entry["shape"])
    count = int(np.prod(shape)) if shape else 1
    if dtype.hasobject or count * dtype.itemsize != int(entry["nbytes"]):
        raise ValueError("an array's size does not match its shape")
    array = np.frombuffer(mapped, dtype=dtype, count=count, offset=start + int(entry["offset"]))
    return array.reshape(shape)


def arrays_from_strings(prefix: str, values: Sequence[str]) -> dict[str, np.ndarray]:
    """``values`` as two arrays: ``<prefix>.offsets`` (int64, one more than values) and
    ``<prefix>.data`` (their UTF-8 bytes end to end)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return {f"{prefix}.offsets": offsets, f"{prefix}.data": data}


def strings_from_arrays(arrays: Mapping[str, np.ndarray], prefix: str) -> list[str]:
    """The strings :func:`arrays_from_strings` stored under ``prefix``, decoded with NumPy and
    Python alone (an index opens without importing PyArrow): a NUL byte put between each two and
    the whole decoded and split at once, as fast as PyArrow's own conversion; one at a time when
    the strings themselves hold a NUL."""
    offsets, data = arrays[f"{prefix}.offsets"], arrays[f"{prefix}.data"]
    if len(offsets) < 2:
        return []
    if not (data == 0).any():
        return np.insert(data, offsets[1:-1], 0).tobytes().decode("utf-8").split("\x00")
    raw, bounds = data.tobytes(), offsets.tolist()
    return [raw[start:end].decode("utf-8") for start, end in itertools.pairwise(bounds)]


def arrays_from_arrow(prefix: str, table: Any) -> dict[str, np.ndarray] | None:
    """The columns of a pyarrow ``table`` of flat types (strings, numbers) as arrays: its schema
    (Arrow IPC bytes, without the table's own metadata, whose keys LanceDB hands back in no fixed
    order, so the same table would not give the same bytes) and each column's buffers. ``None``
    for a column of another type."""
    import pyarrow as pa

    schema = table.schema.remove_metadata()
    arrays: dict[str, np.ndarray] = {f"{prefix}.schema": np.frombuffer(schema.serialize(), dtype=np.uint8)}
    for index, column in enumerate(table.columns):
        array = pa.concat_arrays(column.chunks) if column.num_chunks != 1 else column.chunk(0)
        if array.offset or array.type.num_fields:
            return None
        for number, buffer in enumerate(array.buffers()):
            if buffer is not None:
                arrays[f"{prefix}.{index}.{number}"] = np.frombuffer(buffer, dtype=np.uint8)
        arrays[f"{prefix}.{index}.length"] = np.array([len(array), array.null_count], dtype=np.int64)
    return arrays


DECODED_KEPT = 16_384  # strings a StoredStrings keeps decoded (about 2 MB of chunk ids)


class StoredStrings(Sequence[str]):
    """The strings :func:`arrays_from_strings` stored, decoded one at a time as they are read.

    A catalog maps a chunk id per row and a path per file; decoding them all when an index opens
    (110k ids and 41k paths at ten copies of sdk-docs: 20 ms with the path lookup) would be work
    before the first answer that a search, which reads the ids of a few dozen rows, never needs.
    Iterating decodes everything at once.
    """

    __slots__ = ("_data", "_decoded", "_offsets")

    def __init__(self, offsets: np.ndarray, data: np.ndarray) -> None:
        self._offsets = offsets
        self._data = data
        # the strings read so far (a search reads the ids of its best rows in several steps, and
        # the best rows of one query are often the next one's), up to DECODED_KEPT of them
        self._decoded: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError(f"string {index} of {size}")
        found = self._decoded.get(position)
        if found is None:
            start, end = int(self._offsets[position]), int(self._offsets[position + 1])
            found = self._data[start:end].tobytes().decode("utf-8")
            if len(self._decoded) >= DECODED_KEPT:
                self._decoded.clear()
            self._decoded[position] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(strings_from_arrays({"s.offsets": self._offsets, "s.data": self._data}, "s"))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredStrings | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence, compared by value


def stored_strings(arrays: Mapping[str, np.ndarray], prefix: str) -> StoredStrings:
    """The strings :func:`arrays_from_strings` stored under ``prefix``, decoded as they are read."""
    return StoredStrings(arrays[f"{prefix}.offsets"], arrays[f"{prefix}.data"])


def arrow_from_arrays(arrays: Mapping[str, np.ndarray], prefix: str) -> Any:
    """The pyarrow table :func:`arrays_from_arrow` stored under ``prefix`` (its buffers are the
    arrays themselves: nothing is copied)."""
    import pyarrow as pa

    schema = pa.ipc.read_schema(pa.py_buffer(arrays[f"{prefix}.schema"]))
    columns = []
    for index, column in enumerate(schema):
        length, nulls = (int(n) for n in arrays[f"{prefix}.{index}.length"])
        buffers = [
            pa.py_buffer(arrays[key]) if (key := f"{prefix}.{index}.{number}") in arrays else None
            for number in range(
                3 if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) else 2
            )
        ]
        columns.append(pa.Array.from_buffers(column.type, length, buffers, null_count=nulls))
    return pa.Table.from_arrays(columns, schema=schema)
