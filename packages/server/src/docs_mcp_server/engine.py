"""Opening the search engine lazily, once, off the protocol's critical path.

Importing LanceDB costs well over a second, so the server answers the MCP handshake and lists its
tools without it; the engine is opened by the first call that needs it (or earlier by
:meth:`LazyEngine.start_warm_up`, which the command line starts as soon as the server is up), behind a
lock so concurrent first calls open it only once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docs_mcp_server.logs import log

if TYPE_CHECKING:
    from docs_mcp_core.search import SearchEngine


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

    @property
    def state(self) -> str:
        """``"ready"``, ``"failed"``, ``"loading"`` (warm-up running) or ``"idle"``."""
        if self._engine is not None:
            return "ready"
        if self._error is not None:
            return "failed"
        return "loading" if self._warm_up is not None and self._warm_up.is_alive() else "idle"

    def opened(self) -> SearchEngine | None:
        """The engine if it is already open (never blocks, never opens it)."""
        return self._engine

    def get(self) -> SearchEngine:
        """The open engine; opens it on first use. Raises :class:`IndexUnavailableError`."""
        engine = self._engine
        if engine is not None:
            return engine
        with self._lock:
            if self._engine is None and self._error is None:
                self._open()
            if self._error is not None:
                raise self._error
            assert self._engine is not None
            return self._engine

    def _open(self) -> None:
        os.environ.setdefault("LANCEDB_LOG", "error")
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
