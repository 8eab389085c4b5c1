"""The vector leg: embed the query, find its nearest chunks, and never fail a search doing it.

The query is embedded with the index's own provider, model and dimensions
(:func:`query_embedder`), on a small thread pool off LanceDB's event loop. Its nearest neighbours
come from the vectors held in memory (:class:`~docs_mcp_core.search.vector_matrix.VectorMatrix`)
when they fit a budget, else from a LanceDB vector query under the request's prefilter, tuned for
the table's ANN index.

When embedding or the vector query fails, the request gets no vector rows, one warning is logged
for the whole outage, and the leg rests for ``vector_cooldown_seconds``: queries in that window do
not call the embedding API at all (nor do queries that were waiting for an embedding thread when
it began), so an outage never costs every query the API timeout. After the
rest, one query at a time probes the API (the others stay lexical) until a probe succeeds, which
ends the outage.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.index.table import tune_vector_query
from docs_mcp_core.metadata import IndexMetadata
from docs_mcp_core.search.legs import EMPTY_LEG, Leg, Prefilter, leg_from_rows
from docs_mcp_core.search.options import QUERY_EMBEDDING_MAX_RETRIES, SearchOptions
from docs_mcp_core.search.row_catalog import RowCatalog
from docs_mcp_core.search.vector_matrix import VectorMatrix

if TYPE_CHECKING:
    from docs_mcp_core.embedding import EmbeddingProvider

__all__ = ["VectorLeg", "create_query_embedder"]

_log = logging.getLogger("docs_mcp_core.search")


class _Resting(Exception):
    """The vector leg began resting while this query waited to embed: it answers lexically."""


class VectorLeg:
    """Nearest neighbours of a query's embedding, with the outage cool-down described above."""

    def __init__(
        self,
        *,
        atable: Any,
        catalog: RowCatalog,
        embedder: EmbeddingProvider,
        ann_index: str | None,
        vectors: VectorMatrix | None,
        cooldown_seconds: float,
        on_warning: Callable[[str], None],
    ) -> None:
        self._atable = atable
        self._catalog = catalog
        self.embedder = embedder
        self.ann_index = ann_index  # the table's ANN index type, None when vector search is flat
        self.vectors = vectors  # held in memory, or None: LanceDB vector queries serve
        self._cooldown = cooldown_seconds
        self._warn = on_warning
        # the embedder's blocking calls (HTTP or ONNX) run here, off LanceDB's event loop
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docs-mcp-embed")
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._warned = False
        self._probing = False

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    async def nearest(self, text: str, prefilter: Prefilter, fetch: int) -> Leg:
        """The ``fetch`` chunks nearest to ``text`` that pass ``prefilter`` (empty while resting)."""
        with self._lock:
            if self._probing or time.monotonic() < self._down_until:
                return EMPTY_LEG
            probe = self._probing = self._warned  # degraded: this query is the only probe
        try:
            leg = await self._search(text, prefilter, fetch)
        except _Resting:
            if probe:
                with self._lock:
                    self._probing = False
            return EMPTY_LEG
        except Exception as exc:  # noqa: BLE001 - degrade to lexical search
            self._failed(exc)
            return EMPTY_LEG
        with self._lock:
            self._probing = False
            recovered = self._warned
            self._warned = False
        if recovered:
            _log.info("vector search recovered")
        return leg

    def _embed(self, text: str) -> list[float]:
        """The query's vector; :class:`_Resting` when an outage began while the query waited for a
        thread (queries that arrive together at its start would otherwise each wait out the API in
        turn: twenty of them took 20 x the timeout / 2 threads)."""
        with self._lock:
            if time.monotonic() < self._down_until:
                raise _Resting
        try:
            return self.embedder.embed([text])[0]
        except Exception:
            with self._lock:  # now, before this thread takes the next query (_failed runs later)
                self._down_until = time.monotonic() + self._cooldown
            raise

    async def _search(self, text: str, prefilter: Prefilter, fetch: int) -> Leg:
        loop = asyncio.get_running_loop()
        vector = await loop.run_in_executor(self._pool, self._embed, text)
        if not vector:
            return EMPTY_LEG
        if self.vectors is not None:
            return self.vectors.nearest(vector, mask=prefilter.mask, limit=fetch)
        builder = self._atable.query().nearest_to(list(vector)).column("vector").with_row_id()
        builder = tune_vector_query(builder, self.ann_index, fetch, prefilter.share)
        if prefilter.where:
            builder = builder.where(prefilter.where)
        rows = await builder.select(["_distance"]).limit(fetch).to_arrow()
        return leg_from_rows(self._catalog, rows, "_distance")

    def _failed(self, exc: Exception) -> None:
        cooldown = self._cooldown
        with self._lock:
            self._probing = False
            self._down_until = time.monotonic() + cooldown
            first = not self._warned
            self._warned = True
        if first:
            self._warn(f"vector search degraded to lexical-only: {exc}; retrying after {cooldown:g}s")
        else:
            _log.debug("vector search still unavailable: %s", exc)


def create_query_embedder(
    metadata: IndexMetadata, options: SearchOptions, warn: Callable[[str], None]
) -> EmbeddingProvider | None:
    """The provider that embeds queries: the index's own provider, model and dimensions.

    Queries use a short request timeout and at most one retry (with a short back-off), so one slow
    or failing API call costs a search little; the vector leg's cool-down keeps an outage from
    costing every search. Returns ``None``, after saying why once, when the index has no vectors
    that can be searched: an unknown provider, or ``openai`` without an API key (from
    ``query_embedding_api_key`` or ``OPENAI_API_KEY``).
    """
    info = metadata.embedding
    name = info.provider.strip().lower() if info is not None else "none"
    if info is None or name == "none":
        return None
    from docs_mcp_core.embedding import PROVIDER_NAMES, create_embedding_provider  # (a lexical index: never)

    label = f"{info.provider}/{info.model} ({info.dimensions} dimensions)"
    if name not in PROVIDER_NAMES:
        warn(
            f"embedding provider '{info.provider}' is not supported at runtime; falling back to FTS-only search"
        )
        return None
    key = (options.query_embedding_api_key or "").strip() or os.environ.get("OPENAI_API_KEY", "").strip()
    if name == "openai" and not key:
        warn(
            f"query embedding disabled: the index holds {label} vectors but no API key was given "
            "(set --query-embedding-api-key or OPENAI_API_KEY); searching lexically only"
        )
        return None
    try:
        return create_embedding_provider(
            name,
            model=info.model,
            dimensions=info.dimensions,
            api_key=key or None,
            base_url=options.query_embedding_base_url,
            max_retries=QUERY_EMBEDDING_MAX_RETRIES,
            concurrency=1,
            timeout=options.query_embedding_timeout_seconds,
            retry_base_delay=0.2,
            retry_max_delay=1.0,
            batch_api_threshold=0,
        )
    except EmbeddingError as exc:
        warn(f"query embedding disabled ({label}), searching lexically only: {exc}")
        return None
