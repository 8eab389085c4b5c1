"""Metric definitions checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from docs_mcp_eval.formatting import format_size, round_metric, signed_fixed, to_fixed
from docs_mcp_eval.metrics import (
    avg_rounds_to_right_doc,
    build_result,
    category_breakdown,
    facet_precision,
    filter_leak_rate,
    find_misses,
    mrr_at_k,
    ndcg_at_k,
    percentile,
    rounds_to_right_doc,
    summarize,
)
from docs_mcp_eval.results import EvalStats, RankedCase


def case(
    expected: str,
    ranked: list[str],
    rounds: int = 1,
    *,
    name: str | None = None,
    category: str | None = None,
    returned_hits: int = 0,
    leaked_chunk_ids: list[str] | None = None,
) -> RankedCase:
    return RankedCase(
        expected_chunk_id=expected,
        ranked_chunk_ids=ranked,
        rounds_to_right_doc=rounds,
        name=name,
        category=category,
        returned_hits=returned_hits,
        leaked_chunk_ids=leaked_chunk_ids or [],
    )


# The original's own fixture: found first, found second, not found.
THREE = [
    case("a", ["a", "b", "c"], rounds=1),
    case("b", ["a", "b", "c"], rounds=2),
    case("z", ["a", "b", "c"], rounds=4),
]


def test_mrr_is_mean_reciprocal_rank() -> None:
    assert mrr_at_k(THREE, 5) == pytest.approx((1 + 1 / 2 + 0) / 3)


def test_ndcg_uses_log2_discount_with_ideal_one() -> None:
    assert ndcg_at_k(THREE, 5) == pytest.approx((1 + 1 / math.log2(3) + 0) / 3)
    assert round_metric(ndcg_at_k(THREE, 5)) == 0.543643


def test_avg_rounds_is_simple_mean() -> None:
    assert avg_rounds_to_right_doc(THREE) == pytest.approx((1 + 2 + 4) / 3)


def test_facet_precision_is_share_found_in_top_five() -> None:
    assert facet_precision(THREE, 5) == pytest.approx(2 / 3)


def test_cutoff_ignores_ranks_beyond_k() -> None:
    late = [case("f", ["a", "b", "c", "d", "e", "f"])]
    assert mrr_at_k(late, 5) == 0
    assert ndcg_at_k(late, 5) == 0
    assert facet_precision(late, 5) == 0
    assert mrr_at_k(late, 6) == pytest.approx(1 / 6)


def test_empty_suite_scores_zero() -> None:
    assert mrr_at_k([], 5) == 0
    assert ndcg_at_k([], 5) == 0
    assert facet_precision([], 5) == 0
    assert avg_rounds_to_right_doc([]) == 0


def test_rounds_to_right_doc_counts_a_miss_as_budget_plus_one() -> None:
    assert rounds_to_right_doc(found=True, rounds_executed=2, max_rounds=3) == 2
    assert rounds_to_right_doc(found=False, rounds_executed=1, max_rounds=3) == 4


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [
        ([], 0.5, 0.0),
        ([7.0], 0.95, 7.0),
        ([40.0, 10.0, 30.0, 20.0], 0.5, 20.0),  # ceil(4*0.5)-1 = 1
        ([40.0, 10.0, 30.0, 20.0], 0.95, 40.0),  # ceil(3.8)-1 = 3
        ([5.0, 1.0, 4.0, 2.0, 3.0], 0.5, 3.0),  # ceil(2.5)-1 = 2
        ([float(v) for v in range(1, 21)], 0.95, 19.0),  # ceil(19)-1 = 18
        ([1.0, 2.0], 0.0, 1.0),
    ],
)
def test_percentile_is_nearest_rank(values: list[float], p: float, expected: float) -> None:
    assert percentile(values, p) == expected


def test_summary_rounds_to_six_decimals_and_reports_latency_percentiles() -> None:
    stats = EvalStats(
        search_latencies_ms=[3.0, 1.0, 2.0, 10.0],
        get_doc_latencies_ms=[0.5, 0.25],
        build_time_ms=1234.56789012,
        peak_rss_mb=98.7654321,
    )
    summary = summarize(THREE, stats)
    assert summary.mrr_at_5 == 0.5
    assert summary.ndcg_at_5 == 0.543643
    assert summary.avg_rounds_to_right_doc == 2.333333
    assert summary.facet_precision == 0.666667
    assert (summary.search_p50_ms, summary.search_p95_ms, summary.get_doc_p50_ms) == (2.0, 10.0, 0.25)
    assert summary.build_time_ms == 1234.56789
    assert summary.peak_rss_mb == 98.765432
    assert summary.filter_leak_rate == 0.0


def test_filter_leak_rate_is_leaked_over_returned_hits() -> None:
    cases = [
        case("a", ["a"], returned_hits=6, leaked_chunk_ids=["x", "y"]),
        case("b", ["b"], returned_hits=2, leaked_chunk_ids=[]),
    ]
    assert filter_leak_rate(cases) == pytest.approx(2 / 8)
    assert filter_leak_rate([case("a", [])]) == 0.0
    result = build_result(cases, EvalStats())
    assert (result.stats.returned_hits, result.stats.leaked_hits) == (8, 2)
    assert result.summary.filter_leak_rate == 0.25


def test_category_breakdown_groups_and_sorts() -> None:
    cases = [
        case("a", ["a"], category="workflow"),
        case("b", ["x", "b"], category="Exact-name"),
        case("c", ["x"], category="workflow"),
        case("d", ["d"]),
    ]
    rows = category_breakdown(cases)
    assert [r.category for r in rows] == ["Exact-name", "uncategorized", "workflow"]
    workflow = rows[2]
    assert (workflow.case_count, workflow.facet_precision, workflow.mrr_at_5, workflow.ndcg_at_5) == (
        2,
        0.5,
        0.5,
        0.5,
    )
    assert rows[0].mrr_at_5 == 0.5
    assert rows[0].ndcg_at_5 == 0.63093


def test_misses_list_top_three_and_late_rank() -> None:
    cases = [
        case("a", ["a", "b"], name="hit"),
        case("f", ["a", "b", "c", "d", "e", "f"], category="late"),
        case("z", ["q"], name="gone"),
    ]
    misses = find_misses(cases)
    assert [(m.name, m.rank, m.top_chunk_ids) for m in misses] == [
        ("case-1", 6, ["a", "b", "c"]),
        ("gone", None, ["q"]),
    ]
    assert misses[0].category == "late"


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (0.0078125, 6, "0.007813"),  # exact binary tie: JS rounds up, Python's format would round to even
        (2.5, 0, "3"),
        (0.5, 0, "1"),
        (1.005, 2, "1.00"),  # 1.005 is really 1.00499999...
        (-0.0000001, 6, "-0.000000"),
        (-0.0, 6, "0.000000"),
        (0.0, 4, "0.0000"),
        (-1.25, 1, "-1.3"),
        (123.456, 1, "123.5"),
        (float("nan"), 2, "NaN"),
        (1e300, 6, "1e+300"),  # from 1e21 on, JavaScript prints the number itself
        (-1.5e21, 2, "-1.5e+21"),
        (1e20, 1, "100000000000000000000.0"),
    ],
)
def test_to_fixed_matches_javascript(value: float, digits: int, expected: str) -> None:
    assert to_fixed(value, digits) == expected


def test_signed_fixed_and_sizes() -> None:
    assert signed_fixed(0.0, 6) == "+0.000000"
    assert signed_fixed(0.25, 6) == "+0.250000"
    assert signed_fixed(-0.125, 6) == "-0.125000"
    assert format_size(int(28.8 * 1024 * 1024)) == "28.8MB"
    assert format_size(1024 * 1024) == "1.0MB"
    assert format_size(1536) == "2KB"
    assert format_size(59) == "0KB"
