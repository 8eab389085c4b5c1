"""The report of one agent-eval run (Markdown on stdout): scenarios, summary, tools, feedback, categories
and what went wrong."""

from __future__ import annotations

from typing import Any

from docs_mcp_eval.agent.feedback import FeedbackToolConfig
from docs_mcp_eval.agent.report_format import cost, number, percent, seconds, table
from docs_mcp_eval.agent.results import RunOutput, ScenarioResult

_DETAIL_CHARS = 300


def outcome_label(result: ScenarioResult) -> str:
    return "SKIP" if result.skipped else ("PASS" if result.passed else "FAIL")


def run_markdown(output: RunOutput, feedback: FeedbackToolConfig | None) -> str:
    summary, metadata = output.summary, output.metadata
    headline = _headline(feedback) if "feedbackMetrics" in summary else None
    docs = "without the docs server" if metadata.get("noMcp") else "with the docs server"
    lines = [
        f"# Agent eval: {metadata.get('suite')}",
        "",
        f"{metadata.get('provider')} · {metadata.get('model')} · {docs} · "
        f"{summary['totalScenarios']} scenarios ({summary['skippedScenarios']} skipped) · "
        f"{seconds(metadata.get('totalDurationMs'))}",
    ]
    if not metadata.get("costsKnown", True):
        lines += [
            "",
            f"No price is known for model {metadata.get('model')!r}: costs show as $0 and the budget did not "
            "apply (give prices with --price-per-mtok).",
        ]
    rows = []
    for result in output.results:
        row = [
            result.id,
            outcome_label(result),
            str(result.num_turns),
            cost(result.total_cost_usd),
            str(result.mcp_tool_calls),
        ]
        if headline is not None:
            score = result.feedback.scores.get(headline[0]) if result.feedback else None
            row.append(number(score, 0))
        rows.append(row)
    headers = ["Scenario", "Result", "Turns", "Cost", "Docs calls"]
    if headline is not None:
        headers.append(headline[1])
    lines += ["", table(headers, rows, align="llrrrr"), "", "## Summary", "", _summary_table(summary)]
    tools = summary.get("toolUsageDistribution") or {}
    if tools:
        ordered = sorted(tools.items(), key=lambda item: (-item[1], item[0]))
        lines += ["", "## Tools", "", table(["Tool", "Calls"], [[n, str(c)] for n, c in ordered], align="lr")]
    if "feedbackMetrics" in summary:
        lines += ["", "## Feedback", "", _feedback_table(summary, feedback)]
    lines += ["", "## Per-Category", "", _category_table(summary)]
    problems = _problems(output.results)
    if problems:
        lines += ["", "## Problems", "", *problems]
    return "\n".join(lines) + "\n"


def _headline(feedback: FeedbackToolConfig | None) -> tuple[str, str] | None:
    if feedback is None:
        return None
    field = feedback.headline_field or (feedback.metrics[0].field if feedback.metrics else None)
    if field is None:
        return None
    label = next((m.label for m in feedback.metrics if m.field == field), field)
    return field, label


def _summary_table(summary: dict[str, Any]) -> str:
    counted = summary["totalScenarios"] - summary["skippedScenarios"]
    rows = [
        ["Pass rate", f"{percent(summary['passRate'])} ({summary.get('passedScenarios', 0)} of {counted})"],
        ["Activation rate", percent(summary["activationRate"])],
        ["Turns (avg / median)", f"{number(summary['avgTurns'], 1)} / {number(summary['medianTurns'], 1)}"],
        [
            "Duration (avg / median)",
            f"{seconds(summary['avgDurationMs'])} / {seconds(summary['medianDurationMs'])}",
        ],
        [
            "Tokens in / out (avg)",
            f"{number(summary['avgInputTokens'], 0)} / {number(summary['avgOutputTokens'], 0)}",
        ],
        [
            "Cache read / write (avg)",
            f"{number(summary['avgCacheReadInputTokens'], 0)} / {number(summary['avgCacheCreationInputTokens'], 0)}",
        ],
        ["Cost (avg / total)", f"{cost(summary['avgCostUsd'])} / {cost(summary['totalCostUsd'])}"],
        ["Docs calls (avg)", number(summary["avgMcpToolCalls"], 1)],
    ]
    return table(["Metric", "Value"], rows, align="lr")


def _feedback_table(summary: dict[str, Any], feedback: FeedbackToolConfig | None) -> str:
    labels = {m.field: m.label for m in feedback.metrics} if feedback is not None else {}
    count = str(summary.get("feedbackCount", 0))
    rows = [
        [labels.get(name, name), number(value, 1), count]
        for name, value in (summary.get("feedbackMetrics") or {}).items()
    ]
    return table(["Metric", "Average", "Scenarios"], rows, align="lrr")


def _category_table(summary: dict[str, Any]) -> str:
    rows = [
        [
            entry["category"],
            str(entry["scenarioCount"]),
            str(entry.get("skippedCount", 0)),
            percent(entry["activationRate"]),
            percent(entry["passRate"]),
            number(entry["avgTurns"], 1),
            cost(entry["avgCostUsd"]),
        ]
        for entry in summary["categoryBreakdown"]
    ]
    headers = ["Category", "Scenarios", "Skipped", "Activation", "Pass rate", "Avg turns", "Avg cost"]
    return table(headers, rows, align="lrrrrrr")


def _problems(results: list[ScenarioResult]) -> list[str]:
    lines = []
    for result in results:
        failed = [r for r in result.assertion_results if not r.passed]
        if result.passed and not result.errors and not failed:
            continue
        notes = []
        hard = [r.message for r in failed if not r.assertion.soft]
        soft = [r.message for r in failed if r.assertion.soft]
        if not result.assertion_results and not result.skipped:
            notes.append("no assertions (a scenario needs at least one hard assertion to pass)")
        if hard:
            notes.append("failed: " + "; ".join(hard))
        if soft:
            notes.append("soft, failed: " + "; ".join(soft))
        if result.errors:
            notes.append("errors: " + "; ".join(e.splitlines()[0][:_DETAIL_CHARS] for e in result.errors))
        lines.append(
            f"- **{result.id}** ({outcome_label(result)}, {result.result_subtype}): " + " · ".join(notes)
        )
    return lines
