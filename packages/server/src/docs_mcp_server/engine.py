"""Opening the search engine lazily, once, off the protocol's critical path.

Importing LanceDB costs well over a second, so the server answers the MCP handshake and lists its
tools without it; the engine is opened by the first call that needs it (or earlier by
:meth:`LazyEngine.start_warm_up`, which the command line starts as soon as the server is up), behind a
lock so concurrent first calls open it only once.

A local index folder that is rebuilt while the server runs (``docs-mcp build`` into the folder being
served) is picked up without a restart: ``metadata.json`` is written last by every build, so when its
file identity changes the next call opens the new index and swaps it in; calls already running
finish on the old one. If the new index cannot be opened the old one keeps serving.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docs_mcp_server.logs import log

if TYPE_CHECKING:
    from docs_mcp_core.search import SearchEngine


RELOAD_CHECK_SECONDS = 1.0  # how often a call looks at metadata.json (DOCS_MCP_RELOAD_CHECK_SECONDS)


def _reload_check_seconds() -> float:
    raw = os.environ.get("DOCS_MCP_RELOAD_CHECK_SECONDS", "").strip()
    try:
        return max(0.0, float(raw)) if raw else RELOAD_CHECK_SECONDS
    except ValueError:
        return RELOAD_CHECK_SECONDS


class IndexUnavailableError(RuntimeError):
    """The index could not be opened; the message is shown to clients as an ``isError`` text."""


class LazyEngine:
    """A :class:`docs_mcp_core.search.SearchEngine` opened on first use (thread-safe)."""

    def __init__(
        self,
        index_dir: Path | str,
        *,
        search_options: dict[str, Any] | None = None,
        on_warning: Callable[[str], None] | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        self.index_dir = index_dir  # a folder or an object-store URI
        self._storage_options = dict(storage_options) if storage_options else None
        self._search_options = {k: v for k, v in (search_options or {}).items() if v is not None}
        self._on_warning = on_warning or (lambda message: log(logging.WARNING, message))
        self._lock = threading.Lock()
        self._engine: SearchEngine | None = None
        self._error: IndexUnavailableError | None = None
        self._warm_up: threading.Thread | None = None
        self._stamp: tuple[int, int, int] | None = None  # metadata.json identity of the open engine
        self._failed_stamp: tuple[int, int, int] | None = None
        self._reload_due = False  # a change was seen; the next get() reloads (opened() defers to it)
        self._next_check = 0.0
        self._check_every = _reload_check_seconds()

    @property
    def state(self) -> str:
        """``"ready"``, ``"failed"``, ``"loading"`` (warm-up running) or ``"idle"``."""
        if self._engine is not None:
            return "ready"
        if self._error is not None:
            return "failed"
        return "loading" if self._warm_up is not None and self._warm_up.is_alive() else "idle"

    def opened(self) -> SearchEngine | None:
        """The engine if it is open and current (never blocks, never opens it)."""
        engine = self._engine
        if engine is None or self._rebuilt():
            return None
        return engine

    def get(self) -> SearchEngine:
        """The open engine; opens it on first use. Raises :class:`IndexUnavailableError`."""
        engine = self._engine
        if engine is not None:
            if self._rebuilt():
                return self._reload(engine)
            return engine
        with self._lock:
            if self._engine is None and self._error is None:
                self._open()
            if self._error is not None:
                raise self._error
            assert self._engine is not None
            return self._engine

    # -- picking up a rebuilt index -------------------------------------------------------------

    def _metadata_stamp(self) -> tuple[int, int, int] | None:
        """Identity of the local ``metadata.json`` (None for object stores or when unreadable)."""
        from docs_mcp_core.storage import is_uri

        if is_uri(str(self.index_dir)):
            return None
        try:
            st = os.stat(Path(self.index_dir) / "metadata.json")
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_ino, st.st_size)

    def _rebuilt(self) -> bool:
        """Whether ``metadata.json`` changed since the engine was opened (looked at most every
        :data:`RELOAD_CHECK_SECONDS`; a change seen stays due until :meth:`_reload` handles it)."""
        if self._stamp is None:
            return False
        if self._reload_due:
            return True
        now = time.monotonic()
        if now < self._next_check:
            return False
        self._next_check = now + self._check_every
        stamp = self._metadata_stamp()
        self._reload_due = stamp is not None and stamp != self._stamp and stamp != self._failed_stamp
        return self._reload_due

    def _reload(self, current: SearchEngine) -> SearchEngine:
        from docs_mcp_core.search import SearchEngine, SearchOptions

        with self._lock:
            self._reload_due = False
            if self._engine is not current:  # another call reloaded it meanwhile
                return self._engine or current
            stamp = self._metadata_stamp()
            if stamp is None or stamp == self._stamp:
                return current
            try:
                fresh = SearchEngine.open(
                    self.index_dir,
                    options=SearchOptions(**self._search_options),
                    on_warning=self._on_warning,
                    storage_options=self._storage_options,
                )
            except Exception as exc:  # noqa: BLE001 - keep serving the index that works
                self._failed_stamp = stamp
                log(
                    logging.ERROR,
                    "the index was rebuilt but the new one cannot be opened; still serving the previous one",
                    index_dir=str(self.index_dir),
                    error=f"{type(exc).__name__}: {exc}",
                )
                return current
            if fresh.metadata.taxonomy != current.metadata.taxonomy:
                log(
                    logging.WARNING,
                    "the rebuilt index has a different taxonomy; restart the server to update the "
                    "tools' filter enums",
                    index_dir=str(self.index_dir),
                )
            self._engine, self._stamp, self._failed_stamp = fresh, stamp, None
            log(
                logging.INFO,
                "search index reloaded",
                index_dir=str(self.index_dir),
                chunks=fresh.metadata.stats.total_chunks,
            )
            return fresh

    def _open(self) -> None:
        os.environ.setdefault("LANCEDB_LOG", "error")
        stamp = self._metadata_stamp()  # taken first: a build finishing meanwhile is seen next time
        from docs_mcp_core.errors import DocsMcpError
        from docs_mcp_core.search import SearchEngine, SearchOptions

        try:
            options = SearchOptions(**self._search_options)
            self._engine = SearchEngine.open(
                self.index_dir,
                options=options,
                on_warning=self._on_warning,
                storage_options=self._storage_options,
            )
        except DocsMcpError as exc:
            self._error = IndexUnavailableError(str(exc))
        except Exception as exc:  # noqa: BLE001 - lancedb/pyarrow failures: a damaged or incompatible index
            self._error = IndexUnavailableError(
                f"The search index at '{self.index_dir}' could not be opened ({type(exc).__name__}: {exc}). "
                "Re-run docs-mcp build to regenerate it."
            )
        if self._error is not None:
            log(
                logging.ERROR,
                "search index unavailable",
                index_dir=str(self.index_dir),
                error=str(self._error),
            )
        else:
            assert self._engine is not None
            self._stamp = stamp
            self._next_check = time.monotonic() + self._check_every
            embedding = self._engine.metadata.embedding
            log(
                logging.INFO if self._engine.vector_search_enabled else logging.DEBUG,
                "search index opened",
                index_dir=str(self.index_dir),
                vector_search=(
                    f"{embedding.provider}/{embedding.model}"
                    if embedding is not None and self._engine.vector_search_enabled
                    else "off"
                ),
            )

    def start_warm_up(self) -> None:
        """Open the engine in a background thread (idempotent)."""
        with self._lock:
            if self._warm_up is not None or self._engine is not None:
                return
            self._warm_up = threading.Thread(target=self._warm, name="docs-mcp-engine-warm-up", daemon=True)
            self._warm_up.start()

    def _warm(self) -> None:
        with contextlib.suppress(IndexUnavailableError):  # already logged; calls will report it
            engine = self.get()
            try:
                engine.warm()
            except Exception as exc:  # noqa: BLE001 - a failed priming query is reported by real ones
                log(logging.DEBUG, "warm-up query failed", error=str(exc))

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait for a started warm-up to finish; True when the engine is ready."""
        thread = self._warm_up
        if thread is not None:
            thread.join(timeout)
        return self._engine is not None
