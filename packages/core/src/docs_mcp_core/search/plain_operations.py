"""The plain operation: ``delete link`` asks for ``links.delete``, not ``links.deleteMany``.

Why, for documentation in general: a reference documents the plain operation on a resource
(``delete``, ``create``, ``list``) beside narrower ones whose names add words to the same verb
(``deleteMany``, ``createLink``, ``listVersions``, ``deleteByTransactionId``): they share the
verb, the resource's page and most of the words of their sections, so a short question that names
only the verb and the resource scores them alike, and a narrower one often first. Its name's
extra words are what it adds, and a reader who wanted it would have said them.

For a query that names an action (:mod:`.intent`'s verb table) with at most
:data:`MAX_NOUNS` other content words (``delete a link``, ``list all datasets``: a description in
the reader's own words names much more than an operation's name says, and is left alone), among
the best rows whose own heading is an operation's name (one word, ``delete``, ``deleteMany``,
``DeleteMany``) starting with a verb the query says, the ones whose name has words the query does
not say are multiplied by ``1 / (1 + weight)``, when at least one such row's name says nothing
more. A word counts as said when the query writes it (stemmed) or another word of its group of the
verb table (``in bulk`` says ``many``); small words (``by``) do not count.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.ranking import identifier_parts
from docs_mcp_core.search.analyzer import analyze_words
from docs_mcp_core.search.coverage import best_rows
from docs_mcp_core.search.intent import VERB_GROUPS, is_action_word, query_verbs
from docs_mcp_core.search.query import STOP_WORDS, Query
from docs_mcp_core.search.rows import RowReader

__all__ = [
    "MAX_NOUNS",
    "PLAIN_DEPTH",
    "displaced_words",
    "plain_operation_factors",
    "said_words",
    "weigh_plain_operations",
]

MAX_NOUNS = 2  # content words besides the verb of a query that names an operation
PLAIN_DEPTH = 50  # best-scored rows compared
_NO_STOP_WORDS: frozenset[str] = frozenset()


@functools.cache
def _group_stems() -> tuple[frozenset[str], ...]:
    """The stems of each group of the verb table (stemmed once, on first use)."""
    return tuple(frozenset(analyze_words(sorted(group), _NO_STOP_WORDS)) for group in VERB_GROUPS)


def said_words(words: Sequence[str]) -> frozenset[str]:
    """The stems a query says: its own words' and those of every verb-table group it names."""
    lowered = [w.lower() for w in words]
    said = set(analyze_words(lowered, _NO_STOP_WORDS))
    for group, stems in zip(VERB_GROUPS, _group_stems(), strict=True):
        if not group.isdisjoint(lowered):
            said.update(stems)
    return frozenset(said)


def displaced_words(terms: Sequence[str]) -> frozenset[str]:
    """The stems of the verb-table groups the query writes a word of but does not ask for: a
    two-word verb reads its first word as another action (``get all links`` lists, ``set up``
    creates, ``get rid of`` deletes; :func:`~docs_mcp_core.search.intent.query_verbs`)."""
    lowered = [t.lower() for t in terms]
    wanted = query_verbs(lowered)
    displaced: set[str] = set()
    for bit, (group, stems) in enumerate(zip(VERB_GROUPS, _group_stems(), strict=True)):
        if not group.isdisjoint(lowered) and not wanted >> bit & 1:
            displaced.update(stems)
    return frozenset(displaced)


def _operation_words(heading: str) -> list[str]:
    """The stemmed words of a heading that is one identifier (``deleteMany`` → ``delet``, ``mani``),
    small words left out; none for a heading of several words."""
    text = heading.strip()
    if not text or " " in text:
        return []
    parts = [p for p in identifier_parts(text) if p not in STOP_WORDS]
    return [s for s in analyze_words(parts, _NO_STOP_WORDS) if s]


def plain_operation_factors(
    headings: Sequence[str], said: frozenset[str], weight: float, displaced: frozenset[str] = frozenset()
) -> np.ndarray:
    """Per heading (of the best rows): ``1 / (1 + weight)`` for an operation's name that starts
    with a verb in ``said`` and has a word not in ``said``, or that starts with a ``displaced`` verb
    (``get`` for ``get all links``), when some other name starts with a verb in ``said`` and has no
    such word; else 1."""
    factors = np.ones(len(headings), dtype=np.float64)
    narrower = np.zeros(len(headings), dtype=bool)
    plain = False
    for i, heading in enumerate(headings):
        words = _operation_words(heading)
        if words and words[0] in displaced:
            narrower[i] = True  # the action the query's words name only in appearance
        elif not words or words[0] not in said:
            continue  # not an operation's name, or another action's
        elif any(w not in said for w in words[1:]):
            narrower[i] = True
        else:
            plain = True
    if plain:
        factors[narrower] = 1.0 / (1.0 + weight)
    return factors


async def weigh_plain_operations(
    reader: RowReader, rows: np.ndarray, score: np.ndarray, query: Query, weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`plain_operation_factors`
    of the :data:`PLAIN_DEPTH` best rows, for a ``query`` that names an action in few words."""
    if not len(rows) or sum(1 for t in query.coverage_terms if not is_action_word(t)) > MAX_NOUNS:
        return
    top = best_rows(score, PLAIN_DEPTH)
    (headings,) = await reader.values(rows[top], ("heading",))
    said, displaced = said_words(query.words), displaced_words(query.terms)
    score[top] *= plain_operation_factors([h or "" for h in headings], said, weight, displaced)
