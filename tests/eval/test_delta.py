"""The baseline delta report: exact layout, regressions/improvements, and baseline file formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_eval.delta import (
    DeltaInput,
    load_baseline,
    parse_baseline,
    render_delta_markdown,
    to_delta_cases,
)
from docs_mcp_eval.errors import BaselineError
from docs_mcp_eval.results import EvalSummary, RankedCase
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP


def summary(**overrides: float) -> EvalSummary:
    values: dict[str, float] = {
        "mrr_at_5": 0.5,
        "ndcg_at_5": 0.543643,
        "avg_rounds_to_right_doc": 2.333333,
        "facet_precision": 0.666667,
        "search_p50_ms": 10.0,
        "search_p95_ms": 20.0,
        "get_doc_p50_ms": 3.0,
        "build_time_ms": 1000.0,
        "peak_rss_mb": 200.0,
    }
    values.update(overrides)
    return EvalSummary(**values)


def ranked(expected: str, ids: list[str], name: str | None = None) -> RankedCase:
    return RankedCase(expected_chunk_id=expected, ranked_chunk_ids=ids, rounds_to_right_doc=1, name=name)


def test_table_only_when_no_case_data() -> None:
    current = DeltaInput(summary=summary(mrr_at_5=0.55, search_p50_ms=9.5, peak_rss_mb=200.0078125))
    baseline = DeltaInput(summary=summary())
    assert render_delta_markdown(current, baseline) == "\n".join(
        [
            "| Metric | Baseline | Current | Delta |",
            "| --- | ---: | ---: | ---: |",
            "| MRR@5 | 0.500000 | 0.550000 | +0.050000 |",
            "| NDCG@5 | 0.543643 | 0.543643 | +0.000000 |",
            "| Avg Rounds to Right Doc | 2.333333 | 2.333333 | +0.000000 |",
            "| Facet Precision | 0.666667 | 0.666667 | +0.000000 |",
            "| Search p50 (ms) | 10.000000 | 9.500000 | -0.500000 |",
            "| Search p95 (ms) | 20.000000 | 20.000000 | +0.000000 |",
            "| Get Doc p50 (ms) | 3.000000 | 3.000000 | +0.000000 |",
            "| Build Time (ms) | 1000.000000 | 1000.000000 | +0.000000 |",
            "| Peak RSS (MB) | 200.000000 | 200.007813 | +0.007813 |",
        ]
    )


def test_regressions_and_improvements_by_case_name() -> None:
    baseline_cases = [
        ranked("a", ["a", "x"], name="stays"),
        ranked("b", ["x", "b"], name="drops"),
        ranked("c", ["x"], name="rises"),
        ranked("d", ["d"]),  # unnamed: case-3
        ranked("e", ["e"], name="only-in-baseline"),
    ]
    current_cases = [
        ranked("a", ["a"], name="stays"),
        ranked("b", ["x1", "x2", "x3", "x4", "x5", "b"], name="drops"),
        ranked("c", ["x", "y", "c"], name="rises"),
        ranked("d", ["q"]),
        ranked("f", [], name="new-case"),
    ]
    text = render_delta_markdown(
        DeltaInput(summary=summary(), cases=to_delta_cases(current_cases)),
        DeltaInput(summary=summary(), cases=to_delta_cases(baseline_cases)),
    )
    table, _, rest = text.partition("\n\n")
    assert table.count("\n") == 10
    assert rest == "\n".join(
        [
            "### Regressions",
            "",
            "- **drops**: was rank 2, now rank 6",
            "- **case-3**: was rank 1, now rank N/F",
            "",
            "### Improvements",
            "",
            "- **rises**: now found at rank 3",
        ]
    )


def test_no_case_sections_when_one_side_lacks_cases() -> None:
    current = DeltaInput(summary=summary(), cases=to_delta_cases([ranked("a", [])]))
    text = render_delta_markdown(current, DeltaInput(summary=summary()))
    assert "###" not in text


def test_original_result_json_is_a_valid_baseline(tmp_path: Path) -> None:
    original = {
        "summary": {
            "mrrAt5": 0.474,
            "ndcgAt5": 0.526,
            "avgRoundsToRightDoc": 1.57,
            "facetPrecision": 0.683,
            "searchP50Ms": 11.6,
            "searchP95Ms": 29.7,
            "getDocP50Ms": 7.2,
            "buildTimeMs": 20800,
            "peakRssMb": 319,
        },
        "metadata": {"deterministic": True, "provider": None, "model": None},
        "rankedCases": [
            {
                "expectedChunkId": "a",
                "rankedChunkIds": ["a"],
                "roundsToRightDoc": 1,
                "name": "n",
                "category": "c",
            },
            {"expectedChunkId": "b", "rankedChunkIds": [], "roundsToRightDoc": 4},
        ],
        "stats": {
            "searchLatenciesMs": [1, 2],
            "getDocLatenciesMs": [1],
            "buildTimeMs": 20800,
            "peakRssMb": 319,
        },
    }
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(original), encoding="utf-8")
    loaded = load_baseline(path)
    assert loaded.summary.mrr_at_5 == 0.474
    assert loaded.summary.build_time_ms == 20800
    assert loaded.summary.filter_leak_rate == 0.0
    assert [(c.name, c.passed, c.rank_label) for c in loaded.cases] == [
        ("n", True, "1"),
        ("case-1", False, "N/F"),
    ]


def test_bare_summary_and_bad_numbers_are_tolerated() -> None:
    loaded = parse_baseline({"mrrAt5": 0.25, "ndcgAt5": "oops", "peakRssMb": None})
    assert (loaded.summary.mrr_at_5, loaded.summary.ndcg_at_5, loaded.summary.peak_rss_mb) == (0.25, 0.0, 0.0)
    assert list(loaded.cases) == []


def test_a_baseline_with_an_integer_too_large_for_a_float_is_tolerated_like_other_bad_numbers() -> None:
    # float(10**400) raised OverflowError: the command ended with a bare traceback
    loaded = parse_baseline({"summary": {"mrrAt5": 10**400, "peakRssMb": -(10**400), "ndcgAt5": 0.5}})
    assert (loaded.summary.mrr_at_5, loaded.summary.peak_rss_mb, loaded.summary.ndcg_at_5) == (0.0, 0.0, 0.5)


def test_a_baseline_with_huge_finite_metrics_renders_its_delta() -> None:
    # to_fixed(1e300, 6) exceeded the decimal module's precision: InvalidOperation, a bare traceback
    baseline = parse_baseline(
        {"summary": {**summary().to_json(), "searchP50Ms": 1e300, "peakRssMb": -1.5e21}}
    )
    text = render_delta_markdown(DeltaInput(summary=summary()), baseline)
    assert "| Search p50 (ms) | 1e+300 | 10.000000 | -1e+300 |" in text
    assert "| Peak RSS (MB) | -1.5e+21 | 200.000000 | +1.5e+21 |" in text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "expected a JSON object with a 'summary'"),
        ({"hits": []}, "not an eval result"),
        ({"summary": 3}, "'summary' must be an object"),
        ({"summary": {}, "rankedCases": {}}, "'rankedCases' must be an array"),
        (
            {"summary": {}, "rankedCases": [{"expectedChunkId": "a"}]},
            "rankedCases[0]: rankedChunkIds must be an array",
        ),
    ],
)
def test_malformed_baselines_are_rejected(data: object, message: str) -> None:
    with pytest.raises(BaselineError) as info:
        parse_baseline(data, source="b.json")
    assert message in str(info.value)


def test_baseline_file_errors(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="baseline file not found"):
        load_baseline(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(BaselineError, match="not valid JSON"):
        load_baseline(bad)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (TOO_DEEP, "it nests arrays or objects too deeply to read"),
        ('{"summary": ' + HUGE_NUMBER + "}", "it holds a number too long to read"),
    ],
)
def test_a_baseline_too_deep_or_with_a_huge_number_is_a_baseline_error(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BaselineError, match=f"^baseline {path}: cannot be read: {reason}"):
        load_baseline(path)


def test_a_baseline_not_utf8_names_its_line(tmp_path: Path) -> None:
    baseline = tmp_path / "base.json"
    baseline.write_bytes(b'{\n"summary": {"mrrAt5": 1, "note": "\xff"}}\n')
    with pytest.raises(BaselineError, match=r"^baseline .*base\.json is not UTF-8 \(byte 0xff on line 2\)"):
        load_baseline(baseline)
