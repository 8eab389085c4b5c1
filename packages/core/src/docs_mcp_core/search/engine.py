"""The search engine over a docs-mcp index: one front for search and document access.

Usage::

    engine = SearchEngine.open("./idx")
    result = engine.search("retry configuration", limit=10, filters={"language": "python"})
    result.to_dict()  # {"hits": [...], "next_cursor": str | None, "hint": {...} | None}
    text = engine.get_doc("guides/retries.md#backoff", context=1)

The engine opens the index read-only and never writes to it. ``search`` and ``get_doc`` are
synchronous and thread-safe; code on an asyncio loop awaits ``search_async`` / ``get_doc_async``
instead, with no thread hop. Every row's ranking attributes (and, within a memory budget, its
display text) are read once at open into a :class:`~docs_mcp_core.search.row_catalog.RowCatalog` (and,
within their budget, every chunk's markdown into a :class:`~.content_store.ContentStore`, for ``get_doc``),
so the legs return row positions and scores, and fusion and the page of hits are array operations.
Failures a caller can cause raise :class:`~docs_mcp_core.errors.SearchError`, whose message is the
text MCP clients receive.

A request goes through the parts of this package in order:

1. :class:`~docs_mcp_core.search.query.Query`: the query, read once for everything below;
2. :func:`~docs_mcp_core.search.filters.active_filters` and the cursor: which rows, which page;
3. :class:`~docs_mcp_core.search.retrieval.Retrieval`: the match, phrase, vector and spelling
   legs, each returning up to :func:`~docs_mcp_core.search.options.fetch_depth` rows under the
   same prefilter (with, for a search that found nothing, the matches a hint suggests filters from);
4. :class:`~docs_mcp_core.search.ranker.Ranker`: the legs ranked into the ordered rows, by the
   default ranking (``docs/ranking.md``) or the original recipe (weighted reciprocal-rank fusion).
   A default-ranking page that reaches the end of that ranking while a leg had more rows ranks
   the legs at :data:`~docs_mcp_core.search.options.MAX_FETCH` rows each too (from the same run
   when the corpus's copies made that likely: :meth:`~.retrieval.Retrieval.pools`), and the deeper
   ranking continues the first (:meth:`~docs_mcp_core.search.ranker.Ranker.extend`): every page
   of a query is cut from one order, and its first 5,000 rows can be paged through;
5. :mod:`~docs_mcp_core.search.facets` (when asked for) and the page of the ordered rows;
6. :class:`~docs_mcp_core.search.hits.HitReader`: the page of hits with snippets, or a hint;
7. :mod:`~docs_mcp_core.search.budget` (with ``max_tokens``): the answer fitted to a token budget.

The :class:`~docs_mcp_core.search.row_catalog.RowCatalog` (every row's attributes as arrays) and
the :class:`~docs_mcp_core.search.rows.RowReader` (display columns by position) are shared by the
steps.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from docs_mcp_core.index.lancedb_async import async_table
from docs_mcp_core.index.reader import open_index
from docs_mcp_core.index.table import DEDUP_COLUMN, PRIOR_COLUMN, SEARCH_TEXT_COLUMNS
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.metadata import IndexMetadata, collapse_keys
from docs_mcp_core.search.cursor import CursorPosition, decode_cursor, default_cursor_secret, encode_cursor
from docs_mcp_core.search.derived import Wanted, assemble
from docs_mcp_core.search.facets import facet_counts
from docs_mcp_core.search.filters import active_filters, check_filter_values, matches_filters
from docs_mcp_core.search.hits import HINT_ROWS, HitReader, SearchResult
from docs_mcp_core.search.intent import IntentIndex
from docs_mcp_core.search.legs import Leg
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.memory_budgets import server_budgets
from docs_mcp_core.search.options import MAX_FETCH, SearchOptions, check_max_tokens, clamp_limit, fetch_depth
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.ranker import Ranker, RankingWeights
from docs_mcp_core.search.retrieval import ORIGINAL_MATCH_BOOSTS, Retrieval
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.scoring import LANCEDB_SCORING, ORIGINAL_SCORING
from docs_mcp_core.search.vector_leg import VectorLeg, create_query_embedder

if TYPE_CHECKING:  # imported where used: a lexical index needs neither
    from docs_mcp_core.embedding import EmbeddingProvider
    from docs_mcp_core.search.documents import Documents
    from docs_mcp_core.search.heading_leg import HeadingLeg, HeadingVectors

__all__ = ["SearchEngine"]

T = TypeVar("T")


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
        table_folder: Path | None = None,
    ) -> None:
        """``table_folder``: where the table's derived files are (None: derive everything from it)."""
        options.check()
        self.metadata = metadata
        self.options = options
        self._secret = secret
        self._taxonomy_keys = list(metadata.taxonomy)
        self._collapse_keys = collapse_keys(metadata.taxonomy)
        self._weights = RankingWeights(phrase=options.proximity_weight, vector=options.vector_weight * 0.5)
        self._table = table
        budgets = server_budgets()
        choose = self._wanted(query_embedder)
        parts = assemble(table, table_folder, metadata, choose, budgets, on_warning)
        self.opened_from = parts.source  # "derived files" or "table"
        self._columns = set(parts.columns)
        chosen = choose(parts.columns)
        self._default, self._scoring = chosen.default, chosen.scoring
        self._catalog = parts.catalog
        atable = async_table(table)
        self._rows = RowReader(
            atable=atable, catalog=self._catalog, columns=self._columns, taxonomy_keys=self._taxonomy_keys
        )
        self._hits = HitReader(self._rows)
        self._ranker = self._open_ranker(parts.intent, parts.lexical)
        self._content = parts.content  # chunks' markdown held in memory (None: read from the table)
        vector = None
        if query_embedder is not None and "vector" in self._columns:
            vector = VectorLeg(
                atable=atable,
                catalog=self._catalog,
                embedder=query_embedder,
                ann_index=parts.ann_index,
                vectors=parts.vectors,
                cooldown_seconds=options.vector_cooldown_seconds,
                on_warning=on_warning,
            )
        heading = self._open_heading_leg(parts.headings, query_embedder, on_warning)
        self._retrieval = Retrieval(
            table=table,
            catalog=self._catalog,
            taxonomy_keys=self._taxonomy_keys,
            match_boosts=dict(chosen.match_boosts),
            phrase_slop=options.phrase_slop,
            lexical=parts.lexical,
            vector=vector,
            spelling=parts.spelling,
            vocabulary=parts.lexical if self._default else None,
            auto_include=metadata.auto_include,
            heading=heading,
            # the heading-path leg reads what headings mean: beside it a description's words count in the body
            described_text=self._weights.described_text if self._default and heading is not None else 1.0,
        )

    def _open_heading_leg(
        self,
        vectors: HeadingVectors | None,
        query_embedder: EmbeddingProvider | None,
        on_warning: Callable[[str], None],
    ) -> HeadingLeg | None:
        """The heading-path leg (default ranking, indexes with heading vectors), its model loading
        in the background from now on; the index's own local provider embeds for it when it has one."""
        if vectors is None or not self._default:
            return None
        from docs_mcp_core.embedding.local import LocalEmbeddingProvider
        from docs_mcp_core.search.heading_leg import HeadingLeg

        embedder = query_embedder
        if not (isinstance(embedder, LocalEmbeddingProvider) and embedder.model == vectors.model):
            embedder = LocalEmbeddingProvider(vectors.model)
        leg = HeadingLeg(vectors, embedder, on_warning)
        leg.preload()
        return leg

    def _open_ranker(self, intent: IntentIndex | None, lexical: LexicalIndex | None) -> Ranker:
        options = self.options
        return Ranker(
            catalog=self._catalog,
            reader=self._rows,
            taxonomy={k: f.values for k, f in self.metadata.taxonomy.items()},
            collapse_keys=[k for k in self._collapse_keys if k in self._columns],
            default=self._default,
            weights=self._weights,
            original_weights={
                "match": options.match_weight,
                "phrase": options.proximity_weight,
                "vector": options.vector_weight,
            },
            dedup=DEDUP_COLUMN in self._columns,
            intent=intent,
            auto_include=self.metadata.auto_include,
            files=self.metadata.files,
            text_share=functools.partial(lexical.row_share, "search_text") if lexical is not None else None,
        )

    def _wanted(self, query_embedder: EmbeddingProvider | None) -> Callable[[frozenset[str]], Wanted]:
        """What to derive, decided from the table's columns: the default ranking needs the search
        columns (an index without them gets the original recipe)."""
        options, w = self.options, self._weights

        def wanted(columns: frozenset[str]) -> Wanted:
            ranked_columns = all(c in columns for c in (*SEARCH_TEXT_COLUMNS, PRIOR_COLUMN))
            default = options.ranking == "default" and ranked_columns
            boosts: dict[str, float] = {
                str(c): b for c, b in zip(SEARCH_TEXT_COLUMNS, (w.heading, w.text, w.path), strict=True)
            }
            return Wanted(
                default,
                boosts if default else ORIGINAL_MATCH_BOOSTS,
                LANCEDB_SCORING if default else ORIGINAL_SCORING,
                in_memory=options.match_retriever == "memory",
                spelling=default,
                vectors="vector" in columns and query_embedder is not None,
            )

        return wanted

    @property
    def _loop(self) -> _BackgroundLoop:
        """The event loop the synchronous calls run on (LanceDB's queries run on any loop)."""
        return _background_loop()

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
        """Open an index folder or object-store URI (``s3://bucket/prefix``, see
        :mod:`docs_mcp_core.index.location`); ``storage_options`` override the AWS environment
        variables for a URI. Raises :class:`IndexNotFoundError` / ``MetadataError`` when unusable."""
        opened = open_index(index_dir, storage_options, lazy=True)
        metadata, table = opened.metadata, opened.table
        opts = options or SearchOptions()
        warn = on_warning or (lambda m: None)
        if opts.cursor_secret:
            secret = opts.cursor_secret.encode("utf-8", "surrogatepass")  # argv bytes that are not UTF-8
        else:
            secret = default_cursor_secret(opened.metadata_bytes)
        embedder = (
            query_embedder if query_embedder is not None else create_query_embedder(metadata, opts, warn)
        )
        return cls(
            metadata=metadata,
            table=table,
            options=opts,
            secret=secret,
            on_warning=warn,
            query_embedder=embedder,
            table_folder=opened.table_folder,
        )

    @property
    def vector_search_enabled(self) -> bool:
        return self._retrieval.vector is not None

    @property
    def query_embedder(self) -> EmbeddingProvider | None:
        """The provider that embeds queries (``None`` when the engine searches lexically only)."""
        vector = self._retrieval.vector
        return vector.embedder if vector is not None else None

    def read_table(self) -> None:
        """Read every row of the table once (LanceDB raises on a damaged data file), as opening it
        without derived files does; for a copy whose files no checksum vouches for."""
        if self.opened_from == "derived files":
            self._table.to_arrow()

    def close(self) -> None:
        if self._retrieval.vector is not None:
            self._retrieval.vector.close()
        if self._retrieval.heading is not None:
            self._retrieval.heading.close()

    def warm(self) -> None:
        """Load the full-text indexes' term dictionaries, derive the ranking's per-row attributes,
        number the groups of a corpus of copies and wait for the heading leg's model, so that the
        first real search is as fast as the rest."""
        text = self.metadata.corpus_description or "documentation"
        columns = self._retrieval.warm_columns(
            self._columns, default=self._default, phrase_slop=self.options.phrase_slop
        )
        if columns:  # else no search reads the table's full-text indexes: leave LanceDB unloaded
            self._retrieval.warm(text, columns, self._loop.run)
        self._loop.run(self._ranker.warm())
        if self._retrieval.lexical is not None and self._default:  # a corpus of copies: its groups
            self._retrieval.lexical.group_copies(self._catalog.dedup_group, self._catalog.copies())
        if self._retrieval.heading is not None:
            self._retrieval.heading.wait_loaded()
        release_free_heap()

    # ── search ───────────────────────────────────────────────────────────────────────────────

    def parse_query(self, query: str | None) -> Query:
        """``query`` as this engine's legs read it (raises :class:`SearchError` when it is empty)."""
        stop_words, gaps = self._scoring.stop_words, self._scoring.phrase_gaps
        return Query.parse(query, expand=self._default, analyzer_stop_words=stop_words, phrase_gaps=gaps)

    def check_filters(self, filters: Mapping[str, str] | None, *, values: bool = False) -> dict[str, str]:
        """The filters a search applies (see :func:`~docs_mcp_core.search.filters.active_filters`);
        with ``values``, a value no chunk carries is refused as well."""
        active = active_filters(filters, self._taxonomy_keys, self._columns)
        if values:
            check_filter_values(active, {k: f.values for k, f in self.metadata.taxonomy.items()})
        return active

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, str] | None = None,
        cursor: str | None = None,
        max_tokens: int | None = None,
        facets: bool = False,
    ) -> SearchResult:
        """Search from synchronous code (runs :meth:`search_async` on LanceDB's event loop)."""
        return self._loop.run(
            self.search_async(
                query, limit=limit, filters=filters, cursor=cursor, max_tokens=max_tokens, facets=facets
            )
        )

    async def search_async(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, str] | None = None,
        cursor: str | None = None,
        max_tokens: int | None = None,
        facets: bool = False,
    ) -> SearchResult:
        """Search from a running asyncio loop (the MCP server's): no thread hops.

        The retrievers are LanceDB queries awaited together; fusion and snippets (about a
        millisecond of CPU) run on the calling loop. With ``facets``, the result counts the top
        candidates per value of every taxonomy key not filtered on (:mod:`.facets`); with
        ``max_tokens``, its text fits that many tokens (:mod:`.budget`).
        """
        q = self.parse_query(query)
        page_size = clamp_limit(limit)
        check_max_tokens(max_tokens)
        active = self.check_filters(filters)
        offset = 0
        if cursor:
            offset = decode_cursor(cursor, query=q.text, filters=active, secret=self._secret).offset
        prefilter = self._retrieval.prefilter(active)
        fetch = fetch_depth(offset, page_size, rescored=self._default)
        wanted = offset + page_size if self._default else 0
        legs, deeper = await self._retrieval.pools(q, prefilter, fetch, MAX_FETCH, wanted)
        hint_matches = await self._retrieval.hint_matches(q, prefilter, legs, HINT_ROWS)
        ranking = await self._ranker.rank(q, active, legs)
        if self._default and offset + page_size >= len(ranking.ordered) and _cut(legs, fetch):
            deeper = deeper or await self._retrieval.legs(q, prefilter, MAX_FETCH)  # a leg had more rows
            ranking = await self._ranker.extend(ranking, q, active, deeper)
        counts = None
        if facets:
            unfiltered = [k for k in self._taxonomy_keys if k not in active]
            counts = facet_counts(self._catalog, ranking.candidates.positions, unfiltered)
        ranked = ranking.ordered
        total = min(len(ranked), MAX_FETCH)  # the pageable depth
        end = min(offset + page_size, total)
        page = ranked.positions[offset:end]
        hits = await self._hits.hits(page, ranked.scores[offset:end], q)
        hint = None if hits else await self._hits.hint(q, active, hint_matches)

        def cursor_after(shown: int) -> str | None:
            if offset + shown >= total:
                return None
            position = CursorPosition(offset + shown, page_size)
            return encode_cursor(position, query=q.text, filters=active, secret=self._secret)

        result = SearchResult(hits, cursor_after(len(page)), hint, facets=counts)
        if max_tokens is None:
            return result
        from docs_mcp_core.search.budget import TokenBudget, fit_page  # (and tokenizers: only now)

        return fit_page(result, TokenBudget(max_tokens, self.options.token_encoding), cursor_after)

    def vector_neighbours(
        self, query: str, limit: int = 10, filters: Mapping[str, str] | None = None
    ) -> list[str]:
        """Chunk ids the vector leg alone returns for ``query``, nearest first (a diagnostic).

        Empty when the index has no usable vectors or the embedding provider is unavailable.
        """
        vector = self._retrieval.vector
        if vector is None:
            return []
        prefilter = self._retrieval.prefilter({k: v for k, v in (filters or {}).items() if v})
        positions, _ = self._loop.run(vector.nearest(query, prefilter, max(1, limit)))
        rows = self._loop.run(self._rows.rows(positions))
        row_ids = self._catalog.row_ids[positions].tolist()
        return [rows[int(r)]["chunk_id"] for r in row_ids if int(r) in rows]

    def matches(self, metadata: Mapping[str, str], filters: Mapping[str, str]) -> bool:
        return matches_filters(metadata, filters, self._taxonomy_keys, self.metadata.auto_include)

    # ── documents ────────────────────────────────────────────────────────────────────────────

    def get_doc(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        scope: str = "chunk",
        max_tokens: int | None = None,
        cursor: str | None = None,
    ) -> str:
        """The chunk's content, with up to ``context`` neighbours on each side, in the original's
        delimiter grammar: ``--- Chunk: <id> (Chunk i of n) (Target|Context: +k|-k) ---``; or, with
        ``scope`` ``"section"`` / ``"parent"``, its whole section (see
        :mod:`~docs_mcp_core.search.documents`). With ``max_tokens`` the text fits that many tokens
        and a cut answer ends with the ``cursor`` of the rest."""
        call = self.get_doc_async(chunk_id, context, scope=scope, max_tokens=max_tokens, cursor=cursor)
        if scope == "chunk" and self.documents.in_memory:
            return _completed(call)  # chunks held in memory: nothing to wait for, no thread hop
        return self._loop.run(call)

    async def get_doc_async(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        scope: str = "chunk",
        max_tokens: int | None = None,
        cursor: str | None = None,
    ) -> str:
        """:meth:`get_doc` from a running asyncio loop."""
        return await self.documents.get_doc(
            chunk_id, context, scope=scope, max_tokens=max_tokens, cursor=cursor
        )

    @functools.cached_property
    def documents(self) -> Documents:
        """Chunks and files by id, position and path (see :mod:`docs_mcp_core.search.documents`),
        made on first use: answering searches needs none of that module."""
        from docs_mcp_core.search.documents import Documents

        made = Documents(table=self._table, catalog=self._catalog, columns=self._columns, secret=self._secret)
        made.configure(token_encoding=self.options.token_encoding, contents=self._content)
        return made

    def file_content(self, filepath: str) -> str:
        """Every chunk of one file, in order, joined by blank lines (the whole document)."""
        if self.documents.in_memory:
            return _completed(self.documents.file_content(filepath))
        return self._loop.run(self.documents.file_content(filepath))

    async def file_content_async(self, filepath: str) -> str:
        """:meth:`file_content` from a running asyncio loop."""
        return await self.documents.file_content(filepath)

    def list_filepaths(self, filters: Mapping[str, str]) -> list[str]:
        """Files that have a chunk matching every ``key = value`` in ``filters`` (no auto-include)."""
        return self.documents.filepaths(filters)


def _cut(legs: Mapping[str, Leg], fetch: int) -> bool:
    """Whether some leg returned as many rows as it was asked for (it may have had more)."""
    return any(len(leg[0]) >= fetch for leg in legs.values())


class _BackgroundLoop:
    """An asyncio loop on a daemon thread, for synchronous callers (not LanceDB's own, so that a
    search answered from memory does not import LanceDB)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="docs-mcp-engine-loop", daemon=True).start()

    def run(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self.loop).result()


_LOOP: list[_BackgroundLoop] = []
_LOOP_LOCK = threading.Lock()


def _background_loop() -> _BackgroundLoop:
    with _LOOP_LOCK:
        if not _LOOP:
            _LOOP.append(_BackgroundLoop())
        return _LOOP[0]


def _completed(call: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that finishes without waiting (it only reads memory), run here."""
    try:
        call.send(None)
    except StopIteration as done:
        return done.value
    call.close()
    raise RuntimeError("a document read held in memory waited for I/O")
