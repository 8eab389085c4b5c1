"""Which files of a local index folder make up its complete index, also when a build was stopped
in the middle of swapping a new index in.

A local build publishes by renames (``docs/builds.md``): ``.lancedb`` → ``.lancedb.old``,
``.lancedb.tmp`` → ``.lancedb``, ``.lancedb.work/chunks.json.tmp`` → ``chunks.json``,
``metadata.json.tmp`` → ``metadata.json``. A build killed between two of them leaves a folder whose
``.lancedb`` and ``metadata.json`` are not one index. :func:`live_files` decides, reading only,
which files form the complete index there: the previous one (``.lancedb.old`` with
``metadata.json``) when the new table is not in place yet, the new one (``.lancedb`` with
``metadata.json.tmp``) once it is. The next build's repair
(:func:`docs_mcp_core.build.output.recover_interrupted_swap`) moves exactly those files into place,
and a server started before that serves them where they are.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from docs_mcp_core.metadata import METADATA_FILENAME

__all__ = [
    "CHUNKS_FILENAME",
    "LANCEDB_DIRNAME",
    "NEW_CHUNKS_PATH",
    "NEW_METADATA_FILENAME",
    "NEW_TABLE_DIRNAME",
    "OLD_TABLE_DIRNAME",
    "TABLE_NAME",
    "WORK_DIRNAME",
    "LiveFiles",
    "is_index_metadata",
    "live_files",
    "read_regular_file",
]

# the folder of the LanceDB table and the table's name (defined here, not with the table's code in
# index.table, so that a server's start reads them without importing that module)
LANCEDB_DIRNAME = ".lancedb"
TABLE_NAME = "chunks"
CHUNKS_FILENAME = "chunks.json"
WORK_DIRNAME = ".lancedb.work"  # a local build's scratch: the chunk spill and chunks.json being written
OLD_TABLE_DIRNAME = f"{LANCEDB_DIRNAME}.old"  # the previous table, between the swap's first two renames
NEW_TABLE_DIRNAME = f"{LANCEDB_DIRNAME}.tmp"  # the table a build is writing
NEW_METADATA_FILENAME = f"{METADATA_FILENAME}.tmp"  # written complete before the swap's first rename
NEW_CHUNKS_PATH = f"{WORK_DIRNAME}/{CHUNKS_FILENAME}.tmp"


def is_index_metadata(data: bytes | None) -> bool:
    """Whether ``data`` is an index's ``metadata.json`` (a JSON object with a ``metadata_version``)."""
    try:
        raw = json.loads(data.decode("utf-8-sig")) if data is not None else None
    except (ValueError, RecursionError):
        return False
    return isinstance(raw, dict) and "metadata_version" in raw


@dataclass(frozen=True)
class LiveFiles:
    """The names, inside an index folder, of the complete index's table folder, ``metadata.json``
    and ``chunks.json``."""

    table: str = LANCEDB_DIRNAME
    metadata: str = METADATA_FILENAME
    chunks: str = CHUNKS_FILENAME

    @property
    def mid_swap(self) -> bool:
        """Whether a build was stopped during its swap, so the index is not under its usual names."""
        return (self.table, self.metadata) != (LANCEDB_DIRNAME, METADATA_FILENAME)


def live_files(folder: Path) -> LiveFiles:
    """Which files of the local index ``folder`` form its complete index (reads only).

    Stopped before the new table went live, the previous index is the complete one: ``.lancedb.old``
    (in place of a ``.lancedb`` without a table, which a tool that opened the folder can create)
    with ``metadata.json``. Stopped after, the new one is: ``.lancedb`` with ``metadata.json.tmp``
    (an index's metadata, complete before the first rename) and the new ``chunks.json`` when still
    in the build's scratch folder. Otherwise the usual names."""
    if (folder / OLD_TABLE_DIRNAME).exists() and not (
        folder / LANCEDB_DIRNAME / f"{TABLE_NAME}.lance"
    ).exists():
        return LiveFiles(table=OLD_TABLE_DIRNAME)
    if (
        (folder / LANCEDB_DIRNAME).is_dir()
        and not (folder / NEW_TABLE_DIRNAME).exists()
        and is_index_metadata(_read(folder / NEW_METADATA_FILENAME))
    ):
        chunks = NEW_CHUNKS_PATH if (folder / NEW_CHUNKS_PATH).is_file() else CHUNKS_FILENAME
        return LiveFiles(metadata=NEW_METADATA_FILENAME, chunks=chunks)
    return LiveFiles()


def _read(path: Path) -> bytes | None:
    return read_regular_file(path)


def read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (through links), else ``None``, as when it
    cannot be read. A named pipe left at ``metadata.json.tmp`` (or ``metadata.json`` in a build's
    output) was opened and read: a build, ``docs-mcp search`` and a server's start waited on it
    forever, and a link to /dev/zero was read without end."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with open(fd, "rb") as handle:
        try:
            return handle.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None
        except OSError:
            return None
