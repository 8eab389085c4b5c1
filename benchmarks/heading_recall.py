"""The heading-path leg's clusters against its exact answer: ``uv run python benchmarks/heading_recall.py --index-dir DIR``.

An index of more than ``IVF_MIN_PATHS`` distinct page paths holds clusters of its path vectors
(:mod:`docs_mcp_core.search.heading_clusters`), and the leg then scores only the rows of the
nearest clusters and of the nearest heading chains. This compares that leg with the exact one (the
same vectors without the clusters: every row scored) on the development queries (``--cases``),
each unfiltered, with its own filters, with ``language`` and with ``language`` + ``service``:

* ``recall@100``: share of the leg's 100 rows whose exact similarity is at least the exact 100th
  best (ties count as hits), as ``ann_recall.py`` counts; ``min`` the worst query;
* ``same``: share of queries whose 100 rows (and order) are exactly the exact leg's;
* ``joined``: the rows at the 0.25 join threshold or above, approximate over exact (a row below it
  joins only when another leg found it);
* ``p50``/``p95``: the leg's time after the query's embedding (ms), both ways, interleaved;
* ``rows``: candidate rows scored per query (median), against every row.

``--min-probes`` and ``--chain-rows`` try other budgets than the shipped ones (``MIN_PROBES``, and
the square root of the clusters above it; ``CHAIN_ROWS``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from docs_mcp_core.search import SearchEngine, heading_clusters
from docs_mcp_core.search.heading_leg import HeadingLeg, HeadingVectors
from docs_mcp_eval.metrics import percentile

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = [
    SHARED / "corpora" / "sdk-docs-dev-cases.json",
    SHARED / "corpora" / "sdk-docs-dev2-cases.json",
]
FILTER_SETS: list[dict[str, str] | None] = [
    {},
    None,
    {"language": "python"},
    {"language": "typescript", "service": "dub"},
]
DEPTH = HeadingLeg.DEPTH
JOIN = HeadingLeg.NEW_ROW_SIMILARITY


def exact_of(vectors: HeadingVectors) -> HeadingVectors:
    v = vectors
    return HeadingVectors(v.paths, v.chains, v.row_path, v.row_chain, v.row_scale, v.model)


def timed(vectors: HeadingVectors, q: np.ndarray, mask: np.ndarray | None) -> tuple[float, Any]:
    started = time.perf_counter()
    leg = vectors.nearest(q, mask, DEPTH)
    return (time.perf_counter() - started) * 1000, leg


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--cases", type=Path, action="append", help="case files (default: dev and dev2)")
    parser.add_argument("--min-probes", type=int, help="clusters probed without a filter, at least")
    parser.add_argument("--chain-rows", type=int, help="rows taken from the nearest chains")
    args = parser.parse_args()
    cases: list[dict[str, Any]] = []
    for path in args.cases or DEFAULT_CASES:
        cases.extend(json.loads(path.read_text(encoding="utf-8")))
    engine = SearchEngine.open(args.index_dir)
    retrieval = engine._retrieval  # a benchmark reads the engine's leg
    leg = retrieval.heading
    if leg is None or leg.vectors.clusters is None:
        raise SystemExit(f"{args.index_dir}: no heading-path clusters (fewer paths, or built before them)")
    approx, exact = leg.vectors, exact_of(leg.vectors)
    clusters = approx.clusters
    assert clusters is not None
    if args.min_probes:
        heading_clusters.MIN_PROBES = args.min_probes
    if args.chain_rows:
        heading_clusters.CHAIN_ROWS = args.chain_rows
    print(
        f"{args.index_dir}: {len(approx)} rows, {len(approx.paths)} paths in {len(clusters.centroids)} clusters, "
        f"{len(approx.chains) - 1} chains; probes {clusters.probes}, chain rows {heading_clusters.CHAIN_ROWS}"
    )
    print(
        f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, load {os.getloadavg()}"
    )
    queries = np.stack([leg.embedder.embed_query(c["query"]) for c in cases]).astype(np.float32)
    for filters in FILTER_SETS:
        report(retrieval, cases, queries, approx, exact, filters)
    engine.close()


def report(
    retrieval: Any,
    cases: list[dict[str, Any]],
    queries: np.ndarray,
    approx: HeadingVectors,
    exact: HeadingVectors,
    filters: dict[str, str] | None,
) -> None:
    recalls: list[float] = []
    same = joined_a = joined_e = 0
    times: dict[str, list[float]] = {"clusters": [], "exact": []}
    sizes: list[int] = []
    for case, q in zip(cases, queries, strict=True):
        mask = retrieval.prefilter(case.get("filters") or {} if filters is None else filters).mask
        ta, (pa, sa) = timed(approx, q, mask)
        te, (pe, se) = timed(exact, q, mask)
        times["clusters"].append(ta)
        times["exact"].append(te)
        assert approx.clusters is not None
        sizes.append(len(approx.clusters.candidates(q, approx.chains @ q, mask, DEPTH).rows))
        if not len(pe):
            continue
        cut = se[-1]
        truth = exact.similarity(q)
        recalls.append(float(np.mean(truth[pa] >= cut)) if len(pa) else 0.0)
        same += int(np.array_equal(pa, pe))
        joined_a += int((sa >= JOIN).sum())
        joined_e += int((se >= JOIN).sum())
    label = "own filters" if filters is None else (json.dumps(filters) if filters else "unfiltered")
    print(
        f"  {label:40s} recall@{DEPTH} {statistics.fmean(recalls):.4f} (min {min(recalls):.2f})  "
        f"same {same / len(recalls):.2f}  joined {joined_a}/{joined_e}  "
        f"p50 {percentile(times['clusters'], 0.5):.2f} / {percentile(times['exact'], 0.5):.2f} ms  "
        f"p95 {percentile(times['clusters'], 0.95):.2f} / {percentile(times['exact'], 0.95):.2f} ms  "
        f"rows {int(statistics.median(sizes))} of {len(approx)}"
    )
    assert not math.isnan(statistics.fmean(recalls))


if __name__ == "__main__":
    main()
