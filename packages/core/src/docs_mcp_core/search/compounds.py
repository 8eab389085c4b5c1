"""Compounds: two words a reader writes apart that the docs write as one, and the reverse.

Docs write a two-word name as one lower-case word in folder and file names, headings and code
(``paymentlinks``, ``environmentvariables``, ``webhookendpoints``); readers write it apart or
hyphenated (``payment links``, ``re-open``, ``sign in``), or join what the docs write apart. The
default ranking reads the query against the corpus's own vocabulary, over the match leg's columns,
at query time:

* **Joining.** Two adjacent query words, apart or hyphenated, the first not a stop word
  (:data:`~docs_mcp_core.search.query.STOP_WORDS`), whose concatenation (analysed like the index's
  text) is a term that at least :data:`JOIN_MIN_ROWS` rows write in one column, one of them a row
  the filters admit, are also searched as that term. The term is an alternative to the pair, not a
  word of its own: in each column, a row that writes it scores the better of what the pair's words
  score there and what they would score if they occurred as often as the compound does (the
  compound's term-frequency weight times the pair's IDF). So a rare compound does not outweigh
  the words (as an extra match term with its own IDF it did: ``docs/ranking.md``).
* **Splitting.** A query word that no row the filters admit writes, in no match column, is
  searched as the two words it splits into, when a row the filters admit writes them as a phrase
  in ``content_text`` (each part at least :data:`SPLIT_MIN_CHARS` letters); of several splits, the
  phrase the most admitted rows write.

Both are linear in the query's words (at most 64) and look up only terms and postings.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from docs_mcp_core.search.analyzer import LANCEDB_STOP_WORDS, WORD, analyze_words
from docs_mcp_core.search.lexical_index import FieldIndex
from docs_mcp_core.search.match_pruning import Posting, meet
from docs_mcp_core.search.prefixes import unwritten, written
from docs_mcp_core.search.query import STOP_WORDS

__all__ = ["JOIN_MIN_ROWS", "SPLIT_MIN_CHARS", "Compounds", "Join", "adjacent_pairs"]

JOIN_MIN_ROWS = 2  # rows that must write a joined compound in one column
SPLIT_MIN_CHARS = 3  # letters of each part of a split word
_APART = re.compile(r"[\s-]+")  # what separates two words a compound joins: spaces and hyphens
_WORDS = re.compile(f"({WORD.pattern})")


@dataclass(frozen=True)
class Join:
    """A compound term the corpus writes and the index terms of the query's two words it joins
    (a stop word has none)."""

    term: str
    parts: tuple[str, ...]


def adjacent_pairs(text: str) -> list[tuple[str, str]]:
    """The lower-cased words of ``text`` that follow each other apart or hyphenated, in order."""
    pieces = _WORDS.split(text.lower())  # separator, word, separator, word, ..., separator
    return [
        (pieces[at], pieces[at + 2])
        for at in range(1, len(pieces) - 2, 2)
        if _APART.fullmatch(pieces[at + 1])
    ]


class Compounds:
    """Joins and splits query words against the terms of the match leg's columns (``fields``);
    ``phrase`` is the column with term positions that a split's phrase is looked up in."""

    def __init__(
        self,
        fields: Mapping[str, FieldIndex],
        phrase: FieldIndex | None,
        stop_words: frozenset[str] = LANCEDB_STOP_WORDS,
    ) -> None:
        self._fields = dict(fields)
        self._phrase = phrase
        self._stop_words = stop_words

    @property
    def fields(self) -> Mapping[str, FieldIndex]:
        """The match leg's columns the query's words are read against."""
        return self._fields

    def _most_rows(self, term: str) -> int:
        """The most rows that write ``term`` in one column."""
        most = 0
        for field in self._fields.values():
            index = field.terms.get(term)
            if index is not None:
                most = max(most, int(field.offsets[index + 1] - field.offsets[index]))
        return most

    def joins(self, text: str, mask: np.ndarray | None) -> list[Join]:
        """The compounds the corpus writes for adjacent words of ``text`` (see the module docstring)."""
        pairs = [(left, right) for left, right in adjacent_pairs(text) if left not in STOP_WORDS]
        joined = analyze_words([left + right for left, right in pairs], self._stop_words)
        found: dict[str, Join] = {}
        for (left, right), term in zip(pairs, joined, strict=True):
            if not term or term in found or self._most_rows(term) < JOIN_MIN_ROWS:
                continue
            parts = tuple(p for p in analyze_words([left, right], self._stop_words) if p)
            if parts and term not in parts and written(self._fields.values(), term, mask):
                found[term] = Join(term, parts)
        return list(found.values())

    def split(
        self, text: str, terms: Sequence[str], mask: np.ndarray | None, missing: Collection[str] | None = None
    ) -> list[str]:
        """``terms`` with the term of each word of ``text`` that no admitted row writes replaced by
        the two words of its best split (see the module docstring); ``missing`` are the terms no
        admitted row writes when the caller has found them (:func:`~.prefixes.unwritten`)."""
        if missing is None:
            missing = unwritten(self._fields.values(), terms, mask)
        if self._phrase is None or not missing:
            return list(terms)
        words = [
            w
            for w in dict.fromkeys(WORD.findall(text.lower()))
            if len(w) >= 2 * SPLIT_MIN_CHARS and w.isalpha()
        ]
        parts: dict[str, list[str]] = {}
        for word, term in zip(words, analyze_words(words, self._stop_words), strict=True):
            if term in missing and term not in parts and (best := self._best_split(word, mask)):
                parts[term] = best
        if not parts:
            return list(terms)
        return [part for term in terms for part in parts.get(term, [term])]

    def _best_split(self, word: str, mask: np.ndarray | None) -> list[str]:
        """The two terms of ``word``'s split that the most admitted rows write as a phrase (none: [])."""
        phrase = self._phrase
        assert phrase is not None
        cuts = range(SPLIT_MIN_CHARS, len(word) - SPLIT_MIN_CHARS + 1)
        halves = analyze_words([w for at in cuts for w in (word[:at], word[at:])], self._stop_words)
        best: list[str] = []
        most = 0
        for first, second in zip(halves[::2], halves[1::2], strict=True):
            if not first or not second or first not in phrase.terms or second not in phrase.terms:
                continue
            rows = phrase.phrase_rows([(first, 0), (second, 1)])
            count = int(np.count_nonzero(mask[rows])) if mask is not None else len(rows)
            if count > most:
                best, most = [first, second], count
        return best

    def alternatives(self, joins: Sequence[Join], terms: Sequence[str]) -> dict[str, list[Posting]]:
        """Per column, the postings that make each of ``joins`` an alternative to its words, for
        the match ``terms`` (a compound the query also writes whole is left to them)."""
        if not joins:
            return {}
        counts = Counter(terms)
        found: dict[str, list[Posting]] = {}
        for name, field in self._fields.items():
            postings = [
                p for join in joins if join.term not in counts and (p := _alternative(field, join, counts))
            ]
            if postings:
                found[name] = postings
        return found


def _alternative(field: FieldIndex, join: Join, counts: Mapping[str, int]) -> Posting | None:
    """The rows of ``field`` that write ``join.term``, each weighted by what the compound adds over
    its words' own score there (rows where the words score more are left out)."""
    index = field.terms.get(join.term)
    if index is None:
        return None
    start, end = int(field.offsets[index]), int(field.offsets[index + 1])
    rows = field.rows[start:end]
    words = np.zeros(len(rows), dtype=np.float64)
    share = 0.0  # the pair's IDF in this column (a word it does not hold counts as the compound)
    for part in join.parts:
        count = max(1, counts.get(part, 0))
        at = field.terms.get(part)
        if at is None:
            share += count * float(field.idf[index])
            continue
        factor = count * float(field.idf[at])
        share += factor
        first, last = int(field.offsets[at]), int(field.offsets[at + 1])
        where, hit = meet(rows, field.rows[first:last])
        words[hit] += factor * field.weights[first:last][where]
    gain = share * field.weights[start:end].astype(np.float64) - words
    keep = gain > 0
    if not keep.any():
        return None
    gain = gain[keep]
    return Posting(rows[keep], gain, np.float64(1.0), float(gain.max()))
