"""Opening the search engine lazily, once, off the protocol's critical path.

Importing LanceDB costs well over a second, so the server answers the MCP handshake and lists its
tools without it; the engine is opened by the first call that needs it (or earlier by
:meth:`LazyEngine.start_warm_up`, which the command line starts as soon as the server is up), behind a
lock so concurrent first calls open it only once.

A local index folder that is rebuilt while the server runs (``docs-mcp build`` into the folder being
served) is picked up without a restart: ``metadata.json`` is written last by every build, so when its
file identity changes the next call opens the new index (and primes it) while every other call keeps
being served by the old one, then swaps it in. Each generation is opened from a hard-linked snapshot
(:mod:`docs_mcp_server.snapshot`) and calls hold a lease on the generation they use
(:mod:`docs_mcp_server.generation`), so the old generation's files stay readable until the last call
using them has finished, however the build moves or deletes its copies. If the new index cannot be
opened the old one keeps serving.

An object-store index (``s3://bucket/prefix``) is served from a local copy of the generation its
``metadata.json`` names (:mod:`docs_mcp_server.store_copies`), fetched when the index is opened, so
no call waits on the store. A background thread then asks the store every ``reload_interval`` seconds
whether ``metadata.json`` changed (one conditional request); when a new build was published it fetches
the new generation, opens and primes it, and switches to it the same way as a local rebuild: calls
keep being served by the previous generation until the new one is ready, and the previous copy is
deleted once the last call holding it has finished.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docs_mcp_server.errors import IndexUnavailableError
from docs_mcp_server.generation import Generation, Lease, prime
from docs_mcp_server.logs import log
from docs_mcp_server.snapshot import remove_stale_snapshots, take_snapshot, take_view
from docs_mcp_server.store_copies import StoreCopies

if TYPE_CHECKING:
    from docs_mcp_core.index.replica import FetchedGeneration
    from docs_mcp_core.metadata import IndexMetadata
    from docs_mcp_core.search import SearchEngine, SearchOptions


RELOAD_CHECK_SECONDS = 1.0  # how often a call looks at metadata.json (DOCS_MCP_RELOAD_CHECK_SECONDS)
REMOTE_RELOAD_SECONDS = 30.0  # how often an object store's metadata.json is checked, by default


def _reload_check_seconds() -> float:
    raw = os.environ.get("DOCS_MCP_RELOAD_CHECK_SECONDS", "").strip()
    try:
        return max(0.0, float(raw)) if raw else RELOAD_CHECK_SECONDS
    except ValueError:
        return RELOAD_CHECK_SECONDS


class LazyEngine:
    """A :class:`docs_mcp_core.search.SearchEngine` opened on first use (thread-safe)."""

    def __init__(
        self,
        index_dir: Path | str,
        *,
        search_options: SearchOptions | Callable[[], SearchOptions] | None = None,
        on_warning: Callable[[str], None] | None = None,
        storage_options: Mapping[str, str] | None = None,
        reload_interval: float | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        """``reload_interval``: seconds between checks of an object store's ``metadata.json`` for a
        new build (0: never; default :data:`REMOTE_RELOAD_SECONDS`; a folder is checked by calls, at
        most every ``DOCS_MCP_RELOAD_CHECK_SECONDS``). ``cache_dir``: where an object-store index's
        generations are copied (default: a temporary folder removed at exit). ``search_options``
        may be a function giving them, called when the index first opens (building them imports
        the engine, which a server starting up does off the protocol's critical path)."""
        self.index_dir = index_dir  # a folder or an object-store URI
        self._storage_options = dict(storage_options) if storage_options else None
        self._search_options = search_options
        self._on_warning = on_warning or (lambda message: log(logging.WARNING, message))
        self._lock = threading.Lock()  # opening and reloading
        self._users_lock = threading.Lock()  # leases and retirement
        self._current: Generation | None = None
        self._numbers = itertools.count(1)
        self._error: IndexUnavailableError | None = None
        self._warm_up: threading.Thread | None = None
        self._sweep: threading.Thread | None = None  # removes the snapshots of killed servers, once
        self._failed_stamp: tuple[int, int, int] | None = None
        self._reload_due = False  # a change was seen; the next get() reloads (opened() defers to it)
        self._next_check = 0.0
        self._local = self._local_folder()
        if self._local is not None:
            self._check_every = _reload_check_seconds()  # a stat() per call at most this often
        else:
            self._check_every = (
                REMOTE_RELOAD_SECONDS if reload_interval is None else max(0.0, reload_interval)
            )
        self._copies = StoreCopies(str(index_dir), storage_options, cache_dir)
        self._follower: threading.Thread | None = None
        self._stop = threading.Event()

    def _options(self) -> SearchOptions | None:
        given = self._search_options
        if callable(given):
            given = self._search_options = given()
        return given

    def _local_folder(self) -> Path | None:
        from docs_mcp_core.index.location import is_uri

        return None if is_uri(str(self.index_dir)) else Path(self.index_dir)

    @property
    def state(self) -> str:
        """``"ready"``, ``"failed"``, ``"loading"`` (warm-up running) or ``"idle"``."""
        if self._current is not None:
            return "ready"
        if self._error is not None:
            return "failed"
        return "loading" if self._warm_up is not None and self._warm_up.is_alive() else "idle"

    @property
    def served_generation(self) -> dict[str, Any] | None:
        """What ``/healthz`` reports of the generation served: its number in this process (1 at
        start, one more per switch), the table it reads (``index.path``) and, for an object store,
        the ``metadata.json`` version it was fetched for. None before the index is open."""
        current = self._current
        if current is None:
            return None
        info: dict[str, Any] = {"number": current.number, "path": current.engine.metadata.index.path}
        if current.copy is not None:
            info["etag"] = current.copy.etag
        return info

    @property
    def served_metadata(self) -> IndexMetadata | None:
        """The metadata of the generation being served (None before the index is open)."""
        current = self._current
        return current.engine.metadata if current is not None else None

    def opened(self) -> SearchEngine | None:
        """The engine if it is open and current (never blocks, never opens it)."""
        current = self._current
        if current is None or self._rebuilt(current):
            return None
        return current.engine

    def get(self) -> SearchEngine:
        """The open engine; opens it on first use. Raises :class:`IndexUnavailableError`.

        Calls that may overlap a reload should hold a :meth:`lease` instead.
        """
        return self._generation().engine

    def lease(self) -> Lease:
        """Hold the current generation (opening the index on first use); release it when done.

        Raises :class:`IndexUnavailableError`.
        """
        while True:
            generation = self._generation()
            with self._users_lock:
                if not generation.retired:  # else a reload replaced it meanwhile: take the new one
                    generation.users += 1
                    return Lease(self._release, generation)

    def try_lease(self) -> Lease | None:
        """A lease on the current generation if it is open and current (never blocks)."""
        current = self._current
        if current is None or self._rebuilt(current):
            return None
        with self._users_lock:
            if current.retired:
                return None
            current.users += 1
        return Lease(self._release, current)

    def wait_swept(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the removal of killed servers' snapshots, which
        the index's opening starts in the background."""
        if self._sweep is not None:
            self._sweep.join(timeout)

    def close(self) -> None:
        """Stop serving: the current generation is released once no call holds it."""
        self._stop.set()
        follower = self._follower
        if follower is not None and follower is not threading.current_thread():
            follower.join(timeout=30)
        with self._lock:
            current, self._current = self._current, None
        if current is not None:
            if self._copies.keep_files:
                current.keep_files()  # the next start on this cache folder reuses it
            self._retire(current)
        self._copies.release_cache()

    def _generation(self) -> Generation:
        current = self._current
        if current is not None:
            if self._rebuilt(current):
                return self._reload(current)
            return current
        with self._lock:
            if self._current is None and self._error is None:
                self._open()
            if self._error is not None:
                raise self._error
            assert self._current is not None
            return self._current

    def _release(self, generation: Generation) -> None:
        with self._users_lock:
            generation.users -= 1
            unused = generation.retired and generation.users == 0
        if unused:
            self._free(generation)

    def _retire(self, generation: Generation) -> None:
        with self._users_lock:
            generation.retired = True
            unused = generation.users == 0
        if unused:
            self._free(generation)

    def _free(self, generation: Generation) -> None:
        generation.free()
        log(logging.DEBUG, "previous index generation released", index_dir=str(self.index_dir))

    # -- picking up a rebuilt index -------------------------------------------------------------

    def _metadata_stamp(self) -> tuple[int, int, int] | None:
        """Identity of the local ``metadata.json`` (None for object stores or when unreadable)."""
        if self._local is None:
            return None
        from docs_mcp_core.index.live_files import live_files

        try:
            st = os.stat(self._local / live_files(self._local).metadata)  # mid-swap: the new one's
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_ino, st.st_size)

    def _rebuilt(self, current: Generation) -> bool:
        """Whether ``metadata.json`` changed since ``current`` was opened (looked at most every
        :data:`RELOAD_CHECK_SECONDS`; a change seen stays due until :meth:`_reload` handles it)."""
        if current.stamp is None:
            return False
        if self._reload_due:
            return True
        now = time.monotonic()
        if now < self._next_check:
            return False
        self._next_check = now + self._check_every
        stamp = self._metadata_stamp()
        self._reload_due = stamp is not None and stamp != current.stamp and stamp != self._failed_stamp
        return self._reload_due

    def _reload(self, current: Generation) -> Generation:
        if not self._lock.acquire(blocking=False):
            return current  # another call is opening the new index: this one is served by the old
        try:
            self._reload_due = False
            if self._current is not current:  # another call reloaded it meanwhile
                return self._current or current
            stamp = self._metadata_stamp()
            if stamp is None or stamp == current.stamp:
                return current
            try:
                fresh = self._open_generation()
            except Exception as exc:  # noqa: BLE001 - keep serving the index that works
                self._failed_stamp = stamp
                log(
                    logging.ERROR,
                    "the index was rebuilt but the new one cannot be opened; still serving the previous one",
                    index_dir=str(self.index_dir),
                    error=f"{type(exc).__name__}: {exc}",
                )
                return current
            prime(fresh, current, str(self.index_dir))
            self._current, self._failed_stamp = fresh, None
        finally:
            self._lock.release()
        self._switched(fresh, current)
        return fresh

    def _switched(self, fresh: Generation, previous: Generation) -> None:
        log(
            logging.INFO,
            "search index reloaded",
            index_dir=str(self.index_dir),
            chunks=fresh.engine.metadata.stats.total_chunks,
            indexed_at=fresh.engine.metadata.stats.indexed_at,
            generation=fresh.engine.metadata.index.path,
        )
        self._retire(previous)  # freed now, or by the last call still holding it

    # -- following an object store's publishes --------------------------------------------------

    def _start_following(self) -> None:
        if self._local is not None or self._check_every <= 0 or self._follower is not None:
            return
        self._follower = threading.Thread(target=self._follow, name="docs-mcp-index-follower", daemon=True)
        self._follower.start()

    def _follow(self) -> None:
        """Every ``reload_interval`` seconds: switch to the generation a new build published."""
        from docs_mcp_core.errors import StoreUnreachableError

        while not self._stop.wait(self._check_every):
            current = self._current
            if current is None:
                return
            try:
                self._follow_once(current)
            except StoreUnreachableError as exc:
                self._copies.unreachable(exc)
                continue
            except Exception as exc:  # noqa: BLE001 - keep serving; the next check tries again
                log(
                    logging.ERROR,
                    "a new index was published but cannot be fetched or opened; still serving the "
                    "previous one",
                    index_dir=str(self.index_dir),
                    error=f"{type(exc).__name__}: {exc}",
                )
            self._copies.answers()

    def _follow_once(self, current: Generation) -> None:
        fetched = self._copies.fetch(current.etag)
        if fetched is None:
            return  # metadata.json unchanged
        if current.copy is not None and fetched.folder == current.copy.folder:
            current.copy = fetched  # same table (metadata.json rewritten): nothing to switch
            return
        fresh = self._open_copy(fetched)
        prime(fresh, current, str(self.index_dir))
        with self._lock:
            if self._current is not current or self._stop.is_set():
                fresh.free()
                return
            self._current = fresh
        self._switched(fresh, current)

    def _open_generation(self) -> Generation:
        """Open the index as it is now: from a fresh snapshot when possible, else in place."""
        from docs_mcp_core.search import SearchEngine

        def open_at(where: Path | str) -> SearchEngine:
            return SearchEngine.open(
                where,
                options=self._options(),
                on_warning=self._on_warning,
                storage_options=self._storage_options,
            )

        if self._local is None:
            fetched = self._copies.fetch(None)
            assert fetched is not None
            return self._open_copy(fetched)
        snapshot = take_snapshot(self._local)
        if snapshot is not None:
            try:
                stamp = snapshot.stamp()
                return Generation(next(self._numbers), open_at(snapshot.path), stamp, snapshot)
            except Exception:  # noqa: BLE001 - opened in place below, for the error to name the real folder
                snapshot.remove()
        stamp = self._metadata_stamp()  # taken first: a build finishing meanwhile is seen next time
        view = take_view(self._local)  # a folder left mid-swap, where links cannot be made
        if view is not None:
            try:
                return Generation(next(self._numbers), open_at(view.path), stamp, view)
            except BaseException:
                view.remove()
                raise
        return Generation(next(self._numbers), open_at(self.index_dir), stamp, None)

    def _open_copy(self, fetched: FetchedGeneration) -> Generation:
        """Open the local copy of an object-store generation. A copy that cannot be opened is removed
        and fetched again once (a file damaged on disk), then opened or the error raised."""
        try:
            return self._open_fetched(fetched)
        except Exception as exc:  # noqa: BLE001 - fetched again below; a second failure is raised
            log(
                logging.WARNING,
                "the local copy of the index cannot be opened; fetching it again",
                index_dir=str(self.index_dir),
                folder=str(fetched.folder),
                error=f"{type(exc).__name__}: {exc}",
            )
        again = self._copies.fetch(None)
        assert again is not None
        return self._open_fetched(again)

    def _open_fetched(self, fetched: FetchedGeneration) -> Generation:
        """Open a local copy (removed again if it cannot be opened)."""
        from docs_mcp_core.index.replica import remove_fetched
        from docs_mcp_core.search import SearchEngine

        engine = None
        try:
            engine = SearchEngine.open(fetched.folder, options=self._options(), on_warning=self._on_warning)
            engine.read_table()  # a copy's data file damaged before its checksum was taken fails here
        except BaseException:
            if engine is not None:
                engine.close()
            remove_fetched(fetched.folder)
            raise
        return Generation(next(self._numbers), engine, None, None, copy=fetched)

    def _open(self) -> None:
        os.environ.setdefault("LANCEDB_LOG", "error")
        from docs_mcp_core.errors import DocsMcpError

        if self._local is not None:
            _log_mid_swap(self._local)
        try:
            self._current = self._open_generation()
        except DocsMcpError as exc:
            self._error = IndexUnavailableError(str(exc))
        except Exception as exc:  # noqa: BLE001 - lancedb/pyarrow failures: a damaged or incompatible index
            self._error = IndexUnavailableError(
                f"The search index at '{self.index_dir}' could not be opened ({type(exc).__name__}: {exc}). "
                "Re-run docs-mcp build to regenerate it."
            )
        if self._local is not None:  # what killed servers left, removed off the way to the first answer
            self._sweep = threading.Thread(
                target=remove_stale_snapshots, args=(self._local,), name="docs-mcp-sweep", daemon=True
            )
            self._sweep.start()
        if self._error is not None:
            log(
                logging.ERROR,
                "search index unavailable",
                index_dir=str(self.index_dir),
                error=str(self._error),
            )
            return
        assert self._current is not None
        self._next_check = time.monotonic() + self._check_every
        self._start_following()
        engine = self._current.engine
        embedding = engine.metadata.embedding
        log(
            logging.INFO if engine.vector_search_enabled else logging.DEBUG,
            "search index opened",
            index_dir=str(self.index_dir),
            vector_search=(
                f"{embedding.provider}/{embedding.model}"
                if embedding is not None and engine.vector_search_enabled
                else "off"
            ),
            snapshot=self._current.snapshot is not None,
        )

    def start_warm_up(self) -> None:
        """Open the engine in a background thread (idempotent)."""
        with self._lock:
            if self._warm_up is not None or self._current is not None:
                return
            self._warm_up = threading.Thread(target=self._warm, name="docs-mcp-engine-warm-up", daemon=True)
            self._warm_up.start()

    def _warm(self) -> None:
        # a failure to open is already logged, and calls will report it
        with contextlib.suppress(IndexUnavailableError), self.lease() as engine:
            try:
                engine.warm()
            except Exception as exc:  # noqa: BLE001 - a failed priming query is reported by real ones
                log(logging.DEBUG, "warm-up query failed", error=str(exc))

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait for a started warm-up to finish; True when the engine is ready."""
        thread = self._warm_up
        if thread is not None:
            thread.join(timeout)
        return self._current is not None


def _log_mid_swap(folder: Path) -> None:
    """Say so when ``folder`` was left mid-swap by a build (the complete index there is served)."""
    from docs_mcp_core.index.live_files import OLD_TABLE_DIRNAME, live_files

    files = live_files(folder)
    if files.mid_swap:
        log(
            logging.WARNING,
            "the index folder was left mid-swap by a build that was stopped; serving the "
            + ("previous" if files.table == OLD_TABLE_DIRNAME else "new")
            + " complete index from it as it is; the next docs-mcp build finishes or undoes the swap",
            index_dir=str(folder),
            table=files.table,
            metadata=files.metadata,
        )
