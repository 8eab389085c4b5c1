"""The match leg over a corpus of many copies: a column scored once per group of identical rows.

A corpus can hold each chunk text many times over: the same docs for several versions or
products side by side, or the hundred copies of the scaling benchmark. The rows of one dedup
group (:attr:`~docs_mcp_core.search.row_catalog.RowCatalog.dedup_group`: equal digests of their
text and element ids) then have the same ``search_text``, which is made from those alone, so
their postings in that column are the same: each term's postings hold every row of the group or
none, with one weight. Adding up those postings row by row (a hundred times the same sums) was
most of the match leg's work at a hundred copies, where a search ranks 5,000 rows a leg.

:func:`grouped_best` answers as :func:`~docs_mcp_core.search.match_pruning.dense_best` does,
with a column whose postings are all *aligned* with the groups (:meth:`CopyGroups.posting`,
checked term by term: every member of every group the postings hold, each with its group's
weight) scored once per group, in the same additions in the same order, so each row's score is
the same bits:

1. each aligned column's sum per group (its postings at the groups' first rows), boosted, and
   their maximum ``G``;
2. ``theta``, the best ``G`` such that the groups at or above it hold ``limit`` admitted rows: no
   more than the ``limit``-th best score, since a row scores at least its group's ``G``;
3. the candidates: every admitted member of a group with ``G`` at or above ``theta``, and the
   rows of the other columns (scored per row, at their own rows, or over every row for at most
   one column with many postings) whose boosted score reaches ``theta``;
4. each candidate's score, the maximum of its group's ``G`` and its other columns' scores, and
   the best ``limit`` of them (:func:`~docs_mcp_core.search.match_pruning.best_of`).

Every row that can be in the answer, ties at its cut included, reaches ``theta``, so the answer
is the one of scoring every row (``tests/core/test_copy_groups.py``). When the groups cannot give
``theta`` (fewer than ``limit`` admitted rows with a score in the aligned columns), no column is
aligned, or two of the others have many postings, :func:`grouped_best` returns ``None`` and the
caller scores every row.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from docs_mcp_core.search.match_pruning import (
    BOUND_MARGIN,
    SPARSE_SHARE,
    Column,
    Posting,
    Scratch,
    add_at,
    add_column,
    best_of,
    folded,
    meet,
    products,
    union,
)
from docs_mcp_core.search.row_catalog import sorted_unique

__all__ = ["GROUPED_MIN_COPIES", "GROUPED_MIN_ROWS", "CopyGroups", "grouped_best"]

GROUPED_MIN_COPIES = 8.0  # rows per group, on average, from which a column is scored per group
GROUPED_MIN_ROWS = 350_000  # ... and rows (below, a pass over every row costs less: match_pruning)
SPLIT_REST = 8  # a posting is split when the rows of groups not aligned are at most 1/8 of it
_MASKS = 64  # admitted rows per group remembered for this many filters (each a pass over the rows)
# the terms' postings per group remembered, in bytes: a server asked every word of a large corpus
# keeps no more than this (the cache starts again), whatever its clients send
POSTINGS_CACHE_BYTES = 64 << 20

GroupPosting = tuple[np.ndarray, np.ndarray]  # the groups (ids) that hold a term, and their weights


@dataclass(frozen=True)
class _Groups:
    """The groups of every row: ``of`` (a row without a digest is a group of its own, numbered
    after the catalog's), each group's ``sizes`` and its rows, ascending, at
    ``members[starts[g]:starts[g + 1]]`` (so its first row is ``members[starts[g]]``)."""

    of: np.ndarray
    sizes: np.ndarray
    starts: np.ndarray
    members: np.ndarray

    @property
    def first(self) -> np.ndarray:
        return self.members[self.starts[:-1]]

    def rows(self, chosen: np.ndarray) -> np.ndarray:
        """Every row of the groups ``chosen``, group by group."""
        lengths = self.sizes[chosen]
        total = int(lengths.sum())
        shift = self.starts[chosen] - (np.cumsum(lengths) - lengths)
        return self.members[np.repeat(shift, lengths) + np.arange(total)]


def _make_groups(dedup_group: np.ndarray) -> _Groups:
    of = dedup_group.astype(np.int32)  # (row positions fit: a derived file numbers rows in int32)
    alone = of < 0
    numbered = int(of[~alone].max()) + 1 if not alone.all() else 0
    of[alone] = numbered + np.arange(int(np.count_nonzero(alone)), dtype=np.int32)
    sizes = np.bincount(of)
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    return _Groups(of, sizes, starts, np.argsort(of, kind="stable").astype(np.int32))


class CopyGroups:
    """The dedup groups of an index's rows and the postings of its fields per group, found on first
    use (a term's, once: a gather of its postings' groups and two comparisons)."""

    def __init__(self, dedup_group: np.ndarray, fields: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        """``fields``: each field's postings, ``(rows, weights)`` (a term's postings are slices of
        them: those are remembered; postings made otherwise are grouped each time)."""
        self._dedup_group = dedup_group
        self._fields = [
            (_address(rows), len(rows), rows.itemsize, _address(w), w.itemsize) for rows, w in fields
        ]
        self._groups: _Groups | None = None
        self._postings: dict[tuple[int, int, int], tuple[GroupPosting, Posting] | None] = {}
        self.cached_bytes = 0  # of the remembered postings per group
        self._admitted: dict[int, tuple[weakref.ref[np.ndarray], np.ndarray]] = {}

    @staticmethod
    def worth_it(dedup_group: np.ndarray | None, copies: float) -> bool:
        """Whether an index of these groups (``copies`` rows per group) gains from them."""
        return (
            dedup_group is not None and len(dedup_group) >= GROUPED_MIN_ROWS and copies >= GROUPED_MIN_COPIES
        )

    def warm(self) -> None:
        """Number the groups now rather than at the first search that needs them (a sort of the
        rows: about 0.15 s at 1.1 million rows)."""
        self.groups  # noqa: B018

    @property
    def groups(self) -> _Groups:
        if self._groups is None:
            self._groups = _make_groups(self._dedup_group)
        return self._groups

    def posting(self, posting: Posting) -> GroupPosting | None:
        """``posting`` per group (its groups' ids and weights, in the order of their first rows),
        or ``None`` when it is not aligned with the groups."""
        split = self.split(posting)
        return split[0] if split is not None and not len(split[1].rows) else None

    def split(self, posting: Posting) -> tuple[GroupPosting, Posting] | None:
        """``posting`` per group where its groups are aligned (every member holds it alike), and
        the rest of it row by row; ``None`` when the rest is more than :data:`SPLIT_REST` of it."""
        key = self._key(posting)
        if key is None:
            return _split(self.groups, posting)
        if key not in self._postings:
            found = _split(self.groups, posting)
            size = _nbytes(found)
            if self.cached_bytes + size > POSTINGS_CACHE_BYTES:
                self._postings.clear()
                self.cached_bytes = 0
            self._postings[key] = found
            self.cached_bytes += size
        return self._postings[key]

    def admitted(self, mask: np.ndarray | None) -> np.ndarray:
        """The rows of each group that ``mask`` admits (every row without one)."""
        groups = self.groups
        if mask is None:
            return groups.sizes
        found = self._admitted.get(id(mask))
        if found is not None and found[0]() is mask:
            return found[1]
        counts = np.add.reduceat(mask[groups.members].astype(np.int64), groups.starts[:-1])
        if len(self._admitted) >= _MASKS:
            self._admitted.clear()
        self._admitted[id(mask)] = (weakref.ref(mask), counts)  # (the filter's mask is not kept alive)
        return counts

    def _key(self, posting: Posting) -> tuple[int, int, int] | None:
        """Where ``posting``'s rows and weights lie in a field's postings, when they are slices of them."""
        rows, weights = posting.rows, posting.weights
        if not (rows.flags.c_contiguous and weights.flags.c_contiguous) or len(rows) != len(weights):
            return None
        at = _address(rows)
        for number, (start, length, size, weights_start, weight_size) in enumerate(self._fields):
            if start <= at < start + length * size and rows.itemsize == size:
                offset = (at - start) // size
                if (
                    _address(weights) == weights_start + offset * weight_size
                    and weights.itemsize == weight_size
                ):
                    return number, offset, len(rows)
        return None


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _nbytes(split: tuple[GroupPosting, Posting] | None) -> int:
    if split is None:
        return 0
    (ids, weights), rest = split
    return ids.nbytes + weights.nbytes + rest.rows.nbytes + rest.weights.nbytes


def _split(groups: _Groups, posting: Posting) -> tuple[GroupPosting, Posting] | None:
    """The groups of ``posting`` whose every member holds it with its first row's weight, with
    that weight, and the rest of the posting (rows of other groups); ``None`` when the rest is
    more than :data:`SPLIT_REST` of it."""
    rows, weights = posting.rows, posting.weights
    of = groups.of[rows]
    first = groups.first[of] == rows
    spread = np.zeros(len(groups.sizes), dtype=weights.dtype)
    spread[of[first]] = weights[first]
    bad = np.bincount(of, minlength=len(groups.sizes)) != groups.sizes  # a member lacks the term
    bad[of[_differs(spread[of], weights)]] = True  # or holds it with another weight
    whole = ~bad[of]
    rest = np.flatnonzero(~whole)
    if len(rest) * SPLIT_REST > len(rows):
        return None
    kept = first & whole
    return (of[kept], weights[kept]), Posting(rows[rest], weights[rest], np.float64(0.0), 0.0)  # (rows only)


def _differs(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Where ``values`` and ``weights`` (of one float type) differ in any bit."""
    kind = np.uint32 if weights.itemsize == 4 else np.uint64
    return values.view(kind) != weights.view(kind)


def grouped_best(
    columns: list[Column],
    size: int,
    mask: np.ndarray | None,
    limit: int,
    scratch: Scratch,
    copies: CopyGroups,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``limit`` best rows of ``columns`` that ``mask`` admits, as
    :func:`~docs_mcp_core.search.match_pruning.dense_best` finds them, with the columns aligned
    with ``copies``' groups scored per group (the module's docstring); ``None`` when it cannot."""
    if limit <= 0:
        return None
    aligned: list[tuple[Column, list[GroupPosting]]] = []
    others: list[Column] = []
    for column in columns:
        found = [copies.posting(p) for p in column.postings]
        if all(f is not None for f in found):
            aligned.append((column, [f for f in found if f is not None]))
        else:
            others.append(column)
    many = [sum(len(p.rows) for p in c.postings) * SPARSE_SHARE > size for c in others]
    if not aligned or sum(many) > 1:
        return None
    groups = copies.groups
    best = _group_scores(aligned, len(groups.sizes))
    counts = copies.admitted(mask)
    live = np.flatnonzero((best > 0.0) & (counts > 0))
    ranked = live[np.argsort(-best[live], kind="stable")]
    reach = int(np.searchsorted(np.cumsum(counts[ranked]), limit))
    if reach >= len(ranked):
        return None
    theta = float(best[ranked[reach]])
    found = [groups.rows(np.flatnonzero(best >= theta))]
    scored: list[tuple[np.ndarray, np.ndarray]] = []  # the few-postings columns' rows and scores
    dense: np.ndarray | None = None
    looked_up: list[Column] = []  # long columns scored at the candidates only
    for column, long in zip(others, many, strict=True):
        if not long:
            rows, values = _sparse_scores(column, scratch)
            scored.append((rows, values))
            found.append(rows[values >= theta])
            continue
        reaching = _reaching(column, theta)
        if sum(len(p.rows) for p in reaching) * SPARSE_SHARE <= size:
            looked_up.append(column)  # a row reaches theta here only through a posting of ``reaching``
            if reaching:
                rows = union([p.rows for p in reaching], None)
                found.append(rows[_looked_up(column, rows, copies) >= theta])
        else:  # scored over every row
            dense = scratch.take()
            _dense_scores(column, dense, scratch)
            found.append(np.flatnonzero(dense >= theta))
    candidates = sorted_unique(np.concatenate(found))
    if mask is not None:
        candidates = candidates[mask[candidates]]
    values = best[groups.of[candidates]]
    for rows, scores in scored:
        at = np.minimum(np.searchsorted(rows, candidates), len(rows) - 1)
        np.maximum(values, np.where(rows[at] == candidates, scores[at], 0.0), out=values)
    for column in looked_up:
        np.maximum(values, _looked_up(column, candidates, copies), out=values)
    if dense is not None:
        np.maximum(values, dense[candidates], out=values)
        dense.fill(0.0)
        scratch.give(dense)
    return best_of(candidates, values, limit)


def _looked_up(column: Column, rows: np.ndarray, copies: CopyGroups) -> np.ndarray:
    """``column``'s boosted score of each of the ascending ``rows``, its postings looked up rather
    than added up over every row: an aligned posting by the rows' groups (adding 0 where a row's
    group lacks the term leaves its sum as it was), another by binary search. The same additions
    in the same order, so the same bits."""
    groups = copies.groups
    of: np.ndarray | None = None
    scores = np.zeros(len(rows), dtype=np.float64)
    scale = folded(column.boost)
    for posting in column.postings:
        split = copies.split(posting)
        rest = posting if split is None else split[1]
        if split is not None and len(split[0][0]):
            if of is None:
                of = groups.of[rows]
            ids, weights = split[0]
            spread = np.zeros(len(groups.sizes), dtype=np.float64)
            spread[ids] = products(Posting(ids, weights, posting.factor, 0.0), None, scale)
            scores += spread[of]  # (rows of the rest's groups: + 0, their sums as they were)
        if len(rest.rows):
            at, hit = meet(rows, rest.rows)
            add_at(
                scores, hit, products(Posting(rest.rows, rest.weights[at], posting.factor, 0.0), None, scale)
            )
    if column.boost != scale:
        scores *= column.boost
    return scores


def _reaching(column: Column, theta: float) -> list[Posting]:
    """The postings of ``column`` without which no row reaches ``theta`` in it: the others, those
    of the lowest bounds, add up to less than ``theta`` however many a row holds."""
    bounds = sorted((p.bound, number) for number, p in enumerate(column.postings))
    below, total = set(), 0.0
    for bound, number in bounds:
        if column.boost * (total + bound) * (1.0 + BOUND_MARGIN) >= theta:
            break
        total += bound
        below.add(number)
    return [p for number, p in enumerate(column.postings) if number not in below]


def _group_scores(aligned: list[tuple[Column, list[GroupPosting]]], count: int) -> np.ndarray:
    """The boosted maximum over the ``aligned`` columns of each group's sum: the additions of
    :func:`~docs_mcp_core.search.match_pruning.dense_best` for any of the group's rows."""
    best: np.ndarray | None = None
    for column, found in aligned:
        scores = np.zeros(count, dtype=np.float64)
        per_group = [
            Posting(ids, weights, posting.factor, posting.bound)
            for posting, (ids, weights) in zip(column.postings, found, strict=True)
        ]
        boost = add_column(scores, Column(column.boost, per_group))
        if boost != 1.0:
            scores *= boost
        best = scores if best is None else np.maximum(best, scores, out=best)
    assert best is not None
    return best


def _sparse_scores(column: Column, scratch: Scratch) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``column``'s postings (ascending) and their boosted scores, added up in an
    array of every row the ``scratch`` lends, read and reset at those rows."""
    rows = union([p.rows for p in column.postings], None)
    array = scratch.take()
    boost = add_column(array, column)
    values = array[rows]
    array[rows] = 0.0
    scratch.give(array)
    if boost != 1.0:
        values *= boost
    return rows, values


def _dense_scores(column: Column, array: np.ndarray, scratch: Scratch) -> None:
    """``column``'s boosted score of every row, added up in ``array``."""
    spare = scratch.take_spare()
    boost = add_column(array, column, spare)
    scratch.give_spare(spare)
    if boost != 1.0:
        array *= boost
