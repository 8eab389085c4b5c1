"""Retrieval metrics, defined exactly as the original harness defines them.

For each case, ``pos`` is the 0-based index of the expected chunk among the first ``k`` distinct ids
the server returned (over all rounds), or absent.

* MRR@k: mean of ``1 / (pos + 1)``, 0 for an absent chunk.
* NDCG@k: mean of ``1 / log2(pos + 2)``; with a single relevant chunk the ideal DCG is 1.
* Facet precision: share of cases whose expected chunk is in the top k (a hit rate).
* Avg rounds to right doc: mean of the rounds a case used, ``maxRounds + 1`` when never found.
* Percentiles: nearest rank, ``sorted[min(n-1, max(0, ceil(n*p) - 1))]``, 0 for no samples.
* Filter leak rate (ours): leaked hits / returned hits over the whole run, see :mod:`docs_mcp_eval.leaks`.
* Tokens to right doc (ours): median over the cases that found their chunk of the ``o200k_base``
  tokens read until it arrived (search pages and the ``get_doc`` answer); the run's total besides.
* Get doc cut rate (ours): share of ``get_doc`` answers cut to the budget (they end with a cursor).
* Section whole rate (ours, ``scope: "section"``): share of those cases whose section came in one call.

Summary values are rounded to 6 decimals (``Number(x.toFixed(6))``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from docs_mcp_eval.formatting import round_metric
from docs_mcp_eval.results import (
    TOP_K,
    CategoryBreakdown,
    EvalResult,
    EvalStats,
    EvalSummary,
    Miss,
    RankedCase,
)

UNCATEGORIZED = "uncategorized"
MISS_TOP_IDS = 3


def _position(case: RankedCase, k: int) -> int | None:
    top = case.ranked_chunk_ids[:k]
    return top.index(case.expected_chunk_id) if case.expected_chunk_id in top else None


def mrr_at_k(cases: Sequence[RankedCase], k: int = TOP_K) -> float:
    """Mean reciprocal rank of the expected chunk within the top ``k`` (0 for no cases)."""
    if not cases:
        return 0.0
    total = 0.0
    for case in cases:
        pos = _position(case, k)
        if pos is not None:
            total += 1 / (pos + 1)
    return total / len(cases)


def ndcg_at_k(cases: Sequence[RankedCase], k: int = TOP_K) -> float:
    """Mean NDCG of the expected chunk within the top ``k``, one relevant chunk per case."""
    if not cases:
        return 0.0
    total = 0.0
    for case in cases:
        pos = _position(case, k)
        if pos is not None:
            total += 1 / math.log2(pos + 2)
    return total / len(cases)


def facet_precision(cases: Sequence[RankedCase], k: int = TOP_K) -> float:
    """Share of cases whose expected chunk is in the top ``k`` (0 for no cases)."""
    found = sum(1 for case in cases if _position(case, k) is not None)
    return found / (len(cases) or 1)


def avg_rounds_to_right_doc(cases: Sequence[RankedCase]) -> float:
    """Mean rounds used per case, counting a miss as its round budget + 1."""
    if not cases:
        return 0.0
    return sum(case.rounds_to_right_doc for case in cases) / len(cases)


def rounds_to_right_doc(*, found: bool, rounds_executed: int, max_rounds: int) -> int:
    """Rounds a case used when found, else ``max_rounds + 1``."""
    return rounds_executed if found else max_rounds + 1


def median(values: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count); 0 when there are none."""
    return float(statistics.median(values)) if values else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..1); 0 when there are no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))
    return ordered[index]


def filter_leak_rate(cases: Sequence[RankedCase]) -> float:
    """Leaked hits divided by returned hits over all cases (0 when nothing was returned)."""
    returned = sum(case.returned_hits for case in cases)
    leaked = sum(len(case.leaked_chunk_ids) for case in cases)
    return leaked / returned if returned else 0.0


def tokens_to_right_doc(cases: Sequence[RankedCase]) -> list[int]:
    """Tokens read by each case that found its chunk (cases measured without tokens are left out)."""
    return [
        c.tokens_read
        for c in cases
        if c.tokens_read is not None and c.expected_chunk_id in c.ranked_chunk_ids
    ]


def get_doc_cut_rate(cases: Sequence[RankedCase]) -> float:
    """Share of the ``get_doc`` answers that were cut to the budget (0 without any)."""
    verdicts = [c.doc_cut for c in cases if c.doc_cut is not None]
    return sum(verdicts) / len(verdicts) if verdicts else 0.0


def section_whole_rate(cases: Sequence[RankedCase]) -> float | None:
    """Share of the cases with a section verdict whose section came whole; ``None`` without any."""
    verdicts = [c.section_whole for c in cases if c.section_whole is not None]
    return sum(verdicts) / len(verdicts) if verdicts else None


def summarize(cases: Sequence[RankedCase], stats: EvalStats) -> EvalSummary:
    """Compute the rounded headline numbers of a run."""
    return EvalSummary(
        mrr_at_5=round_metric(mrr_at_k(cases, TOP_K)),
        ndcg_at_5=round_metric(ndcg_at_k(cases, TOP_K)),
        avg_rounds_to_right_doc=round_metric(avg_rounds_to_right_doc(cases)),
        facet_precision=round_metric(facet_precision(cases, TOP_K)),
        search_p50_ms=round_metric(percentile(stats.search_latencies_ms, 0.5)),
        search_p95_ms=round_metric(percentile(stats.search_latencies_ms, 0.95)),
        get_doc_p50_ms=round_metric(percentile(stats.get_doc_latencies_ms, 0.5)),
        build_time_ms=round_metric(stats.build_time_ms),
        peak_rss_mb=round_metric(stats.peak_rss_mb),
        filter_leak_rate=round_metric(filter_leak_rate(cases)),
        tokens_to_right_doc_p50=round_metric(median(tokens_to_right_doc(cases))),
        tokens_read_total=float(sum(c.tokens_read or 0 for c in cases)),
        get_doc_cut_rate=round_metric(get_doc_cut_rate(cases)),
        section_whole_rate=None if (rate := section_whole_rate(cases)) is None else round_metric(rate),
        startup_ms=round_metric(stats.startup_ms),
        first_search_ms=round_metric(stats.first_search_ms),
    )


def category_sort_key(category: str) -> tuple[str, str]:
    """The project's deterministic string order: case-insensitive first, code point second."""
    return (category.casefold(), category)


def category_breakdown(cases: Sequence[RankedCase]) -> list[CategoryBreakdown]:
    """Per-category quality (``uncategorized`` for cases without one), sorted by category."""
    groups: dict[str, list[RankedCase]] = {}
    for case in cases:
        groups.setdefault(case.category if case.category is not None else UNCATEGORIZED, []).append(case)
    rows = [
        CategoryBreakdown(
            category=category,
            case_count=len(group),
            facet_precision=round_metric(facet_precision(group, TOP_K)),
            mrr_at_5=round_metric(mrr_at_k(group, TOP_K)),
            ndcg_at_5=round_metric(ndcg_at_k(group, TOP_K)),
        )
        for category, group in groups.items()
    ]
    return sorted(rows, key=lambda row: category_sort_key(row.category))


def find_misses(cases: Sequence[RankedCase]) -> list[Miss]:
    """Cases whose expected chunk is not in the top 5, with the first three ids returned instead."""
    return [
        Miss(
            name=case.label(index),
            category=case.category,
            query=case.query,
            expected_chunk_id=case.expected_chunk_id,
            rank=case.rank,
            top_chunk_ids=case.ranked_chunk_ids[:MISS_TOP_IDS],
        )
        for index, case in enumerate(cases)
        if not case.passed
    ]


def build_result(cases: Sequence[RankedCase], stats: EvalStats) -> EvalResult:
    """Assemble a full :class:`EvalResult` from executed cases and raw measurements."""
    ranked = list(cases)
    stats.returned_hits = sum(case.returned_hits for case in ranked)
    stats.leaked_hits = sum(len(case.leaked_chunk_ids) for case in ranked)
    return EvalResult(
        summary=summarize(ranked, stats),
        ranked_cases=ranked,
        stats=stats,
        category_breakdown=category_breakdown(ranked),
        misses=find_misses(ranked),
    )
