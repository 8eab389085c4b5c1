"""Where a build writes, and how the new index replaces the live one without a gap.

Before anything else a build takes the output location's lock (:mod:`docs_mcp_core.index.lock`), so
two builds never write into one place at once. A folder is written beside the live index
(``.lancedb.tmp``, ``.lancedb.work/``, ``*.json.tmp``) and swapped in by renames when complete, so a
failed or interrupted build leaves the previous index intact and servable
(:func:`recover_interrupted_swap` finishes or undoes a swap a crash cut short). An object store has
no rename: the table goes under a fresh ``.lancedb-<build-id>`` prefix and ``metadata.json``, written
last and only if nobody else published meanwhile, switches readers to it (:class:`Output`). Either
way the new table is opened and checked before it is published (:mod:`.verify`).

A build writes only where an index, or nothing, is: a non-empty folder or prefix whose
``metadata.json`` is not an index's (no ``metadata_version``) is refused before anything there is
touched (:func:`refuse_unless_index`), so a wrong ``--out`` never replaces the user's own files.
What an interrupted build leaves behind (its lock, scratch and temporary files, the embedding
cache, object-store generations) does not count.

Retention: an object store keeps the generation just replaced, and any other replaced generation
until it has been replaced for ``generation_retention_seconds``, for replicas and readers still
fetching or reading it.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docs_mcp_core.build.options import BuildOptions, BuildReporter
from docs_mcp_core.build.verify import verify_table
from docs_mcp_core.embedding.cache import CACHE_DIRNAME
from docs_mcp_core.errors import BuildError, OutputNotAnIndexError, UnusablePathError, resolve_path
from docs_mcp_core.index.live_files import (
    CHUNKS_FILENAME,
    LANCEDB_DIRNAME,
    OLD_TABLE_DIRNAME,
    TABLE_NAME,
    WORK_DIRNAME,
    is_index_metadata,
    live_files,
    read_regular_file,
)
from docs_mcp_core.index.location import (
    GENERATION_PREFIX,
    IndexStorage,
    S3Storage,
    is_uri,
    new_build_id,
    open_storage,
)
from docs_mcp_core.index.lock import LOCK_FILENAME, BuildLock, acquire_build_lock
from docs_mcp_core.index.table import directory_size, write_table
from docs_mcp_core.metadata import METADATA_FILENAME, IndexMetadata
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.utf8 import is_utf8

if TYPE_CHECKING:
    from docs_mcp_core.search.heading_leg import HeadingVocabulary

__all__ = [
    "CHUNKS_FILENAME",
    "SPILL_FILENAME",
    "WORK_DIRNAME",
    "Output",
    "recover_interrupted_swap",
    "refuse_unless_index",
]

SPILL_FILENAME = "chunks.spill"  # chunks waiting between chunking and the table write


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


_BUILD_FILES = frozenset(
    {
        LOCK_FILENAME,
        f"{LANCEDB_DIRNAME}.tmp",
        f"{LANCEDB_DIRNAME}.old",
        WORK_DIRNAME,
        f"{CHUNKS_FILENAME}.tmp",
        f"{METADATA_FILENAME}.tmp",
        CACHE_DIRNAME,
    }
)


def refuse_unless_index(names: list[str], read: Callable[[str], bytes | None], where: str) -> None:
    """Raise :class:`OutputNotAnIndexError` when an output holding ``names`` (its top-level entries)
    is neither empty nor an index: no ``metadata.json`` (or, for a first build cut short while
    publishing, ``metadata.json.tmp``) with a ``metadata_version``. ``read(name)`` gives a file's
    bytes, ``None`` if it cannot be read. Entries a build itself leaves behind do not count."""
    theirs = [n for n in names if n not in _BUILD_FILES and not n.startswith(GENERATION_PREFIX)]
    if not theirs:
        return
    for name in (METADATA_FILENAME, f"{METADATA_FILENAME}.tmp"):
        if name in names and is_index_metadata(read(name)):
            return
    theirs.sort(key=sort_key)
    shown = ", ".join(theirs[:5]) + (f" and {len(theirs) - 5} more" if len(theirs) > 5 else "")
    if METADATA_FILENAME not in names:
        why = f"it has no {METADATA_FILENAME}"
    elif read(METADATA_FILENAME) is None:  # said "has no metadata_version" of an index this user may not read
        why = (
            f"its {METADATA_FILENAME} cannot be read: it is not a regular file, or this user may not read it"
        )
    else:
        why = f"its {METADATA_FILENAME} has no metadata_version"
    raise OutputNotAnIndexError(
        f"'{where}' is not empty and is not a docs-mcp index ({why}; it holds {shown}): a build "
        "replaces the index files in its output, so it writes nothing there. Choose a new or empty "
        "folder, or remove these files first if they are an index you no longer need"
    )


def _read_file(folder: Path) -> Callable[[str], bytes | None]:
    def read(name: str) -> bytes | None:
        return read_regular_file(folder / name)  # a named pipe there was waited on forever

    return read


def recover_interrupted_swap(out_dir: Path) -> None:
    """Finish or undo a swap that a crash interrupted, so the live index is whole again.

    The files that form the complete index (:func:`~docs_mcp_core.index.live_files.live_files`, the
    same decision a server started on the folder meanwhile serves by) are moved into place: cut
    short before the new table went live, ``.lancedb.old`` is put back (in place of a ``.lancedb``
    without a table); after, the new ``chunks.json`` and ``metadata.json`` replace the previous
    ones, which would describe another table and lend later builds its titles."""
    live, old = out_dir / LANCEDB_DIRNAME, out_dir / OLD_TABLE_DIRNAME
    files = live_files(out_dir)
    if files.table != LANCEDB_DIRNAME:
        _remove(live)
        (out_dir / files.table).rename(live)
    elif files.metadata != METADATA_FILENAME:
        if files.chunks != CHUNKS_FILENAME:
            os.replace(out_dir / files.chunks, out_dir / CHUNKS_FILENAME)
        os.replace(out_dir / files.metadata, out_dir / METADATA_FILENAME)
    _remove(old)
    for name in (
        f"{LANCEDB_DIRNAME}.tmp",
        f"{CHUNKS_FILENAME}.tmp",
        f"{METADATA_FILENAME}.tmp",
        WORK_DIRNAME,
    ):
        _remove(out_dir / name)


class Output:
    """Where a build writes: a local folder (files swapped in) or an object-store prefix (generations).

    A folder is written beside the live index (``.lancedb.tmp``, ``*.json.tmp``) and swapped in by
    renames. An object store has no atomic rename of a folder: the table goes under a fresh
    ``.lancedb-<build-id>`` prefix, then ``chunks.json`` is uploaded, then ``metadata.json``, whose
    ``index.path`` names the new prefix; until that last PUT readers see the previous index.
    """

    def __init__(self, options: BuildOptions) -> None:
        self.options = options
        self.storage: S3Storage | None = None
        self.out_dir: Path | None = None
        if is_uri(options.out_dir):
            storage = open_storage(options.out_dir, options.storage_options)
            assert isinstance(storage, S3Storage)
            self.storage = storage
            self.index_path = GENERATION_PREFIX + new_build_id()
        else:
            self.out_dir = _local_out(options.out_dir)
            self.index_path = LANCEDB_DIRNAME
        self.previous_path: str | None = None
        self._previous_etag: str | None = None  # metadata.json's version when the lock was taken
        self._lock: BuildLock | None = None
        self._created = False
        self._publishing = False  # the swap or the uploads have started: leave the rest to recovery
        self._published = False  # metadata.json names the new table
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._work: Path | None = None

    @property
    def display(self) -> Path | str:
        return self.out_dir if self.out_dir is not None else str(self.options.out_dir)

    @property
    def writing_to(self) -> str:
        """The local folder the build writes into (the output folder, or the scratch folder)."""
        return str(self.out_dir if self.out_dir is not None else self._work or tempfile.gettempdir())

    def prepare(self, rep: BuildReporter) -> None:
        """Take the output's lock, check the destination and repair what an interrupted build left."""
        if self.out_dir is not None:
            if self.out_dir.exists() and not self.out_dir.is_dir():
                raise BuildError(f"--out '{self.options.out_dir}' exists and is not a directory")
            self._created = not self.out_dir.exists()
            if not self._created:
                try:
                    names = sorted(p.name for p in self.out_dir.iterdir())
                except OSError as exc:
                    raise BuildError(f"cannot read --out '{self.options.out_dir}': {exc.strerror}") from None
                refuse_unless_index(names, _read_file(self.out_dir), str(self.options.out_dir))
            self._lock = acquire_build_lock(self.out_dir, wait=self.options.wait_for_lock, notify=rep.step)
            if self._created and any(p.name != LOCK_FILENAME for p in self.out_dir.iterdir()):
                # another build created the folder and published there while this one waited (--wait):
                # the folder is no longer this build's to remove when it fails
                self._created = False
                names = sorted(p.name for p in self.out_dir.iterdir())
                refuse_unless_index(names, _read_file(self.out_dir), str(self.options.out_dir))
            recover_interrupted_swap(self.out_dir)
        elif self.storage is not None:
            _previous_index(self.storage)  # unreachable store, bad credentials, no bucket: fail here
            refuse_unless_index(self.storage.list_names(), self._read_object, self.storage.location)
            self._lock = acquire_build_lock(self.storage, wait=self.options.wait_for_lock, notify=rep.step)
            self.previous_path, self._previous_etag = _previous_index(self.storage)

    def _read_object(self, name: str) -> bytes | None:
        assert self.storage is not None
        try:
            return self.storage.read_bytes(name)
        except OSError:
            return None

    def open_work(self) -> Path:
        """The local folder for scratch files (the output folder itself, or a temporary folder)."""
        if self.out_dir is not None:
            self._work = self.out_dir / WORK_DIRNAME
            _remove(self._work)
            self._work.mkdir(parents=True)
        else:
            self._scratch = tempfile.TemporaryDirectory(prefix="docs-mcp-build-")
            self._work = Path(self._scratch.name)
        return self._work

    def write_table(
        self,
        batches: Iterator[Any],
        keys: list[str],
        dims: int | None,
        rep: BuildReporter,
        after_rows: Callable[[], None],
    ) -> None:
        def step(message: str) -> None:
            rep.step(f"index: {message}")

        if self.storage is None:
            assert self.out_dir is not None
            tmp_db = self.out_dir / f"{LANCEDB_DIRNAME}.tmp"
            _remove(tmp_db)
            write_table(
                tmp_db,
                batches,
                metadata_keys=keys,
                vector_dimensions=dims,
                on_step=step,
                after_rows=after_rows,
            )
            return
        rep.step(f"index: writing {self.storage.uri(self.index_path)}")
        write_table(
            self.storage.uri(self.index_path),
            batches,
            metadata_keys=keys,
            vector_dimensions=dims,
            on_step=step,
            storage_options=self.storage.lance_options,
            after_rows=after_rows,
        )

    def verify(self, rows: int, rep: BuildReporter) -> None:
        """Open the table just written and check it (rows, a read, the indexes) before publishing it."""
        rep.step("index: checking the new table")
        if self.storage is None:
            assert self.out_dir is not None
            verify_table(self.out_dir / f"{LANCEDB_DIRNAME}.tmp", rows)
        else:
            verify_table(self.storage.uri(self.index_path), rows, storage_options=self.storage.lance_options)

    def write_derived(
        self,
        metadata: IndexMetadata,
        rep: BuildReporter,
        headings: Callable[[], HeadingVocabulary] | None = None,
    ) -> None:
        """Derive what a server derives from the table at start and write it beside the table, so
        it is swapped in or published with it (:mod:`docs_mcp_core.index.derived_files`), with the
        heading-path vectors of the texts ``headings`` gives (asked for once the parts that need
        little memory are written: the largest are made after the embedding's model is freed)."""
        from docs_mcp_core.memory import release_free_heap
        from docs_mcp_core.search.derived import write_derived_files  # the search engine's own parts

        release_free_heap()  # what the table's writing freed, before the derived parts are built
        rep.step("index: deriving what the server opens")
        if self.storage is None:
            assert self.out_dir is not None
            folder = self.out_dir / f"{LANCEDB_DIRNAME}.tmp"
            write_derived_files(str(folder), folder, metadata, headings=headings)
            return
        assert self._work is not None
        storage = self.storage
        table = f"{self.index_path}/{metadata.index.table or TABLE_NAME}.lance"
        versions = f"{table}/_versions"
        manifests = {
            info.path.rsplit("/", 1)[-1]: storage.read_bytes(f"{versions}/{info.path}")
            for info in storage.list_files(versions)
            if info.path.endswith(".manifest")
        }
        folder = self._work / "derived"
        folder.mkdir()
        written = write_derived_files(
            storage.uri(self.index_path),
            folder,
            metadata,
            storage.lance_options,
            manifests=manifests,
            headings=headings,
        )
        for path in written:
            storage.upload(path, f"{self.index_path}/{path.name}")

    def publish(self, metadata_text: str, rep: BuildReporter) -> int:
        """Make the new index the live one; returns its size in bytes."""
        assert self._work is not None
        self._publishing = True
        if self.storage is None:
            assert self.out_dir is not None
            _write_text(self.out_dir / f"{METADATA_FILENAME}.tmp", metadata_text)
            _swap(self.out_dir, self._work / f"{CHUNKS_FILENAME}.tmp")
            _remove(self._work)
            return (
                directory_size(self.out_dir / LANCEDB_DIRNAME)
                + (self.out_dir / CHUNKS_FILENAME).stat().st_size
                + (self.out_dir / METADATA_FILENAME).stat().st_size
            )
        storage = self.storage
        chunks_file = self._work / f"{CHUNKS_FILENAME}.tmp"
        rep.step(f"publishing {storage.location}")
        if self._lock is not None:
            self._lock.check()
        storage.upload(chunks_file, CHUNKS_FILENAME)
        _publish_metadata(storage, metadata_text.encode("utf-8"), self._previous_etag)
        self._published = True
        keep = {self.index_path, self.previous_path}
        retention = self.options.generation_retention_seconds
        _quietly(lambda: _prune_generations(storage, keep, retention))
        return storage.size(self.index_path) + len(metadata_text.encode("utf-8")) + chunks_file.stat().st_size

    def abort(self) -> None:
        """Undo a failed build: the live index stays exactly as it was."""
        if self.out_dir is not None:
            if self._work is not None and not self._publishing:
                _remove(self._work)
                (self.out_dir / f"{METADATA_FILENAME}.tmp").unlink(missing_ok=True)
                _remove(self.out_dir / f"{LANCEDB_DIRNAME}.tmp")
            if self._created and not self._publishing:
                shutil.rmtree(self.out_dir, ignore_errors=True)
        elif self.storage is not None and not self._published:
            storage, path = self.storage, self.index_path
            _quietly(lambda: storage.remove_tree(path))

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _swap(out_dir: Path, chunks_tmp: Path) -> None:
    live, tmp, old = (
        out_dir / LANCEDB_DIRNAME,
        out_dir / f"{LANCEDB_DIRNAME}.tmp",
        out_dir / f"{LANCEDB_DIRNAME}.old",
    )
    _remove(old)
    if live.exists():
        live.rename(old)
    tmp.rename(live)
    os.replace(chunks_tmp, out_dir / CHUNKS_FILENAME)
    os.replace(out_dir / f"{METADATA_FILENAME}.tmp", out_dir / METADATA_FILENAME)
    _remove(old)


def _quietly(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # noqa: BLE001 - best-effort clean-up must not hide the real error
        pass


def _previous_index(storage: IndexStorage) -> tuple[str | None, str | None]:
    """``index.path`` and version tag of the ``metadata.json`` published at ``storage`` (``None``s
    when there is none).

    Also the build's first request to the store: unreachable endpoints, bad credentials and missing
    buckets fail here, before any work, with a message that says what to check.
    """
    try:
        found = storage.read_if_changed(METADATA_FILENAME, None)
    except FileNotFoundError:
        if not storage.bucket_exists():
            raise BuildError(
                f"--out '{storage.location}': the bucket does not exist (create it first)"
            ) from None
        return None, None
    except OSError as exc:
        raise BuildError(
            f"cannot access --out '{storage.location}': {exc} (check the endpoint and credentials: "
            "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION or --storage-option)"
        ) from None
    assert found is not None
    data, etag = found
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None, etag
    index = raw.get("index") if isinstance(raw, dict) else None
    path = index.get("path") if isinstance(index, dict) else None
    return (path if isinstance(path, str) and path else None), etag


def _publish_metadata(storage: S3Storage, data: bytes, previous_etag: str | None) -> None:
    """Write ``metadata.json`` (the switch) only if it is still the version this build started from."""
    if previous_etag is None:
        written = storage.create(METADATA_FILENAME, data)
    else:
        written = storage.replace(METADATA_FILENAME, data, previous_etag)
    if written is None:
        raise BuildError(
            f"another build published to '{storage.location}' while this one ran; this build's index was "
            "not published (the other one is live)"
        )


def _prune_generations(storage: IndexStorage, keep: set[str | None], retention_seconds: float) -> None:
    """Delete the generations replaced more than ``retention_seconds`` ago, except those in ``keep``.

    A generation counts as replaced when the next one (in build-id order, which is time order) was
    last written.
    """
    names = sorted(n for n in storage.list_names() if n.startswith(GENERATION_PREFIX))
    now = datetime.now(UTC)
    for older, newer in itertools.pairwise(names):
        if older in keep:
            continue
        if retention_seconds > 0:
            stamps = [info.modified for info in storage.list_files(newer) if info.modified is not None]
            replaced_at = max(stamps) if stamps else now
            if (now - replaced_at).total_seconds() < retention_seconds:
                continue
        _quietly(lambda name=older: storage.remove_tree(name))


def _local_out(out_dir: str | os.PathLike[str]) -> Path:
    """``--out`` as an absolute path; a loop of symbolic links, bytes that are not UTF-8 or a control
    character LanceDB cannot open a table under (a newline, a tab), is a :class:`BuildError` saying
    what to do (they ended the build with "failed unexpectedly")."""
    try:
        resolved = resolve_path(out_dir, "--out")
    except UnusablePathError as exc:
        raise BuildError(str(exc)) from None
    if not is_utf8(str(resolved)):  # bytes that are not UTF-8 (argv's lone surrogates)
        shown = str(resolved).encode("utf-8", "backslashreplace").decode("utf-8")
        raise BuildError(
            f"--out '{shown}' is not valid UTF-8, and LanceDB opens tables by UTF-8 paths only; "
            "choose a folder whose path is UTF-8"
        ) from None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in str(resolved)):
        shown = str(resolved).encode("unicode_escape").decode("ascii")
        raise BuildError(
            f"--out '{shown}' holds a control character (a newline, a tab), in which LanceDB cannot "
            "open a table; choose a folder whose path has none"
        )
    return resolved
