"""What a search matched in a text: the character spans to highlight when the text is shown.

A text is read as the full-text index reads a chunk, so what is marked is what the match leg could
have found there:

* every token of the text (:data:`~docs_mcp_core.search.analyzer.WORD`) whose index term is one of
  the query's, so a stem marks its inflections (``retry`` marks ``retries``) and nothing is marked
  inside an unrelated word (``in`` is not in ``endpoints``);
* when the query is :attr:`~docs_mcp_core.search.query.Query.expanded` (the default ranking, whose
  identifier-aware columns hold every compound identifier's parts as words), each part of a
  compound identifier whose term is one of the query's (``Retry`` in ``RetryConfig`` for
  ``retry``), found by :func:`docs_mcp_core.ranking.identifier_part_spans`;
* never a stop word: the query's terms are those of its
  :attr:`~docs_mcp_core.search.query.Query.match` text without the full-text analyzer's stop words
  and without the project's :data:`~docs_mcp_core.search.query.STOP_WORDS`.

Spans are in characters (code points) of the text given; overlapping spans (a whole token that is
also an identifier part) are merged, touching ones are kept apart.
"""

from __future__ import annotations

import functools

from docs_mcp_core.ranking import identifier_part_spans
from docs_mcp_core.search.analyzer import WORD, analyze_words
from docs_mcp_core.search.query import STOP_WORDS, Query

__all__ = ["match_spans"]

# the index terms of the project's stop words ("does" is "doe"), dropped from every query
_STOP_TERMS = frozenset(analyze_words(sorted(STOP_WORDS), frozenset()))


def match_spans(query: Query, text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that the search for ``query`` matched, in order."""
    terms = _query_terms(query.match, query.analyzer_stop_words)
    if not terms or not text:
        return []
    spans = _matching(text, [(m.start(), m.end()) for m in WORD.finditer(text)], terms, query)
    if query.expanded:
        spans += _matching(text, identifier_part_spans(text), terms, query)
        spans.sort()
    return _merged(spans)


@functools.lru_cache(maxsize=256)
def _query_terms(match: str, stop_words: frozenset[str]) -> frozenset[str]:
    words = [w for w in WORD.findall(match.lower()) if w not in STOP_WORDS]
    return frozenset(analyze_words(words, stop_words)) - _STOP_TERMS - {""}


def _matching(
    text: str, spans: list[tuple[int, int]], terms: frozenset[str], query: Query
) -> list[tuple[int, int]]:
    """The ``spans`` of ``text`` whose index term is one of ``terms``."""
    found = analyze_words([text[start:end].lower() for start, end in spans], query.analyzer_stop_words)
    return [span for span, term in zip(spans, found, strict=True) if term in terms]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
