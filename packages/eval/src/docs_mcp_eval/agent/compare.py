"""``--compare``: the same scenarios with and without the docs server, side by side.

Scenarios are paired by id and classified as ``gained`` (passes only with the docs server), ``lost``
(passes only without it), ``both_pass`` or ``both_fail``; a scenario skipped on either side is
``skipped`` and left out of the four classes. The comparison JSON holds both runs, the per-scenario
classification with the assertions that flipped, and the deltas of the summary metrics (with minus
without).
"""

from __future__ import annotations

from typing import Any, Literal

from docs_mcp_eval.agent.assertions import AssertionResult
from docs_mcp_eval.agent.report_format import cost, number, percent, seconds, signed, signed_cost, table
from docs_mcp_eval.agent.results import RunOutput, ScenarioResult
from docs_mcp_eval.formatting import round_metric

Outcome = Literal["gained", "lost", "both_pass", "both_fail", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("gained", "lost", "both_pass", "both_fail", "skipped")
_DELTA_KEYS = (
    "passRate",
    "activationRate",
    "avgTurns",
    "avgCostUsd",
    "totalCostUsd",
    "avgDurationMs",
    "avgMcpToolCalls",
)


def classify(with_docs: ScenarioResult, without: ScenarioResult) -> Outcome:
    if with_docs.skipped or without.skipped:
        return "skipped"
    if with_docs.passed and not without.passed:
        return "gained"
    if without.passed and not with_docs.passed:
        return "lost"
    return "both_pass" if with_docs.passed else "both_fail"


def flipped_assertions(with_docs: ScenarioResult, without: ScenarioResult) -> list[dict[str, Any]]:
    """Assertions (matched by their identity) that passed on one side and failed on the other."""
    others: dict[str, AssertionResult] = {r.assertion.key(): r for r in without.assertion_results}
    flips = []
    for result in with_docs.assertion_results:
        other = others.get(result.assertion.key())
        if other is not None and other.passed != result.passed:
            flips.append(
                {
                    "assertion": result.assertion.to_json(),
                    "withMcp": result.passed,
                    "withoutMcp": other.passed,
                    "message": result.message if result.passed else other.message,
                }
            )
    return flips


def _side(result: ScenarioResult) -> dict[str, Any]:
    return {
        "passed": result.passed,
        "skipped": result.skipped,
        "numTurns": result.num_turns,
        "totalCostUsd": round_metric(result.total_cost_usd),
        "durationMs": round(result.duration_ms, 3),
        "mcpToolCalls": result.mcp_tool_calls,
        "assertionResults": [r.to_json() for r in result.assertion_results],
    }


def build_comparison(with_docs: RunOutput, without: RunOutput, suite: str) -> dict[str, Any]:
    baseline = {r.id: r for r in without.results}
    scenarios = []
    counts = dict.fromkeys(OUTCOMES, 0)
    for result in with_docs.results:
        other = baseline.get(result.id)
        if other is None:
            continue
        outcome = classify(result, other)
        counts[outcome] += 1
        entry: dict[str, Any] = {"id": result.id, "name": result.name}
        if result.category is not None:
            entry["category"] = result.category
        entry.update(
            {
                "outcome": outcome,
                "withMcp": _side(result),
                "withoutMcp": _side(other),
                "flippedAssertions": flipped_assertions(result, other),
            }
        )
        scenarios.append(entry)
    delta = {
        f"{key}Delta": round_metric(float(with_docs.summary.get(key, 0)) - float(without.summary.get(key, 0)))
        for key in _DELTA_KEYS
    }
    return {
        "withMcp": with_docs.to_json(),
        "withoutMcp": without.to_json(),
        "delta": delta,
        "outcomes": counts,
        "scenarios": scenarios,
        "metadata": {
            "suite": suite,
            "provider": with_docs.metadata.get("provider"),
            "model": with_docs.metadata.get("model"),
            "startedAt": with_docs.metadata.get("startedAt"),
            "completedAt": without.metadata.get("completedAt"),
            "totalDurationMs": round(
                float(with_docs.metadata.get("totalDurationMs", 0))
                + float(without.metadata.get("totalDurationMs", 0)),
                3,
            ),
        },
    }


_LABELS = {
    "gained": "gained",
    "lost": "lost",
    "both_pass": "both pass",
    "both_fail": "both fail",
    "skipped": "skipped",
}


def comparison_markdown(comparison: dict[str, Any]) -> str:
    w, wo = comparison["withMcp"]["summary"], comparison["withoutMcp"]["summary"]
    d, meta = comparison["delta"], comparison["metadata"]
    rows = [
        [
            "Pass rate",
            percent(w["passRate"]),
            percent(wo["passRate"]),
            signed(d["passRateDelta"] * 100, 1, " pts"),
        ],
        ["Activation rate", percent(w["activationRate"]), percent(wo["activationRate"]), "-"],
        ["Avg turns", number(w["avgTurns"], 1), number(wo["avgTurns"], 1), signed(d["avgTurnsDelta"], 1)],
        ["Avg cost", cost(w["avgCostUsd"]), cost(wo["avgCostUsd"]), signed_cost(d["avgCostUsdDelta"])],
        [
            "Total cost",
            cost(w["totalCostUsd"]),
            cost(wo["totalCostUsd"]),
            signed_cost(d["totalCostUsdDelta"]),
        ],
        [
            "Avg duration",
            seconds(w["avgDurationMs"]),
            seconds(wo["avgDurationMs"]),
            signed(d["avgDurationMsDelta"] / 1000, 1, " s"),
        ],
        ["Docs calls (avg)", number(w["avgMcpToolCalls"], 1), number(wo["avgMcpToolCalls"], 1), "-"],
    ]
    for name, value in (w.get("feedbackMetrics") or {}).items():
        rows.append([f"Feedback: {name}", number(value, 1), "-", "-"])
    lines = [
        f"# Agent eval: {meta['suite']}, with and without the docs server",
        "",
        f"{meta['provider']} · {meta['model']} · {seconds(meta['totalDurationMs'])}",
        "",
        table(["Metric", "With docs", "Without", "Delta"], rows, align="lrrr"),
        "",
        "## Scenarios",
        "",
    ]
    scenario_rows = [
        [s["id"], _status(s["withMcp"]), _status(s["withoutMcp"]), _LABELS[s["outcome"]]]
        for s in comparison["scenarios"]
    ]
    lines.append(table(["Scenario", "With docs", "Without", "Outcome"], scenario_rows))
    counts = comparison["outcomes"]
    lines += ["", "Outcomes: " + " · ".join(f"{_LABELS[k]} {counts[k]}" for k in OUTCOMES)]
    for outcome, title in (
        ("gained", "Gained (pass only with the docs server)"),
        ("lost", "Lost (pass only without it)"),
    ):
        chosen = [s for s in comparison["scenarios"] if s["outcome"] == outcome]
        if not chosen:
            continue
        lines += ["", f"## {title}", ""]
        for s in chosen:
            lines.append(f"- **{s['id']}** ({s['withMcp']['mcpToolCalls']} docs calls)")
            for flip in s["flippedAssertions"]:
                change = "FAIL -> PASS" if flip["withMcp"] else "PASS -> FAIL"
                lines.append(f"  - {change} with the docs server: {flip['message']}")
    return "\n".join(lines) + "\n"


def _status(side: dict[str, Any]) -> str:
    return "SKIP" if side["skipped"] else ("PASS" if side["passed"] else "FAIL")
