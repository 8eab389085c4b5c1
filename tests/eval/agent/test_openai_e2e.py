"""``agent-eval`` end to end with the ``openai`` provider: a local Chat Completions server plays the
model, the real ``docs-mcp build`` indexes examples/docs and the real ``docs-mcp-server`` answers over
stdio."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.agent_script import Fault, Reply, Script, Step, ToolCallSpec, View, answer
from tests.fakes.docs_flow import FEEDBACK, busy_loop, docs_flow
from tests.fakes.openai_chat_server import FakeChatCompletions
from tests.support.eval_cli import AgentEval, SuiteWriter

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MODEL = "gpt-4.1-mini"  # $0.40 / $1.60 per million tokens


def _run(command: str) -> Reply:
    return Reply(calls=[ToolCallSpec("run_command", {"command": command})])


def _list_step() -> Step:
    return lambda view: Reply(calls=[ToolCallSpec("list_files", {})])


def provider_args(api: FakeChatCompletions, model: str = MODEL) -> list[str]:
    return ["--provider", "openai", "--base-url", api.base_url, "--model", model]


def test_agent_uses_the_docs_server_writes_a_file_and_reports(
    agent_eval: AgentEval,
    write_suite: SuiteWriter,
    examples_docs: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seen: list[View] = []
    flow = docs_flow("[docs-flow]", on_first=seen.append)
    shell = Script("[shell]", [lambda v: _run("echo hi > out.txt"), answer("Done.")])
    suite = write_suite(
        {
            "docs-flow": {
                "name": "Find the signature header",
                "category": "webhooks",
                "docsDir": str(examples_docs),
                "prompt": "[docs-flow] Which header carries the webhook signature?",
                "assertions": [
                    {"type": "contains", "value": "Tidewater-Signature"},
                    {
                        "type": "file_matches",
                        "path": "solution.py",
                        "pattern": '^HEADER = "Tidewater-Signature"$',
                        "flags": "m",
                    },
                    {
                        "type": "script",
                        "name": "imports",
                        "command": "python3 -c 'import solution; assert solution.HEADER == \"Tidewater-Signature\"'",
                    },
                    {"type": "contains", "value": "never said", "soft": True},
                ],
            },
            "shell": {
                "name": "Run a command",
                "docsDir": str(examples_docs),
                "prompt": "[shell] write hi to out.txt",
                "assertions": [{"type": "file_contains", "path": "out.txt", "value": "hi"}],
            },
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    results_dir = tmp_path / "history"
    with FakeChatCompletions([flow, shell], model=MODEL) as api:
        run = agent_eval("--scenarios", str(suite), *provider_args(api), results_dir=results_dir)
        assert api.violations == []
    assert run.cli.code == 0, run.cli.err
    assert run.output is not None
    result = run.result("docs-flow")
    assert result["passed"] and result["activated"] and not result["skipped"]
    assert result["resultSubtype"] == "success"
    assert result["numTurns"] == 5
    assert result["toolsCalled"] == {
        "mcp__docs-mcp__search_docs": 1,
        "mcp__docs-mcp__get_doc": 1,
        "write_file": 1,
        "mcp__docs-mcp__docs_feedback": 1,
    }
    assert result["mcpToolCalls"] == 2
    trace = {t["name"]: t for t in result["toolCallTrace"]}
    assert '"hits"' in trace["mcp__docs-mcp__search_docs"]["result"]
    assert "Tidewater-Signature" in trace["mcp__docs-mcp__get_doc"]["result"]
    assert result["mcpToolResultChars"] == sum(
        len(trace[n]["result"]) for n in ("mcp__docs-mcp__search_docs", "mcp__docs-mcp__get_doc")
    )
    assert (result["inputTokens"], result["outputTokens"]) == (5000, 500)
    assert result["totalCostUsd"] == pytest.approx(5000 * 0.4e-6 + 500 * 1.6e-6)
    assert result["feedbackResult"] == {
        "scores": {k: float(v) for k, v in FEEDBACK.items() if k != "reasoning"},
        "reasoning": FEEDBACK["reasoning"],
    }
    assert [(f["path"], f["content"]) for f in result["workspaceFiles"]] == [
        ("solution.py", 'HEADER = "Tidewater-Signature"\n')
    ]
    soft = result["assertionResults"][3]
    assert soft["assertion"]["soft"] and not soft["passed"]  # a failing soft check does not fail the run
    assert Path(result["workspaceDir"], "solution.py").is_file()

    other = run.result("shell")
    assert other["passed"] and not other["activated"] and other["toolsCalled"] == {"run_command": 1}

    summary = run.output["summary"]
    assert (summary["passRate"], summary["activationRate"], summary["skippedScenarios"]) == (1.0, 0.5, 0)
    assert summary["feedbackMetrics"] == {
        "confidence_score": 90.0,
        "docs_relevance": 80.0,
        "docs_utilization": 70.0,
    }
    assert summary["mcpToolUsageDistribution"]["mcp__docs-mcp__docs_feedback"] == 1

    (view,) = seen
    assert {"read_file", "write_file", "list_files", "run_command"} <= set(view.tools)
    assert {"mcp__docs-mcp__search_docs", "mcp__docs-mcp__get_doc", "mcp__docs-mcp__docs_feedback"} <= set(
        view.tools
    )
    assert "Tidewater Payments documentation" in view.system  # the server's MCP instructions
    assert "call the docs_feedback tool" in view.system
    assert "| docs-flow | PASS | 5 | $0.0028 | 2 | 90 |" in run.cli.out
    assert "## Trend" not in run.cli.out
    saved = list((results_dir / "suite").glob("*.json"))
    assert len(saved) == 1

    # a second run of the same suite is compared with the first
    with FakeChatCompletions([docs_flow("[docs-flow]"), shell], model=MODEL) as api:
        again = agent_eval("--scenarios", str(suite), *provider_args(api), results_dir=results_dir)
    assert again.cli.code == 0, again.cli.err
    assert "## Trend" in again.cli.out and "(this run)" in again.cli.out
    assert "- no scenario changed outcome" in again.cli.out
    assert len(list((results_dir / "suite").glob("*.json"))) == 2


def test_api_failures_retry_then_skip_and_limits_stop_runs(
    agent_eval: AgentEval, write_suite: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    flaky = Script("[flaky]", [answer("fine")]).fail(
        turn=0, times=1, fault=Fault(503, "busy", "server_error")
    )
    down = Script("[down]", [_list_step(), answer("never")]).fail(
        turn=1, times=4, fault=Fault(503, "Service Unavailable", "server_error")
    )
    budget = busy_loop("[budget]")
    turns = busy_loop("[turns]")
    suite = write_suite(
        {
            "flaky": {"prompt": "[flaky]", "assertions": [{"type": "contains", "value": "fine"}]},
            "down": {"prompt": "[down]", "assertions": [{"type": "contains", "value": "never"}]},
            "budget": {
                "prompt": "[budget]",
                "maxBudgetUsd": 0.0075,
                "assertions": [{"type": "contains", "value": "x"}],
            },
            "turns": {"prompt": "[turns]", "maxTurns": 2, "assertions": [{"type": "contains", "value": "x"}]},
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeChatCompletions([flaky, down, budget, turns], model="gpt-4.1") as api:
        run = agent_eval("--scenarios", str(suite), "--no-mcp", *provider_args(api, "gpt-4.1"))
        assert api.violations == []
    assert run.cli.code == 0, run.cli.err
    assert flaky.requests == 2 and run.result("flaky")["passed"]  # one 503, retried, then fine

    skipped = run.result("down")
    assert down.requests == 1 + 4  # turn 0, then turn 1 tried four times
    assert skipped["skipped"] and not skipped["passed"]
    assert skipped["resultSubtype"] == "error_during_execution"
    assert skipped["errors"] == ["API Error: 503 server_error: Service Unavailable (Repeated 4 times)"]

    # gpt-4.1 at $2 / $8: each turn of 1000 + 100 tokens costs $0.0028; the third crosses $0.0075
    over = run.result("budget")
    assert (over["numTurns"], over["resultSubtype"]) == (3, "error_max_budget_usd")
    assert over["totalCostUsd"] == pytest.approx(3 * 0.0028)
    assert over["errors"][0].startswith("Budget limit reached ($0.0084")
    assert budget.requests == 3

    limited = run.result("turns")
    assert (limited["numTurns"], limited["resultSubtype"]) == (2, "error_max_turns")
    assert limited["errors"] == ["Max turns limit reached (2 turns)"]

    summary = run.output["summary"] if run.output else {}
    assert summary["skippedScenarios"] == 1
    assert summary["passRate"] == pytest.approx(1 / 3, abs=1e-6)  # the skipped run is not counted
    assert "| down | SKIP |" in run.cli.out


def test_unpriced_models_are_reported_and_a_price_enables_the_budget(
    agent_eval: AgentEval, write_suite: SuiteWriter
) -> None:
    suite = write_suite(
        {
            "loop": {
                "prompt": "[loop]",
                "maxTurns": 4,
                "maxBudgetUsd": 0.001,
                "assertions": [{"type": "contains", "value": "x"}],
            }
        }
    )
    # a local server needs no key: --base-url alone selects the openai provider
    with FakeChatCompletions([busy_loop("[loop]")], model="llama3", api_key="not-needed") as api:
        free = agent_eval(
            "--scenarios", str(suite), "--no-mcp", "--base-url", api.base_url, "--model", "local-llama"
        )
        priced = agent_eval(
            "--scenarios",
            str(suite),
            "--no-mcp",
            "--base-url",
            api.base_url,
            "--model",
            "local-llama",
            "--price-per-mtok",
            "0.5,1.5",
        )
        assert api.violations == []
    assert free.cli.code == 0, free.cli.err
    assert "no price is known for model 'local-llama'" in free.cli.err
    result = free.result("loop")
    assert (result["numTurns"], result["resultSubtype"], result["totalCostUsd"]) == (4, "error_max_turns", 0)
    assert free.output is not None and free.output["metadata"]["costsKnown"] is False
    assert "No price is known for model 'local-llama'" in free.cli.out
    # $0.5 / $1.5 per million: $0.00065 per turn, so the $0.001 budget stops the run after two turns
    assert priced.cli.code == 0, priced.cli.err
    assert "no price is known" not in priced.cli.err
    assert (priced.result("loop")["numTurns"], priced.result("loop")["resultSubtype"]) == (
        2,
        "error_max_budget_usd",
    )


def test_scenarios_run_concurrently_up_to_the_limit(
    agent_eval: AgentEval, write_suite: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = [Script(f"[c{i}]", [answer("ok")]) for i in range(3)]
    suite = write_suite(
        {
            f"c{i}": {"prompt": f"[c{i}]", "assertions": [{"type": "contains", "value": "ok"}]}
            for i in range(3)
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeChatCompletions(scripts, model=MODEL) as api:
        # requests wait until three are in flight (at most 2 s, once): with a limit of 2 they never are
        api.hold_until_in_flight(3, timeout=2.0)
        run = agent_eval("--scenarios", str(suite), "--no-mcp", "--max-concurrency", "2", *provider_args(api))
    assert run.cli.code == 0, run.cli.err
    assert api.max_in_flight == 2
    assert run.output is not None and run.output["summary"]["passRate"] == 1.0


def test_links_and_setup_prepare_the_workspace(
    agent_eval: AgentEval, write_suite: SuiteWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "shared.json").write_text('{"sdk": "tidewater"}')
    read = Script(
        "[read]",
        [lambda v: Reply(calls=[ToolCallSpec("read_file", {"path": "config/shared.json"})]), answer("read")],
    )
    suite = write_suite(
        {
            "linked": {
                "prompt": "[read] what is in config/shared.json?",
                "links": {"fixtures/shared.json": "config/shared.json"},
                "setup": "cat config/shared.json > copied.txt && mkdir -p out",
                "assertions": [{"type": "file_contains", "path": "copied.txt", "value": "tidewater"}],
            },
            "broken-setup": {
                "prompt": "[read] again",
                "setup": "echo cannot install >&2; exit 7",
                "assertions": [{"type": "contains", "value": "read"}],
            },
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeChatCompletions([read], model=MODEL) as api:
        run = agent_eval("--scenarios", str(suite), "--no-mcp", *provider_args(api), "--no-save")
    assert run.cli.code == 0, run.cli.err
    linked = run.result("linked")
    assert linked["passed"] and "errors" not in linked
    assert linked["toolCallTrace"][0]["result"] == '{"sdk": "tidewater"}'  # read through the link
    broken = run.result("broken-setup")
    assert broken["passed"]  # the agent still ran
    assert broken["errors"] == ["Setup warning: exit code 7: cannot install"]
    assert not (tmp_path / "results").exists()  # --no-save
