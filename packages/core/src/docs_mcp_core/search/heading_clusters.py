"""An inverted-file index over the heading-path leg's path vectors, for indexes of many pages.

The leg's exact answer scores every distinct path text against the query: one matrix-vector
product over the path matrix, which stops fitting in the processor's caches as the docs grow (on
``sdk-docs`` 4,087 paths, 6 MB, 0.25 ms; at ten copies 40,870 paths, 63 MB, 7 ms, bound by memory
bandwidth). Bounds that would let an exact search skip paths (each cluster's cone around its
centroid) prune nothing in 384 dimensions: measured at ten copies, 94 % of the paths would still
be scored. So above :data:`~docs_mcp_core.search.heading_leg.IVF_MIN_PATHS` paths the build
clusters the path vectors (spherical k-means) and a search scores only the rows a near answer
can come from:

* the rows of the paths in the ``probes`` clusters whose centroids are nearest the query (a row
  whose page's name means what the query says), and
* the rows of the heading chains nearest the query, best first, until :data:`CHAIN_ROWS` rows (a
  row whose headings mean it, on a page named otherwise); every chain is scored, since there are
  few (3,565 on ``sdk-docs`` and on ten copies of it).

Those rows are scored exactly, so the leg's answer is the exact answer over that candidate set;
what it can miss is a row whose page and headings are each only somewhat like the query. Its
recall against the exact leg is measured by ``benchmarks/heading_recall.py`` (``docs/scaling.md``).
The build stores the paths cluster by cluster, so a cluster of which at least
:data:`WHOLE_SHARE` of the paths are wanted (every probed cluster of an unfiltered search) is
scored on a slice of the path matrix, in place, and the other wanted paths are gathered. Under a
filter both budgets grow by the inverse of the share of rows it keeps, and the search gathers only
the kept rows of the probed clusters and chains (:class:`FilterRows`, made on a filter's first
search); a filter that keeps at most :data:`EXACT_ROWS` rows, or leaves fewer than the leg's depth
among the candidates, has every row it keeps scored, exactly. Below that many paths (and in
indexes built without the clusters) the leg is exact, and a search never imports this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from docs_mcp_core.search.filters import MaskMemo
from docs_mcp_core.search.row_catalog import sorted_unique
from docs_mcp_core.search.vector_matrix import row_dots

__all__ = [
    "CHAIN_ROWS",
    "EXACT_ROWS",
    "MIN_PROBES",
    "WHOLE_SHARE",
    "Candidates",
    "PathClusters",
    "row_dots",
]

CHAIN_ROWS = 2_048  # rows taken from the nearest heading chains (whole chains, best first)
MIN_PROBES = 16  # clusters probed without a filter, at least
EXACT_ROWS = 16_384  # a filter keeping at most this many rows gets them all scored (exact)
MIN_SHARE = 0.02  # a filter keeping less than this still scales the budgets by 50 only
WHOLE_SHARE = 0.5  # a cluster of which this share of the paths is wanted is scored whole, in place
_CHAIN_PREFIX = 64  # chains ordered at least, to find the nearest ones
_FILTERS = 8  # filters whose rows are kept grouped (each 8 bytes per row it keeps), then forgotten
_TRAIN_SAMPLE = 65_536  # k-means runs on at most this many paths; all are assigned after
_ITERATIONS = 8
_BLOCK = 8_192  # paths assigned per matrix product (bounds the build's memory)
_SEED = 20261204


@dataclass
class PathClusters:
    """The clusters of the path vectors (stored cluster by cluster, so that a cluster's paths are
    one slice of the path matrix), and the rows reached from a cluster or a chain."""

    centroids: np.ndarray  # (K, d) float32, unit vectors
    offsets: np.ndarray  # (K + 1,) int64: cluster k's paths are paths[offsets[k]:offsets[k + 1]]
    rows_by_cluster: np.ndarray  # (N,) int32: rows, cluster by cluster (ascending within one)
    row_offsets: np.ndarray  # (K + 1,) int64
    rows_by_chain: np.ndarray  # (N,) int32: rows, chain by chain (ascending within one)
    chain_offsets: np.ndarray  # (C + 2,) int64: the last chain is "no headings"
    path_ids: np.ndarray  # (P,) int32: each stored path's place among the embedded texts
    # one similarity per path, lent to one search at a time: allocated per search, an array this
    # size (160 kB at ten times sdk-docs) is a fresh mapping under the server's allocator settings
    _spares: list[np.ndarray] = field(default_factory=list, init=False, repr=False, compare=False)
    # the rows of the filters searched lately (wide ones only), by their mask's identity
    _filters: MaskMemo[FilterRows] = field(
        default_factory=lambda: MaskMemo(_FILTERS), init=False, repr=False, compare=False
    )

    @property
    def probes(self) -> int:
        """Clusters probed without a filter: the square root of their number (at least
        :data:`MIN_PROBES`), so the paths scored grow as the three-quarter power of the paths."""
        return min(len(self.centroids), max(MIN_PROBES, math.ceil(math.sqrt(len(self.centroids)))))

    @classmethod
    def build(
        cls, paths: np.ndarray, row_path: np.ndarray, row_chain: np.ndarray, chains: int
    ) -> tuple[PathClusters, np.ndarray, np.ndarray]:
        """Cluster ``paths`` (unit rows) and index the rows by cluster and by chain (``chains``
        chain vectors, the last one "no headings"); returns the clusters, the paths in cluster
        order and ``row_path`` renumbered to that order. Deterministic: a fixed seed and order."""
        count = max(1, min(len(paths), round(1.5 * math.sqrt(len(paths)))))
        centroids = _kmeans(paths, count)
        labels = _assign(paths, centroids)
        order = np.argsort(labels, kind="stable")
        offsets = np.searchsorted(labels[order], np.arange(count + 1)).astype(np.int64)
        ordered = np.ascontiguousarray(paths[order])
        filled = offsets[1:] > offsets[:-1]
        centroids[filled] = _mean_directions(ordered, offsets[:-1][filled])
        renumber = np.empty(len(paths), dtype=np.int32)
        renumber[order] = np.arange(len(paths), dtype=np.int32)
        rows_by_cluster, row_offsets = _index(labels[row_path], count)
        rows_by_chain, chain_offsets = _index(row_chain, chains)
        ids = order.astype(np.int32)
        clusters = cls(centroids, offsets, rows_by_cluster, row_offsets, rows_by_chain, chain_offsets, ids)
        return clusters, ordered, renumber[row_path]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {f"ivf.{name}": getattr(self, name) for name in _ARRAYS}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> PathClusters | None:
        if not all(f"ivf.{name}" in arrays for name in _ARRAYS):
            return None
        return cls(*(arrays[f"ivf.{name}"] for name in _ARRAYS))

    def candidates(
        self, query: np.ndarray, by_chain: np.ndarray, mask: np.ndarray | None, limit: int
    ) -> Candidates:
        """The rows a near answer to ``query`` can come from (ascending, under ``mask``), and the
        clusters probed; ``by_chain``: the query's similarity to every chain. A filter that keeps
        at most :data:`EXACT_ROWS` rows, or leaves fewer than ``limit`` among the candidates,
        gets every row it keeps (the exact answer, at the cost of those rows)."""
        kept = len(self.rows_by_chain) if mask is None else int(np.count_nonzero(mask))
        if mask is not None and kept <= EXACT_ROWS:
            return Candidates(np.flatnonzero(mask), _NONE)
        scale = 1.0 / max(kept / max(len(self.rows_by_chain), 1), MIN_SHARE)
        probes = min(len(self.centroids), math.ceil(self.probes * scale))
        near = row_dots(self.centroids, query)
        chosen = np.arange(len(near))
        if probes < len(near):
            chosen = np.sort(np.argpartition(-near, probes - 1)[:probes])
        rows = self if mask is None else self._kept_rows(mask)  # the filter's rows only
        found = [_ranges(rows.rows_by_cluster, rows.row_offsets, chosen)]
        if len(self.chain_offsets) > 2:  # the last chain ("no headings") is reached by path only
            taken = self._nearest_chains(by_chain, CHAIN_ROWS * scale)
            found.append(_ranges(rows.rows_by_chain, rows.chain_offsets, taken))
        unique = sorted_unique(np.concatenate(found))
        if mask is not None and len(unique) < min(limit, kept):  # too few kept rows near the query
            return Candidates(np.flatnonzero(mask), _NONE)
        return Candidates(unique, chosen)

    def _kept_rows(self, mask: np.ndarray) -> FilterRows:
        """The rows ``mask`` keeps, cluster by cluster and chain by chain, made on the filter's
        first search (the engine memoises a filter's mask: one array for all its searches, see
        :meth:`~docs_mcp_core.search.retrieval.Retrieval.prefilter`)."""
        return self._filters.get(mask, lambda kept: FilterRows.of(self, kept))

    def _nearest_chains(self, by_chain: np.ndarray, budget: float) -> np.ndarray:
        """The named chains nearest the query, best first (equal similarities: the lower chain
        first), until their rows reach ``budget``: the first chains of their whole order, found
        by ordering only the chains at or above a cut that holds the budget (a few hundred of the
        3,564 chains of ``sdk-docs``), lowered while it does not."""
        named = len(self.chain_offsets) - 2
        negated = -by_chain[:named]
        sizes = self.chain_offsets[1 : named + 1] - self.chain_offsets[:named]
        share = budget / max(int(self.chain_offsets[named]), 1)  # of the rows with headings
        wanted = min(named, max(_CHAIN_PREFIX, math.ceil(2 * share * named)))
        while True:
            # every chain at or above the wanted-th similarity, ties included: a prefix of the order
            cut = np.partition(negated, wanted - 1)[wanted - 1] if wanted < named else np.inf
            first = np.flatnonzero(negated <= cut)
            order = first[np.argsort(negated[first], kind="stable")]
            reached = np.cumsum(sizes[order])
            if wanted == named or reached[-1] >= budget:
                return order[: int(np.searchsorted(reached, budget)) + 1]
            wanted = min(named, 4 * wanted)

    def path_similarity(self, paths: np.ndarray, query: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """The query's similarity to each of the ``wanted`` paths, in their order. A cluster of
        which at least :data:`WHOLE_SHARE` of the paths are wanted (every probed cluster of an
        unfiltered search) is scored whole, on the path matrix's own slice (one product per run of
        adjacent clusters); the other wanted paths are gathered. Gathering a path out of the
        matrix costs more than twice what scoring it in place does (63 MB of paths at ten times
        ``sdk-docs``: its rows are read from memory, not the caches)."""
        try:
            similarity = self._spares.pop()
        except IndexError:
            similarity = np.empty(len(paths), dtype=np.float32)
        if len(similarity) != len(paths):
            similarity = np.empty(len(paths), dtype=np.float32)
        try:
            return self._similarity(similarity, paths, query, wanted).take(wanted)
        finally:
            self._spares.append(similarity)

    def _similarity(
        self, similarity: np.ndarray, paths: np.ndarray, query: np.ndarray, wanted: np.ndarray
    ) -> np.ndarray:
        marked = np.zeros(len(paths), dtype=bool)
        marked[wanted.astype(np.intp)] = True  # (an index of int32 costs three times as much)
        distinct = np.flatnonzero(marked)
        cluster = np.searchsorted(self.offsets, distinct, side="right") - 1
        counts = np.bincount(cluster, minlength=len(self.offsets) - 1)
        whole = counts >= WHOLE_SHARE * (self.offsets[1:] - self.offsets[:-1])
        whole &= counts > 0
        chosen = np.flatnonzero(whole)
        breaks = np.flatnonzero(np.diff(chosen) != 1) + 1
        for run in np.split(chosen, breaks) if len(chosen) else []:
            lo, hi = int(self.offsets[run[0]]), int(self.offsets[run[-1] + 1])
            similarity[lo:hi] = row_dots(paths[lo:hi], query)
        outside = distinct[~whole[cluster]]
        similarity[outside] = row_dots(paths[outside], query)
        return similarity


@dataclass
class Candidates:
    """What :meth:`PathClusters.candidates` found for a query."""

    rows: np.ndarray  # ascending
    probed: np.ndarray  # the clusters probed, ascending


@dataclass
class FilterRows:
    """The rows a filter keeps, grouped as :class:`PathClusters` groups every row: a search under
    the filter gathers only its rows of the probed clusters and chains, where gathering every row
    and then testing the mask costs 1/share times as much (the budgets grow by that factor)."""

    rows_by_cluster: np.ndarray
    row_offsets: np.ndarray
    rows_by_chain: np.ndarray
    chain_offsets: np.ndarray

    @classmethod
    def of(cls, clusters: PathClusters, mask: np.ndarray) -> FilterRows:
        def kept(rows: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            keep = mask.take(rows)
            before = np.zeros(len(rows) + 1, dtype=np.int64)  # kept rows before each place
            np.cumsum(keep, out=before[1:])
            return rows[keep], before[offsets]

        by_cluster = kept(clusters.rows_by_cluster, clusters.row_offsets)
        return cls(*by_cluster, *kept(clusters.rows_by_chain, clusters.chain_offsets))


_NONE = np.empty(0, dtype=np.int64)  # no cluster probed
_ARRAYS = (
    "centroids",
    "offsets",
    "rows_by_cluster",
    "row_offsets",
    "rows_by_chain",
    "chain_offsets",
    "path_ids",
)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def _mean_directions(grouped: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The unit mean of each group of ``grouped``'s rows (the groups start at the ascending
    ``starts``, the first at 0, and run to the next start or the end)."""
    return _unit(np.add.reduceat(grouped, starts, axis=0))


def _assign(paths: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Each path's nearest centroid (by cosine), a block of paths at a time."""
    labels = np.empty(len(paths), dtype=np.int64)
    for start in range(0, len(paths), _BLOCK):
        labels[start : start + _BLOCK] = np.argmax(paths[start : start + _BLOCK] @ centroids.T, axis=1)
    return labels


def _kmeans(paths: np.ndarray, count: int) -> np.ndarray:
    """Spherical k-means on a sample of ``paths``: ``count`` unit centroids."""
    rng = np.random.default_rng(_SEED)
    train = paths
    if len(paths) > _TRAIN_SAMPLE:
        train = paths[np.sort(rng.choice(len(paths), _TRAIN_SAMPLE, replace=False))]
    centroids = np.array(train[np.sort(rng.choice(len(train), count, replace=False))], dtype=np.float32)
    for _ in range(_ITERATIONS):
        labels = _assign(train, centroids)
        order = np.argsort(labels, kind="stable")
        starts = np.searchsorted(labels[order], np.arange(count))
        filled = np.bincount(labels, minlength=count) > 0
        centroids[filled] = _mean_directions(train[order], starts[filled])  # empty: kept
    return centroids


def _index(keys: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by ``keys`` (ascending within a key) and each key's offsets."""
    order = np.argsort(keys, kind="stable").astype(np.int32)
    return order, np.searchsorted(keys[order], np.arange(count + 1)).astype(np.int64)


def _ranges(values: np.ndarray, offsets: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``values[offsets[i]:offsets[i + 1]]`` for every ``i`` of ``ids``, concatenated."""
    starts = offsets[ids]
    lengths = offsets[np.asarray(ids) + 1] - starts
    total = int(lengths.sum())
    if not total:
        return values[:0]
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return values[shift + np.arange(total)]
