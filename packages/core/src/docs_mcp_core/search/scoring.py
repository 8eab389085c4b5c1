"""How a LanceDB version scores full text, for the in-memory retrievers that reproduce it.

:class:`Scoring` holds what differs between the LanceDB the default ranking builds and searches
with (0.40: :data:`LANCEDB_SCORING`) and the one the original docs-mcp used (0.26.2:
:data:`ORIGINAL_SCORING`): stop words, which rows BM25's statistics count, repeated query terms, and
phrase gaps. :mod:`docs_mcp_core.search.lexical_index` scores with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from docs_mcp_core.search.analyzer import (
    LANCEDB_0_26_STOP_WORDS,
    LANCEDB_STOP_WORDS,
    ORIGINAL_TEXT_COLUMNS,
    ORIGINAL_TEXT_STOP_WORDS,
)

__all__ = ["LANCEDB_SCORING", "ORIGINAL_SCORING", "Scoring"]


@dataclass(frozen=True)
class Scoring:
    """How a LanceDB version scores full text: its stop words, whether BM25's ``N`` and average
    length count every row or only the rows with a term in the column, whether a term repeated
    in the query counts as often as it occurs or once, and whether a phrase query keeps the gaps
    its stop words leave (0.40) or reads its other words as adjacent (0.26: ``rerun if changed``
    finds ``rerun changed`` and never the text ``rerun-if-changed``, whose index keeps the gap).

    ``stop_words`` are the words a query drops; ``text_stop_words``, when given, the ones the
    indexes of ``content_text`` and ``heading`` drop (the original's, in every table docs-mcp
    builds: :data:`~docs_mcp_core.search.analyzer.ORIGINAL_TEXT_STOP_WORDS`)."""

    name: str
    stop_words: frozenset[str]
    counts_every_row: bool
    counts_repeated_terms: bool
    phrase_gaps: bool = True
    text_stop_words: frozenset[str] | None = None

    def column_stop_words(self, column: str) -> frozenset[str]:
        """The stop words the index of ``column`` drops."""
        if self.text_stop_words is not None and column in ORIGINAL_TEXT_COLUMNS:
            return self.text_stop_words
        return self.stop_words


# LanceDB 0.40, the version docs-mcp builds and queries with.
LANCEDB_SCORING = Scoring(
    "lancedb-0.40",
    LANCEDB_STOP_WORDS,
    counts_every_row=False,
    counts_repeated_terms=True,
    text_stop_words=ORIGINAL_TEXT_STOP_WORDS,
)
# @lancedb/lancedb 0.26.2, the version the original docs-mcp indexed and searched with; the
# `original` ranking scores with it (tests/core/test_lexical_index.py checks scores recorded from it).
ORIGINAL_SCORING = Scoring(
    "lancedb-0.26",
    LANCEDB_0_26_STOP_WORDS,
    counts_every_row=True,
    counts_repeated_terms=False,
    phrase_gaps=False,
)
