"""Streaming a corpus's chunks through a build without holding them all in memory.

A build sees each file's chunks once, while validating and chunking the corpus, but can only write
the LanceDB table after the whole corpus is known to be valid and its taxonomy (the table's
columns) is complete. In between, chunks wait on disk, not in memory:

* :class:`ChunkSpill` appends them to a scratch file in fixed-size batches (pickled, in corpus
  order) and hands them back batch by batch;
* :class:`ChunksJsonWriter` writes ``chunks.json`` one chunk at a time, byte for byte what
  ``json.dump(chunks, indent=2, ensure_ascii=False)`` of the whole list writes.

Memory then depends on the batch size, not on the size of the corpus.
"""

from __future__ import annotations

import json
import math
import os
import pickle
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as _encode_string
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from docs_mcp_core.chunking import Chunk

SPILL_BATCH = 2000
"""Chunks per spilled batch, which is also the number of rows per write to the LanceDB table."""


class ChunkSpill:
    """An append-only scratch file of chunks, read back in batches of ``batch_size`` (corpus order)."""

    def __init__(self, path: Path, batch_size: int = SPILL_BATCH) -> None:
        self.path = path
        self.batch_size = batch_size
        self.count = 0
        self._pending: list[Chunk] = []
        self._fh: IO[bytes] | None = open(path, "wb")  # noqa: SIM115 - closed by finish()/discard()

    def extend(self, chunks: Iterable[Chunk]) -> None:
        """Append chunks; full batches go to disk at once."""
        self._pending.extend(chunks)
        while len(self._pending) >= self.batch_size:
            self._dump(self._pending[: self.batch_size])
            del self._pending[: self.batch_size]

    def _dump(self, batch: list[Chunk]) -> None:
        assert self._fh is not None, "the spill is already finished"
        pickle.dump(batch, self._fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += len(batch)

    def finish(self) -> None:
        """Write the last, partial batch and close the file for writing (idempotent)."""
        if self._fh is None:
            return
        if self._pending:
            self._dump(self._pending)
            self._pending = []
        self._fh.close()
        self._fh = None

    def batches(self) -> Iterator[list[Chunk]]:
        """The chunks back, one batch at a time, in the order they were appended."""
        self.finish()
        with open(self.path, "rb") as fh:
            while True:
                try:
                    batch: list[Chunk] = pickle.load(fh)
                except EOFError:
                    return
                yield batch

    def discard(self) -> None:
        """Close and delete the scratch file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self._pending = []
        self.path.unlink(missing_ok=True)


def dumps_indented(value: Any, indent: str = "") -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, each line after the first prefixed with
    ``indent``, byte for byte.

    With ``indent`` set, the standard library encodes in pure Python (its C encoder only does
    compact output), which was most of a rebuild's Python time. Here every string goes through
    the C string encoder the standard library itself uses, and only the nesting is Python:
    0.16 s instead of 0.27 s for sdk-docs' 10,969 chunks. Types this does not know go through
    ``json.dumps`` itself.
    """
    text = _scalar(value)
    if text is not None:
        return text
    inner = indent + "  "
    if isinstance(value, dict) and all(type(k) is str for k in value):
        if not value:
            return "{}"
        items = [f"{inner}{_encode_string(k)}: {_scalar_or_nested(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _scalar_or_nested(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _scalar_or_nested(value: Any, indent: str) -> str:
    text = _scalar(value)
    return text if text is not None else dumps_indented(value, indent)


def _scalar(value: Any) -> str | None:
    kind = type(value)
    if kind is str:
        return _encode_string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    return None


class ChunksJsonWriter:
    """Writes a JSON array of chunk dicts incrementally, identical to ``json.dump(list, indent=2)``.

    ``json.dump`` of a list with ``indent=2`` puts each element on its own lines, indented by two
    spaces more than the element's own ``indent=2`` rendering. JSON strings never contain a raw line
    break (they are escaped), so re-indenting an element is replacing ``"\\n"`` with ``"\\n  "``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._fh: IO[str] | None = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self._fh.write("[")

    def add(self, item: Any) -> None:
        assert self._fh is not None, "the writer is already closed"
        self._fh.write(("\n  " if self.count == 0 else ",\n  ") + dumps_indented(item, "  "))
        self.count += 1

    def close(self) -> None:
        """Finish the array and flush it to disk (idempotent)."""
        if self._fh is None:
            return
        self._fh.write("\n]" if self.count else "]")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        self._fh = None

    def discard(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> ChunksJsonWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


__all__ = ["SPILL_BATCH", "ChunkSpill", "ChunksJsonWriter", "dumps_indented"]
