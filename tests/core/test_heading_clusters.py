"""The heading-path leg's scoring: exact where it claims to be, bit for bit, on random vectors.

The leg scores only the rows a filter keeps, and in an index of many pages only the rows of the
clusters and heading chains nearest the query (:mod:`docs_mcp_core.search.heading_clusters`). Each
way is compared with the plain computation (every row's similarity from the summed vectors'
factors, the filter applied to every row, the whole set sorted by similarity, then row) on random
factorised vectors: rows repeated on a page (equal similarities: ties), pages without headings,
filters of every share and limits of every size. With budgets that probe everything the clusters'
answer is the exact one; with the shipped budgets it is the exact answer over its candidate rows,
and a real build of a small reference stores the clusters in its derived files and searches them.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.index.derived_files import read_derived
from docs_mcp_core.search import SearchEngine, heading_clusters, heading_leg
from docs_mcp_core.search.heading_clusters import PathClusters, row_dots
from docs_mcp_core.search.heading_leg import HeadingVectors
from tests.support.heading_builds import build_steps, heading_arrays

DIMS = 12


def _unit(rng: np.random.Generator, count: int) -> np.ndarray:
    m = rng.normal(size=(count, DIMS)) + 0.5  # a shared direction, as a model's vectors have
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def _vectors(seed: int) -> tuple[HeadingVectors, random.Random, np.random.Generator]:
    """Random factorised vectors: paths with a few rows each, some rows without a chain."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    path_count, chain_count = rng.randint(1, 120), rng.randint(0, 40)
    paths = _unit(nrng, path_count)
    chains = np.vstack([_unit(nrng, chain_count), np.zeros((1, DIMS), np.float32)])
    row_path: list[int] = []
    row_chain: list[int] = []
    for page in rng.sample(range(path_count), path_count):  # rows page by page, pages in any order
        for _ in range(rng.choice([1, 1, 2, 3, 6])):
            row_path.append(page)
            row_chain.append(
                chain_count if rng.random() < 0.3 or not chain_count else rng.randrange(chain_count)
            )
    rp, rc = np.array(row_path, np.int32), np.array(row_chain, np.int32)
    scale = (1.0 / np.linalg.norm(paths[rp] + chains[rc], axis=1).clip(1e-12)).astype(np.float32)
    return HeadingVectors(paths, chains, rp, rc, scale, "m"), rng, nrng


def _mask(rng: random.Random, rows: int) -> np.ndarray | None:
    if rng.random() < 0.4:
        return None
    share = rng.choice([0.0, 0.05, 0.3, 0.9])
    return np.array([rng.random() < share for _ in range(rows)], dtype=bool)


def _plain(
    vectors: HeadingVectors, query: np.ndarray, rows: np.ndarray, limit: int
) -> tuple[list[int], list[float]]:
    """The best ``limit`` of ``rows``, each row's similarity from its two factors, a full sort."""
    by_path, by_chain = row_dots(vectors.paths, query), row_dots(vectors.chains, query)
    scores = {
        int(r): float((by_path[vectors.row_path[r]] + by_chain[vectors.row_chain[r]]) * vectors.row_scale[r])
        for r in rows
    }
    order = sorted(scores, key=lambda r: (-scores[r], r))[:limit]
    return order, [scores[r] for r in order]


def _answer(
    vectors: HeadingVectors, query: np.ndarray, mask: np.ndarray | None, limit: int
) -> tuple[list[int], list[float]]:
    positions, similarity = vectors.nearest(query, mask, limit)
    return positions.tolist(), similarity.tolist()


@pytest.mark.parametrize("seed", range(60))
def test_the_exact_leg_scores_only_the_filtered_rows_and_answers_as_the_plain_sort(seed: int) -> None:
    vectors, rng, nrng = _vectors(seed)
    for _ in range(4):
        query, mask, limit = _unit(nrng, 1)[0], _mask(rng, len(vectors)), rng.choice([1, 3, 10, 100, 1000])
        kept = np.flatnonzero(mask) if mask is not None else np.arange(len(vectors))
        assert _answer(vectors, query, mask, limit) == _plain(vectors, query, kept, limit)


@pytest.mark.parametrize("seed", range(60))
def test_the_clusters_answer_exactly_over_their_candidates_and_wholly_when_probing_all(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, rng, nrng = _vectors(seed)
    v = vectors
    clusters, paths, row_path = PathClusters.build(v.paths, v.row_path, v.row_chain, len(v.chains))
    clustered = HeadingVectors(paths, v.chains, row_path, v.row_chain, v.row_scale, "m", clusters)
    monkeypatch.setattr(heading_clusters, "MIN_PROBES", 1)
    monkeypatch.setattr(heading_clusters, "CHAIN_ROWS", rng.choice([1, 4, 20]))
    exact_rows = rng.choice([0, 50, 10**9])  # a filter keeping at most this many rows: all scored
    monkeypatch.setattr(heading_clusters, "EXACT_ROWS", exact_rows)
    for _ in range(4):
        query, mask, limit = _unit(nrng, 1)[0], _mask(rng, len(vectors)), rng.choice([1, 3, 10, 100])
        candidates = clusters.candidates(query, row_dots(vectors.chains, query), mask, limit).rows
        assert mask is None or bool(mask[candidates].all())
        if mask is not None:  # never fewer than the limit while the filter keeps that many
            assert len(candidates) >= min(limit, int(mask.sum()))
        answer = _answer(clustered, query, mask, limit)
        assert answer == _plain(vectors, query, candidates, limit)
        if mask is not None and mask.sum() <= exact_rows:
            assert answer == _answer(vectors, query, mask, limit)
    monkeypatch.setattr(heading_clusters, "MIN_PROBES", len(clusters.centroids))
    for _ in range(4):  # every cluster probed: every row is a candidate, the answer is the exact one
        query, mask, limit = _unit(nrng, 1)[0], _mask(rng, len(vectors)), rng.choice([1, 10, 100])
        assert _answer(clustered, query, mask, limit) == _answer(vectors, query, mask, limit)


def _plain_candidates(
    clusters: PathClusters, query: np.ndarray, by_chain: np.ndarray, mask: np.ndarray | None, limit: int
) -> list[int]:
    """The candidate rows as first written: every row of the probed clusters and of the nearest
    chains (their whole order, a stable sort), then the filter at each of them."""
    total = len(clusters.rows_by_chain)
    kept = total if mask is None else int(mask.sum())
    if mask is not None and kept <= heading_clusters.EXACT_ROWS:
        return np.flatnonzero(mask).tolist()
    scale = 1.0 / max(kept / max(total, 1), heading_clusters.MIN_SHARE)
    probes = min(len(clusters.centroids), math.ceil(clusters.probes * scale))
    near = row_dots(clusters.centroids, query)
    chosen = np.arange(len(near))
    if probes < len(near):
        chosen = np.sort(np.argpartition(-near, probes - 1)[:probes])
    o, c = clusters.row_offsets, clusters.chain_offsets
    rows = {int(r) for k in chosen for r in clusters.rows_by_cluster[o[k] : o[k + 1]]}
    named = len(c) - 2
    if named > 0:
        order = np.argsort(-by_chain[:named], kind="stable")
        sizes = np.cumsum(c[order + 1] - c[order])
        for k in order[: int(np.searchsorted(sizes, heading_clusters.CHAIN_ROWS * scale)) + 1]:
            rows |= {int(r) for r in clusters.rows_by_chain[c[k] : c[k + 1]]}
    found = sorted(r for r in rows if mask is None or mask[r])
    if mask is not None and len(found) < min(limit, kept):
        return np.flatnonzero(mask).tolist()
    return found


@pytest.mark.parametrize("seed", range(60))
def test_the_candidates_are_the_plain_ones_with_nearest_chains_in_order_and_a_filters_rows_kept(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nearest chains are found by ordering a prefix that grows until it holds the budget,
    and a filter's rows are kept grouped per cluster and chain for its later searches (a few
    filters at a time): the same rows as the whole stable order and the mask at every row."""
    vectors, rng, nrng = _vectors(seed)
    v = vectors
    clusters, _, _ = PathClusters.build(v.paths, v.row_path, v.row_chain, len(v.chains))
    monkeypatch.setattr(heading_clusters, "MIN_PROBES", 1)
    monkeypatch.setattr(heading_clusters, "CHAIN_ROWS", rng.choice([1, 4, 20, 1000]))
    monkeypatch.setattr(heading_clusters, "EXACT_ROWS", 0)
    monkeypatch.setattr(heading_clusters, "_CHAIN_PREFIX", rng.choice([1, 2, 64]))
    monkeypatch.setattr(heading_clusters, "_FILTERS", 2)
    masks = [_mask(rng, len(v)) for _ in range(3)]
    for _ in range(12):
        query, limit = _unit(nrng, 1)[0], rng.choice([1, 3, 10, 100])
        by_chain = row_dots(v.chains, query)
        if rng.random() < 0.5:  # equal similarities: the lower chain comes first
            by_chain = np.round(by_chain, 1)
        mask = rng.choice(masks)  # the same filters again: their rows as kept before
        found = clusters.candidates(query, by_chain, mask, limit).rows.tolist()
        assert found == _plain_candidates(clusters, query, by_chain, mask, limit)


@pytest.mark.parametrize("seed", range(30))
def test_path_similarity_scores_dense_clusters_in_place_and_the_rest_gathered_alike(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, rng, nrng = _vectors(seed)
    v = vectors
    clusters, paths, _ = PathClusters.build(v.paths, v.row_path, v.row_chain, len(v.chains))
    for _ in range(6):
        monkeypatch.setattr(heading_clusters, "WHOLE_SHARE", rng.choice([0.0, 0.5, 1.0, 2.0]))
        query = _unit(nrng, 1)[0]
        share = rng.choice([0.0, 0.1, 0.5, 1.0])
        wanted = np.array(
            [p for p in range(len(paths)) for _ in range(rng.choice([1, 2])) if rng.random() < share]
        )
        wanted = nrng.permutation(wanted).astype(np.int32) if len(wanted) else np.empty(0, np.int32)
        similarity = clusters.path_similarity(paths, query, wanted)
        assert similarity.tobytes() == row_dots(paths, query)[wanted].tobytes()


def test_the_paths_are_stored_cluster_by_cluster_and_every_row_is_reached_by_its_cluster_and_chain() -> None:
    v, _, _ = _vectors(3)
    clusters, paths, row_path = PathClusters.build(v.paths, v.row_path, v.row_chain, len(v.chains))
    assert np.array_equal(paths[row_path], v.paths[v.row_path])  # every row keeps its path's vector
    assert sorted(map(bytes, paths)) == sorted(map(bytes, v.paths))
    offsets = clusters.offsets
    assert offsets[0] == 0 and offsets[-1] == len(paths) and bool(np.all(np.diff(offsets) >= 0))
    cluster_of_row = np.searchsorted(offsets, row_path, side="right") - 1
    for key, rows, starts in (
        (cluster_of_row, clusters.rows_by_cluster, clusters.row_offsets),
        (v.row_chain, clusters.rows_by_chain, clusters.chain_offsets),
    ):
        for k in range(len(starts) - 1):
            assert rows[starts[k] : starts[k + 1]].tolist() == np.flatnonzero(key == k).tolist()
    again = PathClusters.build(v.paths, v.row_path, v.row_chain, len(v.chains))[0].to_arrays()
    assert all(
        np.array_equal(a, b) for a, b in zip(clusters.to_arrays().values(), again.values(), strict=True)
    )


PAGES = ("payouts", "webhooks", "customers", "invoices", "refunds")


@pytest.fixture(scope="module")
def clustered_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small reference built as if its pages were many: its heading vectors hold clusters."""
    docs, out = tmp_path_factory.mktemp("pages"), tmp_path_factory.mktemp("clustered")
    folder = docs / "sdks" / "acme"
    folder.mkdir(parents=True)
    for name in PAGES:
        text = f"# {name.title()}\n\n## list\n\n`client.{name}.list()`\n\n## get\n\n`client.{name}.get(id)`\n"
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(heading_leg, "IVF_MIN_PATHS", 2)
        build_index(
            BuildOptions(
                docs_dir=docs, out_dir=out, heading_vectors=True, indexed_at="2026-01-01T00:00:00.000Z"
            )
        )
    return out


def test_a_build_of_many_pages_stores_the_clusters_and_the_leg_searches_them(clustered_index: Path) -> None:
    files, why = read_derived(clustered_index / ".lancedb", "chunks")
    assert files is not None, why
    assert files.parts["headings"].arrays["ivf.offsets"][-1] == len(PAGES)
    engine = SearchEngine.open(clustered_index)
    try:
        leg = engine._retrieval.heading  # the leg opened from the derived files
        assert leg is not None and leg.vectors.clusters is not None
        hits = engine.search("how much money did I earn", limit=3).hits
        assert hits and hits[0].chunk_id.startswith("sdks/acme/payouts.md#")
    finally:
        engine.close()


def _steps_of_build(docs: Path, out: Path) -> list[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(heading_leg, "IVF_MIN_PATHS", 2)
        return build_steps(docs, out)


def test_a_rebuild_that_reuses_clustered_vectors_gets_a_fresh_builds_vectors(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    folder = docs / "sdks" / "acme"
    folder.mkdir(parents=True)
    for name in PAGES:
        (folder / f"{name}.md").write_text(f"# {name.title()}\n\n## list\n\nAll {name}.\n", encoding="utf-8")
    _steps_of_build(docs, tmp_path / "out")
    steps = _steps_of_build(docs, tmp_path / "out")  # reads the stored vectors, stored cluster by cluster
    assert any("reusing the previous index's vectors" in s for s in steps)
    _steps_of_build(docs, tmp_path / "fresh")
    rebuilt, fresh = heading_arrays(tmp_path / "out"), heading_arrays(tmp_path / "fresh")
    assert rebuilt.keys() == fresh.keys() and "ivf.path_ids" in fresh
    for name in fresh:
        assert np.array_equal(rebuilt[name], fresh[name]), name


def test_clustered_vectors_give_back_the_embedded_order_and_an_earlier_layout_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nrng = np.random.default_rng(5)
    paths, chains = _unit(nrng, 30), _unit(nrng, 4)
    vocabulary = heading_leg.HeadingVocabulary(
        {heading_leg.path_text(f"p{i:02d}.md"): i for i in range(30)},
        paths,
        {heading_leg.chain_text(f"x > C{i}"): i for i in range(4)},
        chains,
        "m",
    )
    files = [f"p{i:02d}.md" for i in range(30) for _ in range(2)]
    crumbs = [f"p{i:02d}.md > C{i % 4}" if j else f"p{i:02d}.md" for i in range(30) for j in range(2)]
    monkeypatch.setattr(heading_leg, "IVF_MIN_PATHS", 2)
    vectors = HeadingVectors.assemble(vocabulary, files, crumbs)
    assert vectors.clusters is not None and not np.array_equal(vectors.paths, paths)  # stored reordered
    assert np.array_equal(vectors.vocabulary_paths(), paths)
    part = vectors.to_part()
    again = HeadingVectors.from_part(part, "m")
    assert again is not None and np.array_equal(again.vocabulary_paths(), paths)
    del part.arrays["ivf.path_ids"]  # the clusters' first layout recorded no order
    assert HeadingVectors.from_part(part, "m") is None
