"""A local copy of the generation an object-store index publishes, so queries never wait on the store.

A server on ``s3://bucket/prefix`` does not query the table through the network: at start, and
whenever ``metadata.json`` changes, it fetches the generation that file names (``.lancedb-<build-id>``)
into a local cache folder, and opens that copy as it would open an index folder. The copy is laid out
like a published folder (``metadata.json`` with the exact bytes read, and the generation's table under
the same name), so the reader and the cursor secret are the same as on the store.

A copy is written into a hidden ``.partial-*`` folder, each file checked against the size the store
listed, the generation named by ``metadata.json`` checked to be the one fetched (its build id), and
only then renamed into place as ``<cache>/<generation>`` with a marker recording each file's size and
SHA-256. A copy already there (a restart with the same cache folder) is reused only when every file
still has the store's size and the checksum recorded when it was fetched: a damaged copy (a disk
error, a stray write of the same size) is fetched again rather than served. A fetch that fails or is
cut short leaves no usable-looking folder behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from docs_mcp_core.errors import IndexNotFoundError, StoreUnreachableError
from docs_mcp_core.index.location import GENERATION_PREFIX, ObjectInfo, S3Storage
from docs_mcp_core.metadata import METADATA_FILENAME, parse_metadata_bytes

__all__ = ["FETCHED_MARKER", "FetchedGeneration", "fetch_generation", "remove_fetched"]

FETCHED_MARKER = ".fetched.json"
"""Written last into a complete copy: the generation, the ``metadata.json`` version and the files."""
PARTIAL_PREFIX = ".partial-"


@dataclass(frozen=True)
class FetchedGeneration:
    """A complete local copy of one published generation."""

    folder: Path  # open it like an index folder
    generation: str  # ``index.path`` of its metadata.json, e.g. ``.lancedb-20260821T101500Z-1a2b3c4d``
    etag: str | None  # version tag of the metadata.json it was fetched for
    bytes: int  # size of the table's files
    replaced: str | None = None  # why a copy of this generation already there was not reused


def fetch_generation(
    storage: S3Storage, cache_dir: Path, *, known_etag: str | None = None
) -> FetchedGeneration | None:
    """Fetch the generation ``metadata.json`` at ``storage`` names into ``cache_dir``.

    Returns None when ``metadata.json`` is still the version ``known_etag`` (nothing is fetched: one
    conditional request). Raises :class:`IndexNotFoundError` naming the location when there is no
    published index or its files cannot be fetched completely, and its subclass
    :class:`StoreUnreachableError` when the store does not answer the read of ``metadata.json``.
    """
    where = storage.uri(METADATA_FILENAME)
    try:
        found = storage.read_if_changed(METADATA_FILENAME, known_etag)
    except FileNotFoundError:
        raise IndexNotFoundError(
            f"metadata.json not found at '{where}'. Run `docs-mcp build --out {storage.location}` to publish "
            "the index there."
        ) from None
    except OSError as exc:
        raise StoreUnreachableError(f"cannot read '{where}': {exc}") from None
    if found is None:
        return None
    data, etag = found
    generation = parse_metadata_bytes(data, where).index.path.strip("/")
    if not generation or "/" in generation or generation in (".", ".."):
        raise IndexNotFoundError(f"'{where}' names an unusable index.path '{generation}'")
    try:
        files = storage.list_files(generation)
    except OSError as exc:
        raise IndexNotFoundError(f"cannot list '{storage.uri(generation)}': {exc}") from None
    if not files:
        raise IndexNotFoundError(
            f"'{where}' names the table '{storage.uri(generation)}', which holds no files (it was removed; "
            "publish the index again, or keep replaced generations longer with --generation-retention)"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / _folder_name(generation)
    size = sum(f.size for f in files)
    damage = _copy_damage(target, generation, files)
    if damage is None:
        _write_metadata(target, data)
        return FetchedGeneration(target, generation, etag, size)
    partial = cache_dir / f"{PARTIAL_PREFIX}{_folder_name(generation)}-{secrets.token_hex(4)}"
    try:
        _download(storage, generation, files, partial)
        (partial / METADATA_FILENAME).write_bytes(data)
        sums = {f.path: _sha256(partial / generation / f.path) for f in files}
        marker = {"generation": generation, "files": {f.path: f.size for f in files}, "sha256": sums}
        (partial / FETCHED_MARKER).write_text(json.dumps(marker), encoding="utf-8")
        remove_fetched(target)  # an incomplete, damaged or outdated copy under that name
        try:
            os.replace(partial, target)
        except OSError:
            if (
                _copy_damage(target, generation, files) is not None
            ):  # else another server sharing the cache won
                raise
    finally:
        remove_fetched(partial)
    return FetchedGeneration(target, generation, etag, size, replaced=damage if damage != _NO_COPY else None)


def remove_fetched(folder: Path) -> None:
    """Delete a local copy (no error when it is already gone)."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder)


def _folder_name(generation: str) -> str:
    """The cache folder of a generation: its build id, visible (``20260821T101500Z-1a2b3c4d``)."""
    name = (
        generation.removeprefix(GENERATION_PREFIX) if generation.startswith(GENERATION_PREFIX) else generation
    )
    return name.lstrip(".") or "index"


def _download(storage: S3Storage, generation: str, files: list[ObjectInfo], into: Path) -> None:
    for info in files:
        local = into / generation / info.path
        local.parent.mkdir(parents=True, exist_ok=True)
        name = f"{generation}/{info.path}"
        try:
            written = storage.download(name, local)
        except FileNotFoundError:
            raise IndexNotFoundError(
                f"'{storage.uri(name)}' disappeared while it was fetched (the generation was removed); the "
                "next check fetches the newest one"
            ) from None
        except OSError as exc:
            raise IndexNotFoundError(f"cannot fetch '{storage.uri(name)}': {exc}") from None
        if written != info.size:
            raise IndexNotFoundError(
                f"fetched {written:,} bytes of '{storage.uri(name)}' where the store lists {info.size:,}"
            )


_NO_COPY = "no copy"


def _copy_damage(folder: Path, generation: str, files: list[ObjectInfo]) -> str | None:
    """None when ``folder`` holds a finished copy of ``generation`` whose files have the listed sizes
    and the checksums recorded when it was fetched; else what is wrong with it (:data:`_NO_COPY`
    when there is no finished copy of that generation at all)."""
    try:
        marker = json.loads((folder / FETCHED_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply to parse
        return _NO_COPY
    if not isinstance(marker, dict) or marker.get("generation") != generation:
        return _NO_COPY
    sums = marker.get("sha256")
    if not isinstance(sums, dict):
        return "no checksums were recorded when it was fetched"
    for info in files:
        path = folder / generation / info.path
        try:
            if path.stat().st_size != info.size:
                return f"'{info.path}' has {path.stat().st_size:,} bytes where the store lists {info.size:,}"
            if _sha256(path) != sums.get(info.path):
                return f"'{info.path}' differs from the file fetched (its SHA-256 changed)"
        except OSError as exc:
            return f"'{info.path}' cannot be read ({exc.strerror or exc})"
    return None


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _write_metadata(folder: Path, data: bytes) -> None:
    """Put the ``metadata.json`` just read beside a reused copy (it may differ in fields, not table)."""
    tmp = folder / f"{METADATA_FILENAME}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, folder / METADATA_FILENAME)
