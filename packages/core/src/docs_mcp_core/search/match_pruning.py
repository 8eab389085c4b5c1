"""The match leg's best rows without scoring every posting: exact early termination (MaxScore).

The match leg scores a row with ``max(boost * BM25)`` over its columns, and keeps the ``limit``
best. Scoring every posting of the query's terms costs what the postings cost: a path word such as
a language name is in a large share of the rows, so at a hundred times the corpus the match leg
spent most of a search adding up postings that could never reach the best ``limit`` rows.

Every (column, term) pair has an upper bound: ``boost * count * idf * w`` with ``w`` the largest
term-frequency weight in its postings. A row that holds only the terms of a set ``S`` of pairs
scores at most ``max`` over the columns of the sum of that column's bounds in ``S``. So, for an
answer of at most :data:`PRUNED_MAX_LIMIT` rows:

1. the pairs are ordered by the length of their postings, longest first; the longest are set
   aside as long as the others still hold :data:`FILL_FACTOR` times ``limit`` postings;
2. the rows of the other pairs that the filter admits (the candidates) get a partial score from
   those pairs (their postings added into a reused array of every row, read at the candidates,
   reset), which no row's score is below, and an upper bound (the partial score plus the bounds of
   the pairs set aside); the ``limit``-th best partial score, or the ``limit``-th best exact score
   of the ``2 * limit`` candidates with the highest bounds when that is higher, is ``theta``, a
   lower bound of the answer's ``limit``-th best;
3. the longest pairs whose bounds, summed per column, stay below ``theta`` cannot lift a row into
   the answer on their own, so a row that holds only them is left out. If fewer pairs than were
   set aside pass that test, those that fail join the candidates and step 2 runs once more
   (``theta`` never falls, so a second pass always ends); if none passes, every row is scored;
4. the pairs set aside are looked up for the candidates one at a time, highest bound first (a
   binary search in the long postings, never a pass over them), each replacing its bound by the
   candidates' own weights, and a candidate is dropped as soon as its bound falls below ``theta``;
5. the candidates left are scored exactly and the best ``limit`` kept.

The scores of step 5 are the same additions in the same order as when every row is scored (term
by term in the query's order, then the boost, then the maximum over the columns), so the scores,
and the ranked rows, are bit for bit those of scoring every row
(``tests/core/test_leg_equivalence.py``); partial scores and bounds only decide which rows are
scored, with a margin of one in a million against rounding.

Below :data:`PRUNED_MIN_ROWS` rows none of this pays: every row is scored (:func:`dense_best`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from docs_mcp_core.search.row_catalog import sorted_unique

__all__ = [
    "Column",
    "Posting",
    "Scratch",
    "add_at",
    "add_column",
    "best_of",
    "dense_best",
    "every_best",
    "folded",
    "meet",
    "products",
    "pruned_best",
    "score_candidates",
    "union",
]

BOUND_MARGIN = 1e-6  # relative: a bound is trusted only this far below theta
SLOTS_MIN_ROWS = 512  # candidates found through an array of places rather than by binary search
SLOTS_MAX_RATIO = 32  # ... in the postings at most this many times longer than the candidates
# Below this many rows a pass over every row costs less than the bookkeeping of leaving postings
# out (measured on sdk-docs: at 110,000 rows scoring every row was faster for every query, at 1.1
# million rows early termination and the sparse scoring of every_best were, whatever the postings).
PRUNED_MIN_ROWS = 350_000
SPARSE_SHARE = 8  # every_best scores sparsely when the postings are at most 1/8 of the rows
# dense_best scores a column at its own rows when its postings are at most 1/SPARSE_SHARE of the
# rows and the rows are at least this many (below it three passes over every row cost less)
SPARSE_COLUMN_MIN_ROWS = 50_000
CUT_SAMPLE_STRIDE = 16  # dense_best guesses the cut from every 16th row's score ...
CUT_SAMPLE_DEPTH = 4  # ... at the score about 4 * limit rows reach
CUT_SAMPLE_ROWS = 16_384  # past this many samples, every more-th row (at 1.1 million rows, every 66th)
CUT_SAMPLE_MIN_RANK = 32  # ... as long as the cut is read at the 32nd best sample or deeper
FOLD_EXPONENT = 8  # boosts of 2**-8 to 2**8 that are powers of two are folded into the products
PRUNED_MAX_LIMIT = 1000  # deeper answers have lower cuts, which leave too few postings out to pay
FILL_FACTOR = 4  # the candidates of the first pass hold at least this many times ``limit`` postings


@dataclass(frozen=True)
class Posting:
    """One query term in one column: its rows (ascending), their weights and the term's factor
    (``count * idf``); ``bound`` is ``factor`` times the largest weight."""

    rows: np.ndarray
    weights: np.ndarray
    factor: np.float64
    bound: float


@dataclass(frozen=True)
class Column:
    """A column's boost and the postings of the query's terms it holds, in the query's order."""

    boost: float
    postings: list[Posting]


def meet(rows: np.ndarray, posting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where two ascending arrays of row positions meet: ``(at, hit)`` with ``posting[at[i]] ==
    rows[hit[i]]``, both ascending. The shorter array is looked up in the longer one."""
    if not len(rows) or not len(posting):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    if len(posting) <= len(rows):
        where = np.searchsorted(rows, posting)
        clipped = np.minimum(where, len(rows) - 1)
        found = rows[clipped] == posting
        return np.flatnonzero(found), clipped[found]
    where = np.searchsorted(posting, rows)
    clipped = np.minimum(where, len(posting) - 1)
    found = posting[clipped] == rows
    return clipped[found], np.flatnonzero(found)


def add_at(array: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """``array[rows] += values`` for distinct ``rows`` (a term's postings, or the places they
    meet): the same additions, so the same bits, but two to three times faster, because NumPy's
    ``add.at`` adds in place where the fancy-index form gathers a copy, adds and scatters back."""
    np.add.at(array, rows, values)


def best_of(found: np.ndarray, values: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` rows of ``found`` (ascending positions, scores ``values``) with the highest
    scores, best first; equal scores in position order, also at the cut (the first ``k`` of a longer
    answer are the answer for ``k``). The candidates are cut at the ``limit``-th best score by a
    partition, never sorted whole; ``limit`` 0 keeps them all."""
    if len(found) > limit > 0:
        cut = len(values) - limit
        keep = values >= np.partition(values, cut)[cut]  # the best ``limit`` and their ties at the cut
        found, values = found[keep], values[keep]
    order = np.lexsort((found, -values))
    if limit > 0:
        order = order[:limit]
    return found[order].astype(np.int64), values[order]


def score_candidates(columns: list[Column], rows: np.ndarray, scratch: Scratch | None = None) -> np.ndarray:
    """The match score of each of the ascending ``rows``: the same additions, in the same order, as
    scoring every row of every column and taking the maximum, so the same bits. With ``scratch``,
    a posting not much longer than ``rows`` finds them through an array of every row's place
    among ``rows`` (one read per posting) rather than by binary search."""
    slots = scratch.take_slots() if scratch is not None and len(rows) >= SLOTS_MIN_ROWS else None
    if slots is not None:
        slots[rows] = np.arange(len(rows), dtype=np.int32)
    best: np.ndarray | None = None
    for column in columns:
        scores = np.zeros(len(rows), dtype=np.float64)
        for posting in column.postings:
            if slots is not None and len(posting.rows) <= SLOTS_MAX_RATIO * len(rows):
                places = slots[posting.rows]
                at = np.flatnonzero(places >= 0)
                hit = places[at]
            else:
                at, hit = meet(rows, posting.rows)
            add_at(scores, hit, posting.factor * posting.weights[at])
        if column.boost != 1.0:  # x * 1.0 is x
            scores *= column.boost
        best = scores if best is None else np.maximum(best, scores, out=best)
    if slots is not None and scratch is not None:
        slots[rows] = -1
        scratch.give_slots(slots)
    assert best is not None
    return best


class Scratch:
    """Arrays of one number per row, lent to one search at a time and given back as they were
    lent (a search resets only the rows it touched, never the whole array): floats all zero, and
    places all -1."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._floats: list[np.ndarray] = []
        self._slots: list[np.ndarray] = []
        self._spares: list[np.ndarray] = []

    def take(self) -> np.ndarray:
        try:
            return self._floats.pop()
        except IndexError:
            return np.zeros(self.size, dtype=np.float64)

    def give(self, array: np.ndarray) -> None:
        self._floats.append(array)

    def take_slots(self) -> np.ndarray:
        try:
            return self._slots.pop()
        except IndexError:
            return np.full(self.size, -1, dtype=np.int32)

    def give_slots(self, array: np.ndarray) -> None:
        self._slots.append(array)

    def take_spare(self) -> np.ndarray:
        """A float array of one number per row whose contents are the borrower's to overwrite."""
        try:
            return self._spares.pop()
        except IndexError:
            return np.empty(self.size, dtype=np.float64)

    def give_spare(self, array: np.ndarray) -> None:
        self._spares.append(array)

    def as_lent(self) -> bool:
        """Whether every array given back is as it was lent (all zero; places all -1)."""
        return all(not a.any() for a in self._floats) and all(bool((a == -1).all()) for a in self._slots)


def pruned_best(
    columns: list[Column], size: int, mask: np.ndarray | None, limit: int, scratch: Scratch
) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``limit`` best rows of ``columns``' postings (over ``size`` rows) that ``mask`` admits,
    ``(positions, scores)`` as :func:`best_of` orders them; ``None`` when no posting can be left
    out, or the rows are too few for it to pay (the caller scores every row: the same answer)."""
    if size < PRUNED_MIN_ROWS or not 0 < limit <= PRUNED_MAX_LIMIT:
        return None
    pairs = sorted(
        ((p, c) for c, column in enumerate(columns) for p in column.postings),
        key=lambda pair: -len(pair[0].rows),
    )  # longest first (a stable sort: equal lengths keep the query's order)
    lengths = [len(p.rows) for p, _ in pairs]
    rest = sum(lengths)
    if rest <= FILL_FACTOR * limit:
        return None
    # bounds[k]: the best score a row holding only terms of the k longest pairs can reach
    per_column = [0.0] * len(columns)
    bounds = [0.0]
    for posting, c in pairs:
        per_column[c] += columns[c].boost * posting.bound
        bounds.append(max(per_column))
    # set aside the longest pairs while the others hold at least FILL_FACTOR * limit postings
    aside = 0
    while aside < len(pairs) - 1 and rest - lengths[aside] >= FILL_FACTOR * limit:
        rest -= lengths[aside]
        aside += 1
    theta = 0.0  # a lower bound of the answer's limit-th best score
    while aside > 0:
        found = union([p.rows for p, _ in pairs[aside:]], mask)
        partial = _partial(len(columns), pairs[aside:], found, scratch)
        lower = _boosted_max(columns, partial)  # no more than the rows' scores
        unseen = [0.0] * len(columns)  # per column, the bounds of the pairs set aside
        for posting, c in pairs[:aside]:
            unseen[c] += posting.bound
        upper = _boosted_max(columns, [p + u for p, u in zip(partial, unseen, strict=True)])
        theta = max(theta, _kth(lower, limit))
        prunable = sum(1 for k in range(1, aside + 1) if bounds[k] * (1.0 + BOUND_MARGIN) < theta)
        if prunable < aside or np.count_nonzero(upper * (1.0 + BOUND_MARGIN) >= theta) > 4 * limit:
            # the rows' bounds are loose: the exact scores of the most promising raise theta
            theta = max(theta, _exact_kth(columns, found, upper, limit, scratch))
            prunable = sum(1 for k in range(1, aside + 1) if bounds[k] * (1.0 + BOUND_MARGIN) < theta)
        if prunable < aside:
            aside = prunable  # theta never falls: the next pass ends
            continue
        survivors = _survivors(columns, pairs[:aside], found, partial, unseen, theta)
        return best_of(survivors, score_candidates(columns, survivors, scratch), limit)
    return None


def _survivors(
    columns: list[Column],
    aside: list[tuple[Posting, int]],
    rows: np.ndarray,
    partial: list[np.ndarray],
    unseen: list[float],
    theta: float,
) -> np.ndarray:
    """The ``rows`` whose score can reach ``theta``: the pairs set aside are looked up one at a
    time, highest bound first, each replacing its bound by the rows' own term weight, and the rows
    whose bound falls below ``theta`` are dropped as soon as it does."""
    for posting, c in sorted(aside, key=lambda pair: -columns[pair[1]].boost * pair[0].bound):
        upper = _boosted_max(columns, [p + u for p, u in zip(partial, unseen, strict=True)])
        keep = upper * (1.0 + BOUND_MARGIN) >= theta
        rows, partial = rows[keep], [p[keep] for p in partial]
        at, hit = meet(rows, posting.rows)
        add_at(partial[c], hit, posting.factor * posting.weights[at])
        unseen[c] -= posting.bound
    upper = _boosted_max(columns, [p + max(u, 0.0) for p, u in zip(partial, unseen, strict=True)])
    return rows[upper * (1.0 + BOUND_MARGIN) >= theta]


def _kth(values: np.ndarray, limit: int) -> float:
    """The ``limit``-th largest of ``values`` (0 when there are fewer)."""
    cut = len(values) - limit
    return float(np.partition(values, cut)[cut]) if cut >= 0 else 0.0


def _exact_kth(
    columns: list[Column], rows: np.ndarray, upper: np.ndarray, limit: int, scratch: Scratch
) -> float:
    """The ``limit``-th best score among the ``2 * limit`` of ``rows`` with the highest ``upper``
    bounds, scored exactly (a lower bound of the answer's ``limit``-th best)."""
    if len(rows) > 2 * limit:
        rows = np.sort(rows[np.argpartition(-upper, 2 * limit)[: 2 * limit]])
    return _kth(score_candidates(columns, rows, scratch), limit)


def _partial(
    count: int, pairs: list[tuple[Posting, int]], rows: np.ndarray, scratch: Scratch
) -> list[np.ndarray]:
    """Each column's sum over ``pairs`` for the ascending ``rows`` (their postings added into an
    array of every row, read at ``rows``, then reset): no more than the column's score, whatever
    the order of the additions, but for a rounding the bound margin covers."""
    partial = [np.zeros(len(rows), dtype=np.float64) for _ in range(count)]
    array = scratch.take()
    for c in range(count):
        mine = [p for p, column in pairs if column == c]
        if not mine:
            continue
        for posting in mine:
            add_at(array, posting.rows, posting.factor * posting.weights)
        partial[c] = array[rows]
        for posting in mine:
            array[posting.rows] = 0.0
    scratch.give(array)
    return partial


def _boosted_max(columns: list[Column], sums: list[np.ndarray]) -> np.ndarray:
    """``max(boost * sum)`` over the columns."""
    best = sums[0] * columns[0].boost
    for column, values in zip(columns[1:], sums[1:], strict=True):
        np.maximum(best, values * column.boost, out=best)
    return best


def union(parts: list[np.ndarray], mask: np.ndarray | None) -> np.ndarray:
    """The ascending distinct rows of ``parts`` (each ascending) that ``mask`` admits."""
    rows = parts[0] if len(parts) == 1 else sorted_unique(np.concatenate(parts))
    if mask is not None:
        rows = rows[mask[rows]]
    return rows


def every_best(
    columns: list[Column], size: int, mask: np.ndarray | None, limit: int, scratch: Scratch
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pruned_best` by scoring every row that holds a query term. Past
    :data:`PRUNED_MIN_ROWS` rows, when the postings are few against the rows, only the rows found
    are read: each column's postings are added into a reused array of every row, in the same order
    as :func:`dense_best` adds them (so the same bits), read at the rows found and reset there;
    else :func:`dense_best`."""
    total = sum(len(p.rows) for column in columns for p in column.postings)
    if size < PRUNED_MIN_ROWS or total * SPARSE_SHARE > size:
        return dense_best(columns, size, mask, limit, scratch)
    found = union([p.rows for column in columns for p in column.postings], mask)
    best: np.ndarray | None = None
    array = scratch.take()
    for column in columns:
        for posting in column.postings:
            add_at(array, posting.rows, posting.factor * posting.weights)
        scores = array[found]
        for posting in column.postings:
            array[posting.rows] = 0.0
        if column.boost != 1.0:
            scores *= column.boost
        best = scores if best is None else np.maximum(best, scores, out=best)
    scratch.give(array)
    assert best is not None
    return best_of(found, best, limit)


def dense_best(
    columns: list[Column], size: int, mask: np.ndarray | None, limit: int, scratch: Scratch
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pruned_best` by scoring every row of every column: each term's postings added into
    an array of every row, the boosted maximum over the columns, the rows with a score (then
    the filter: it costs what the rows found cost, not the corpus).

    The arrays of every row are the ``scratch``'s, reset when read: a search allocates nothing
    the size of the corpus. A column whose postings are few against the rows (a heading's words)
    is boosted, compared and reset at its own rows only, rather than by passes over every row.
    The maximum over the columns is exact in any order, so these are the same bits."""
    dense, sparse = _dense_and_sparse(columns, size)
    best = scratch.take()
    other = scratch.take() if len(columns) > 1 else None
    spare = scratch.take_spare()  # each posting's products, in place (never a new array)
    for number, column in enumerate(dense):
        scores = best if number == 0 else other
        assert scores is not None
        boost = add_column(scores, column, spare)
        if boost != 1.0:
            scores *= boost
        if number:
            np.maximum(best, scores, out=best)
            scores.fill(0.0)
    for column in sparse:
        assert other is not None
        rows = union([p.rows for p in column.postings], None)
        boost = add_column(other, column, spare)
        values = other[rows]
        other[rows] = 0.0
        if boost != 1.0:
            values *= boost
        best[rows] = np.maximum(best[rows], values)
    scratch.give_spare(spare)
    if other is not None:
        scratch.give(other)
    found = _contenders(best, mask, limit)
    values = best[found]
    best.fill(0.0)
    scratch.give(best)
    return best_of(found, values, limit)


def products(posting: Posting, spare: np.ndarray | None = None, scale: float = 1.0) -> np.ndarray:
    """``posting.factor * posting.weights`` (the same products) times ``scale`` (a power of two:
    exact), written into ``spare`` when given."""
    factor = posting.factor * scale if scale != 1.0 else posting.factor
    if spare is None:
        return np.multiply(posting.weights, factor, dtype=np.float64)
    return np.multiply(posting.weights, factor, out=spare[: len(posting.weights)])


def add_column(array: np.ndarray, column: Column, spare: np.ndarray | None = None) -> float:
    """Add the products of ``column``'s postings into ``array`` at their rows (in ``spare`` when
    given), its boost folded into them when it is a power of two (:func:`folded`); the boost its
    sums are still to be multiplied by (1.0 once folded)."""
    scale = folded(column.boost)
    for posting in column.postings:
        add_at(array, posting.rows, products(posting, spare, scale))
    return 1.0 if column.boost == scale else column.boost


def folded(boost: float) -> float:
    """``boost`` when it is a power of two, which multiplies exactly (a float's exponent moves,
    its digits do not): the products of a column's postings are then scaled by it before they
    are added, the same bits as boosting their sums, without a pass over every row; else 1."""
    digits, exponent = math.frexp(boost)
    return boost if digits == 0.5 and -FOLD_EXPONENT <= exponent <= FOLD_EXPONENT else 1.0


def _contenders(best: np.ndarray, mask: np.ndarray | None, limit: int) -> np.ndarray:
    """The rows with a score in ``best`` that ``mask`` admits, or fewer of them that still hold
    every row of the best ``limit`` and its ties: those at or above a score read off a sample of
    the rows (every :func:`_sample_stride`-th), when at least ``limit`` admitted rows reach it
    (then the ``limit``-th best score reaches it too). So the cut that follows looks at a few
    times ``limit`` rows rather than at every row found."""
    if limit > 0:
        stride = _sample_stride(len(best), limit)
        sample = best[::stride]
        if mask is not None:
            sample = sample[mask[::stride]]
        rank = -(-CUT_SAMPLE_DEPTH * limit // stride)  # expect about DEPTH * limit rows
        if len(sample) > rank:
            threshold = float(np.partition(sample, len(sample) - rank)[len(sample) - rank])
            if threshold > 0.0:
                found = np.flatnonzero(best >= threshold)
                if mask is not None:
                    found = found[mask[found]]
                if len(found) >= limit:
                    return found
    found = np.flatnonzero(best > 0.0)  # (a boolean array's nonzero entries are found 7x faster)
    return found if mask is None else found[mask[found]]


def _sample_stride(size: int, limit: int) -> int:
    """Every how many rows :func:`_contenders` samples: :data:`CUT_SAMPLE_STRIDE`, or more for
    many rows, so that the sample stays near :data:`CUT_SAMPLE_ROWS` scores (the cut's
    partition of the sample costs what the sample holds) while the score read off it is still
    the :data:`CUT_SAMPLE_MIN_RANK`-th best of the sample at least."""
    widest = CUT_SAMPLE_DEPTH * limit // CUT_SAMPLE_MIN_RANK
    return max(CUT_SAMPLE_STRIDE, min(size // CUT_SAMPLE_ROWS, widest))


def _dense_and_sparse(columns: list[Column], size: int) -> tuple[list[Column], list[Column]]:
    """The columns :func:`dense_best` scores with passes over every row (first the one it keeps
    the maximum in: a column with boost 1 needs no pass to boost it), and those it scores at
    their own rows (their postings at most 1/:data:`SPARSE_SHARE` of the rows, at least
    :data:`SPARSE_COLUMN_MIN_ROWS` rows)."""
    counts = [sum(len(p.rows) for p in column.postings) for column in columns]
    base = max(range(len(columns)), key=lambda c: (columns[c].boost == 1.0, counts[c]))
    dense = [columns[base]]
    sparse: list[Column] = []
    for c, column in enumerate(columns):
        if c != base:
            few = size >= SPARSE_COLUMN_MIN_ROWS and counts[c] * SPARSE_SHARE <= size
            (sparse if few else dense).append(column)
    return dense, sparse
