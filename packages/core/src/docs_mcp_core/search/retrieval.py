"""The retrieval legs of a search, run together: match, phrase and (with vectors) nearest neighbours.

* **match**: BM25 over several columns with boosts, a row scoring its best boosted column. The
  default ranking searches the identifier-aware columns (``search_heading``, ``search_text``,
  ``search_path``, boosts from :class:`~docs_mcp_core.search.ranker.RankingWeights`); the original recipe
  ``heading`` (boost 3) and ``content_text``. The default ranking reads the query's terms against
  those columns' terms first: a word no admitted row writes is split (:mod:`.compounds`) or read as
  a short form (:mod:`.prefixes`), and adjacent words the corpus writes as one compound also search
  it, as an alternative to the pair (:mod:`.compounds`).
* **phrase**: the query's terms as an exact phrase in ``content_text`` (slop 0-5).
* **vector**: :class:`~docs_mcp_core.search.vector_leg.VectorLeg`.
* **spelling** (default ranking, indexes with ``search_spellings``): the rows that write the query's
  compound identifiers exactly as it spells them (:mod:`~docs_mcp_core.search.spelling_leg`).
* **heading** (default ranking, indexes with heading-path vectors): the rows whose page and
  heading names mean what the query says (:mod:`~docs_mcp_core.search.heading_leg`); the query's
  embedding runs on another thread while the in-memory legs score.

The match and phrase legs run in memory (:class:`~docs_mcp_core.search.lexical_index.LexicalIndex`,
built when the engine opens, scoring exactly as the ranking's LanceDB scores) unless the engine is
told to use the table's full-text indexes or the table changed under the catalog's scan; a phrase
slop above 0 always goes to LanceDB. LanceDB queries run concurrently on its event loop, and the
in-memory legs run while they wait. Every leg applies the request's :class:`Prefilter`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.anchors import ANCHOR_MARK
from docs_mcp_core.index.lancedb_async import async_table
from docs_mcp_core.index.table import SEARCH_TEXT_COLUMNS
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.metadata import ORIGINAL_AUTO_INCLUDE, AutoInclude
from docs_mcp_core.search import row_catalog
from docs_mcp_core.search.analyzer import ORIGINAL_TEXT_STOP_WORDS
from docs_mcp_core.search.compounds import Compounds
from docs_mcp_core.search.filters import filter_mask, where_clause
from docs_mcp_core.search.intent import describes
from docs_mcp_core.search.inverses import inverse_joins
from docs_mcp_core.search.legs import EMPTY_LEG, LEG_ORDER, Leg, Prefilter, leg_from_rows
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.match_pruning import Posting
from docs_mcp_core.search.prefixes import PrefixExpander, unwritten
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.row_catalog import RowCatalog
from docs_mcp_core.search.scoring import Scoring
from docs_mcp_core.search.spelling_leg import SpellingIndex
from docs_mcp_core.search.vector_leg import VectorLeg

if TYPE_CHECKING:  # an index without heading vectors never imports the leg
    from docs_mcp_core.search.heading_leg import HeadingLeg, Nearest

LOOKUP_WORDS = 4  # a variable's name and at most this many words ("what does X do") look it up
_UNCUT = frozenset({"option"})  # legs whose rows do not depend on the depth asked for

__all__ = [
    "ORIGINAL_MATCH_BOOSTS",
    "PHRASE_COLUMN",
    "Retrieval",
    "lexical_index_usable",
    "load_lexical_index",
]

PHRASE_COLUMN = "content_text"
ORIGINAL_MATCH_BOOSTS = {"heading": 3.0, "content_text": 1.0}  # the original recipe's multi-match
_PREFILTER_MEMO = 4096  # distinct filter combinations remembered


def load_lexical_index(
    table: Any, catalog: RowCatalog, match_boosts: Mapping[str, float], scoring: Scoring
) -> LexicalIndex | None:
    """The in-memory match and phrase retrievers, in catalog order (None when the table changed
    under the catalog's scan: the LanceDB queries then serve).

    The default ranking's covers the search columns, scored as LanceDB 0.40 scores them; the
    original recipe's covers ``heading`` and ``content_text``, scored as the original's LanceDB
    (0.26.2) scored them.
    """
    match_columns = [c for c in match_boosts if c != PHRASE_COLUMN]
    display = catalog.display
    held = display is not None and PHRASE_COLUMN in display.column_names  # no second copy
    columns = match_columns if held else [*match_columns, PHRASE_COLUMN]
    data = row_catalog.scan_in_row_order(table, columns)
    if not np.array_equal(data.column("_rowid").to_numpy().astype(np.uint64), catalog.row_ids):
        return None
    texts = {c: data.column(c) for c in columns}
    if held:
        assert display is not None
        texts[PHRASE_COLUMN] = display.column(PHRASE_COLUMN)
    # the longest column first, so that it overlaps the short ones rather than the other long one
    order = [PHRASE_COLUMN, *match_columns]
    lexical = LexicalIndex.build({c: texts[c] for c in order}, positions=[PHRASE_COLUMN], scoring=scoring)
    release_free_heap()
    return lexical


def lexical_index_usable(columns: Collection[str], match_boosts: Mapping[str, float]) -> bool:
    """Whether the table has every column the in-memory match and phrase retrievers index."""
    return all(c in columns for c in (*match_boosts, PHRASE_COLUMN))


class Retrieval:
    """Runs a request's legs and hands them to the ranking in :data:`~docs_mcp_core.search.legs.LEG_ORDER`."""

    def __init__(
        self,
        *,
        table: Any,
        catalog: RowCatalog,
        taxonomy_keys: Sequence[str],
        match_boosts: Mapping[str, float],
        phrase_slop: int,
        lexical: LexicalIndex | None,
        vector: VectorLeg | None,
        spelling: SpellingIndex | None = None,
        vocabulary: LexicalIndex | None = None,
        auto_include: AutoInclude | None = ORIGINAL_AUTO_INCLUDE,
        heading: HeadingLeg | None = None,
        described_text: float = 1.0,
    ) -> None:
        self._atable = async_table(table)
        self._catalog = catalog
        self._taxonomy_keys = list(taxonomy_keys)
        self.match_boosts = dict(match_boosts)
        # a question in the reader's own words: its words are in a section's body, a heading holds a few
        self.described_boosts = {
            c: b * described_text if c == SEARCH_TEXT_COLUMNS[1] else b for c, b in self.match_boosts.items()
        }
        self.phrase_slop = max(0, min(5, int(phrase_slop)))
        self.lexical = lexical
        self.vector = vector
        self.spelling = spelling
        # the default ranking reads query words against the match columns' terms: short forms, compounds
        fields = (
            {c: vocabulary.fields[c] for c in match_boosts if c in vocabulary.fields} if vocabulary else {}
        )
        self._vocabulary = list(fields.values())
        self.prefixes = PrefixExpander(fields) if vocabulary is not None else None
        self.compounds = (
            Compounds(fields, vocabulary.fields.get(PHRASE_COLUMN), vocabulary.scoring.stop_words)
            if vocabulary is not None
            else None
        )
        self.heading = heading
        self._auto_include = auto_include
        self._prefilters: dict[tuple[tuple[str, str], ...], Prefilter] = {}

    def warm_columns(self, columns: Collection[str], *, default: bool, phrase_slop: int) -> list[str]:
        """The full-text indexes a search reads from LanceDB (their term dictionaries load on first use)."""
        if self.lexical is not None:
            wanted: tuple[str, ...] = () if not phrase_slop else (PHRASE_COLUMN,)
        elif default:
            wanted = (*self.match_boosts, "content_text")  # the columns it searches
        else:
            wanted = ("heading", "content_text")
        return [c for c in wanted if c in columns]

    # ── one request ──────────────────────────────────────────────────────────────────────────

    def prefilter(self, active: Mapping[str, str]) -> Prefilter:
        """The :class:`Prefilter` of ``active`` filters (memoised).

        The mask is computed only when something uses it: the in-memory retrievers, or the vector
        leg's probing in LanceDB (the share sets how many IVF partitions it probes).
        """
        key = tuple(sorted(active.items()))
        found = self._prefilters.get(key)
        if found is None:
            where = where_clause(active, self._taxonomy_keys, self._auto_include)
            vector = self.vector
            in_memory = (
                self.lexical is not None
                or self.spelling is not None
                or self.heading is not None
                or (vector is not None and vector.vectors is not None)
            )
            ann_index = vector.ann_index if vector is not None else None
            wanted = where is not None and (ann_index is not None or in_memory)
            equals = self._catalog.equals
            mask = filter_mask(active, self._taxonomy_keys, equals, self._auto_include) if wanted else None
            share = float(mask.mean()) if mask is not None and len(mask) else 1.0
            if len(self._prefilters) >= _PREFILTER_MEMO:
                self._prefilters.clear()
            found = self._prefilters[key] = Prefilter(where, share, mask)
        return found

    async def legs(self, query: Query, prefilter: Prefilter, fetch: int) -> dict[str, Leg]:
        """Every leg's rows for ``query``, at most ``fetch`` each, in ranking order (:data:`~docs_mcp_core.search.legs.LEG_ORDER`)."""
        return _in_order((await self._run(query, prefilter, fetch))[0])

    async def pools(
        self, query: Query, prefilter: Prefilter, fetch: int, deep: int, wanted: int
    ) -> tuple[dict[str, Leg], dict[str, Leg] | None]:
        """The legs at ``fetch`` rows each and, when the page of ``wanted`` hits will likely need
        them, at ``deep`` rows each (else ``None``), from one run of the retrievers.

        A corpus that holds each chunk text :attr:`copies` times fills a pool of ``fetch`` rows with
        about ``fetch / copies`` distinct chunks (byte-identical rows collapse into one hit), too
        few for a page of ``wanted`` hits when ``copies * wanted > fetch``: the search then ranks
        the deeper pool too. Each in-memory leg's best ``fetch`` rows are the first ``fetch`` of
        its best ``deep`` (equal scores in position order), so those are cut from the deeper run;
        the heading leg, which keeps the weak rows another leg found, is finished for each."""
        safe = self.lexical is not None and not self.phrase_slop
        if not safe or deep <= fetch or self.copies * wanted <= fetch or not self._prefix_vectors:
            return await self.legs(query, prefilter, fetch), None
        deeper, nearest = await self._run(query, prefilter, deep)
        first = {
            name: leg if name in _UNCUT else (leg[0][:fetch], leg[1][:fetch]) for name, leg in deeper.items()
        }
        if nearest is not None:
            assert self.heading is not None
            found = [leg[0] for name, leg in first.items() if name != "heading"]
            first["heading"] = self.heading.finish(nearest, prefilter.mask, fetch, found)
        return _in_order(first), _in_order(deeper)

    @functools.cached_property
    def copies(self) -> float:
        """Rows per distinct chunk text (:meth:`~.row_catalog.RowCatalog.copies`), found once."""
        return self._catalog.copies()

    @property
    def _prefix_vectors(self) -> bool:
        """Whether the vector leg (if any) ranks in memory, exactly (a LanceDB ANN query's best
        rows at one depth need not begin its best rows at another)."""
        return self.vector is None or self.vector.vectors is not None

    async def _run(
        self, query: Query, prefilter: Prefilter, fetch: int
    ) -> tuple[dict[str, Leg], Nearest | None]:
        """Every leg's rows at most ``fetch`` each, and what the heading leg's thread found (if any)."""
        where, mask = prefilter.where, prefilter.mask
        slop = self.phrase_slop
        lexical = self.lexical
        legs: dict[str, asyncio.Future[Leg]] = {}
        # a query that writes a flag or a key names a definition exactly: the anchor cue finds it,
        # and headings or chunks that only mean something close (other commands' options)
        # compete with it, so the heading and vector legs stay out.
        # A word that is only hyphenated does so where the corpus defines it (requires-python),
        # not as prose (re-open, two-factor, long-running); a key in a file named by its stem
        # ("managed in pyproject") where the corpus writes that file's name (pyproject.toml).
        spelling = self.spelling
        file_key: list[str] = []
        if spelling is not None and (in_file := query.key_in_bare_file) and spelling.holds_any([in_file[1]]):
            file_key = in_file[0]
        named = bool(file_key) or (
            query.names_a_definition
            and (query.writes_a_key_shape or spelling is None or spelling.holds_any(query.anchor_spellings))
        )
        # so does an environment variable's name (UV_CACHE_DIR) that some chunk spells: the
        # headings nearest its words name a command (`uv cache dir`), not the variable
        named = named or bool(
            query.constants and spelling is not None and spelling.holds_any([query.constants])
        )
        heading = (
            self.heading.start(query.embedded, mask, fetch)
            if self.heading is not None and not named
            else None
        )
        # LanceDB queries start as soon as they are created; the in-memory legs run meanwhile
        if self.vector is not None and not named:
            legs["vector"] = asyncio.ensure_future(self.vector.nearest(query.embedded, prefilter, fetch))
        if lexical is None or slop:
            from lancedb.query import PhraseQuery  # see fts(); a search in memory never imports it

            text = query.phrase_text(ORIGINAL_TEXT_STOP_WORDS)  # what the table's content_text drops
            phrase_q = PhraseQuery(text, PHRASE_COLUMN, slop=slop, document_granularity=None)
            legs["phrase"] = asyncio.ensure_future(self.fts(phrase_q, where, fetch))
        if lexical is not None:
            if legs:
                await asyncio.sleep(0)  # let the LanceDB legs submit their queries
            terms, extra = self._match_terms(query, mask)
            boosts = self.boosts(query)
            found = {"match": lexical.search_terms(terms, boosts, mask=mask, limit=fetch, extra=extra)}
            if not slop:
                found["phrase"] = lexical.phrase_terms(query.phrase, PHRASE_COLUMN, mask=mask, limit=fetch)
        else:
            legs["match"] = asyncio.ensure_future(self.fts(self._match_query(query), where, fetch))
            found = {}
        spellings = query.spellings if spelling is not None else []
        if file_key:
            spellings = [*spellings, file_key]
        if spellings:
            assert self.spelling is not None
            found["spelling"] = self.spelling.leg(spellings, mask, fetch)
            if query.option_names:
                found["option"] = self.spelling.option_leg(query.option_names, mask)
            elif query.constants and _looks_up(query, sum(len(_parts(n)) for n in query.constants)):
                found["option"] = self.spelling.defining_leg(query.constants, mask)
            elif query.anchor_spellings and _looks_up(
                query, sum(len(g[0].split(".")) for g in query.anchor_spellings)
            ):
                keys = [form[len(ANCHOR_MARK) :] for group in query.anchor_spellings for form in group]
                found["option"] = self.spelling.option_leg(keys, mask)  # the section the key heads
        found.update(zip(legs, await asyncio.gather(*legs.values()), strict=True))
        nearest = None
        if heading is not None:
            assert self.heading is not None
            nearest = await asyncio.wrap_future(heading)
            found["heading"] = self.heading.finish(nearest, mask, fetch, [leg[0] for leg in found.values()])
        return found, nearest

    def _match_terms(
        self, query: Query, mask: np.ndarray | None
    ) -> tuple[list[str], dict[str, list[Posting]]]:
        """The match leg's terms (split compounds, then short forms) and the postings of joined compounds."""
        terms, prefixes, compounds = query.match_terms, self.prefixes, self.compounds
        if prefixes is None and compounds is None:
            return terms, {}
        missing = unwritten(self._vocabulary, terms, mask)  # found once, read by both
        if compounds is not None and missing:
            terms = compounds.split(query.lexical, terms, mask, missing)
        if prefixes is not None and missing:
            terms = prefixes.expand(terms, mask, missing)
        if compounds is None:
            return terms, {}
        joins = compounds.joins(query.lexical, mask) + inverse_joins(query.terms, compounds.fields, mask)
        return terms, compounds.alternatives(joins, terms)

    async def hint_matches(
        self, query: Query, prefilter: Prefilter, legs: Mapping[str, Leg], limit: int
    ) -> np.ndarray:
        """Catalog positions of the best ``limit`` rows the match retriever finds for ``query``
        without the request's filters (what a zero-result hint suggests filter values from): the
        match leg of ``legs`` when the request has no filters or some leg found rows (a search that
        found rows has no hint to give), else one more match without the prefilter."""
        if prefilter.where is None or any(len(leg[0]) for leg in legs.values()):
            return legs.get("match", EMPTY_LEG)[0][:limit]
        if self.lexical is not None:
            return self.lexical.search_terms(query.match_terms, self.match_boosts, mask=None, limit=limit)[0]
        return (await self.fts(self._match_query(query), None, limit))[0]

    def boosts(self, query: Query) -> Mapping[str, float]:
        """The match columns' boosts for ``query``: :attr:`described_boosts` for a question in the
        reader's own words (:func:`~docs_mcp_core.search.intent.describes`), else :attr:`match_boosts`."""
        if describes(query.coverage_terms, query.names_identifier):
            return self.described_boosts
        return self.match_boosts

    def _match_query(self, query: Query) -> Any:
        """The match leg as a LanceDB multi-column full-text query (see :meth:`fts`)."""
        from lancedb.query import FullTextOperator, MultiMatchQuery

        boosts = self.boosts(query)
        return MultiMatchQuery(
            query.match, list(boosts), boosts=list(boosts.values()), operator=FullTextOperator.OR
        )

    async def fts(self, query: Any, where: str | None, fetch: int) -> Leg:
        """One LanceDB full-text query (its query classes are imported where they are used, once
        :func:`~docs_mcp_core.index.lancedb_import.import_lancedb` has loaded LanceDB for the index)."""
        builder = self._atable.query().nearest_to_text(query).with_row_id()
        if where:
            builder = builder.where(where)
        try:
            rows = await builder.select(["_score"]).limit(fetch).to_arrow()
        except Exception as exc:
            if "Invalid count value" in str(exc):
                return EMPTY_LEG
            raise
        return leg_from_rows(self._catalog, rows, "_score")

    def warm(self, text: str, columns: Sequence[str], run: Callable[[Any], Any]) -> None:
        """One cheap query per full-text column, so that the first real search is as fast as the rest."""
        from lancedb.query import FullTextOperator, MultiMatchQuery  # see fts()

        async def queries() -> None:
            found = [MultiMatchQuery(text, [c], boosts=[1.0], operator=FullTextOperator.OR) for c in columns]
            await asyncio.gather(*(self.fts(q, None, 1) for q in found))

        run(queries())


def _parts(name: str) -> list[str]:
    return [p for p in name.split("_") if p]


def _looks_up(query: Query, named: int) -> bool:
    """Whether a query that writes a variable's or a key's name (``named`` of its words) asks only
    for it: at most :data:`LOOKUP_WORDS` words beside (``CARGO_HOME``, ``what does CARGO_HOME do``,
    ``build.jobs in config.toml``)."""
    return len(query.words) - named <= LOOKUP_WORDS


def _in_order(found: Mapping[str, Leg]) -> dict[str, Leg]:
    """``found``'s legs in ranking order (:data:`~docs_mcp_core.search.legs.LEG_ORDER`)."""
    return {name: found[name] for name in LEG_ORDER if name in found}
