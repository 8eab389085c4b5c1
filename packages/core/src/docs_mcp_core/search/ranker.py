"""The ranking of a search: from the legs' rows to the ordered rows a page is cut from.

Everything between retrieval (:mod:`.retrieval`, which returns the legs) and the page of hits
(:mod:`.hits`) is here, in the order a request goes through it (:meth:`Ranker.rank`):

1. **Contributions.** Each leg that found a row adds to its score. The default ranking reads
   :data:`DEFAULT_CONTRIBUTIONS`, one function per leg (a new leg adds its function there and its
   name to :data:`~docs_mcp_core.search.legs.LEG_ORDER`): the match leg's BM25 scores normalised
   by the best one, smaller rank-based phrase and vector contributions and the spelling leg's
   credits scaled by the best one. The original recipe (:func:`original_contributions`) is weighted
   reciprocal-rank fusion, ``w / (k + rank)`` with k = 60, a row counting at its best rank.
   :func:`summed` adds them up per row, in leg order.
2. **Multipliers** (default ranking): the row's static prior (:func:`docs_mcp_core.ranking.static_prior`),
   the query's taxonomy cues (:mod:`.cues`), the rows a filter admits only by its auto-include rule
   (:func:`.filters.admitted_by_rule`: under a language filter, a guide for every language answers
   when that language's own rows do not), query-term coverage of the
   best rows (:mod:`.coverage`), then the intent signals: the operations on the page an action's
   object names (:mod:`.objects`), the plain operation (:mod:`.plain_operations`), a named type's
   fields (:mod:`.type_definitions`), sections named with the query's small words
   (:mod:`.small_words`), a later part beside its first part (:mod:`.parts`), a subsection beside its
   operation (:mod:`.subsections`), the sibling nearest the question (:mod:`.siblings`) and, for a
   description, the page opening nearest it (:mod:`.openings`).
3. **Order** (:func:`order`): scores rounded to 6 decimals, as the original rounds them, sorted
   best first; ties by path depth (default ranking), then chunk id; byte-identical chunks give one
   hit. Then near-identical hits that differ only by a collapse key (the same method in three SDK
   languages) are collapsed when that key is not filtered.

The signals are described, with what each bought, in ``docs/ranking.md``. The functions are pure
array code over the :class:`~docs_mcp_core.search.row_catalog.RowCatalog`'s columns; only coverage
reads text, through :class:`~docs_mcp_core.search.rows.RowReader`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from docs_mcp_core.search.coverage import (
    COVERAGE_DEPTH,
    asks_for_variable,
    coverage_factor,
    coverage_rows,
    coverage_texts,
    weigh_neighbours,
    weigh_variables,
)
from docs_mcp_core.search.cues import cue_factors, query_cues
from docs_mcp_core.search.every import asks_for_every, weigh_every
from docs_mcp_core.search.filters import admitted_by_rule
from docs_mcp_core.search.intent import (
    UNDO_GROUP,
    IntentIndex,
    describes,
    lists_things,
    load_intent,
    model_factors,
    query_verbs,
    verb_factors,
)
from docs_mcp_core.search.legs import Leg
from docs_mcp_core.search.objects import weigh_objects
from docs_mcp_core.search.openings import Openings
from docs_mcp_core.search.parts import damp_later_parts
from docs_mcp_core.search.plain_operations import weigh_plain_operations
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.row_catalog import RowCatalog, members
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.siblings import sibling_boost
from docs_mcp_core.search.small_words import weigh_small_words
from docs_mcp_core.search.subsections import damp_subsections
from docs_mcp_core.search.topics import (
    TITLE_MAX_WORDS,
    TOPIC_QUALIFIERS,
    neutral_introductions,
    topic_boost,
    topic_key,
)
from docs_mcp_core.search.type_definitions import weigh_type_definitions

if TYPE_CHECKING:
    from docs_mcp_core.metadata import AutoInclude

__all__ = [
    "DEFAULT_CONTRIBUTIONS",
    "RRF_K",
    "Ranked",
    "Ranker",
    "Ranking",
    "RankingWeights",
    "continued",
    "default_contributions",
    "first_of_each_group",
    "order",
    "original_contributions",
    "summed",
]

RRF_K = 60
# a word in this share of the sections' text names the corpus, the product (uv in 94 % of uv's
# docs, cargo 85 %, fastify 77 %; a topic word at most 44 %), not a page of it
CORPUS_WORD_SHARE = 0.6


@dataclass(frozen=True)
class RankingWeights:
    """Weights of the default ranking (documented in docs/ranking.md with what each bought)."""

    heading: float = 3.0
    text: float = 1.0
    described_text: float = 2.0  # the text boost's factor for a question in the reader's own words
    path: float = 2.0
    phrase: float = 0.25
    vector: float = 0.5
    cue: float = 0.5
    spelling: float = 0.6
    heading_path: float = 0.5
    topic: float = 1.0
    verb: float = 0.3
    model: float = 0.3
    described_model: float = 0.3  # data-model damping for a description without a table verb
    sibling: float = 0.05
    option: float = 0.5  # the block whose id names the query's option with its command
    variable: float = 0.5  # rows headed by an environment variable's name, for a query asking for one
    neighbour: float = 0.5  # damping of the rows a contrast names (``..., not the applications``)
    object: float = 0.3  # rows of the page the action's object names (``delete a library``)
    later_part: float = 0.2  # damping of a section's later part when its first part ranks too
    subsection: float = 0.2  # damping of an operation's subsection when the operation ranks too
    every: float = 0.3  # the ``verbAll`` operations, for a query that says all or every
    plain_operation: float = 0.2  # ``delete link``: links.delete, not links.deleteMany
    type_definition: float = 0.25  # ``components.DomainSchema``: its page's fields section
    opening: float = 0.1  # the nearest page opening, for a description (``search/openings.py``)
    small_words: float = 0.3  # ``csv to json``, not ``json to csv``; ``sign in``, not ``sign up``
    included: float = 0.8  # rows a language filter admits only by the auto-include rule (guides)


@dataclass(frozen=True)
class Ranked:
    """A fused ranking: catalog positions, best first, and their (rounded) scores."""

    positions: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def keep(self, mask: np.ndarray) -> Ranked:
        return Ranked(self.positions[mask], self.scores[mask])


@dataclass(frozen=True)
class Ranking:
    """What :meth:`Ranker.rank` returns: the ordered rows; the candidates before near-identical
    hits were collapsed (what facets count); the scored rows in order before byte-identical and
    near-identical hits were left out (what :meth:`Ranker.extend` continues); and the query-term
    coverage factors found, by catalog position (:meth:`Ranker.extend` ranks the same query, so
    the rows both rankings measure are measured once)."""

    ordered: Ranked
    candidates: Ranked
    scored: Ranked
    coverage: dict[int, float] = field(default_factory=dict, compare=False, repr=False)


Contributions = tuple[list[np.ndarray], list[np.ndarray]]  # per leg: the rows and what each adds

# ── 1. contributions: what each leg adds to a row's score ─────────────────────────────────────


def _match(leg: Leg, weights: RankingWeights) -> np.ndarray:
    """BM25 normalised by the best score: identical text in different places scores the same."""
    return leg[1] / (float(leg[1].max()) or 1.0)


def _phrase(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return weights.phrase / (RRF_K + np.arange(1, len(leg[0]) + 1, dtype=np.float64))


def _vector(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return weights.vector * (RRF_K + 1) / (RRF_K + np.arange(1, len(leg[0]) + 1, dtype=np.float64))


def _spelling(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return weights.spelling * leg[1] / float(leg[1].max())


def _option(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return np.full(len(leg[0]), weights.option)


def _heading_path(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return weights.heading_path * (RRF_K + 1) / (RRF_K + np.arange(1, len(leg[0]) + 1, dtype=np.float64))


# A leg's contribution to the default ranking, by leg name: ``(leg, weights) -> per-row addend``.
DEFAULT_CONTRIBUTIONS: dict[str, Callable[[Leg, RankingWeights], np.ndarray]] = {
    "match": _match,
    "phrase": _phrase,
    "vector": _vector,
    "spelling": _spelling,
    "option": _option,
    "heading": _heading_path,
}


def default_contributions(legs: Mapping[str, Leg], weights: RankingWeights) -> Contributions:
    """Every non-empty leg's rows and :data:`DEFAULT_CONTRIBUTIONS`, in the legs' order."""
    positions: list[np.ndarray] = []
    contributions: list[np.ndarray] = []
    for name, leg in legs.items():
        if len(leg[0]):
            positions.append(leg[0])
            contributions.append(DEFAULT_CONTRIBUTIONS[name](leg, weights))
    return positions, contributions


def original_contributions(legs: Mapping[str, Leg], weights: Mapping[str, float]) -> Contributions:
    """Weighted reciprocal-rank fusion (k = 60): each leg's rows and ``weight / (k + rank)``."""
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
    return positions, contributions


def summed(
    positions: Sequence[np.ndarray], contributions: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Every row found by some leg (ascending positions) and the sum of its contributions."""
    if not positions:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    rows, inverse = np.unique(np.concatenate(positions), return_inverse=True)
    score = np.zeros(len(rows), dtype=np.float64)
    np.add.at(score, inverse, np.concatenate(contributions))  # in leg order, as a row's sum
    return rows, score


# ── 2. multipliers: in Ranker._default (taxonomy cues: :mod:`.cues`, coverage: :mod:`.coverage`) ──

# ── 3. order ─────────────────────────────────────────────────────────────────────────────────


def first_of_each_group(groups: np.ndarray) -> np.ndarray:
    """Boolean mask keeping the first row of every group (negative groups are always kept)."""
    keep = groups < 0
    if keep.all():
        return keep
    _, first = np.unique(groups, return_index=True)
    keep[first] = True
    return keep


def order(
    rows: np.ndarray, score: np.ndarray, sort_rank: np.ndarray, *, depth: np.ndarray | None = None
) -> Ranked:
    """Scored rows sorted best first, scores rounded to 6 decimals; ties by ``depth`` (when given),
    then chunk id (``sort_rank``)."""
    score = np.round(score, 6)
    keys = [sort_rank[rows], *([depth[rows]] if depth is not None else []), -score]
    ranking = np.lexsort(keys)
    return Ranked(rows[ranking], score[ranking])


def continued(first: Ranked, deeper: Ranked) -> Ranked:
    """``first``, then the rows of ``deeper`` that ``first`` does not hold, in ``deeper``'s order."""
    tail = deeper.keep(~members(deeper.positions, first.positions))
    return Ranked(
        np.concatenate([first.positions, tail.positions]), np.concatenate([first.scores, tail.scores])
    )


def _wanted(intent: IntentIndex, query: Query, named: Sequence[str]) -> int:
    """The verb groups ``query`` asks for (:meth:`~.intent.IntentIndex.wanted`), or, for a question
    of three words or more that names none and no identifier, the list group when it starts with
    things in the plural (:func:`~.intent.lists_things`)."""
    wanted = intent.wanted(query_verbs(query.verb_terms), query.terms)
    if not wanted and len(query.coverage_terms) >= 3 and not query.names_identifier:
        return lists_things(query.terms, named)
    return wanted


# ── the whole ranking of one request ─────────────────────────────────────────────────────────


class Ranker:
    """Ranks the legs of a request (see the module docstring), for one open index.

    ``default`` selects the default ranking (else the original recipe, with the legs' weights
    ``original_weights``); ``dedup`` keeps one of byte-identical chunks; ``collapse_keys`` are the
    taxonomy keys whose values near-identical hits may differ by.
    """

    def __init__(
        self,
        *,
        catalog: RowCatalog,
        reader: RowReader,
        taxonomy: Mapping[str, Sequence[str]],
        collapse_keys: Sequence[str],
        default: bool,
        weights: RankingWeights,
        original_weights: Mapping[str, float],
        dedup: bool,
        intent: IntentIndex | None = None,
        auto_include: AutoInclude | None = None,
        text_share: Callable[[str], float] | None = None,
        files: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """``intent``: the intent signals' attributes, when the derived files hold them (else they
        are derived on first use, with the pages' titles that ``files``, metadata.json's map, lists);
        ``auto_include``: the index's auto-include rule of its filters; ``text_share``: the share of
        rows whose text holds a word (for the words that name the whole corpus, which name no topic)."""
        self._catalog = catalog
        self._reader = reader
        self._taxonomy = {k: list(v) for k, v in taxonomy.items()}
        self._collapse_keys = list(collapse_keys)
        self.default = default
        self.weights = weights
        self._original_weights = dict(original_weights)
        self._dedup = dedup
        self._intent: IntentIndex | None = intent
        self._files = files
        self._intent_loaded = intent is not None
        self._openings = Openings(catalog.chunk_ids, catalog.openings)
        self._auto_include = auto_include
        self._text_share = text_share

    async def rank(self, query: Query, filters: Mapping[str, str], legs: Mapping[str, Leg]) -> Ranking:
        """The rows of ``legs`` in ranking order, with ``filters`` the request's active filters."""
        coverage: dict[int, float] = {}
        scored = await self._default(query, filters, legs, coverage) if self.default else self._original(legs)
        return self._distinct(scored, filters, coverage)

    async def extend(
        self, first: Ranking, query: Query, filters: Mapping[str, str], legs: Mapping[str, Leg]
    ) -> Ranking:
        """``first`` continued by the rows of deeper ``legs`` it does not hold, in their own ranking
        order: the rows ``first`` ordered keep their places, so pages cut from either agree."""
        coverage = first.coverage
        deeper = await self._default(query, filters, legs, coverage) if self.default else self._original(legs)
        return self._distinct(continued(first.scored, deeper), filters, coverage)

    def _distinct(self, scored: Ranked, filters: Mapping[str, str], coverage: dict[int, float]) -> Ranking:
        """``scored`` without the byte-identical chunks after the first (default ranking) and then
        without near-identical hits that differ only by a collapse key not in ``filters``. Both keep
        the first row of a group, so a longer ``scored`` with the same beginning gives the same
        beginning."""
        ranked = scored
        dedup = self._catalog.dedup_group if self.default and self._dedup else None
        if dedup is not None and len(ranked):
            ranked = ranked.keep(first_of_each_group(dedup[ranked.positions]))
        candidates = ranked
        live = [k for k in self._collapse_keys if k not in filters]
        if live and len(ranked):
            groups = self._catalog.collapse_groups(live)[ranked.positions]
            ranked = ranked.keep(first_of_each_group(groups))
        return Ranking(ordered=ranked, candidates=candidates, scored=scored, coverage=coverage)

    def _taxonomy_factors(
        self, rows: np.ndarray, cues: Mapping[str, str], filters: Mapping[str, str]
    ) -> np.ndarray | float:
        """Per-row multiplier of the query's taxonomy ``cues`` and of the request's ``filters``: a
        row a filter admits only by its auto-include rule (a guide for every language, under a
        language filter) answers when the filter's own rows do not."""
        weights = self.weights
        factor: np.ndarray | float = 1.0
        if cues:
            factor = cue_factors(rows, cues, self._catalog.codes, weights.cue)
        if weights.included != 1.0 and filters:
            taxonomy_keys = list(self._taxonomy)
            included = admitted_by_rule(rows, filters, taxonomy_keys, self._catalog.codes, self._auto_include)
            if included is not None:
                factor = factor * np.where(included, weights.included, 1.0)
        return factor

    def _names_corpus(self, word: str) -> bool:
        """Whether ``word`` names the whole corpus (the product: in most sections' text), not a topic."""
        return self._text_share is not None and self._text_share(word) >= CORPUS_WORD_SHARE

    def _leaves_topic(self, word: str) -> bool:
        """Whether a topic query's ``word`` is left out of the page name it asks for when the whole
        query names no page: a qualifier (``tools docs``) or the product's name (``tools in uv``)."""
        return word in TOPIC_QUALIFIERS or self._names_corpus(word)

    def _topic(
        self, intent: IntentIndex, terms: Sequence[str], cues: Mapping[str, str], filters: Mapping[str, str]
    ) -> np.ndarray:
        """The introductions of the page a topic query names, by the first of its readings that
        names one: without the taxonomy values it says or filters on; then also without the product's
        name or a qualifier; then with the values it says (``HMR API`` under a kind ``api``); then, for
        a longer query, when its words are a page's whole name."""
        named = [*cues.values(), *filters.values()]
        topic = intent.topic_rows(topic_key(terms, named))
        if not len(topic):
            topic = intent.topic_rows(topic_key(terms, named, self._leaves_topic))
        if not len(topic) and cues:
            topic = intent.topic_rows(topic_key(terms, [*filters.values()]))
        if not len(topic):  # a longer title asked whole, by its exact name only: Using uv in GitHub Actions
            key = topic_key(terms, named, max_words=TITLE_MAX_WORDS)
            topic = intent.topics.get(key, topic) if key else topic
        return topic

    def _original(self, legs: Mapping[str, Leg]) -> Ranked:
        """Weighted reciprocal-rank fusion (k = 60), ties by chunk id: the original recipe."""
        rows, score = summed(*original_contributions(legs, self._original_weights))
        return order(rows, score, self._catalog.sort_rank)

    async def _default(
        self, query: Query, filters: Mapping[str, str], legs: Mapping[str, Leg], coverage: dict[int, float]
    ) -> Ranked:
        """Score fusion with identifier-aware fields, static priors, taxonomy cues, the intent
        signals (:mod:`.intent`) and query-term coverage (``coverage``: the factors of this query
        already found, by catalog position; those found here are added)."""
        catalog = self._catalog
        weights = self.weights
        rows, score = summed(*default_contributions(legs, weights))
        cues: dict[str, str] = {}
        if len(rows):
            score = score * catalog.prior[rows]
            cues = query_cues(query.words, self._taxonomy, filters)
            score = score * self._taxonomy_factors(rows, cues, filters)
        match = legs.get("match")
        matched = match[0] if match is not None else rows[:0]
        intent = await self._intent_index() if len(rows) else None
        wanted = _wanted(intent, query, [*cues.values(), *filters.values()]) if intent is not None else 0
        if intent is not None and wanted:
            if weights.verb and len(matched):
                top = coverage_rows(rows, score, matched, COVERAGE_DEPTH)
                score[top] *= verb_factors(intent.verbs[rows[top]], wanted, weights.verb)
            if weights.model and not query.writes_a_key_shape:  # a definition asked by its name
                score = score * model_factors(intent.model[rows], weights.model)
        elif intent is not None and describes(query.coverage_terms, query.names_identifier):
            score = score * model_factors(intent.model[rows], weights.described_model)
        terms = query.coverage_terms
        if len(terms) >= 2 and len(matched):
            top = coverage_rows(rows, score, matched, COVERAGE_DEPTH)
            positions = rows[top].tolist()
            await self._coverage(positions, terms, bool(wanted & UNDO_GROUP), coverage)
            score[top] *= np.fromiter((coverage[p] for p in positions), np.float64, len(top))
        if wanted and weights.object and len(matched):
            await weigh_objects(self._reader, rows, score, query.focus, weights.object)
        if wanted and weights.plain_operation and len(matched):
            await weigh_plain_operations(self._reader, rows, score, query, weights.plain_operation)
        if weights.every and len(matched) and asks_for_every(query.terms):
            await weigh_every(self._reader, rows, score, matched, query.terms, weights.every)
        if weights.variable and len(matched) and asks_for_variable(query.terms):
            await weigh_variables(self._reader, rows, score, matched, weights.variable)
        if query.contrast_terms and weights.neighbour and len(matched):
            await weigh_neighbours(
                self._reader, rows, score, matched, query.contrast_terms, weights.neighbour
            )
        if weights.small_words and catalog.chunk_ids:
            weigh_small_words(rows, score, catalog.chunk_ids, query.words, weights.small_words)
        if weights.type_definition and catalog.chunk_ids:
            weigh_type_definitions(rows, score, catalog.chunk_ids, query.text, weights.type_definition)
        if weights.later_part and catalog.chunk_ids and len(rows):
            damp_later_parts(rows, score, catalog.chunk_ids, legs.get("option"), weights.later_part)
        if weights.subsection and catalog.chunk_ids and len(rows):
            await damp_subsections(self._reader, rows, score, catalog.chunk_ids, weights.subsection)
        heading = legs.get("heading")
        if heading is not None and catalog.file_codes is not None:
            sibling_boost(rows, score, heading, catalog.file_codes, weights.sibling)
        if heading is not None and intent is not None and describes(terms, query.names_identifier):
            self._openings.boost(rows, score, heading, intent.model, weights.opening)
        if intent is not None and weights.topic and not query.writes_a_key_shape:  # a definition, no topic
            topic = self._topic(intent, query.terms, cues, filters)
            topic = neutral_introductions(topic, catalog.taxonomy, {*filters, *cues})
            topic_boost(rows, score, catalog.prior, topic, weights.topic, catalog.file_codes)
        return order(rows, score, catalog.sort_rank, depth=catalog.depth)

    async def _coverage(
        self, positions: list[int], terms: Sequence[str], undo: bool, coverage: dict[int, float]
    ) -> None:
        """Add to ``coverage`` the query-term coverage factor of each of ``positions`` it lacks."""
        missing = [p for p in dict.fromkeys(positions) if p not in coverage]
        if missing:
            texts = await coverage_texts(self._reader, np.array(missing, dtype=np.int64))
            coverage.update(zip(missing, (coverage_factor(t, terms, undo) for t in texts), strict=True))

    async def warm(self) -> None:
        """Derive what the default ranking's first search would (the intent signals' attributes)."""
        if self.default:
            await self._intent_index()
            self._openings.mask  # noqa: B018 - which rows open their page, read from the chunk ids

    async def _intent_index(self) -> IntentIndex | None:
        """The intent signals' per-row attributes, derived on first use (:func:`.intent.load_intent`)."""
        if not self._intent_loaded:
            self._intent = await load_intent(self._catalog, self._reader, self._files)
            self._intent_loaded = True
        return self._intent
