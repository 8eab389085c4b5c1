"""Every one at once: the operation named for all of its resource's items.

Why, for documentation in general: references name the operation that acts on every item at once
after the single one, with ``All`` after its verb (``archive`` and ``archiveAll``, ``markAsRead``
and ``markAllAsRead``, ``deleteAll``), and a reader asks for it by quantifying the object of that
same verb (``archive every notification in the inbox``, ``mark all notifications as read``). The
lexical legs see the verb in both operations' headings and ``all`` in neither a question's object
nor the single operation, so the single one ties or wins. For a query that says ``all`` or
``every``, the operations among the best rows whose name is a verb the query says, then ``all``
(``archiveAll``, ``markAllAsRead``), are multiplied by ``1 + weight``. A verb the query does not say
(``replace all push device tokens`` beside ``deleteAll``) raises nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from docs_mcp_core.ranking import identifier_parts
from docs_mcp_core.search.analyzer import analyze_words
from docs_mcp_core.search.coverage import COVERAGE_DEPTH, coverage_rows
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.subsections import is_operation_heading

__all__ = ["EVERY_WORDS", "asks_for_every", "every_factors", "weigh_every"]

EVERY_WORDS = frozenset({"all", "every"})


def asks_for_every(terms: Sequence[str]) -> bool:
    """Whether the query's lower-case ``terms`` say ``all`` or ``every``."""
    return not EVERY_WORDS.isdisjoint(terms)


async def every_factors(
    reader: RowReader, positions: np.ndarray, terms: Sequence[str], weight: float
) -> np.ndarray:
    """``1 + weight`` for the rows at ``positions`` whose own heading is an operation's name made of
    a verb the query's ``terms`` say (stemmed) and then ``all`` (``archiveAll``); else 1."""
    factors = np.ones(len(positions), dtype=np.float64)
    if not len(positions):
        return factors
    said = set(analyze_words(list(terms))) - {""}
    (heads,) = await reader.values(positions, ("heading",))
    for i, head in enumerate(heads):
        if not is_operation_heading(head):
            continue
        parts = identifier_parts(head.strip())
        if len(parts) >= 2 and parts[1] == "all" and analyze_words(parts[:1])[0] in said:
            factors[i] = 1.0 + weight
    return factors


async def weigh_every(
    reader: RowReader,
    rows: np.ndarray,
    score: np.ndarray,
    matched: np.ndarray,
    terms: Sequence[str],
    weight: float,
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`every_factors` of the
    best rows with a full-text match (``matched``)."""
    top = coverage_rows(rows, score, matched, COVERAGE_DEPTH)
    score[top] *= await every_factors(reader, rows[top], terms, weight)
