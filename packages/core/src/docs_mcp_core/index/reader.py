"""Opening a published index read-only, from a local folder or an object-store prefix.

An index is ``metadata.json`` plus the LanceDB table it names (``index.path``, ``index.table``),
both read from the same location. Locally that is ``<folder>/.lancedb/chunks.lance``; in an object
store it is the generation the last build published (``s3://bucket/prefix/.lancedb-<build-id>``).
Because ``metadata.json`` is read first and only once, a reader always gets a table that matches
the metadata it read, even while a new build is being published.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_mcp_core.errors import IndexNotFoundError
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.location import describe, is_uri, open_storage
from docs_mcp_core.index.table import TABLE_NAME
from docs_mcp_core.metadata import METADATA_FILENAME, IndexMetadata, parse_metadata_bytes, read_metadata


@dataclass
class OpenedIndex:
    """The parsed metadata, its exact bytes (the default cursor secret derives from them) and the table."""

    location: str
    metadata: IndexMetadata
    metadata_bytes: bytes
    table: Any


def open_index(index_dir: str | Path, storage_options: Mapping[str, str] | None = None) -> OpenedIndex:
    """Read ``metadata.json`` at ``index_dir`` and open the table it names, read-only.

    Raises :class:`IndexNotFoundError` (or ``MetadataError``) naming the location when unusable.
    """
    os.environ.setdefault("LANCEDB_LOG", "error")
    if is_uri(index_dir):
        assert isinstance(index_dir, str)
        return _open_remote(index_dir, storage_options)
    folder = Path(index_dir).resolve()
    if not folder.is_dir():
        raise IndexNotFoundError(f"index directory does not exist: '{folder}'")
    metadata = read_metadata(folder)
    db_path = folder / metadata.index.path
    table_name = metadata.index.table or TABLE_NAME
    if not (db_path / f"{table_name}.lance").is_dir():
        raise IndexNotFoundError(
            f"LanceDB index not found at '{db_path}'. Re-run docs-mcp build to generate the index."
        )
    lancedb = import_lancedb()
    try:
        table = lancedb.connect(str(db_path), read_consistency_interval=None).open_table(table_name)
    except Exception as exc:  # noqa: BLE001 - any storage failure is "unusable index"
        raise IndexNotFoundError(
            f"cannot open the LanceDB table '{table_name}' at '{db_path}': {exc}"
        ) from None
    return OpenedIndex(str(folder), metadata, (folder / METADATA_FILENAME).read_bytes(), table)


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


__all__ = ["OpenedIndex", "open_index"]
