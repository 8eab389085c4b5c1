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
import os
import pickle
from collections.abc import Iterable, Iterator
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
        text = json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        self._fh.write(("\n  " if self.count == 0 else ",\n  ") + text)
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


__all__ = ["SPILL_BATCH", "ChunkSpill", "ChunksJsonWriter"]
