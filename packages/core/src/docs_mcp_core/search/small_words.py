"""Small words in a section's name: ``csv to json`` is not ``json to csv``, ``sign in`` is not
``sign up``.

Why, for documentation in general: the full-text legs drop small words (``to``, ``in``, ``out``,
``up``, ``off`` are stop words of the index) and read the rest without its order, so sections
documented once per direction or per opposite action score alike: ``JSON to CSV`` and ``CSV to
JSON``, ``Upgrading from v1 to v2`` and ``Downgrading from v2 to v1``, ``Signing in``, ``Signing
up`` and ``Signing out``, ``Turning on`` and ``Turning off``. Their names differ only in those small
words, which a reader writes as deliberately as the rest. Two readings of the query's words:

* **direction**: for each ``to`` / ``into``, the word after it (the target; determiners such as
  ``a``, ``the``, ``my`` skipped) and the two words before it (the source, nearest first: ``csv
  files to json`` has the sources ``file`` and ``csv``). A name writes it the query's way with a
  source, then within a few words ``to`` / ``into``, then the target; the other way with the target,
  ``to`` / ``into``, then a source;
* **particle**: a word followed by a particle (``sign in``, ``log out``, ``turn off``). A name writes
  it the query's way with that word (stemmed: ``signing`` is ``sign``) followed by that particle;
  the other way with the word followed by another particle (``signing-up``).

A row's **name** is the words of its chunk id: its file's name and its headings' anchors, the names
its authors gave it. When some of the best-scored rows (:data:`SMALL_WORDS_DEPTH`) have names that
write a reading the other way (and none the query's way), those rows are multiplied by
``1 / (1 + weight)`` and the rows whose names write a reading the query's way (and none the other)
by ``1 + weight``; every other row keeps its score. So the signal acts only where the
documentation names both: a query whose ``to`` only joins words a section's name repeats
(``changes to the listen call``) leaves that section where the other signals put it while no
section is named the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from docs_mcp_core.search.analyzer import analyze_words
from docs_mcp_core.search.coverage import best_chunk_ids

__all__ = [
    "DIRECTION_WORDS",
    "PARTICLES",
    "SMALL_WORDS_DEPTH",
    "Reading",
    "name_words",
    "readings",
    "small_word_factors",
    "weigh_small_words",
]

SMALL_WORDS_DEPTH = 50  # best-scored rows whose names are read
DIRECTION_WORDS = frozenset({"to", "into"})
# the particles of phrasal verbs that documentation names actions with (sign in, log out, turn off)
PARTICLES = frozenset({"in", "out", "up", "down", "on", "off", "back"})
_SMALL = DIRECTION_WORDS | PARTICLES
_SPAN = 4  # at most this many words from a source to its target in a name (from v1 to v2)
_SOURCES = 2  # words before ``to`` that may be the source (csv files to json)
# words next to a direction word that name neither end of it
_SKIPPED = frozenset(
    [
        "a",
        "an",
        "the",
        "my",
        "our",
        "your",
        "their",
        "its",
        "his",
        "her",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "one",
        "each",
        "every",
        "all",
        "of",
        "from",
        "new",
        "existing",
        "another",
        "other",
    ]
)
_NO_STOP_WORDS: frozenset[str] = frozenset()
_WORD_RE = re.compile(r"[a-z0-9]+")


def _stems(words: Sequence[str]) -> list[str]:
    """The index's stem of each lower-cased word, small words kept (``signing`` → ``sign``)."""
    return analyze_words([w.lower() for w in words], _NO_STOP_WORDS)


@dataclass(frozen=True)
class Reading:
    """One reading of the query's small words: ``first`` words, then ``joiners`` within ``span``
    words, then a ``last`` word, is the query's way; ``last``, a joiner, then a ``first`` word is
    the other way (direction). With ``others``, the other way is ``first`` followed at once by a
    particle of ``others`` (a particle reading)."""

    first: frozenset[str]
    joiners: frozenset[str]
    last: frozenset[str]
    span: int
    others: frozenset[str] = frozenset()

    def verdict(self, names: Sequence[str]) -> int:
        """1 when ``names`` write this reading the query's way and not the other, -1 the reverse, else 0."""
        if self.others:
            ours = _follows(names, self.first, self.joiners, 1)
            theirs = _follows(names, self.first, self.others, 1)
        else:
            ours = _writes(names, self.first, self.joiners, self.last, self.span)
            theirs = _writes(names, self.last, self.joiners, self.first, self.span)
        return 0 if ours == theirs else (1 if ours else -1)


def readings(words: Sequence[str]) -> list[Reading]:
    """The query's readings (see the module's docstring); ``words`` as the query writes them."""
    stems = _stems(words)
    found: list[Reading] = []
    for k, word in enumerate(stems):
        if word in DIRECTION_WORDS:
            target = next((w for w in stems[k + 1 :] if w not in _SKIPPED), None)
            before = [w for w in reversed(stems[:k]) if w not in _SKIPPED and w not in DIRECTION_WORDS]
            if target is not None and target not in DIRECTION_WORDS and before:
                sources = frozenset(before[:_SOURCES])
                found.append(Reading(sources, DIRECTION_WORDS, frozenset([target]), _SPAN))
        if word in PARTICLES and k > 0:
            head = stems[k - 1]
            if head not in _SKIPPED and head not in PARTICLES and head not in DIRECTION_WORDS:
                particle = frozenset([word])
                found.append(Reading(frozenset([head]), particle, frozenset(), 1, PARTICLES - particle))
    return found


@lru_cache(maxsize=1 << 16)  # the best rows of one query are often the best rows of the next
def name_words(chunk_id: str) -> tuple[str, ...]:
    """The stemmed words of a chunk id's file name and anchors, in order
    (``guides/convert.md#signing-in/csv-to-json`` → ``convert sign in csv to json``); empty when
    they hold no small word (nothing to read in them). The folders are left out: they name a
    product, not an action."""
    file, _, anchor = chunk_id.partition("#")
    stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    words = _WORD_RE.findall(f"{stem} {anchor}".lower())
    if _SMALL.isdisjoint(words):
        return ()
    return tuple(_stems(words))


def _writes(
    names: Sequence[str], first: frozenset[str], joiners: frozenset[str], last: frozenset[str], span: int
) -> bool:
    """Whether ``names`` hold a word of ``first``, then within ``span`` words a joiner and after it
    a word of ``last``."""
    for i, word in enumerate(names):
        if word not in first:
            continue
        window = names[i + 1 : i + 1 + span]
        for j, later in enumerate(window):
            if later in joiners and any(w in last for w in window[j + 1 :]):
                return True
    return False


def _follows(names: Sequence[str], first: frozenset[str], particles: frozenset[str], span: int) -> bool:
    """Whether ``names`` hold a word of ``first`` followed within ``span`` words by one of ``particles``."""
    return any(
        word in first and any(w in particles for w in names[i + 1 : i + 1 + span])
        for i, word in enumerate(names)
    )


def small_word_factors(chunk_ids: Sequence[str], found: Sequence[Reading], weight: float) -> np.ndarray:
    """Per row of ``chunk_ids`` (the best rows), when some row's name writes a reading the other
    way: ``1 / (1 + weight)`` for such rows, ``1 + weight`` for rows whose names write one the
    query's way and none the other; else (and for every row when no name writes one the other way) 1."""
    factors = np.ones(len(chunk_ids), dtype=np.float64)
    if not found:
        return factors
    for i, chunk_id in enumerate(chunk_ids):
        names = name_words(chunk_id)
        if not names:
            continue
        verdicts = {reading.verdict(names) for reading in found}
        if verdicts - {0} in ({1}, {-1}):
            factors[i] = 1.0 + weight if 1 in verdicts else 1.0 / (1.0 + weight)
    if not (factors < 1.0).any():
        factors[:] = 1.0  # nothing is named the other way round: nothing to choose between
    return factors


def weigh_small_words(
    rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], words: Sequence[str], weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`small_word_factors`
    of the :data:`SMALL_WORDS_DEPTH` best rows, for the query whose words are ``words``."""
    found = readings(words)
    if not found or not len(rows):
        return
    top, ids = best_chunk_ids(rows, score, chunk_ids, SMALL_WORDS_DEPTH)
    score[top] *= small_word_factors(ids, found, weight)
