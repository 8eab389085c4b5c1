"""Hybrid search over a docs-mcp index: full-text match, phrase proximity and vectors, fused by rank.

Usage::

    engine = SearchEngine.open("./idx")
    result = engine.search("retry configuration", limit=10, filters={"language": "python"})
    result.to_dict()  # {"hits": [...], "next_cursor": str | None, "hint": {...} | None}
    text = engine.get_doc("guides/retries.md#backoff", context=1)

The engine opens the index read-only and never writes to it. ``search`` and ``get_doc`` are
synchronous and thread-safe; code on an asyncio loop awaits ``search_async`` / ``get_doc_async``
instead, with no thread hop. The retrievers are LanceDB queries that return only row ids and
scores; every row's ranking attributes (and, within a memory budget, its display text) are read
once at open into a :class:`~docs_mcp_core.row_catalog.RowCatalog`, so fusion and the page of hits
are array operations. Failures a caller can cause raise :class:`~docs_mcp_core.errors.SearchError`,
whose message is the text MCP clients receive.

The default ranking is described in :mod:`docs_mcp_core.ranking` and ``docs/ranking.md``.

Ranking (the original's recipe): three retrievers run with the same prefilter, each returning up
to ``max(offset + limit + 200, 5 * limit)`` rows (at most 5000): a BM25 multi-match over
``heading`` (boost 3) and ``content_text``; a phrase query over ``content_text`` (slop 0-5); and,
when the index has vectors, a nearest-neighbour search. Their ranks are fused with weighted
reciprocal-rank fusion (k = 60; weights 1, ``proximity_weight``, ``vector_weight``), near-identical
hits that differ only by a collapse key (e.g. the same method in three SDK languages) are collapsed
when that key is not filtered, and the page is cut from the fused list.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core import row_catalog
from docs_mcp_core.cursor import CursorPosition, decode_cursor, default_cursor_secret, encode_cursor
from docs_mcp_core.errors import SearchError
from docs_mcp_core.filters import filter_mask, matches_filters, where_clause
from docs_mcp_core.index.table import (
    DEDUP_COLUMN,
    PRIOR_COLUMN,
    SEARCH_TEXT_COLUMNS,
    quote_string,
    tune_vector_query,
    vector_index_type,
)
from docs_mcp_core.lexical_index import LANCEDB_SCORING, ORIGINAL_SCORING, LexicalIndex
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.metadata import IndexMetadata, collapse_keys
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.ranking import (
    COVERAGE_DEPTH,
    COVERAGE_TEXT_CHARS,
    RankingWeights,
    coverage_factor,
    coverage_terms,
    expand_identifiers,
    query_cues,
)
from docs_mcp_core.row_catalog import RowCatalog, first_of_each_group
from docs_mcp_core.snippet import make_snippet
from docs_mcp_core.vector_matrix import VectorMatrix, vector_cache_bytes

if TYPE_CHECKING:
    from docs_mcp_core.embedding import EmbeddingProvider

RRF_K = 60
RANKINGS = ("default", "original")
MATCH_RETRIEVERS = ("memory", "lancedb")
PHRASE_COLUMN = "content_text"
ORIGINAL_MATCH_BOOSTS = {"heading": 3.0, "content_text": 1.0}  # the original recipe's multi-match
_LEG_ORDER = ("match", "phrase", "vector")  # fusion sums the legs in this order
MAX_FETCH = 5000
DEFAULT_POOL = 200  # rows per retriever for pages within the first 200 results (docs/ranking.md)
MAX_QUERY_TERMS = 64
VECTOR_COOLDOWN_SECONDS = 60.0
QUERY_EMBEDDING_TIMEOUT_SECONDS = 5.0  # per request; a query never waits on a slow embedding API for long
QUERY_EMBEDDING_MAX_RETRIES = 1
_CHUNK_ID_RE = re.compile(r"^(?!\s)([^#\s]+)(#[^#\s]+)?$")
_COVERAGE_COLUMNS = ("heading", "breadcrumb", "filepath", "content_text")
_HIT_COLUMNS = ("chunk_id", "heading", "breadcrumb", "content_text", "filepath", "metadata_json")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchOptions:
    """Ranking and runtime knobs of the engine (server flags map onto these)."""

    proximity_weight: float = 1.25
    phrase_slop: int = 0
    vector_weight: float = 1.0
    match_weight: float = 1.0
    cursor_secret: str | None = None
    ranking: str = "default"  # "default" (ours, see ranking.py) or "original" (the upstream recipe)
    query_embedding_api_key: str | None = None
    query_embedding_base_url: str | None = None
    vector_cooldown_seconds: float = VECTOR_COOLDOWN_SECONDS
    query_embedding_timeout_seconds: float = QUERY_EMBEDDING_TIMEOUT_SECONDS
    # the match and phrase retrievers: "memory" (lexical_index.py, the scores of the ranking's
    # LanceDB without a LanceDB query) or "lancedb" (the table's full-text indexes)
    match_retriever: str = "memory"


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    heading: str
    breadcrumb: str
    snippet: str
    filepath: str
    metadata: dict[str, str]
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "heading": self.heading,
            "breadcrumb": self.breadcrumb,
            "snippet": self.snippet,
            "filepath": self.filepath,
            "metadata": dict(self.metadata),
            "score": self.score,
        }


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    next_cursor: str | None
    hint: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.to_dict() for h in self.hits],
            "next_cursor": self.next_cursor,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class _Ranked:
    """A fused ranking: catalog positions, best first, and their (rounded) scores."""

    positions: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def keep(self, mask: np.ndarray) -> _Ranked:
        return _Ranked(self.positions[mask], self.scores[mask])


_Leg = tuple[np.ndarray, np.ndarray]  # (catalog positions in the leg's order, raw scores or distances)
_EMPTY_LEG: _Leg = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))


def clamp_limit(limit: Any) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool):
        return 10
    return max(1, min(50, limit))


def is_chunk_id_format(chunk_id: str) -> bool:
    return _CHUNK_ID_RE.match(chunk_id) is not None


def _lexical_query_text(query: str) -> str:
    text = query.replace("\0", " ")
    words = text.split()
    if len(words) > MAX_QUERY_TERMS:
        text = " ".join(words[:MAX_QUERY_TERMS])
    return text


class SearchEngine:
    """Read-only engine over ``<index_dir>/metadata.json`` + ``<index_dir>/.lancedb``."""

    def __init__(
        self,
        *,
        metadata: IndexMetadata,
        table: Any,
        options: SearchOptions,
        secret: bytes,
        on_warning: Callable[[str], None],
        query_embedder: EmbeddingProvider | None,
    ) -> None:
        self.metadata = metadata
        self._table = table
        self.options = options
        self._secret = secret
        self._warn = on_warning
        self._embedder = query_embedder
        self._taxonomy_keys = list(metadata.taxonomy)
        self._collapse_keys = collapse_keys(metadata.taxonomy)
        self._columns = set(table.schema.names)
        self._has_vectors = "vector" in self._columns and query_embedder is not None
        self._ranked_columns = all(c in self._columns for c in (*SEARCH_TEXT_COLUMNS, PRIOR_COLUMN))
        self._dedup = DEDUP_COLUMN in self._columns
        if options.ranking not in RANKINGS:
            raise ValueError(f"unknown ranking '{options.ranking}'. Valid rankings: {', '.join(RANKINGS)}")
        if options.match_retriever not in MATCH_RETRIEVERS:
            raise ValueError(
                f"unknown match retriever '{options.match_retriever}'. "
                f"Valid retrievers: {', '.join(MATCH_RETRIEVERS)}"
            )
        self._weights = RankingWeights(phrase=options.proximity_weight, vector=options.vector_weight * 0.5)
        # the default ranking needs the search columns; an index without them gets the original recipe
        self._default = options.ranking == "default" and self._ranked_columns
        w = self._weights
        self._match_boosts: dict[str, float] = (
            dict(zip(SEARCH_TEXT_COLUMNS, (w.heading, w.text, w.path), strict=True))
            if self._default
            else ORIGINAL_MATCH_BOOSTS
        )
        # the query embedder's blocking calls (HTTP or ONNX) run here, off LanceDB's event loop
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docs-mcp-embed")
        from lancedb.background_loop import LOOP

        self._loop = LOOP
        self._atable = table._table  # the AsyncTable behind LanceDB's synchronous table
        self._catalog = RowCatalog.load(
            table,
            self._taxonomy_keys,
            PRIOR_COLUMN,
            DEDUP_COLUMN,
            display_columns=self._display_columns(),
            display_budget=row_catalog.display_cache_bytes(),
            collapse_keys=self._collapse_keys,
        )
        self._vector_lock = threading.Lock()
        self._vector_down_until = 0.0
        self._vector_warned = False
        self._vector_probing = False
        self._ann_index = vector_index_type(table) if self._has_vectors else None
        self._prefilters: dict[tuple[tuple[str, str], ...], tuple[str | None, float, np.ndarray | None]] = {}
        self._lexical = self._load_lexical(table) if self._uses_lexical_index() else None
        self._vectors = (
            VectorMatrix.load(table, self._catalog.row_ids, vector_cache_bytes())
            if self._has_vectors
            else None
        )

    # ── opening ──────────────────────────────────────────────────────────────────────────────

    @classmethod
    def open(
        cls,
        index_dir: str | Path,
        *,
        options: SearchOptions | None = None,
        on_warning: Callable[[str], None] | None = None,
        query_embedder: EmbeddingProvider | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> SearchEngine:
        """Open an index folder or object-store URI (``s3://bucket/prefix``, see :mod:`docs_mcp_core.index.location`).

        ``storage_options`` override the AWS environment variables for a URI. Raises
        :class:`IndexNotFoundError` / ``MetadataError`` when unusable.
        """
        from docs_mcp_core.index.reader import open_index

        opened = open_index(index_dir, storage_options)
        metadata, table = opened.metadata, opened.table
        opts = options or SearchOptions()
        warn = on_warning or (lambda m: None)
        if opts.cursor_secret:
            secret = opts.cursor_secret.encode("utf-8")
        else:
            secret = default_cursor_secret(opened.metadata_bytes)
        embedder = query_embedder if query_embedder is not None else _query_embedder(metadata, opts, warn)
        return cls(
            metadata=metadata,
            table=table,
            options=opts,
            secret=secret,
            on_warning=warn,
            query_embedder=embedder,
        )

    @property
    def vector_search_enabled(self) -> bool:
        return self._has_vectors

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    # ── search ───────────────────────────────────────────────────────────────────────────────

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, str] | None = None,
        cursor: str | None = None,
    ) -> SearchResult:
        """Search from synchronous code (runs :meth:`search_async` on LanceDB's event loop)."""
        return self._loop.run(self.search_async(query, limit=limit, filters=filters, cursor=cursor))

    async def search_async(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, str] | None = None,
        cursor: str | None = None,
    ) -> SearchResult:
        """Search from a running asyncio loop (the MCP server's): no thread hops.

        The retrievers are LanceDB queries awaited together; fusion and snippets (about a
        millisecond of CPU) run on the calling loop.
        """
        q = (query or "").strip()
        if not q:
            raise SearchError("query is required")
        page_size = clamp_limit(limit)
        active = {k: v for k, v in (filters or {}).items() if v}
        active = {k: v.replace("\0", "") for k, v in active.items()}
        for key in active:
            if key not in self._taxonomy_keys or key not in self._columns:
                raise SearchError(
                    f"Unknown filter '{key}'. Valid filters: {', '.join(self._taxonomy_keys) or 'none'}"
                )
        offset = 0
        if cursor:
            offset = decode_cursor(cursor, query=q, filters=active, secret=self._secret).offset
        prefilter = self._prefilter(active)
        fetch = self._fetch_depth(offset, page_size)
        legs = await self._retrieve(q, prefilter, fetch)
        ranked = await self._fuse_default(q, active, legs) if self._default else self._fuse_original(legs)
        live_collapse = [k for k in self._collapse_keys if k not in active and k in self._columns]
        if live_collapse and len(ranked):
            groups = self._catalog.collapse_groups(live_collapse)[ranked.positions]
            ranked = ranked.keep(first_of_each_group(groups))
        end = min(offset + page_size, len(ranked))
        page = ranked.positions[offset:end]
        hits = await self._hits(page, ranked.scores[offset:end], q)
        next_cursor = None
        if end < len(ranked):
            next_cursor = encode_cursor(
                CursorPosition(offset + len(page), page_size), query=q, filters=active, secret=self._secret
            )
        hint = None if hits else await self._hint(q, active)
        return SearchResult(hits, next_cursor, hint)

    def _fetch_depth(self, offset: int, page_size: int) -> int:
        """How many rows each retriever returns for a page.

        The original recipe fetches ``max(offset + limit + 200, 5 * limit)``, as the original does.
        The default ranking re-scores the pool with priors and cues, which can lift a row from deep in
        BM25 order to the top; a pool that grew with the offset would then let pages repeat or skip
        hits. It therefore fetches a fixed depth for the first pages and the maximum beyond it.
        """
        if not self._default:
            return min(max(offset + page_size + 200, page_size * 5), MAX_FETCH)
        return DEFAULT_POOL if offset + page_size <= DEFAULT_POOL else MAX_FETCH

    def warm(self) -> None:
        """Load the full-text indexes' term dictionaries with one cheap query per column, so that
        the first real search is as fast as the rest, then return the heap freed since opening."""
        from lancedb.query import FullTextOperator, MultiMatchQuery

        text = self.metadata.corpus_description or "documentation"
        if self._lexical is not None:
            wanted: tuple[str, ...] = () if not self.options.phrase_slop else (PHRASE_COLUMN,)
        elif self._default:
            wanted = (*SEARCH_TEXT_COLUMNS, "content_text")  # the columns it searches
        else:
            wanted = ("heading", "content_text")
        columns = [c for c in wanted if c in self._columns]

        async def run() -> None:
            queries = [
                MultiMatchQuery(text, [c], boosts=[1.0], operator=FullTextOperator.OR) for c in columns
            ]
            await asyncio.gather(*(self._fts(q, None, 1) for q in queries))

        self._loop.run(run())
        release_free_heap()

    # ── retrieval: the legs run concurrently on LanceDB's event loop, one thread hop per search ──

    def _prefilter(self, active: Mapping[str, str]) -> tuple[str | None, float, np.ndarray | None]:
        """The SQL prefilter of ``active`` filters, the share of rows it keeps and the same rule as a
        mask over the catalog's rows (memoised).

        The mask is computed only when something uses it: the in-memory retrievers, or the vector
        leg's probing in LanceDB (the share sets how many IVF partitions it probes).
        """
        key = tuple(sorted(active.items()))
        found = self._prefilters.get(key)
        if found is None:
            where = where_clause(active, self._taxonomy_keys)
            in_memory = self._lexical is not None or self._vectors is not None
            wanted = where is not None and (self._ann_index is not None or in_memory)
            mask = filter_mask(active, self._taxonomy_keys, self._catalog.equals) if wanted else None
            share = float(mask.mean()) if mask is not None and len(mask) else 1.0
            if len(self._prefilters) >= 4096:
                self._prefilters.clear()
            found = self._prefilters[key] = (where, share, mask)
        return found

    def _uses_lexical_index(self) -> bool:
        wanted = (*self._match_boosts, PHRASE_COLUMN)
        return self.options.match_retriever == "memory" and all(c in self._columns for c in wanted)

    def _load_lexical(self, table: Any) -> LexicalIndex | None:
        """The in-memory match and phrase retrievers, in catalog order (None when the table changed
        under the catalog's scan: the LanceDB queries then serve).

        The default ranking's covers the search columns, scored as LanceDB 0.40 scores them; the
        original recipe's covers ``heading`` and ``content_text``, scored as the original's LanceDB
        (0.26.2) scored them.
        """
        match_columns = [c for c in self._match_boosts if c != PHRASE_COLUMN]
        display = self._catalog.display
        held = display is not None and PHRASE_COLUMN in display.column_names  # no second copy
        columns = match_columns if held else [*match_columns, PHRASE_COLUMN]
        data = row_catalog.scan_in_row_order(table, columns)
        if not np.array_equal(data.column("_rowid").to_numpy().astype(np.uint64), self._catalog.row_ids):
            return None
        texts = {c: data.column(c) for c in columns}
        if held:
            assert display is not None
            texts[PHRASE_COLUMN] = display.column(PHRASE_COLUMN)
        # the longest column first, so that it overlaps the short ones rather than the other long one
        order = [PHRASE_COLUMN, *match_columns]
        scoring = LANCEDB_SCORING if self._default else ORIGINAL_SCORING
        lexical = LexicalIndex.build({c: texts[c] for c in order}, positions=[PHRASE_COLUMN], scoring=scoring)
        release_free_heap()
        return lexical

    async def _retrieve(
        self, query: str, active: tuple[str | None, float, np.ndarray | None], fetch: int
    ) -> dict[str, _Leg]:
        from lancedb.query import FullTextOperator, MultiMatchQuery, PhraseQuery

        where, _, mask = active
        text = _lexical_query_text(query)
        match_text = expand_identifiers(text) if self._default else text
        slop = max(0, min(5, int(self.options.phrase_slop)))
        lexical = self._lexical
        legs: dict[str, asyncio.Future[_Leg]] = {}
        # LanceDB queries start as soon as they are created; the in-memory legs run meanwhile
        if self._has_vectors:
            legs["vector"] = asyncio.ensure_future(self._vector(query, active, fetch))
        if lexical is None or slop:
            phrase_q = PhraseQuery(text, PHRASE_COLUMN, slop=slop, document_granularity=None)
            legs["phrase"] = asyncio.ensure_future(self._fts(phrase_q, where, fetch))
        if lexical is not None:
            if legs:
                await asyncio.sleep(0)  # let the LanceDB legs submit their queries
            found = {"match": lexical.search(match_text, self._match_boosts, mask=mask, limit=fetch)}
            if not slop:
                found["phrase"] = lexical.phrase(text, PHRASE_COLUMN, mask=mask, limit=fetch)
        else:
            match_q = MultiMatchQuery(
                match_text,
                list(self._match_boosts),
                boosts=list(self._match_boosts.values()),
                operator=FullTextOperator.OR,
            )
            legs["match"] = asyncio.ensure_future(self._fts(match_q, where, fetch))
            found = {}
        found.update(zip(legs, await asyncio.gather(*legs.values()), strict=True))
        return {name: found[name] for name in _LEG_ORDER if name in found}

    def _leg(self, rows: Any, score_column: str) -> _Leg:
        if rows.num_rows == 0:
            return _EMPTY_LEG
        positions = self._catalog.positions(rows.column("_rowid").to_numpy())
        return positions, rows.column(score_column).to_numpy().astype(np.float64)

    async def _fts(self, query: Any, where: str | None, fetch: int) -> _Leg:
        builder = self._atable.query().nearest_to_text(query).with_row_id()
        if where:
            builder = builder.where(where)
        try:
            rows = await builder.select(["_score"]).limit(fetch).to_arrow()
        except Exception as exc:
            if "Invalid count value" in str(exc):
                return _EMPTY_LEG
            raise
        return self._leg(rows, "_score")

    async def _vector(
        self, query: str, active: tuple[str | None, float, np.ndarray | None], fetch: int
    ) -> _Leg:
        """The vector leg: embed the query, nearest neighbours under the same prefilter.

        It never fails a search. When embedding or the vector query fails, this query gets no vector
        rows, one warning is logged for the whole outage, and the leg rests for
        ``vector_cooldown_seconds``: queries in that window do not call the embedding API at all, so
        an outage never costs every query the API timeout. After the rest, one query at a time probes
        the API (the others stay lexical) until a probe succeeds, which ends the outage.
        """
        embedder = self._embedder
        if embedder is None or not self._has_vectors:
            return _EMPTY_LEG
        with self._vector_lock:
            if self._vector_probing or time.monotonic() < self._vector_down_until:
                return _EMPTY_LEG
            self._vector_probing = self._vector_warned  # degraded: this query is the only probe
        try:
            loop = asyncio.get_running_loop()
            vector = (await loop.run_in_executor(self._pool, embedder.embed, [query]))[0]
            where, share, mask = active
            if not vector:
                leg = _EMPTY_LEG
            elif self._vectors is not None:
                leg = self._vectors.nearest(vector, mask=mask, limit=fetch)
            else:
                builder = self._atable.query().nearest_to(list(vector)).column("vector").with_row_id()
                builder = tune_vector_query(builder, self._ann_index, fetch, share)
                if where:
                    builder = builder.where(where)
                leg = self._leg(await builder.select(["_distance"]).limit(fetch).to_arrow(), "_distance")
        except Exception as exc:  # noqa: BLE001 - degrade to lexical search
            cooldown = self.options.vector_cooldown_seconds
            with self._vector_lock:
                self._vector_probing = False
                self._vector_down_until = time.monotonic() + cooldown
                first = not self._vector_warned
                self._vector_warned = True
            if first:
                self._warn(f"vector search degraded to lexical-only: {exc}; retrying after {cooldown:g}s")
            else:
                _log.debug("vector search still unavailable: %s", exc)
            return _EMPTY_LEG
        with self._vector_lock:
            self._vector_probing = False
            recovered = self._vector_warned
            self._vector_warned = False
        if recovered:
            _log.info("vector search recovered")
        return leg

    def vector_neighbours(
        self, query: str, limit: int = 10, filters: Mapping[str, str] | None = None
    ) -> list[str]:
        """Chunk ids the vector leg alone returns for ``query``, nearest first (a diagnostic).

        Empty when the index has no usable vectors or the embedding provider is unavailable.
        """
        active = self._prefilter({k: v for k, v in (filters or {}).items() if v})
        positions, _ = self._loop.run(self._vector(query, active, max(1, limit)))
        rows = self._loop.run(self._page_rows(positions))
        row_ids = self._catalog.row_ids[positions].tolist()
        return [rows[int(r)]["chunk_id"] for r in row_ids if int(r) in rows]

    # ── fusion ───────────────────────────────────────────────────────────────────────────────

    def _fuse_original(self, legs: Mapping[str, _Leg]) -> _Ranked:
        """Weighted reciprocal-rank fusion (k = 60), ties by chunk id: the original recipe."""
        weights = {
            "match": self.options.match_weight,
            "phrase": self.options.proximity_weight,
            "vector": self.options.vector_weight,
        }
        positions: list[np.ndarray] = []
        contributions: list[np.ndarray] = []
        for name, (pos, _) in legs.items():
            if not len(pos):
                continue
            first = np.sort(np.unique(pos, return_index=True)[1])  # a row counts at its best rank
            w = weights[name]
            ranks = first.astype(np.float64) + 1.0
            positions.append(pos[first])
            contributions.append(w / (RRF_K + ranks) if w > 0 else np.zeros(len(first)))
        return self._order(*self._scores(positions, contributions, None), tie_by_depth=False, dedup=False)

    async def _fuse_default(
        self, query: str, filters: Mapping[str, str], legs: Mapping[str, _Leg]
    ) -> _Ranked:
        """Score fusion with identifier-aware fields, static priors, taxonomy cues and query-term
        coverage (ranking.py)."""
        w = self._weights
        positions: list[np.ndarray] = []
        contributions: list[np.ndarray] = []
        match_pos, match_scores = legs["match"]
        if len(match_pos):
            best = float(match_scores.max()) or 1.0
            positions.append(match_pos)
            contributions.append(match_scores / best)
        phrase_pos = legs["phrase"][0]
        if len(phrase_pos):
            positions.append(phrase_pos)
            contributions.append(w.phrase / (RRF_K + np.arange(1, len(phrase_pos) + 1, dtype=np.float64)))
        vector_pos = legs.get("vector", _EMPTY_LEG)[0]
        if len(vector_pos):
            positions.append(vector_pos)
            ranks = np.arange(1, len(vector_pos) + 1, dtype=np.float64)
            contributions.append(w.vector * (RRF_K + 1) / (RRF_K + ranks))
        taxonomy = {k: f.values for k, f in self.metadata.taxonomy.items()}
        cues = query_cues(query, taxonomy, filters)
        rows, score = self._scores(positions, contributions, cues)
        terms = coverage_terms(query)
        if len(terms) >= 2 and len(match_pos):
            lexical = np.flatnonzero(np.isin(rows, match_pos))  # vector-only rows keep their score
            top = lexical[np.argsort(-score[lexical], kind="stable")[:COVERAGE_DEPTH]]
            texts = await self._coverage_texts(rows[top])
            score[top] *= np.fromiter((coverage_factor(t, terms) for t in texts), np.float64, len(top))
        return self._order(rows, score, tie_by_depth=True, dedup=self._dedup)

    async def _coverage_texts(self, positions: np.ndarray) -> list[str]:
        """Lower-cased heading, breadcrumb, path and start of the text of the rows at ``positions``."""
        columns = _COVERAGE_COLUMNS
        values = self._catalog.display_values(positions, columns)
        if values is None:  # not held in memory: the rows' display columns, taken by row id
            rows = await self._page_rows(positions)
            found = [rows.get(int(r)) or {} for r in self._catalog.row_ids[positions].tolist()]
            values = [[row.get(c) or "" for row in found] for c in columns]
        head, crumbs, path, text = values
        return [
            f"{h} {c} {p} {t[:COVERAGE_TEXT_CHARS]}".lower()
            for h, c, p, t in zip(head, crumbs, path, text, strict=True)
        ]

    def _scores(
        self,
        positions: Sequence[np.ndarray],
        contributions: Sequence[np.ndarray],
        cues: Mapping[str, str] | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each row's summed contributions, times prior and cues (default ranking): ``(rows, score)``."""
        if not positions:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        catalog = self._catalog
        rows, inverse = np.unique(np.concatenate(positions), return_inverse=True)
        score = np.zeros(len(rows), dtype=np.float64)
        np.add.at(score, inverse, np.concatenate(contributions))  # in leg order, as a row's sum
        if cues is not None:  # the default ranking: static prior, then taxonomy cues
            score = score * catalog.prior[rows]
            if cues:
                score = score * self._cue_factors(rows, cues)
        return rows, score

    def _order(self, rows: np.ndarray, score: np.ndarray, *, tie_by_depth: bool, dedup: bool) -> _Ranked:
        """Sort scored rows (ties by depth, then chunk id) and drop byte-identical repeats."""
        catalog = self._catalog
        score = np.round(score, 6)
        keys = [catalog.sort_rank[rows], *([catalog.depth[rows]] if tie_by_depth else []), -score]
        order = np.lexsort(keys)
        ranked = _Ranked(rows[order], score[order])
        if dedup and catalog.dedup_group is not None:
            ranked = ranked.keep(first_of_each_group(catalog.dedup_group[ranked.positions]))
        return ranked

    def _cue_factors(self, rows: np.ndarray, cues: Mapping[str, str]) -> np.ndarray:
        """Per-row :func:`~docs_mcp_core.ranking.cue_factor`, as arrays (same arithmetic, same order)."""
        up = 1 + self._weights.cue
        factor = np.ones(len(rows), dtype=np.float64)
        for key, value in cues.items():
            found = self._catalog.codes(key, value)
            if found is None:
                continue
            codes, code = found
            have = codes[rows]
            factor = np.where(have == code, factor * up, np.where(have >= 0, factor / up, factor))
        return factor

    # ── hits ─────────────────────────────────────────────────────────────────────────────────

    def _display_columns(self) -> list[str]:
        """Columns a hit is made of (the taxonomy columns stand in for unreadable ``metadata_json``)."""
        return [c for c in dict.fromkeys([*_HIT_COLUMNS, *self._taxonomy_keys]) if c in self._columns]

    async def _page_rows(self, page: np.ndarray) -> dict[int, dict[str, Any]]:
        """Display columns of a page of hits: from memory, or taken by row id (one cheap read)."""
        if not len(page):
            return {}
        row_ids = [int(r) for r in self._catalog.row_ids[page]]
        cached = self._catalog.display_rows(page)
        if cached is not None:
            return dict(zip(row_ids, cached, strict=True))
        rows = (
            await self._atable.take_row_ids(row_ids).with_row_id().select(self._display_columns()).to_arrow()
        )
        return {int(r["_rowid"]): r for r in rows.to_pylist()}

    def _hit_metadata(self, row: Mapping[str, Any]) -> dict[str, str]:
        raw = row.get("metadata_json")
        if isinstance(raw, str) and raw.strip():
            try:
                parsed = json.loads(raw)
                if isinstance(parsed, dict):
                    return {str(k): v for k, v in parsed.items() if isinstance(v, str) and v}
            except json.JSONDecodeError:
                pass
        return {k: row[k] for k in self._taxonomy_keys if isinstance(row.get(k), str) and row.get(k)}

    async def _hits(self, page: np.ndarray, scores: np.ndarray, query: str) -> list[SearchHit]:
        rows = await self._page_rows(page)
        hits: list[SearchHit] = []
        for row_id, score in zip(self._catalog.row_ids[page].tolist(), scores.tolist(), strict=True):
            row = rows.get(int(row_id))
            if row is None:
                continue
            hits.append(
                SearchHit(
                    chunk_id=row["chunk_id"],
                    heading=row.get("heading") or "",
                    breadcrumb=row.get("breadcrumb") or "",
                    snippet=make_snippet(row.get("content_text") or "", query),
                    filepath=row.get("filepath") or "",
                    metadata=self._hit_metadata(row),
                    score=float(score),
                )
            )
        return hits

    async def _hint(self, query: str, filters: Mapping[str, str]) -> dict[str, Any]:
        from lancedb.query import FullTextOperator, MultiMatchQuery

        text = _lexical_query_text(query)
        cols = [c for c in ("chunk_id", "metadata_json", *self._taxonomy_keys) if c in self._columns]
        match = MultiMatchQuery(
            text, ["heading", "content_text"], boosts=[3.0, 1.0], operator=FullTextOperator.OR
        )
        try:
            found = await self._atable.query().nearest_to_text(match).select(cols).limit(100).to_arrow()
            rows = found.to_pylist()
        except Exception as exc:
            if "Invalid count value" not in str(exc):
                raise
            rows = []
        if not rows:
            return {
                "message": "0 results found. No matches were found for this query in the indexed corpus.",
                "suggested_filters": {},
            }
        suggestions: dict[str, list[str]] = {}
        for key, active_value in filters.items():
            values = {v for v in (self._hit_metadata(r).get(key) for r in rows) if v and v != active_value}
            if values:
                suggestions[key] = sorted(values, key=sort_key)
        summary = ", ".join(f"{k}='{v}'" for k, v in filters.items())
        message = (
            f"0 results found for query '{query}' with filters {summary}."
            if summary
            else f"0 results found for query '{query}'."
        )
        return {"message": message, "suggested_filters": suggestions}

    # ── documents ────────────────────────────────────────────────────────────────────────────

    def get_doc(self, chunk_id: str, context: int = 0) -> str:
        """The chunk's content, with up to ``context`` neighbours on each side, in the original's
        delimiter grammar: ``--- Chunk: <id> (Chunk i of n) (Target|Context: +k|-k) ---``."""
        return self._loop.run(self.get_doc_async(chunk_id, context))

    async def get_doc_async(self, chunk_id: str, context: int = 0) -> str:
        """:meth:`get_doc` from a running asyncio loop."""
        if not chunk_id or not chunk_id.strip():
            raise SearchError("chunk_id must be a non-empty string")
        if context == -1:
            return await self._file_content(chunk_id.split("#", 1)[0])
        c = max(0, min(5, int(context)))
        located = await self._locate(chunk_id)
        if located is None:
            if not is_chunk_id_format(chunk_id):
                raise SearchError(
                    f"Chunk ID '{chunk_id}' has invalid format. Expected {{filepath}} or {{filepath}}#{{heading-path}}."
                )
            raise SearchError(
                f"Chunk ID '{chunk_id}' not found. Use search_docs to discover valid chunk IDs."
            )
        siblings, index = located  # every chunk of the file: chunk_index -> (row id, chunk id)
        total = len(siblings)
        wanted = [i for i in range(max(0, index - c), index + c + 1) if i in siblings]
        contents = await (
            self._atable.take_row_ids([siblings[i][0] for i in wanted])
            .with_row_id()
            .select(["content"])
            .to_arrow()
        )
        by_row = dict(
            zip(contents.column("_rowid").to_pylist(), contents.column("content").to_pylist(), strict=True)
        )
        rows = [
            {"chunk_id": siblings[i][1], "chunk_index": i, "content": by_row.get(siblings[i][0], "")}
            for i in wanted
        ]
        blocks = []
        for row in sorted(rows, key=lambda r: r["chunk_index"]):
            i = int(row["chunk_index"])
            delta = i - index
            role = "Target" if delta == 0 else f"Context: {'+' if delta > 0 else ''}{delta}"
            blocks.append(
                f"--- Chunk: {row['chunk_id']} (Chunk {i + 1} of {total}) ({role}) ---\n{row['content']}"
            )
        return "\n\n".join(blocks)

    async def _locate(self, chunk_id: str) -> tuple[dict[int, tuple[int, str]], int] | None:
        """The chunks of ``chunk_id``'s file (``chunk_index -> (row id, chunk id)``) and its index,
        from the row catalog (no LanceDB query)."""
        return self._catalog.locate(chunk_id)

    def file_content(self, filepath: str) -> str:
        """Every chunk of one file, in order, joined by blank lines (the whole document)."""
        return self._loop.run(self._file_content(filepath))

    async def _file_content(self, filepath: str) -> str:
        found = await (
            self._atable.query()
            .where(f"filepath = {quote_string(filepath)}")
            .select(["chunk_index", "content"])
            .limit(100_000)
            .to_arrow()
        )
        rows = found.to_pylist()
        if not rows:
            raise SearchError(f"File '{filepath}' not found in the index.")
        return "\n\n".join(r["content"] for r in sorted(rows, key=lambda r: r["chunk_index"]))

    def list_filepaths(self, filters: Mapping[str, str]) -> list[str]:
        """Files that have a chunk matching every ``key = value`` in ``filters`` (no auto-include)."""
        from docs_mcp_core.index.table import quote_identifier

        clauses = [
            f"{quote_identifier(k)} = {quote_string(v)}" for k, v in filters.items() if k in self._columns
        ]
        clauses.append("chunk_index = 0")
        rows = (
            self._table.search().where(" AND ".join(clauses)).select(["filepath"]).limit(1_000_000).to_arrow()
        )
        return sorted(set(rows.column("filepath").to_pylist()), key=sort_key)

    def matches(self, metadata: Mapping[str, str], filters: Mapping[str, str]) -> bool:
        return matches_filters(metadata, filters, self._taxonomy_keys)


def _query_embedder(
    metadata: IndexMetadata, options: SearchOptions, warn: Callable[[str], None]
) -> EmbeddingProvider | None:
    """The provider that embeds queries: the index's own provider, model and dimensions.

    Queries use a short request timeout and at most one retry (with a short back-off), so one slow
    or failing API call costs a search little; the vector leg's cool-down (see ``_vector``) keeps an
    outage from costing every search. Returns ``None``, after saying why once, when the index has no
    vectors that can be searched: an unknown provider, or ``openai`` without an API key (from
    ``query_embedding_api_key`` or ``OPENAI_API_KEY``).
    """
    info = metadata.embedding
    name = info.provider.strip().lower() if info is not None else "none"
    if info is None or name == "none":
        return None
    from docs_mcp_core.embedding import PROVIDER_NAMES, create_embedding_provider
    from docs_mcp_core.errors import EmbeddingError

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
