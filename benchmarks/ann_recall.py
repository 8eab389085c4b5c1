"""ANN recall and latency against exact search: ``uv run python benchmarks/ann_recall.py``.

Decides when ``docs-mcp build`` gives the ``vector`` column an ANN index and which index and
query-time parameters it uses (``ANN_*`` and ``ann_index_wanted`` in ``docs_mcp_core.index.table``).

Data (``--data``): ``hash`` (default) is the ``hash`` provider's vectors (``--dims``, default 256)
of the embedding inputs of the sdk-docs chunks (``--docs``, default ``../shared/corpora/sdk-docs``;
without it, synthetic Markdown-like text). Larger tables splice the first part of one chunk's input
onto the rest of another (with hash vectors, a splice is a near neighbour of both parents, so there
are real neighbourhoods to miss). Queries: the 60 dev-case queries, then chunk headings and
breadcrumb tails, embedded the same way (200 in all, ``--queries``). ``gaussian`` is harder: unit
vectors around 300 random centres with noise twice the centres' norm, queries drawn the same way.

For every table size (``--sizes``): exact search (LanceDB flat; a numpy brute force is the ground
truth), then each candidate index with each query-parameter set. Columns:

* ``recall@10``: share of the ANN top 10 whose exact distance is within the exact 10th best
  (ties count as hits), queried with ``limit 10``;
* ``r@10 f210``: the same, queried as the search engine queries its vector leg, ``limit 210`` (a
  10-hit page fetches ``max(offset + limit + 200, 5 * limit)`` rows), top 10 of those;
* ``r@10 filt``: as ``f210`` under the prefilter of a ``language`` search (``language = 'python'
  OR language = ''``, a third of the rows), against the exact answer under the same filter;
* ``r@10 1%``: as ``f210`` under a filter that keeps about 1 % of the rows;
* ``p50``/``p95`` (ms): latency of the engine-shaped query (``limit 210``, ``id`` and
  ``_distance`` selected), one thread, after warm-up; ``p95 1%`` the same under the 1 % filter;
  ``build s``: index creation time.

Measured on the 2-core project machine (lancedb 0.40; latencies are noisy: other jobs ran at the
same time, load 3-9). Engine-shaped recall (``f210``/``filt``/``1%``) and p50:

| data, rows x dims | flat p50 | IVF_FLAT, >= 20 probes (chosen) | IVF_FLAT, 20 probes | IVF_HNSW_SQ ef 300 refine 2 | IVF_PQ 20 probes refine 10 |
| --- | ---: | --- | --- | --- | --- |
| hash 2,000 x 256 | 3.6 | 1.00/1.00/1.00, 2.1 ms, build 0.1 s | 1.00/1.00/0.83 | 0.995/1.00/1.00, 3.7 ms | 1.00/1.00/1.00, 4.7 ms |
| hash 5,000 x 256 | 5.8 | 1.00/1.00/1.00, 3.3 ms, build 0.1 s | 1.00/1.00/0.94 | 0.99/0.99/1.00, 5.9 ms | 1.00/1.00/1.00, 7.8 ms |
| hash 10,969 x 256 | 11-16 | 1.00/1.00/1.00, 3.8-6.2 ms, build 0.8-2.3 s | 1.00/1.00/0.96 | 0.997/0.995/1.00, 7.4 ms, build 5 s | 1.00/1.00/1.00, 14 ms, build 12 s |
| hash 50,000 x 256 | 81 | 1.00/1.00/1.00, 11.7 ms, build 18 s | 1.00/0.99/1.00 | 0.98/0.98/1.00, 8.5 ms, build 30 s (0.45 in another run) | 1.00/1.00/1.00, 19 ms, build 81 s |
| hash 100,000 x 256 | 264-490 | 1.00/1.00/1.00, 28 ms, build 16 s | 1.00/0.995/0.997 | 0.65 (build 157 s) | 1.00/1.00/(not run), 21 ms, build 60 s |
| gaussian 10,969 x 256 | 11.6 | 1.00/1.00/1.00, 3.8 ms | 0.87/0.81/0.49 | 0.998/1.00/1.00, 7.6 ms | 0.88/0.85/0.62 |
| gaussian 100,000 x 256 | 159 | 1.00/1.00/1.00, 22 ms, build 4 s | 0.96/0.95/0.38 | | |
| hash 1,000 / 2,000 / 5,000 x 1536 | 6.3 / 9.0 / 28.5 | 1.00/1.00/1.00, 2.7-8.5 ms | | | |

Decision: IVF_FLAT (no quantization, so no refine step) over ``sqrt(rows)`` partitions. It is the
only candidate that kept every recall column >= 0.95 on both data sets; HNSW-SQ recall varied
between builds and its build time grew fastest, IVF-PQ needed refine factor 10 and was the slowest
to build. Flat search costs about 6 ms at 5,000 x 256 or 1,000 x 1536 and grows with rows x
dimensions, so an index is built from 5,000 rows at 256 dimensions (proportionally fewer for wider
vectors, never below 1,000 rows): under that, exact search costs no more than the lexical legs it
runs beside.

Probing (``ivf_probes`` in ``docs_mcp_core.index.table``, the ``scaled_nprobes`` row here): 20 partitions while the
prefilter keeps at least 10 % of the rows, proportionally more below that (200 at 1 %), as a fixed
``nprobes``. The table above was measured with ``minimum_nprobes(20)`` and ``maximum_nprobes(0)``
(probe more while a filter leaves too few rows). Measured again on the 10x hash table (109,690 x
256, 331 partitions, limit 200, the 60 dev queries): that open-ended probing cost 19-20 ms whatever
the minimum, because LanceDB probed far more partitions than needed, even with no filter; a fixed
20 cost 7.4 ms with recall@10 1.000, and 9.7-9.8 ms with recall 1.000 under filters keeping 41 % and
11 % of the rows. A fixed 20 under a 1 % filter still loses neighbours, hence the scaling.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from docs_mcp_core.index.table import ivf_probes

os.environ.setdefault("LANCEDB_LOG", "error")  # no Rust WARN lines (k-means on small tables) in the table

from docs_mcp_core.embedding import hash_to_unit_vector

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "corpora" / "sdk-docs"
DEFAULT_CASES = REPO.parent / "shared" / "corpora" / "sdk-docs-dev-cases.json"
FETCH = 210  # what the engine asks the vector leg for on a first page of 10
FILTER = "language = 'python' OR language = ''"
NARROW = "rare = 'yes'"  # about 1% of the rows


@dataclass
class Doc:
    text: str
    language: str
    heading: str
    breadcrumb: str


@dataclass
class Candidate:
    """One index configuration and the query-parameter sets tried on it."""

    name: str
    make: Callable[[int], Any]  # rows -> lancedb index config
    params: list[dict[str, int]]


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))]


# ── data ─────────────────────────────────────────────────────────────────────────────────────────


def load_docs(docs_dir: Path) -> list[Doc]:
    from docs_mcp_core.chunking import embedding_input
    from docs_mcp_core.validation import validate_corpus

    report = validate_corpus(docs_dir, keep_chunks=True)
    return [
        Doc(embedding_input(c), c.metadata.get("language", ""), c.heading, c.breadcrumb)
        for r in report.results
        for c in r.chunks
    ]


def synthetic_docs(count: int, rng: random.Random) -> list[Doc]:
    words = [
        "client",
        "request",
        "response",
        "error",
        "retry",
        "token",
        "stream",
        "model",
        "link",
        "domain",
        "create",
        "update",
        "delete",
        "list",
        "get",
        "options",
        "timeout",
        "server",
        "status",
        "field",
    ]
    docs = []
    for i in range(count):
        heading = " ".join(rng.choices(words, k=3)).title()
        crumb = f"sdks/{rng.choice(['go', 'python', 'typescript'])}/docs/{i // 7}.md > {heading}"
        body = "\n".join(
            " ".join(rng.choices(words, k=rng.randint(5, 14))) for _ in range(rng.randint(2, 40))
        )
        docs.append(Doc(f"Context: {crumb}\n\nContent:\n{body}", crumb.split("/")[1], heading, crumb))
    return docs


def grow(docs: list[Doc], size: int, rng: random.Random) -> list[Doc]:
    """``docs`` plus spliced documents up to ``size`` (or the first ``size`` docs)."""
    if size <= len(docs):
        return docs[:size]
    out = list(docs)
    while len(out) < size:
        a, b = rng.choice(docs), rng.choice(docs)
        cut = rng.randint(1, max(1, min(len(a.text), len(b.text)) - 1))
        out.append(Doc(a.text[:cut] + b.text[cut:], a.language, a.heading, a.breadcrumb))
    return out


def query_texts(docs: list[Doc], cases_path: Path, count: int, rng: random.Random) -> list[str]:
    queries: list[str] = []
    if cases_path.is_file():
        queries.extend(str(c["query"]) for c in json.loads(cases_path.read_text(encoding="utf-8")))
    while len(queries) < count:
        doc = rng.choice(docs)
        if rng.random() < 0.5 and doc.heading:
            queries.append(doc.heading)
        else:
            queries.append(" ".join(doc.breadcrumb.split(" > ")[-2:]))
    return queries[:count]


def embed(texts: Sequence[str], dims: int) -> np.ndarray:
    return np.asarray([hash_to_unit_vector(t, dims) for t in texts], dtype=np.float32)


# ── measurement ──────────────────────────────────────────────────────────────────────────────────


def exact_topk(
    matrix: np.ndarray, queries: np.ndarray, k: int, mask: np.ndarray | None = None
) -> list[np.ndarray]:
    """Squared L2 distances of the exact top ``k`` per query (ascending), optionally under a row mask."""
    wide = matrix.astype(np.float64)
    norms = (wide**2).sum(axis=1)
    out = []
    for q in queries.astype(np.float64):
        d = norms - 2 * (wide @ q) + float(q @ q)
        if mask is not None:
            d = np.where(mask, d, np.inf)
        idx = np.argpartition(d, k)[:k]
        out.append(np.sort(d[idx]))
    return out


def recall_at_10(found: list[int], matrix: np.ndarray, q: np.ndarray, exact: np.ndarray) -> float:
    """Hits among the first 10 ``found`` rows whose exact distance is within the exact 10th best."""
    bound = float(exact[9]) + 1e-5
    rows = found[:10]
    if not rows:
        return 0.0
    dist = ((matrix[rows].astype(np.float64) - q.astype(np.float64)) ** 2).sum(axis=1)
    return float((dist <= bound).sum()) / 10.0


def run_queries(
    table: Any,
    queries: np.ndarray,
    *,
    limit: int,
    params: dict[str, int],
    where: str | None = None,
    flat: bool = False,
) -> tuple[list[list[int]], list[float]]:
    found: list[list[int]] = []
    times: list[float] = []
    for q in queries:
        builder = table.search(q.tolist(), vector_column_name="vector")
        if flat:
            builder = builder.bypass_vector_index()
        if "nprobes" in params:
            builder = builder.nprobes(params["nprobes"])
        if "scaled_nprobes" in params:  # the engine's rule: more partitions as the filter narrows
            share = table.count_rows(where) / table.count_rows() if where else 1.0
            builder = builder.nprobes(ivf_probes(share))
        if "min_nprobes" in params:  # probe more partitions only when a filter leaves too few rows
            builder = builder.minimum_nprobes(params["min_nprobes"]).maximum_nprobes(
                params.get("max_nprobes", 0)
            )
        if "refine_factor" in params:
            builder = builder.refine_factor(params["refine_factor"])
        if "ef" in params:  # HNSW needs ef >= the rows it hands on (limit x refine factor)
            builder = builder.ef(max(params["ef"], limit * params.get("refine_factor", 1)))
        if where:
            builder = builder.where(where, prefilter=True)
        started = time.perf_counter()
        rows = builder.select(["id", "_distance"]).limit(limit).to_arrow()
        elapsed = (time.perf_counter() - started) * 1000
        times.append(elapsed)
        found.append(rows.column("id").to_pylist())
    return found, times


def candidates(quick: bool) -> list[Candidate]:
    from lancedb.index import HnswSq, IvfFlat, IvfPq

    def parts(rows: int) -> int:
        return max(1, round(math.sqrt(rows)))

    adaptive = {"min_nprobes": 20, "max_nprobes": 0}  # 20 partitions, more while results are missing
    out = [
        Candidate(
            "IVF_HNSW_SQ (defaults)",
            lambda rows: HnswSq(distance_type="l2"),
            [
                {},
                {"ef": 300, "refine_factor": 2},
                {"nprobes": 20, "ef": 300, "refine_factor": 2},
                {**adaptive, "ef": 300, "refine_factor": 2},
            ],
        ),
        Candidate(
            "IVF_PQ (sqrt(n) partitions, 32 sub-vectors)",
            lambda rows: IvfPq(distance_type="l2", num_partitions=parts(rows), num_sub_vectors=32),
            [{}, {"nprobes": 20, "refine_factor": 10}, {**adaptive, "refine_factor": 10}],
        ),
        Candidate(
            "IVF_FLAT (sqrt(n) partitions)",
            lambda rows: IvfFlat(distance_type="l2", num_partitions=parts(rows)),
            [{}, {"nprobes": 20}, {"nprobes": 50}, adaptive, {"scaled_nprobes": 1}],
        ),
    ]
    return out[-1:] if quick else out


@dataclass
class Setup:
    """One table under test and its ground truth."""

    table: Any
    size: int
    matrix: np.ndarray
    queries: np.ndarray
    exact10: list[np.ndarray]
    exact10_filtered: list[np.ndarray]
    exact10_narrow: list[np.ndarray]


def mean_recall(found: list[list[int]], setup: Setup, exact: list[np.ndarray]) -> float:
    return statistics.fmean(
        recall_at_10(f, setup.matrix, q, e) for f, q, e in zip(found, setup.queries, exact, strict=True)
    )


def measure_row(
    setup: Setup, name: str, build_s: float | None, params: dict[str, int], *, flat: bool = False
) -> dict[str, Any]:
    table, queries = setup.table, setup.queries
    run_queries(table, queries[:10], limit=FETCH, params=params, flat=flat)  # warm-up
    f10, _ = run_queries(table, queries, limit=10, params=params, flat=flat)
    f210, times = run_queries(table, queries, limit=FETCH, params=params, flat=flat)
    filtered, _ = run_queries(table, queries, limit=FETCH, params=params, where=FILTER, flat=flat)
    narrow, narrow_times = run_queries(table, queries, limit=FETCH, params=params, where=NARROW, flat=flat)
    entry = {
        "rows": setup.size,
        "index": name,
        "params": ", ".join(f"{k} {v}" for k, v in params.items()) or "defaults",
        "recall@10": mean_recall(f10, setup, setup.exact10),
        "r@10 f210": mean_recall(f210, setup, setup.exact10),
        "r@10 filt": mean_recall(filtered, setup, setup.exact10_filtered),
        "r@10 1%": mean_recall(narrow, setup, setup.exact10_narrow),
        "p50": percentile(times, 0.5),
        "p95": percentile(times, 0.95),
        "p95 1%": percentile(narrow_times, 0.95),
        "build s": build_s,
    }
    print(format_row(entry), flush=True)
    return entry


def gaussian_rows(size: int, dims: int, rng: np.random.Generator, centers: np.ndarray) -> np.ndarray:
    """Unit vectors around ``centers`` (one cluster per row, chosen at random) with heavy noise."""
    picks = rng.integers(0, len(centers), size)
    rows = centers[picks] + rng.normal(0.0, 2.0 / math.sqrt(dims), (size, dims))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def measure(
    docs: list[Doc] | None,
    queries_text: list[str],
    dims: int,
    sizes: list[int],
    quick: bool,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """``docs``: hash vectors of (grown) chunk texts; ``None``: the Gaussian-cluster data."""
    import lancedb
    import pyarrow as pa

    results: list[dict[str, Any]] = []
    gen = np.random.default_rng(rng.randrange(2**32))
    centers = gen.normal(0.0, 1.0 / math.sqrt(dims), (300, dims))
    if docs is None:
        qvecs = gaussian_rows(len(queries_text), dims, gen, centers)
    else:
        qvecs = embed(queries_text, dims)
    for size in sizes:
        started = time.perf_counter()
        if docs is None:
            matrix = gaussian_rows(size, dims, gen, centers)
            languages = [rng.choice(["go", "python", "typescript", ""]) for _ in range(size)]
        else:
            rows_docs = grow(docs, size, rng)
            matrix = embed([d.text for d in rows_docs], dims)
            languages = [d.language for d in rows_docs]
        embed_s = time.perf_counter() - started
        mask = np.asarray([lang in ("python", "") for lang in languages])
        exact10 = exact_topk(matrix, qvecs, 10)
        exact10_f = exact_topk(matrix, qvecs, 10, mask)
        rare = [rng.random() < 0.01 for _ in range(size)]
        exact10_n = exact_topk(matrix, qvecs, 10, np.asarray(rare))
        kind = "Gaussian-cluster" if docs is None else "hash"
        print(f"\n## {size:,} rows x {dims} dims ({kind} vectors made in {embed_s:.1f}s)", flush=True)

        folder = Path(tempfile.mkdtemp(prefix="ann-recall-"))
        try:
            db = lancedb.connect(str(folder))
            data = pa.table(
                {
                    "id": pa.array(range(size), pa.int64()),
                    "language": pa.array(languages, pa.string()),
                    "rare": pa.array(["yes" if r else "no" for r in rare], pa.string()),
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel(), pa.float32()), dims),
                }
            )
            table = db.create_table("chunks", data)

            setup = Setup(table, size, matrix, qvecs, exact10, exact10_f, exact10_n)
            print(HEADER, flush=True)
            results.append(measure_row(setup, "flat (exact)", None, {}, flat=True))
            for cand in candidates(quick):
                started = time.perf_counter()
                table.create_index("vector", config=cand.make(size), replace=True)
                build_s = time.perf_counter() - started
                for params in cand.params:
                    results.append(measure_row(setup, cand.name, build_s, params))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return results


HEADER = (
    "| rows | index | query params | recall@10 | r@10 f210 | r@10 filt | r@10 1% | p50 ms | p95 ms | p95 1% | build s |\n"
    "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def format_row(e: dict[str, Any]) -> str:
    build = "" if e["build s"] is None else f"{e['build s']:.1f}"
    return (
        f"| {e['rows']:,} | {e['index']} | {e['params']} | {e['recall@10']:.3f} | {e['r@10 f210']:.3f} | "
        f"{e['r@10 filt']:.3f} | {e['r@10 1%']:.3f} | {e['p50']:.2f} | {e['p95']:.2f} | {e['p95 1%']:.2f} | {build} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="ANN recall@10 and latency against exact search.")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="corpus to take chunk texts from")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="eval cases whose queries are used")
    parser.add_argument("--sizes", default="10969,50000,100000", help="comma-separated table sizes")
    parser.add_argument("--dims", type=int, default=256, help="vector dimensions (default 256)")
    parser.add_argument("--queries", type=int, default=200, help="number of queries (default 200)")
    parser.add_argument("--quick", action="store_true", help="only the chosen candidate (IVF_FLAT)")
    parser.add_argument(
        "--data",
        choices=["hash", "gaussian"],
        default="hash",
        help="hash vectors of the corpus (default) or 300 Gaussian clusters with heavy noise (harder)",
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    started = time.perf_counter()
    if args.docs.is_dir():
        docs = load_docs(args.docs)
        source = f"{args.docs} ({len(docs):,} chunks)"
    else:
        docs = synthetic_docs(11_000, rng)
        source = f"synthetic ({len(docs):,} documents)"
    print(f"corpus: {source}, loaded in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    queries = query_texts(docs, args.cases, args.queries, rng)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = measure(None if args.data == "gaussian" else docs, queries, args.dims, sizes, args.quick, rng)
    print("\n" + HEADER)
    for entry in results:
        print(format_row(entry))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
