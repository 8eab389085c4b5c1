"""Direction: a question that says ``csv to json`` wants the section named ``CSV to JSON``, not
the one named ``JSON to CSV``.

Why, for documentation in general: conversions, migrations and transfers are documented once per
direction (``JSON to CSV`` and ``CSV to JSON``, ``Upgrading from v1 to v2`` and ``Downgrading from
v2 to v1``, ``Moving from staging to production``), under sections whose words are the same and
whose bodies say nearly the same things, so every leg that reads words without their order scores
the two alike, and the heading-path vectors barely tell them apart. What tells them apart is the
order around ``to`` (or ``into``), which a reader writes as deliberately as the words themselves.

The query's **direction pairs**: for each ``to`` / ``into`` of the query's words, the word after
it (the target; determiners such as ``a``, ``the``, ``my`` skipped) and the two words before it
(the source, nearest first: ``csv files to json`` has the sources ``files`` and ``csv``). A row's
**names** are the words of its chunk id (its file's name and its headings' anchors: the names its
authors gave it). When some of the best-scored rows (:data:`DIRECTION_DEPTH`) have names that
write a pair reversed (the target, within a few words ``to`` / ``into``, then a source), those rows
are multiplied by ``1 / (1 + weight)`` and the rows whose names write it in the query's direction
by ``1 + weight``; a row that writes neither, or both, keeps its score. So the signal acts only
where the documentation names the opposite direction: a query without ``to`` / ``into`` between
two words is never touched, and neither is one whose ``to`` only joins words a section's name
repeats (``changes to the listen call``) while no section names them the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.coverage import best_rows

__all__ = [
    "DIRECTION_DEPTH",
    "DirectionPair",
    "direction_boost",
    "direction_factors",
    "direction_pairs",
    "name_words",
]

DIRECTION_DEPTH = 50  # best-scored rows whose names are read for a direction
DIRECTION_WORDS = frozenset({"to", "into"})
_SPAN = 4  # at most this many words from a source to its target in a row's names (from v1 to v2)
_SOURCES = 2  # words before ``to`` that may be the source (csv files to json)
# words between a direction word and its target, or before it, that name neither end
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
_WORD_RE = re.compile(r"[a-z0-9]+")

DirectionPair = tuple[frozenset[str], str]  # (the source's words, the target's word)


def _stem(word: str) -> str:
    """``files`` and ``file`` are one word here (the plural ``s`` only, and not of short words)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def direction_pairs(words: Sequence[str]) -> list[DirectionPair]:
    """The query's direction pairs (see the module's docstring); ``words`` as the query writes them."""
    lowered = [w.lower() for w in words]
    pairs: list[DirectionPair] = []
    for k, word in enumerate(lowered):
        if word not in DIRECTION_WORDS:
            continue
        target = next((w for w in lowered[k + 1 :] if w not in _SKIPPED), None)
        if target is None or target in DIRECTION_WORDS:
            continue
        before = [w for w in reversed(lowered[:k]) if w not in _SKIPPED and w not in DIRECTION_WORDS]
        sources = frozenset(_stem(w) for w in before[:_SOURCES])
        if sources:
            pairs.append((sources, _stem(target)))
    return pairs


def name_words(chunk_id: str) -> list[str]:
    """The words of a chunk id's file name and anchors, in order (``guides/convert.md#files/csv-to-json``
    → ``convert files csv to json``): the folders are left out, they name a product, not a direction."""
    file, _, anchor = chunk_id.partition("#")
    stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return [_stem(w) for w in _WORD_RE.findall(f"{stem} {anchor}".lower())]


def _writes(names: Sequence[str], first: frozenset[str], last: frozenset[str]) -> bool:
    """Whether ``names`` hold a word of ``first``, then within :data:`_SPAN` words a direction word
    and after it a word of ``last``."""
    for i, word in enumerate(names):
        if word not in first:
            continue
        window = names[i + 1 : i + 1 + _SPAN]
        for j, later in enumerate(window):
            if later in DIRECTION_WORDS and any(w in last for w in window[j + 1 :]):
                return True
    return False


def direction_factors(chunk_ids: Sequence[str], pairs: Sequence[DirectionPair], weight: float) -> np.ndarray:
    """Per row of ``chunk_ids`` (the best rows), when the names of one of them write one of
    ``pairs`` reversed and not forward: ``1 / (1 + weight)`` for such rows, ``1 + weight`` for rows
    whose names write one forward and none reversed; else (and for every row when no name writes
    a pair reversed) 1."""
    factors = np.ones(len(chunk_ids), dtype=np.float64)
    if not pairs:
        return factors
    for i, chunk_id in enumerate(chunk_ids):
        names = name_words(chunk_id)
        if not any(w in DIRECTION_WORDS for w in names):
            continue
        forward = any(_writes(names, sources, frozenset([target])) for sources, target in pairs)
        reverse = any(_writes(names, frozenset([target]), sources) for sources, target in pairs)
        if forward != reverse:
            factors[i] = 1.0 + weight if forward else 1.0 / (1.0 + weight)
    if not (factors < 1.0).any():
        factors[:] = 1.0  # nothing is named the other way round: no direction to choose
    return factors


def direction_boost(
    rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], words: Sequence[str], weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`direction_factors` of
    the :data:`DIRECTION_DEPTH` best rows, for the query whose words are ``words``."""
    pairs = direction_pairs(words)
    if not pairs or not len(rows):
        return
    top = best_rows(score, DIRECTION_DEPTH)
    ids = [chunk_ids[int(p)] for p in rows[top].tolist()]
    score[top] *= direction_factors(ids, pairs, weight)
