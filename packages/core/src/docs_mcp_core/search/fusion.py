"""Fusing the legs of a search into one ranking: pure functions over arrays.

Both rankings sum, per row, one contribution from each leg that found it (legs in
:data:`~docs_mcp_core.search.legs.LEG_ORDER`), then sort:

* the original recipe (:func:`original_contributions`): weighted reciprocal-rank fusion, ``w / (k +
  rank)`` with k = 60 and rank counted from 1, a row counting at its best rank in each leg; ties by
  chunk id;
* the default ranking (:func:`default_contributions`): the match leg's BM25 scores normalised by
  the best one, plus smaller rank-based phrase and vector contributions; the sum is multiplied by
  the row's static prior and the query's taxonomy cues (:func:`cue_factors`), and the best rows with
  a full-text match by their query-term coverage (:func:`coverage_rows`); ties by path depth, then
  chunk id (see :mod:`docs_mcp_core.ranking` for the signals).

Scores are rounded to 6 decimals before sorting (:func:`order`), as the original rounds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from docs_mcp_core.ranking import RankingWeights
from docs_mcp_core.search.legs import EMPTY_LEG, Leg
from docs_mcp_core.search.row_catalog import first_of_each_group

__all__ = [
    "RRF_K",
    "Ranked",
    "coverage_rows",
    "cue_factors",
    "default_contributions",
    "order",
    "original_contributions",
    "summed",
]

RRF_K = 60

Contributions = tuple[list[np.ndarray], list[np.ndarray]]  # per leg: the rows and what each adds


@dataclass(frozen=True)
class Ranked:
    """A fused ranking: catalog positions, best first, and their (rounded) scores."""

    positions: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def keep(self, mask: np.ndarray) -> Ranked:
        return Ranked(self.positions[mask], self.scores[mask])


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


def default_contributions(legs: Mapping[str, Leg], weights: RankingWeights) -> Contributions:
    """The default ranking's score fusion: normalised BM25 of the match leg, the phrase and vector
    legs' rank-based contributions, and the spelling leg's credits scaled by the best one."""
    positions: list[np.ndarray] = []
    contributions: list[np.ndarray] = []
    match_pos, match_scores = legs["match"]
    if len(match_pos):
        best = float(match_scores.max()) or 1.0
        positions.append(match_pos)
        contributions.append(match_scores / best)
    phrase_pos = legs["phrase"][0]
    if len(phrase_pos):
        positions.append(phrase_pos)
        contributions.append(weights.phrase / (RRF_K + np.arange(1, len(phrase_pos) + 1, dtype=np.float64)))
    vector_pos = legs.get("vector", EMPTY_LEG)[0]
    if len(vector_pos):
        positions.append(vector_pos)
        ranks = np.arange(1, len(vector_pos) + 1, dtype=np.float64)
        contributions.append(weights.vector * (RRF_K + 1) / (RRF_K + ranks))
    spelling_pos, spelling_credit = legs.get("spelling", EMPTY_LEG)
    if len(spelling_pos):
        positions.append(spelling_pos)
        contributions.append(weights.spelling * spelling_credit / float(spelling_credit.max()))
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


def cue_factors(
    rows: np.ndarray,
    cues: Mapping[str, str],
    codes: Callable[[str, str], tuple[np.ndarray, int] | None],
    weight: float,
) -> np.ndarray:
    """Per-row :func:`~docs_mcp_core.ranking.cue_factor`, as arrays (same arithmetic, same order).

    ``codes(key, value)`` is every row's code for ``key`` and the code of ``value`` (``None`` when
    no row has that value; a code below 0 is no value).
    """
    up = 1 + weight
    factor = np.ones(len(rows), dtype=np.float64)
    for key, value in cues.items():
        found = codes(key, value)
        if found is None:
            continue
        all_codes, code = found
        have = all_codes[rows]
        factor = np.where(have == code, factor * up, np.where(have >= 0, factor / up, factor))
    return factor


def coverage_rows(rows: np.ndarray, score: np.ndarray, match_positions: np.ndarray, depth: int) -> np.ndarray:
    """Indices (into ``rows``) of the ``depth`` best-scored rows that the match leg found: the rows
    whose query-term coverage is measured (rows found by the vector leg alone keep their score)."""
    lexical = np.flatnonzero(np.isin(rows, match_positions))
    return lexical[np.argsort(-score[lexical], kind="stable")[:depth]]


def order(
    rows: np.ndarray,
    score: np.ndarray,
    sort_rank: np.ndarray,
    *,
    depth: np.ndarray | None = None,
    dedup_group: np.ndarray | None = None,
) -> Ranked:
    """Scored rows sorted best first, scores rounded to 6 decimals; ties by ``depth`` (when given),
    then chunk id (``sort_rank``). With ``dedup_group``, only the first row of each group stays
    (byte-identical chunks give one hit)."""
    score = np.round(score, 6)
    keys = [sort_rank[rows], *([depth[rows]] if depth is not None else []), -score]
    ranking = np.lexsort(keys)
    ranked = Ranked(rows[ranking], score[ranking])
    if dedup_group is not None:
        ranked = ranked.keep(first_of_each_group(dedup_group[ranked.positions]))
    return ranked
