"""Summary metrics, prices, the trend over saved runs and the with/without classification, computed
from hand-made results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_eval.agent.assertions import Assertion, AssertionResult
from docs_mcp_eval.agent.compare import build_comparison, classify, comparison_markdown
from docs_mcp_eval.agent.feedback import DEFAULT_FEEDBACK_TOOL, FeedbackResult, parse_feedback
from docs_mcp_eval.agent.history import load_runs, save_run, suite_folder, trend_markdown
from docs_mcp_eval.agent.metrics import summarize
from docs_mcp_eval.agent.pricing import Price, Usage, cost_usd, parse_price_option, price_for
from docs_mcp_eval.agent.provider import is_infrastructure_error
from docs_mcp_eval.agent.results import RunOutput, ScenarioResult


def result(sid: str, *, passed: bool, skipped: bool = False, **kw: object) -> ScenarioResult:
    return ScenarioResult(id=sid, name=sid, passed=passed, skipped=skipped, **kw)  # type: ignore[arg-type]


def test_summary_leaves_skipped_runs_out_of_rates_and_averages() -> None:
    results = [
        result(
            "a",
            passed=True,
            activated=True,
            num_turns=2,
            total_cost_usd=0.5,
            duration_ms=1000,
            category="sdk",
            tools_called={"mcp__docs-mcp__search_docs": 2, "write_file": 1},
            mcp_tool_calls=2,
            usage=Usage(100, 10, 5, 1),
            feedback=FeedbackResult({"confidence_score": 90, "docs_relevance": 60}, "good"),
        ),
        result(
            "b",
            passed=False,
            activated=False,
            num_turns=4,
            total_cost_usd=0.25,
            duration_ms=3000,
            category="sdk",
        ),
        result(
            "c",
            passed=True,
            activated=True,
            num_turns=7,
            total_cost_usd=0.0,
            duration_ms=2000,
            category="Guides",
        ),
        result("d", passed=False, activated=True, num_turns=10, total_cost_usd=0.1, duration_ms=6000),
        result("s", passed=False, skipped=True, num_turns=1, total_cost_usd=0.05, tools_called={"x": 9}),
    ]
    results[2].feedback = FeedbackResult({"confidence_score": 71}, None)
    summary = summarize(results, DEFAULT_FEEDBACK_TOOL)
    assert summary["totalScenarios"] == 5 and summary["skippedScenarios"] == 1
    assert summary["passRate"] == 0.5 and summary["passedScenarios"] == 2
    assert summary["activationRate"] == 0.75
    assert summary["avgTurns"] == 5.75
    assert summary["medianTurns"] == 5.5  # even count: mean of 4 and 7
    assert summary["medianDurationMs"] == 2500
    assert summary["avgCostUsd"] == pytest.approx(0.2125)
    assert summary["totalCostUsd"] == pytest.approx(0.9)  # skipped runs still spent money
    assert summary["avgInputTokens"] == 25 and summary["avgCacheReadInputTokens"] == 1.25
    assert summary["avgMcpToolCalls"] == 0.5
    assert summary["toolUsageDistribution"] == {"mcp__docs-mcp__search_docs": 2, "write_file": 1}
    assert summary["mcpToolUsageDistribution"] == {"mcp__docs-mcp__search_docs": 2}
    assert summary["feedbackMetrics"] == {"confidence_score": 80.5, "docs_relevance": 60.0}
    assert summary["feedbackCount"] == 2
    categories = [
        (c["category"], c["scenarioCount"], c["skippedCount"], c["passRate"])
        for c in summary["categoryBreakdown"]
    ]
    assert categories == [("Guides", 1, 0, 1.0), ("sdk", 2, 0, 0.5), ("uncategorized", 2, 1, 0.0)]


def test_summary_rounds_to_six_decimals() -> None:
    summary = summarize([result("a", passed=True), result("b", passed=False), result("c", passed=False)])
    assert summary["passRate"] == 0.333333
    assert "feedbackMetrics" not in summary


def test_feedback_parsing_skips_unusable_fields() -> None:
    parsed = parse_feedback(
        {"confidence_score": "85", "docs_relevance": True, "reasoning": "ok"}, DEFAULT_FEEDBACK_TOOL
    )
    assert parsed == FeedbackResult({"confidence_score": 85.0}, "ok")
    assert parse_feedback({"docs_utilization": float("nan")}, DEFAULT_FEEDBACK_TOOL) is None


def test_prices() -> None:
    sonnet = price_for("claude-sonnet-4-5-20250929")
    assert sonnet == price_for("claude-sonnet-4-5") and sonnet is not None
    assert cost_usd(Usage(1_000_000, 100_000, 1_000_000, 1_000_000), sonnet) == pytest.approx(
        3 + 1.5 + 0.3 + 3.75
    )
    assert price_for("gpt-4o-2024-08-06") == price_for("gpt-4o")
    assert price_for("gpt-4o-mini") != price_for("gpt-4o")
    assert price_for("llama3.1:8b") is None
    assert cost_usd(Usage(10**9, 10**9), None) == 0
    assert parse_price_option("0.5, 1.5") == Price(0.5, 1.5, 0.5, 0.5)
    for bad in ("1", "a,b", "-1,2"):
        with pytest.raises(ValueError):
            parse_price_option(bad)


def test_infrastructure_errors_follow_the_original_rule() -> None:
    assert is_infrastructure_error("API Error: 529 overloaded_error: Overloaded (Repeated 4 times)")
    assert is_infrastructure_error("API Error: 503 Service Unavailable (Repeated 4 times)")
    assert is_infrastructure_error("Overloaded")
    assert not is_infrastructure_error("API Error: 400 invalid_request_error: bad tool")


def run_output(suite: str, started: str, outcomes: dict[str, str], **summary: float) -> dict[str, object]:
    results = [{"id": sid, "passed": o == "PASS", "skipped": o == "SKIP"} for sid, o in outcomes.items()]
    return {
        "summary": {"totalScenarios": len(outcomes), "passRate": 0.5, "activationRate": 1.0, **summary},
        "results": results,
        "metadata": {"suite": suite, "startedAt": started},
    }


def test_history_saves_runs_and_builds_the_trend(tmp_path: Path) -> None:
    older = run_output(
        "s", "2026-01-01T00:00:00.000Z", {"a": "FAIL", "b": "PASS", "c": "PASS"}, avgCostUsd=0.5
    )
    newer = run_output(
        "s", "2026-01-02T00:00:00.000Z", {"a": "FAIL", "b": "PASS", "c": "SKIP"}, avgCostUsd=0.25
    )
    first = save_run(older, tmp_path, "My Suite!")
    save_run(newer, tmp_path, "My Suite!")
    assert first.parent == suite_folder(tmp_path, "My Suite!") == tmp_path / "my-suite"
    assert first.name == "2026-01-01T00-00-00.000Z.json"
    assert json.loads(first.read_text())["metadata"]["startedAt"] == "2026-01-01T00:00:00.000Z"
    (first.parent / "broken.json").write_text("{not json")
    runs = load_runs(tmp_path, "My Suite!")
    assert [r["metadata"]["startedAt"] for r in runs] == [
        "2026-01-01T00:00:00.000Z",
        "2026-01-02T00:00:00.000Z",
    ]
    current = run_output(
        "s", "2026-01-03T00:00:00.000Z", {"a": "PASS", "b": "FAIL", "c": "PASS"}, avgCostUsd=0.1
    )
    trend = trend_markdown(current, runs)
    lines = trend.splitlines()
    assert lines[0] == "## Trend"
    assert lines[2].startswith("| Run | Scenarios | Skipped | Pass rate |")
    assert lines[4].startswith("| 2026-01-01T00:00:00.000Z | 3 | 0 | 50.0% | 100.0% | - | $0.5000 |")
    assert lines[6].startswith("| 2026-01-03T00:00:00.000Z (this run) |")
    assert "- **a**: improvement, was FAIL, now PASS" in lines
    assert "- **b**: regression, was PASS, now FAIL" in lines
    assert not any("**c**" in line for line in lines)  # skipped before: no verdict
    assert trend_markdown(current, []) == ""


def test_history_skips_runs_it_cannot_read_as_json_values(tmp_path: Path) -> None:
    # a saved run holding an integer of over 4,300 digits, or nested past the parser's depth, ended
    # agent-eval with a traceback after all its scenarios had run
    saved = save_run(run_output("s", "2026-01-01T00:00:00.000Z", {"a": "PASS"}), tmp_path, "s")
    (saved.parent / "huge.json").write_text('{"summary": {"n": ' + "9" * 5_000 + "}}", encoding="utf-8")
    (saved.parent / "deep.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert [r["metadata"]["startedAt"] for r in load_runs(tmp_path, "s")] == ["2026-01-01T00:00:00.000Z"]


def _assertion_result(value: str, passed: bool) -> AssertionResult:
    return AssertionResult(Assertion(type="contains", value=value), passed, f"Output contains {value!r}")


def test_comparison_classifies_and_lists_flipped_assertions() -> None:
    with_docs = [
        result("gain", passed=True, mcp_tool_calls=3, assertion_results=[_assertion_result("x", True)]),
        result("lose", passed=False, assertion_results=[_assertion_result("y", False)]),
        result("both", passed=True),
        result("none", passed=False),
        result("skip", passed=False, skipped=True),
        result("only-here", passed=True),
    ]
    without = [
        result("gain", passed=False, assertion_results=[_assertion_result("x", False)]),
        result("lose", passed=True, assertion_results=[_assertion_result("y", True)]),
        result("both", passed=True),
        result("none", passed=False),
        result("skip", passed=True),
    ]
    assert classify(with_docs[0], without[0]) == "gained"
    a = RunOutput(
        summary=summarize(with_docs),
        results=with_docs,
        metadata={"provider": "openai", "model": "m", "totalDurationMs": 1000},
    )
    b = RunOutput(summary=summarize(without), results=without, metadata={"totalDurationMs": 500})
    comparison = build_comparison(a, b, "suite")
    assert comparison["outcomes"] == {"gained": 1, "lost": 1, "both_pass": 1, "both_fail": 1, "skipped": 1}
    assert [s["outcome"] for s in comparison["scenarios"]] == [
        "gained",
        "lost",
        "both_pass",
        "both_fail",
        "skipped",
    ]
    assert comparison["scenarios"][0]["flippedAssertions"] == [
        {
            "assertion": {"type": "contains", "value": "x"},
            "withMcp": True,
            "withoutMcp": False,
            "message": "Output contains 'x'",
        }
    ]
    # deltas are with minus without, of each run's own summary (3 of 5 counted runs pass on each side)
    assert comparison["delta"]["passRateDelta"] == 0.0
    assert comparison["delta"]["avgMcpToolCallsDelta"] == pytest.approx(0.6)
    report = comparison_markdown(comparison)
    assert "Outcomes: gained 1 · lost 1 · both pass 1 · both fail 1 · skipped 1" in report
    assert "| gain | PASS | FAIL | gained |" in report
    assert "- **gain** (3 docs calls)" in report
    assert "  - FAIL -> PASS with the docs server: Output contains 'x'" in report
    assert "| Pass rate | 60.0% | 60.0% | +0.0 pts |" in report
