"""An object-store index's local copies: the store, the folder its generations are copied to, and
the copying itself.

A server of ``s3://bucket/prefix`` serves a local copy of the generation ``metadata.json`` names
(:mod:`docs_mcp_core.index.replica`). The copies go to ``--index-cache-dir`` when this process can
own that folder (an ``flock`` on a lock file in it, so two servers never delete each other's
copies; a copy left by an earlier run is reused), else to a private temporary folder removed at
exit. An outage of the store is logged once when it starts and once when it ends.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from docs_mcp_server.logs import log

if TYPE_CHECKING:
    from docs_mcp_core.index.location import S3Storage
    from docs_mcp_core.index.replica import FetchedGeneration


class StoreCopies:
    """Where an object-store index is read from and copied to (see the module's docstring)."""

    def __init__(
        self, index_dir: str, storage_options: Mapping[str, str] | None, cache_dir: Path | None
    ) -> None:
        self.index_dir = index_dir
        self._storage_options = dict(storage_options) if storage_options else None
        self._cache_dir = cache_dir
        self.keep_files = cache_dir is not None  # copies in a folder given by flag outlive the process
        self._cache_ready: Path | None = None
        self._cache_lock: int | None = None  # holds the lock on cache_dir, for the process's life
        self._storage: S3Storage | None = None
        self._down_since: float | None = None  # when the store stopped answering (monotonic)

    def storage(self) -> S3Storage:
        """The object store (opened on first use)."""
        if self._storage is None:
            from docs_mcp_core.index.location import S3Storage, open_storage

            storage = open_storage(self.index_dir, self._storage_options)
            assert isinstance(storage, S3Storage)
            self._storage = storage
        return self._storage

    def cache(self) -> Path:
        """The folder generations are copied to: ``cache_dir`` when this process can own it (a lock
        on it, so two servers never delete each other's copies), else a private temporary folder."""
        if self._cache_ready is not None:
            return self._cache_ready
        if self._cache_dir is not None:
            from docs_mcp_core.index.replica import PARTIAL_PREFIX, remove_fetched

            self._cache_dir.mkdir(parents=True, exist_ok=True)
            self._cache_lock = lock_folder(self._cache_dir)
            if self._cache_lock is not None:
                for stale in self._cache_dir.glob(f"{PARTIAL_PREFIX}*"):  # a fetch cut short by a kill
                    remove_fetched(stale)
                self._cache_ready = self._cache_dir
                return self._cache_ready
            log(
                logging.WARNING,
                "another server process uses this index cache folder; this one copies the index to a "
                "private temporary folder instead",
                cache_dir=str(self._cache_dir),
            )
            self.keep_files = False
        import shutil

        from docs_mcp_core.index.private_copies import make_private_folder

        self._cache_ready = make_private_folder()
        weakref.finalize(self, shutil.rmtree, str(self._cache_ready), True)
        return self._cache_ready

    def fetch(self, known_etag: str | None) -> FetchedGeneration | None:
        """Copy the generation ``metadata.json`` names, unless its version is ``known_etag`` (None then)."""
        from docs_mcp_core.index.replica import fetch_generation

        started = time.monotonic()
        fetched = fetch_generation(self.storage(), self.cache(), known_etag=known_etag)
        if fetched is not None and fetched.replaced is not None:
            log(
                logging.WARNING,
                "the cached copy of the index was damaged and was fetched again",
                index_dir=self.index_dir,
                folder=str(fetched.folder),
                damage=fetched.replaced,
            )
        if fetched is not None:
            log(
                logging.INFO,
                "index generation fetched",
                index_dir=self.index_dir,
                generation=fetched.generation,
                bytes=fetched.bytes,
                seconds=round(time.monotonic() - started, 3),
            )
        return fetched

    def unreachable(self, exc: Exception) -> None:
        """Log an outage of the store once, when it starts (every check until it ends fails alike)."""
        if self._down_since is not None:
            return
        self._down_since = time.monotonic()
        log(
            logging.WARNING,
            "the index store cannot be read; still serving the index fetched before (logged once; "
            "a line follows when the store answers again)",
            index_dir=self.index_dir,
            error=str(exc),
        )

    def answers(self) -> None:
        """Log the end of an outage logged by :meth:`unreachable`, with its length."""
        if self._down_since is None:
            return
        down = time.monotonic() - self._down_since
        self._down_since = None
        log(
            logging.INFO,
            "the index store answers again",
            index_dir=self.index_dir,
            seconds=round(down, 1),
        )

    def release_cache(self) -> None:
        """Give up the cache folder's lock: the next engine (or process) may own it."""
        lock, self._cache_lock = self._cache_lock, None
        if lock is not None:
            os.close(lock)


CACHE_LOCK_FILENAME = ".docs-mcp-cache.lock"


def lock_folder(folder: Path) -> int | None:
    """An open descriptor holding an exclusive ``flock`` on ``folder``'s cache lock file, or None when
    another process holds it (released by the kernel when this process ends)."""
    import fcntl

    fd = os.open(folder / CACHE_LOCK_FILENAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd
