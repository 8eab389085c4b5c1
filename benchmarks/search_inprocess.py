"""In-process search latency: ``uv run python benchmarks/search_inprocess.py --index-dir DIR --cases FILE``.

Opens the index with :class:`~docs_mcp_core.search.SearchEngine` (no MCP, no JSON-RPC), warms it
up with ``--warmup`` queries (the original eval's warm-up: ``cases[i % n]`` at ``limit min(5,
limit)``), then times ``engine.search(query, limit=, filters=)`` once per case, ``--passes`` times
over the whole case file, and ``engine.get_doc(expected_chunk_id)`` once per case. Prints p50/p95
(nearest rank, as the eval computes them) per pass, then the best and the median over passes.
Last, the cost of queries at and over the query limits: a query of :data:`MAX_QUERY_TERMS` distinct
words taken from the cases' queries (so that they match many chunks), and the refusal of a 3 MB
query of 400,000 distinct words.
``--profile`` runs one more pass under cProfile and prints the functions where the time goes.
``--max-tokens N`` times searches fitted to that budget (``search_docs`` ``max_tokens``).
``--facets`` also times every case with and without ``facets`` in alternation (the order swapped
each pass) and prints both p50s and the median of the per-case differences: what counting facets
costs a search.

Targets (issue 3): p50 <= 4 ms, p95 <= 12 ms on sdk-docs with the 60 dev cases.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search import MAX_QUERY_CHARS, MAX_QUERY_TERMS, RANKINGS, SearchEngine, SearchOptions
from docs_mcp_eval.cases import EvalCase, load_cases


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))]


def timed_pass(engine: SearchEngine, cases: list[EvalCase], max_tokens: int | None = None) -> list[float]:
    samples: list[float] = []
    for case in cases:
        started = time.perf_counter()
        engine.search(case.query, limit=case.limit, filters=dict(case.filters), max_tokens=max_tokens)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def limit_queries(engine: SearchEngine, cases: list[EvalCase]) -> str:
    """The search time of the longest query accepted, and the refusal time of a huge one."""
    words: dict[str, None] = {}
    for case in cases:
        for word in case.query.lower().split():
            if len(words) < MAX_QUERY_TERMS and word.isalpha() and len(word) > 2:
                words.setdefault(word, None)
    longest = " ".join(words)[:MAX_QUERY_CHARS]
    samples: list[float] = []
    for _ in range(5):
        started = time.perf_counter()
        engine.search(longest)
        samples.append((time.perf_counter() - started) * 1000)
    huge = " ".join(f"w{i:06d}" for i in range(400_000))
    started = time.perf_counter()
    try:
        engine.search(huge)
    except SearchError:
        pass
    refused_ms = (time.perf_counter() - started) * 1000
    return (
        f"query of {len(longest.split())} distinct words ({len(longest):,} characters): "
        f"median {statistics.median(samples):.2f} ms; a {len(huge) / 1e6:.1f} MB query refused in {refused_ms:.2f} ms"
    )


def facet_passes(engine: SearchEngine, cases: list[EvalCase], passes: int) -> None:
    """Each case searched without and with facets, back to back, the order swapped every pass."""
    plain: list[float] = []
    faceted: list[float] = []
    deltas: list[float] = []
    for n in range(passes):
        for case in cases:
            took: dict[bool, float] = {}
            for facets in (False, True) if n % 2 == 0 else (True, False):
                started = time.perf_counter()
                engine.search(case.query, limit=case.limit, filters=dict(case.filters), facets=facets)
                took[facets] = (time.perf_counter() - started) * 1000
            plain.append(took[False])
            faceted.append(took[True])
            deltas.append(took[True] - took[False])
    print(
        f"facets: search p50 {percentile(plain, 0.5):.3f} ms without, {percentile(faceted, 0.5):.3f} ms with; "
        f"median per-case cost {statistics.median(deltas):.3f} ms over {len(deltas)} pairs"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure in-process search latency over an eval case file.")
    parser.add_argument("--index-dir", type=Path, required=True, help="folder written by docs-mcp build")
    parser.add_argument("--cases", type=Path, required=True, help="eval cases (cases.json format)")
    parser.add_argument("--warmup", type=int, default=10, help="warm-up queries before timing (default 10)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the cases (default 3)")
    parser.add_argument(
        "--ranking", choices=RANKINGS, default="default", help="ranking recipe (default: default)"
    )
    parser.add_argument("--profile", action="store_true", help="profile one extra pass with cProfile")
    parser.add_argument("--facets", action="store_true", help="also measure what counting facets costs")
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="time searches fitted to this token budget"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    engine = SearchEngine.open(args.index_dir, options=SearchOptions(ranking=args.ranking))
    open_ms = (time.perf_counter() - started) * 1000
    cases = load_cases(args.cases)
    if not cases:
        print("error: no cases", file=sys.stderr)
        return 2
    for i in range(args.warmup):
        case = cases[i % len(cases)]
        engine.search(case.query, limit=min(5, case.limit), filters=dict(case.filters))

    print(f"index: {args.index_dir} ({engine.metadata.stats.total_chunks:,} chunks), ranking {args.ranking}")
    print(f"open: {open_ms:.0f} ms (imports included); {len(cases)} cases, warm-up {args.warmup}")
    p50s: list[float] = []
    p95s: list[float] = []
    for n in range(1, args.passes + 1):
        samples = timed_pass(engine, cases, args.max_tokens)
        p50s.append(percentile(samples, 0.5))
        p95s.append(percentile(samples, 0.95))
        print(f"pass {n}: search p50 {p50s[-1]:.2f} ms, p95 {p95s[-1]:.2f} ms, max {max(samples):.2f} ms")
    doc_ms: list[float] = []
    for case in cases:
        started = time.perf_counter()
        engine.get_doc(case.expected_chunk_id)
        doc_ms.append((time.perf_counter() - started) * 1000)
    print(
        f"search p50: best {min(p50s):.2f} ms, median {statistics.median(p50s):.2f} ms; "
        f"p95: best {min(p95s):.2f} ms, median {statistics.median(p95s):.2f} ms"
    )
    print(f"get_doc p50: {percentile(doc_ms, 0.5):.2f} ms")
    print(limit_queries(engine, cases))
    if args.facets:
        facet_passes(engine, cases, args.passes)

    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        timed_pass(engine, cases)
        profiler.disable()
        print("\nprofile of one pass (cumulative; worker threads' own time is not attributed):")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        print("\nprofile of one pass (self time):")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
