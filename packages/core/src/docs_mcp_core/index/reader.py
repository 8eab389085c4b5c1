"""Opening a published index read-only, from a local folder or an object-store prefix.

An index is ``metadata.json`` plus the LanceDB table it names (``index.path``, ``index.table``),
both read from the same location. Locally that is ``<folder>/.lancedb/chunks.lance``; in an object
store it is the generation the last build published (``s3://bucket/prefix/.lancedb-<build-id>``).
Because ``metadata.json`` is read first and only once, a reader always gets a table that matches
the metadata it read, even while a new build is being published.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_mcp_core.errors import IndexNotFoundError, UnusablePathError, resolve_path
from docs_mcp_core.index.lancedb_async import async_table
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.live_files import LANCEDB_DIRNAME, TABLE_NAME, live_files
from docs_mcp_core.index.location import describe, is_uri, open_storage
from docs_mcp_core.metadata import METADATA_FILENAME, IndexMetadata, parse_metadata_bytes, read_metadata


@dataclass
class OpenedIndex:
    """The parsed metadata, its exact bytes (the default cursor secret derives from them) and the table."""

    location: str
    metadata: IndexMetadata
    metadata_bytes: bytes
    table: Any
    table_folder: Path | None = None  # the local folder of the table (its derived files beside it)


class LazyTable:
    """A LanceDB table opened (and LanceDB imported, over a second) on first use, from any thread.

    It stands in for the table when the engine opens from derived files, which answer most
    searches without the table. Attributes are those of the table; ``_table``, the
    ``AsyncTable`` behind it, is itself resolved on first use.
    """

    def __init__(self, opener: Callable[[], Any]) -> None:
        self._opener = opener
        self._opened: Any = None
        self._lock = threading.Lock()
        self._table = _Deferred(lambda: async_table(self.table))  # what async_table() of this returns

    @property
    def is_open(self) -> bool:
        return self._opened is not None

    @property
    def table(self) -> Any:
        """The table itself (opened now if it was not yet)."""
        if self._opened is None:
            with self._lock:
                if self._opened is None:
                    self._opened = self._opener()
        return self._opened

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


class _Deferred:
    """An object resolved by ``resolve`` the first time one of its attributes is read."""

    def __init__(self, resolve: Callable[[], Any]) -> None:
        self._resolve = resolve

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)


def open_index(
    index_dir: str | Path, storage_options: Mapping[str, str] | None = None, *, lazy: bool = False
) -> OpenedIndex:
    """Read ``metadata.json`` at ``index_dir`` and open the table it names, read-only.

    With ``lazy``, a local table is a :class:`LazyTable`, opened when first used. Raises
    :class:`IndexNotFoundError` (or ``MetadataError``) naming the location when unusable.
    """
    os.environ.setdefault("LANCEDB_LOG", "error")
    if is_uri(index_dir):
        assert isinstance(index_dir, str)
        return _open_remote(index_dir, storage_options)
    try:
        folder = resolve_path(index_dir, "index directory")
    except UnusablePathError as exc:
        raise IndexNotFoundError(str(exc)) from None
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise IndexNotFoundError(f"index directory {what}: '{folder}'")
    # a build stopped mid-swap: the complete index's files where they are, as a server serves them
    files = live_files(folder)
    if files.mid_swap:
        metadata_path = folder / files.metadata
        try:
            metadata_bytes = metadata_path.read_bytes()
        except OSError as exc:
            raise IndexNotFoundError(f"cannot read '{metadata_path}': {exc}") from None
        metadata = parse_metadata_bytes(metadata_bytes, str(metadata_path))
    else:
        metadata = read_metadata(folder)
        metadata_bytes = (folder / METADATA_FILENAME).read_bytes()
    table_folder = files.table if metadata.index.path == LANCEDB_DIRNAME else metadata.index.path
    db_path = folder / table_folder
    table_name = metadata.index.table or TABLE_NAME
    if not (db_path / f"{table_name}.lance").is_dir():
        raise IndexNotFoundError(
            f"LanceDB index not found at '{db_path}'. Re-run docs-mcp build to generate the index."
        )

    def connect() -> Any:
        if not (db_path / f"{table_name}.lance").is_dir():  # LanceDB would make its folder again
            raise IndexNotFoundError(
                f"the index's table '{db_path}' was removed after the index was opened (its folder was "
                "deleted or replaced); build the index again with docs-mcp build"
            )
        lancedb = import_lancedb()
        try:
            return lancedb.connect(str(db_path), read_consistency_interval=None).open_table(table_name)
        except Exception as exc:  # noqa: BLE001 - any storage failure is "unusable index"
            raise IndexNotFoundError(
                f"cannot open the LanceDB table '{table_name}' at '{db_path}': {exc}"
            ) from None

    table = LazyTable(connect) if lazy else connect()
    return OpenedIndex(str(folder), metadata, metadata_bytes, table, db_path)


def _open_remote(uri: str, storage_options: Mapping[str, str] | None) -> OpenedIndex:
    storage = open_storage(uri, storage_options)
    where = storage.uri(METADATA_FILENAME)
    try:
        data = storage.read_bytes(METADATA_FILENAME)
    except FileNotFoundError:
        raise IndexNotFoundError(
            f"metadata.json not found at '{where}'. Run `docs-mcp build --out {uri}` to publish the index there."
        ) from None
    except OSError as exc:
        raise IndexNotFoundError(f"cannot read '{where}': {exc}") from None
    metadata = parse_metadata_bytes(data, where)
    if metadata.heading_vectors is not None:
        return _open_copy(uri, storage)
    table_name = metadata.index.table or TABLE_NAME
    db_uri = storage.uri(metadata.index.path)
    lancedb = import_lancedb()
    try:
        db = lancedb.connect(db_uri, read_consistency_interval=None, storage_options=storage.lance_options)
        table = db.open_table(table_name)
    except Exception as exc:  # noqa: BLE001 - any storage failure is "unusable index"
        raise IndexNotFoundError(
            f"cannot open the LanceDB table '{table_name}' at '{db_uri}': {exc}. "
            "Re-run docs-mcp build to publish the index."
        ) from None
    return OpenedIndex(describe(uri), metadata, data, table)


__all__ = ["LazyTable", "OpenedIndex", "open_index"]


def _open_copy(uri: str, storage: Any) -> OpenedIndex:
    """A local copy of the published generation, opened like a folder (removed at exit): the
    heading-path vectors are only in the derived files beside the table, which a search reads
    from a folder, as the server reads its copy (:mod:`docs_mcp_core.index.replica`)."""
    import atexit
    import shutil

    from docs_mcp_core.index.private_copies import make_private_folder
    from docs_mcp_core.index.replica import fetch_generation

    cache = make_private_folder()
    atexit.register(shutil.rmtree, str(cache), True)
    fetched = fetch_generation(storage, cache)
    assert fetched is not None  # no known version tag: always fetched
    local = open_index(fetched.folder)
    return OpenedIndex(describe(uri), local.metadata, local.metadata_bytes, local.table, local.table_folder)
