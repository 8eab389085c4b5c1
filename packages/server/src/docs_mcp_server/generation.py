"""One opened generation of the served index, and a call's hold on it.

Every build the server switches to is a :class:`Generation`: its engine, the ``metadata.json`` it
was opened at, and the files that must stay readable while calls use it (a hard-linked snapshot of
a local folder, :mod:`docs_mcp_server.snapshot`, or the local copy of an object-store generation).
A call holds a :class:`Lease` on the generation it uses; a generation replaced by a newer one is
freed when the last lease on it is released (:class:`docs_mcp_server.engine.LazyEngine` counts them).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from docs_mcp_server.logs import log
from docs_mcp_server.snapshot import Snapshot, remove_snapshot

if TYPE_CHECKING:
    from docs_mcp_core.index.replica import FetchedGeneration
    from docs_mcp_core.search import SearchEngine


class Generation:
    """One opened index: its engine, the ``metadata.json`` identity it was opened at, its snapshot
    (None when opened in place) or local copy of an object-store generation, and how many calls
    hold it."""

    def __init__(
        self,
        number: int,
        engine: SearchEngine,
        stamp: tuple[int, int, int] | None,
        snapshot: Snapshot | None,
        *,
        copy: FetchedGeneration | None = None,
    ) -> None:
        self.number = number
        self.engine = engine
        self.stamp = stamp
        self.snapshot = snapshot
        self.copy = copy
        self.users = 0
        self.retired = False
        # a process that ends without close() still removes the snapshot (atexit); close() is prompter
        self._cleanup = weakref.finalize(self, remove_snapshot, snapshot.path) if snapshot else None
        if copy is not None:
            from docs_mcp_core.index.replica import remove_fetched

            self._cleanup = weakref.finalize(self, remove_fetched, copy.folder)

    @property
    def etag(self) -> str | None:
        """Version tag of the object store's ``metadata.json`` this generation was fetched for."""
        return self.copy.etag if self.copy is not None else None

    def keep_files(self) -> None:
        """Leave this generation's local copy in place when it is freed (a cache folder given by flag)."""
        if self._cleanup is not None and self.copy is not None:
            self._cleanup.detach()
            self._cleanup = None

    def free(self) -> None:
        self.engine.close()
        if self._cleanup is not None:
            self._cleanup()


class Lease:
    """A call's hold on one generation of the index: its files stay readable until :meth:`release`.

    Use it as a context manager (``with lazy.lease() as engine: ...``).
    """

    def __init__(self, release: Callable[[Generation], None], generation: Generation) -> None:
        """``release`` is called once, with the generation, when the call lets go of it."""
        self._release = release
        self._generation: Generation | None = generation
        self.engine = generation.engine
        self.generation = generation.number  # increases with every reload

    def release(self) -> None:
        generation, self._generation = self._generation, None
        if generation is not None:
            self._release(generation)

    def __enter__(self) -> SearchEngine:
        return self.engine

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def prime(fresh: Generation, current: Generation, index_dir: str) -> None:
    """Run a first query on a generation about to replace ``current``, and warn of a new taxonomy."""
    try:
        fresh.engine.warm()  # the first query on it is as fast as the rest
    except Exception as exc:  # noqa: BLE001 - a failed priming query is reported by real ones
        log(logging.DEBUG, "warm-up query failed", error=str(exc))
    if fresh.engine.metadata.taxonomy != current.engine.metadata.taxonomy:
        log(
            logging.WARNING,
            "the rebuilt index has a different taxonomy; restart the server to update the "
            "tools' filter enums",
            index_dir=index_dir,
        )
