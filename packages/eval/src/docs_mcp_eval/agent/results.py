"""What one scenario run produced, and the JSON document of a whole run.

The JSON keys follow the original's result files (camelCase: ``activated``, ``passed``,
``assertionResults``, ``numTurns``, ``totalCostUsd``, ``toolsCalled``, ``toolCallTrace``, ...), with
``skipped`` for runs ended by an infrastructure failure, so earlier runs of either tool can feed the
trend table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docs_mcp_eval.agent.assertions import AssertionResult
from docs_mcp_eval.agent.feedback import FeedbackResult
from docs_mcp_eval.agent.loop import ToolCallRecord
from docs_mcp_eval.agent.pricing import Usage


@dataclass(kw_only=True)
class ScenarioResult:
    id: str
    name: str
    category: str | None = None
    activated: bool = False
    """The agent called ``search_docs`` or ``get_doc`` at least once."""
    passed: bool = False
    skipped: bool = False
    """The run ended on an infrastructure failure (overloaded or failing API): neither pass nor fail."""
    assertion_results: list[AssertionResult] = field(default_factory=list)
    num_turns: int = 0
    total_cost_usd: float = 0.0
    duration_ms: float = 0.0
    duration_api_ms: float = 0.0
    tools_called: dict[str, int] = field(default_factory=dict)
    tool_call_trace: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    mcp_tool_calls: int = 0
    """Calls of the docs tools (``search_docs``/``get_doc``)."""
    mcp_tool_result_chars: int = 0
    workspace_files: list[dict[str, str]] = field(default_factory=list)
    final_answer: str = ""
    result_subtype: str = "success"
    workspace_dir: str | None = None
    errors: list[str] = field(default_factory=list)
    feedback: FeedbackResult | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.category is not None:
            data["category"] = self.category
        data.update(
            {
                "activated": self.activated,
                "passed": self.passed,
                "skipped": self.skipped,
                "assertionResults": [r.to_json() for r in self.assertion_results],
                "numTurns": self.num_turns,
                "totalCostUsd": round(self.total_cost_usd, 6),
                "durationMs": round(self.duration_ms, 3),
                "durationApiMs": round(self.duration_api_ms, 3),
                "toolsCalled": dict(self.tools_called),
                "toolCallTrace": [r.to_json() for r in self.tool_call_trace],
                "inputTokens": self.usage.input_tokens,
                "outputTokens": self.usage.output_tokens,
                "cacheReadInputTokens": self.usage.cache_read_input_tokens,
                "cacheCreationInputTokens": self.usage.cache_creation_input_tokens,
                "mcpToolCalls": self.mcp_tool_calls,
                "mcpToolResultChars": self.mcp_tool_result_chars,
                "workspaceFiles": list(self.workspace_files),
                "finalAnswer": self.final_answer,
                "resultSubtype": self.result_subtype,
            }
        )
        if self.workspace_dir is not None:
            data["workspaceDir"] = self.workspace_dir
        if self.errors:
            data["errors"] = list(self.errors)
        if self.feedback is not None:
            data["feedbackResult"] = self.feedback.to_json()
        return data


@dataclass(kw_only=True)
class RunOutput:
    """One run of a suite: the summary (see :mod:`docs_mcp_eval.agent.metrics`), results and metadata."""

    summary: dict[str, Any]
    results: list[ScenarioResult]
    metadata: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "results": [r.to_json() for r in self.results],
            "metadata": self.metadata,
        }
