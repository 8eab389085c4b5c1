"""Start-up checks of an index directory: fail fast, with one clear line, before serving anything.

An index directory is what ``docs-mcp build --out DIR`` writes: ``metadata.json`` plus the LanceDB
table under ``.lancedb/``; an object-store URI (``s3://bucket/prefix``) holds the same files, with the
table under the ``index.path`` that ``metadata.json`` names. Reading metadata is cheap (no LanceDB import), so a missing directory, a
missing or invalid ``metadata.json``, an unsupported ``metadata_version`` or a missing table is
reported at start-up instead of on the first search.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from docs_mcp_core.errors import UnusablePathError, resolve_path
from docs_mcp_server.errors import BootError
from docs_mcp_server.metadata_view import MetadataView


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines)


def load_index_metadata(
    index_dir: Path | str, storage_options: Mapping[str, str] | None = None
) -> MetadataView:
    """Validate ``index_dir`` and return the view of its ``metadata.json`` (raises :class:`BootError`).

    ``index_dir`` is a folder or an object-store URI (``s3://bucket/prefix``); for a URI,
    ``storage_options`` override the AWS environment variables.
    """
    if isinstance(index_dir, str):
        return _load_remote_metadata(index_dir, storage_options)
    if not index_dir.exists():
        raise BootError(
            f"index directory does not exist: '{index_dir}'. Pass the --out directory of docs-mcp build."
        )
    if not index_dir.is_dir():
        raise BootError(f"index directory is not a directory: '{index_dir}'")
    try:
        return _load_local_metadata(index_dir)
    except PermissionError as exc:  # the folder (or one in it) this user may not read: a traceback
        from docs_mcp_core.corpus_walk import cannot_read

        raise BootError(cannot_read(f"the index at '{index_dir}' ('{exc.filename}')", exc)) from None


def _load_local_metadata(index_dir: Path) -> MetadataView:
    from docs_mcp_core.errors import MetadataError
    from docs_mcp_core.index.live_files import live_files
    from docs_mcp_core.metadata import missing_index_advice, parse_metadata_bytes, read_metadata

    files = live_files(index_dir)  # a build stopped mid-swap: the complete index's files, where they are
    metadata_path = index_dir / files.metadata
    if not metadata_path.is_file():
        _refuse_if_left_mid_swap(index_dir)
        raise BootError(
            f"metadata.json not found in index directory: '{metadata_path}'. {missing_index_advice(index_dir)}"
        )

    try:
        if files.mid_swap:
            metadata = parse_metadata_bytes(metadata_path.read_bytes(), str(metadata_path))
        else:
            metadata = read_metadata(index_dir)
    except MetadataError as exc:
        detail = _one_line(str(exc))
        if str(metadata_path) not in detail and "metadata.json" not in detail:
            detail = f"Invalid metadata.json at '{metadata_path}': {detail}"
        raise BootError(detail) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BootError(f"cannot read '{metadata_path}': {exc}") from exc
    view = MetadataView.from_metadata(metadata)
    table_folder = files.table if view.index_path == ".lancedb" else view.index_path
    try:
        lancedb_dir = resolve_path(
            index_dir / table_folder,
            "the index's table folder",
            "re-run docs-mcp build to generate the index",
        )
    except UnusablePathError as exc:
        raise BootError(str(exc)) from None
    if not (lancedb_dir / f"{view.index_table}.lance").is_dir():
        _refuse_if_left_mid_swap(index_dir)
    if not lancedb_dir.is_dir():
        raise BootError(
            f"LanceDB index not found at '{lancedb_dir}'. Re-run docs-mcp build to generate the index."
        )
    table_dir = lancedb_dir / f"{view.index_table}.lance"
    if not table_dir.is_dir():
        raise BootError(
            f"LanceDB table '{view.index_table}' not found in '{lancedb_dir}'. "
            "Re-run docs-mcp build to generate the index."
        )
    return view


def _refuse_if_left_mid_swap(index_dir: Path) -> None:
    """Raise :class:`BootError` when ``index_dir`` holds what a build stopped while it published
    leaves (``.lancedb.old`` or ``metadata.json.tmp``) and no complete index."""
    from docs_mcp_core.index.live_files import NEW_METADATA_FILENAME, OLD_TABLE_DIRNAME

    left = [name for name in (OLD_TABLE_DIRNAME, NEW_METADATA_FILENAME) if (index_dir / name).exists()]
    if left:
        raise BootError(
            f"no complete index in '{index_dir}': a build was stopped while it replaced the index there "
            f"(it left {' and '.join(left)}). Re-run docs-mcp build --out {index_dir} to build it again."
        )


def _load_remote_metadata(uri: str, storage_options: Mapping[str, str] | None) -> MetadataView:
    """The object-store variant: ``metadata.json`` and the table it names, read from ``uri``."""
    from docs_mcp_core.errors import MetadataError, StorageError
    from docs_mcp_core.index.location import open_storage
    from docs_mcp_core.metadata import read_metadata

    try:
        storage = open_storage(uri, storage_options)
        metadata = read_metadata(uri, storage_options=storage_options)
    except (MetadataError, StorageError) as exc:
        raise BootError(_one_line(str(exc))) from exc
    view = MetadataView.from_metadata(metadata)
    table = f"{view.index_path}/{view.index_table}.lance"
    try:
        found = storage.exists(table)
    except OSError as exc:
        raise BootError(f"cannot read '{storage.uri(table)}': {exc}") from exc
    if not found:
        raise BootError(
            f"LanceDB table '{view.index_table}' not found at '{storage.uri(view.index_path)}' "
            f"(index.path of '{storage.uri('metadata.json')}'). Re-run docs-mcp build --out {uri}."
        )
    return view
