"""The run summary: how often agents used the docs, how often they succeeded, at what cost.

Skipped scenarios (infrastructure failures) are left out of every rate and average, since they say
nothing about the docs or the agent; they are counted in ``skippedScenarios`` and their spending in
``totalCostUsd``. Over the remaining scenarios:

* ``activationRate``: share that called ``search_docs`` or ``get_doc`` at least once;
* ``passRate``: share that passed (at least one hard assertion, all hard assertions passed);
* ``avgTurns`` / ``medianTurns``, ``avgDurationMs`` / ``medianDurationMs`` (an even count takes the
  mean of the two middle values), ``avgCostUsd``, token averages, ``avgMcpToolCalls``;
* ``toolUsageDistribution`` (calls per tool) and ``mcpToolUsageDistribution`` (the docs server's
  tools only);
* ``feedbackMetrics``: the average of each feedback metric over the scenarios that reported it, and
  ``feedbackCount``, how many did;
* ``categoryBreakdown``: the same rates, turns and cost per category (``uncategorized`` when unset),
  sorted by name.

Values are rounded to 6 decimals, as in the original.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from docs_mcp_eval.agent.feedback import FeedbackToolConfig
from docs_mcp_eval.agent.results import ScenarioResult
from docs_mcp_eval.formatting import round_metric

UNCATEGORIZED = "uncategorized"


def _avg(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _rate(results: Sequence[ScenarioResult], test: Callable[[ScenarioResult], bool]) -> float:
    return round_metric(sum(1 for r in results if test(r)) / len(results)) if results else 0.0


def summarize(
    results: Sequence[ScenarioResult], feedback: FeedbackToolConfig | None = None
) -> dict[str, Any]:
    counted = [r for r in results if not r.skipped]
    tools: dict[str, int] = {}
    server_tools: dict[str, int] = {}
    for result in counted:
        for name, count in result.tools_called.items():
            tools[name] = tools.get(name, 0) + count
            if name.startswith("mcp__"):
                server_tools[name] = server_tools.get(name, 0) + count
    summary: dict[str, Any] = {
        "totalScenarios": len(results),
        "skippedScenarios": len(results) - len(counted),
        "activationRate": _rate(counted, lambda r: r.activated),
        "passRate": _rate(counted, lambda r: r.passed),
        "passedScenarios": sum(1 for r in counted if r.passed),
        "avgTurns": round_metric(_avg([r.num_turns for r in counted])),
        "medianTurns": round_metric(_median([r.num_turns for r in counted])),
        "avgCostUsd": round_metric(_avg([r.total_cost_usd for r in counted])),
        "totalCostUsd": round_metric(sum(r.total_cost_usd for r in results)),
        "avgDurationMs": round_metric(_avg([r.duration_ms for r in counted])),
        "medianDurationMs": round_metric(_median([r.duration_ms for r in counted])),
        "avgInputTokens": round_metric(_avg([r.usage.input_tokens for r in counted])),
        "avgOutputTokens": round_metric(_avg([r.usage.output_tokens for r in counted])),
        "avgCacheReadInputTokens": round_metric(_avg([r.usage.cache_read_input_tokens for r in counted])),
        "avgCacheCreationInputTokens": round_metric(
            _avg([r.usage.cache_creation_input_tokens for r in counted])
        ),
        "avgMcpToolCalls": round_metric(_avg([r.mcp_tool_calls for r in counted])),
        "mcpToolUsageDistribution": dict(sorted(server_tools.items())),
        "toolUsageDistribution": dict(sorted(tools.items())),
    }
    given = [r.feedback for r in counted if r.feedback is not None]
    if given:
        fields = [m.field for m in feedback.metrics] if feedback is not None else []
        fields += sorted({f for fb in given for f in fb.scores} - set(fields))
        averages = {}
        for name in fields:
            values = [fb.scores[name] for fb in given if name in fb.scores]
            if values:
                averages[name] = round_metric(_avg(values))
        summary["feedbackMetrics"] = averages
        summary["feedbackCount"] = len(given)
    summary["categoryBreakdown"] = _categories(results)
    return summary


def _categories(results: Sequence[ScenarioResult]) -> list[dict[str, Any]]:
    groups: dict[str, list[ScenarioResult]] = {}
    for result in results:
        groups.setdefault(result.category or UNCATEGORIZED, []).append(result)
    breakdown = []
    for category in sorted(groups, key=lambda c: (c.casefold(), c)):
        members = groups[category]
        counted = [r for r in members if not r.skipped]
        breakdown.append(
            {
                "category": category,
                "scenarioCount": len(members),
                "skippedCount": len(members) - len(counted),
                "activationRate": _rate(counted, lambda r: r.activated),
                "passRate": _rate(counted, lambda r: r.passed),
                "avgTurns": round_metric(_avg([r.num_turns for r in counted])),
                "avgCostUsd": round_metric(_avg([r.total_cost_usd for r in counted])),
            }
        )
    return breakdown
