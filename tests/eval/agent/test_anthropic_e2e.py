"""``agent-eval`` end to end with the ``anthropic`` provider: a local Messages API server plays the
model against the real docs server; overload, a rejected key and a suite's own feedback tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.agent_script import Reply, Script, ToolCallSpec, View, answer
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.docs_flow import docs_flow
from tests.support.eval_cli import AgentEval, SuiteWriter

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MODEL = "claude-haiku-4-5"  # $1 / $5 per million tokens


def provider_args(api: FakeAnthropic) -> list[str]:
    return ["--provider", "anthropic", "--base-url", api.base_url, "--model", MODEL]


def test_messages_api_agent_with_overload_and_custom_feedback_tool(
    agent_eval: AgentEval, write_suite: SuiteWriter, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[View] = []

    def rate(view: View) -> Reply:
        seen.append(view)
        tool = view.tool("give_feedback")
        assert tool is not None
        return Reply(calls=[ToolCallSpec(tool, {"rating": 4, "feedback": "Clear enough."})])

    rated = Script("[rated]", [rate, answer("Thanks.")])
    overloaded = docs_flow("[overloaded]").fail(turn=1, times=4)  # 529 overloaded_error, four times
    suite = write_suite(
        {
            "_config": {
                "system_prompt": "Answer in one sentence.",
                "feedback_tool": {
                    "name": "give_feedback",
                    "description": "Rate the docs.",
                    "instruction": "Call give_feedback once you are done.",
                    "input_schema": {
                        "type": "object",
                        "properties": {
                            "rating": {"type": "integer", "minimum": 1, "maximum": 5},
                            "feedback": {"type": "string"},
                        },
                        "required": ["feedback"],
                    },
                    "metrics": [{"field": "rating", "label": "Rating", "direction": "higher"}],
                    "reasoning_field": "feedback",
                    "headline_field": "rating",
                },
            },
            "_shared": {"docsDir": str(examples_docs)},
            "flow": {
                "docsDir": str(examples_docs),
                "category": "webhooks",
                "prompt": "[flow] Which header carries the signature?",
                "assertions": [
                    {"type": "contains", "value": "Tidewater-Signature"},
                    {"type": "file_contains", "path": "solution.py", "value": "Tidewater-Signature"},
                ],
            },
            "rated": {
                "docsDir": str(examples_docs),
                "prompt": "[rated] say thanks",
                "assertions": [{"type": "matches", "pattern": "^thanks", "flags": "i"}],
            },
            "overloaded": {
                "docsDir": str(examples_docs),
                "category": "webhooks",
                "prompt": "[overloaded] Which header?",
                "assertions": [{"type": "contains", "value": "Tidewater-Signature"}],
            },
        }
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    flow = docs_flow("[flow]")
    with FakeAnthropic([flow, rated, overloaded], model=MODEL) as api:
        run = agent_eval("--scenarios", str(suite), *provider_args(api), "--max-concurrency", "3")
        # the rolling cache breakpoints and the tool_use/tool_result pairing were accepted
        assert api.violations == []
        breakpoints = [
            sum("cache_control" in b for m in r.json["messages"] for b in m["content"]) for r in api.requests
        ]
        assert set(breakpoints) == {1}
    assert run.cli.code == 0, run.cli.err
    first = run.result("flow")
    assert first["passed"] and first["activated"] and first["numTurns"] == 5
    assert "feedbackResult" not in first  # this agent did not rate the docs
    # claude-haiku-4-5: 5 turns of 1000 input and 100 output tokens
    assert first["totalCostUsd"] == pytest.approx(5 * (1000 * 1e-6 + 100 * 5e-6))

    second = run.result("rated")
    assert second["passed"] and not second["activated"]
    assert second["feedbackResult"] == {"scores": {"rating": 4.0}, "reasoning": "Clear enough."}
    (view,) = seen
    assert "mcp__docs-mcp__give_feedback" in view.tools
    assert "mcp__docs-mcp__docs_feedback" not in view.tools
    assert "Answer in one sentence." in view.system
    assert "Call give_feedback once you are done." in view.system

    third = run.result("overloaded")
    assert third["skipped"] and not third["passed"] and third["activated"]
    assert third["errors"] == ["API Error: 529 overloaded_error: Overloaded (Repeated 4 times)"]
    assert overloaded.requests == 1 + 4

    assert run.output is not None
    summary = run.output["summary"]
    assert (summary["skippedScenarios"], summary["passRate"], summary["activationRate"]) == (1, 1.0, 0.5)
    assert summary["feedbackMetrics"] == {"rating": 4.0}
    webhooks = next(c for c in summary["categoryBreakdown"] if c["category"] == "webhooks")
    assert (webhooks["scenarioCount"], webhooks["skippedCount"], webhooks["passRate"]) == (2, 1, 1.0)
    assert "| rated | PASS | 2 |" in run.cli.out and "| Rating |" in run.cli.out


def test_a_rejected_key_stops_the_run_with_one_message(
    agent_eval: AgentEval, write_suite: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite({"x": {"prompt": "[x]", "assertions": [{"type": "contains", "value": "ok"}]}})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong-key")
    with FakeAnthropic([Script("[x]", [answer("ok")])], model=MODEL) as api:
        run = agent_eval("--scenarios", str(suite), "--no-mcp", *provider_args(api))
    assert run.cli.code == 1
    assert run.output is None
    assert "Traceback" not in run.cli.err
    assert f"error: the anthropic API at {api.base_url} rejected the API key (HTTP 401" in run.cli.err
