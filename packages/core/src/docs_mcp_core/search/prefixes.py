"""Short forms: a query word that no searchable row writes whole read as part of words they do.

Readers shorten long words (``repo`` for repository, ``config`` for configuration, ``auth`` for
authentication). When a term of the match query occurs in no row the filters admit, in no column
the match leg searches, the default ranking searches instead for the (at most
:data:`PREFIX_TERMS`) most frequent terms of the corpus that start with it, so a shortened word
finds its long form rather than nothing. Terms shorter than :data:`PREFIX_MIN_CHARS` and terms with
digits are left as they are; a word the rows do write is never expanded.

A word that starts no term may end one: generated references name a resource by a lower-case
compound whose last word is the reader's (``timeshift`` for shifts, ``paymentlink`` for links), and
never write that word alone. Such a word is searched as the most frequent terms that end with it
and begin with another term of the corpus of at least :data:`PREFIX_MIN_CHARS` letters (``time``),
so that a word merely ending like it (``passport`` for port: ``pass`` is no such term in most docs,
``report``: ``re`` is too short) is rarely taken for one.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np

from docs_mcp_core.search.filters import kept_rows
from docs_mcp_core.search.lexical_index import FieldIndex

__all__ = ["PREFIX_MIN_CHARS", "PREFIX_SCAN", "PREFIX_TERMS", "PrefixExpander", "unwritten", "written"]

PREFIX_MIN_CHARS = 3
PREFIX_TERMS = 3  # long forms searched for one short form
PREFIX_SCAN = 200  # terms with the prefix looked at (in alphabetical order) to pick the most frequent
_ANSWERS = 2_048  # answers remembered per filter (about 300 bytes each), then forgotten at once


def written(fields: Iterable[FieldIndex], term: str, mask: np.ndarray | None) -> bool:
    """Whether a row the ``mask`` admits (any row: None) writes ``term`` in one of ``fields``.
    Under a mask the answer is remembered with the mask's runs (:func:`~.filters.kept_rows`), per
    term and columns: a word no kept row writes has up to :data:`PREFIX_SCAN` longer terms asked
    about, each in every column, at every search that writes it."""
    fields = list(fields)
    if mask is None:
        return any(term in field.terms for field in fields)
    kept = kept_rows(mask)
    key = (term, *map(id, fields))  # the columns live as long as the engine, and its masks
    found = kept.answers.get(key)
    if found is None:
        if len(kept.answers) >= _ANSWERS:
            kept.answers.clear()
        found = kept.answers[key] = any(
            kept.any_of(field.rows[field.offsets[index] : field.offsets[index + 1]])
            for field in fields
            if (index := field.terms.get(term)) is not None
        )
    return found


def unwritten(fields: Iterable[FieldIndex], terms: Iterable[str], mask: np.ndarray | None) -> set[str]:
    """The ``terms`` that no row the ``mask`` admits writes in any of ``fields``."""
    fields = list(fields)
    return {term for term in dict.fromkeys(terms) if not written(fields, term, mask)}


class PrefixExpander:
    """Expands the match terms a search's rows never write, over the match leg's columns."""

    def __init__(self, fields: Mapping[str, FieldIndex]) -> None:
        self._fields = list(fields.values())
        self._sorted: list[str] | None = None  # every term, sorted; made on first need
        self._backwards: list[str] | None = None  # every term spelled backwards, sorted; likewise

    def _frequency(self, term: str) -> int:
        total = 0
        for field in self._fields:
            index = field.terms.get(term)
            if index is not None:
                total += int(field.offsets[index + 1] - field.offsets[index])
        return total

    def long_forms(self, prefix: str, mask: np.ndarray | None) -> list[str]:
        """The most frequent terms starting with ``prefix`` that a row the ``mask`` admits writes."""
        if self._sorted is None:
            self._sorted = sorted(set().union(*(f.terms for f in self._fields)))
        terms = self._sorted
        start = bisect.bisect_right(terms, prefix)
        found: list[str] = []
        for term in terms[start : start + PREFIX_SCAN]:
            if not term.startswith(prefix):
                break
            if written(self._fields, term, mask):
                found.append(term)
        found.sort(key=lambda t: (-self._frequency(t), t))
        return found[:PREFIX_TERMS]

    def compounds_ending(self, word: str, mask: np.ndarray | None) -> list[str]:
        """The most frequent terms that end with ``word`` after another term of the corpus (of at
        least :data:`PREFIX_MIN_CHARS` letters) and that a row the ``mask`` admits writes."""
        if self._sorted is None:
            self._sorted = sorted(set().union(*(f.terms for f in self._fields)))
        if self._backwards is None:
            self._backwards = sorted(t[::-1] for t in self._sorted)
        known = self._sorted
        backwards, ending = self._backwards, word[::-1]
        start = bisect.bisect_right(backwards, ending)
        found: list[str] = []
        for spelled in backwards[start : start + PREFIX_SCAN]:
            if not spelled.startswith(ending):
                break
            term = spelled[::-1]
            head = term[: -len(word)]
            at = bisect.bisect_left(known, head)
            if (
                len(head) >= PREFIX_MIN_CHARS
                and at < len(known)
                and known[at] == head
                and written(self._fields, term, mask)
            ):
                found.append(term)
        found.sort(key=lambda t: (-self._frequency(t), t))
        return found[:PREFIX_TERMS]

    def expand(
        self, terms: Sequence[str], mask: np.ndarray | None, missing: Collection[str] | None = None
    ) -> list[str]:
        """``terms`` with each one no admitted row writes replaced by its long forms (if any);
        ``missing`` are those terms when the caller has found them (:func:`unwritten`)."""
        if missing is None:
            missing = unwritten(self._fields, terms, mask)
        out: list[str] = []
        for term in terms:
            if len(term) < PREFIX_MIN_CHARS or not term.isalpha() or term not in missing:
                out.append(term)
                continue
            out.extend(self.long_forms(term, mask) or self.compounds_ending(term, mask) or [term])
        return out
