"""``--compare`` end to end, and servers given with ``--server-command``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docs_mcp_eval.agent.index_cache import ensure_index
from docs_mcp_eval.agent.scenarios import IndexConfig
from tests.fakes.agent_script import Script, View, answer
from tests.fakes.docs_flow import docs_flow, docs_or_guess
from tests.fakes.openai_chat_server import FakeChatCompletions
from tests.support.eval_cli import AgentEval, SuiteWriter

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MODEL = "gpt-4.1-mini"
RIGHT, WRONG = "The header is Tidewater-Signature.", "The header is X-Signature."


def test_compare_classifies_each_scenario(
    agent_eval: AgentEval,
    write_suite: SuiteWriter,
    examples_docs: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    scripts = [
        docs_or_guess("[gained]", with_docs=RIGHT, without_docs=WRONG),
        docs_or_guess("[lost]", with_docs=WRONG, without_docs=RIGHT),
        Script("[both-pass]", [answer(RIGHT)]),
        Script("[both-fail]", [answer(WRONG)]),
    ]
    ids = ["gained", "lost", "both-pass", "both-fail"]
    suite = write_suite(
        {
            sid: {
                "docsDir": str(examples_docs),
                "prompt": f"[{sid}] Which header carries the signature?",
                "assertions": [{"type": "contains", "value": "Tidewater-Signature"}],
            }
            for sid in ids
        },
        name="headers",
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    results_dir = tmp_path / "results"
    workspaces = tmp_path / "workspaces"
    with FakeChatCompletions(scripts, model=MODEL) as api:
        run = agent_eval(
            "--scenarios",
            str(suite),
            "--compare",
            "--provider",
            "openai",
            "--base-url",
            api.base_url,
            "--model",
            MODEL,
            "--max-concurrency",
            "2",
            "--workspace-dir",
            str(workspaces),
            results_dir=results_dir,
        )
        assert api.violations == []
        offered = [
            {t["function"]["name"] for t in r.json.get("tools", [])}
            for r in api.requests
            if "[both-pass]" in r.json["messages"][1]["content"]
        ]
    assert run.cli.code == 0, run.cli.err
    comparison = run.output
    assert comparison is not None
    assert comparison["outcomes"] == {"gained": 1, "lost": 1, "both_pass": 1, "both_fail": 1, "skipped": 0}
    outcome = {s["id"]: s["outcome"] for s in comparison["scenarios"]}
    assert outcome == {"gained": "gained", "lost": "lost", "both-pass": "both_pass", "both-fail": "both_fail"}
    gained = next(s for s in comparison["scenarios"] if s["id"] == "gained")
    assert gained["withMcp"]["mcpToolCalls"] == 1 and gained["withoutMcp"]["mcpToolCalls"] == 0
    assert gained["flippedAssertions"][0]["withMcp"] is True
    assert comparison["withMcp"]["summary"]["passRate"] == 0.5
    assert comparison["withoutMcp"]["summary"]["activationRate"] == 0.0
    assert comparison["delta"]["passRateDelta"] == 0.0
    # the with-docs phase offers the docs tools, the baseline none of them
    assert len(offered) == 2
    assert "mcp__docs-mcp__search_docs" in offered[0] and "mcp__docs-mcp__docs_feedback" in offered[0]
    assert offered[1] == {"read_file", "write_file", "list_files", "run_command"}
    assert "Outcomes: gained 1 · lost 1 · both pass 1 · both fail 1 · skipped 0" in run.cli.out
    assert "| gained | PASS | FAIL | gained |" in run.cli.out
    # both phases are saved, the baseline under <suite>-baseline; workspaces kept apart
    assert len(list((results_dir / "headers").glob("*.json"))) == 1
    baseline = json.loads(next((results_dir / "headers-baseline").glob("*.json")).read_text())
    assert baseline["metadata"]["noMcp"] is True
    assert {p.name for p in workspaces.iterdir()} == {"with-mcp", "baseline"}
    assert (workspaces / "baseline" / "gained").is_dir()


def test_server_command_scenarios_get_the_feedback_tool_from_the_harness(
    agent_eval: AgentEval,
    write_suite: SuiteWriter,
    examples_docs: Path,
    agent_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = ensure_index(
        examples_docs.resolve(),
        IndexConfig(),
        cache_dir=agent_cache,
        build_program=str(Path(sys.executable).parent / "docs-mcp"),
        log=lambda message: None,
    )
    server = f"{Path(sys.executable).parent / 'docs-mcp-server'} --index-dir {index} --tool-prefix acme"
    seen: list[View] = []
    suite = write_suite(
        {
            "own-server": {
                "prompt": "[own] Which header carries the signature?",
                "mcpServerName": "acme-docs",
                "assertions": [{"type": "contains", "value": "Tidewater-Signature"}],
            }
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeChatCompletions([docs_flow("[own]", on_first=seen.append)], model=MODEL) as api:
        missing = agent_eval("--scenarios", str(suite), "--provider", "openai", "--base-url", api.base_url)
        run = agent_eval(
            "--scenarios",
            str(suite),
            "--server-command",
            server,
            "--provider",
            "openai",
            "--base-url",
            api.base_url,
        )
        assert api.violations == []
    assert missing.cli.code == 2  # a usage error
    assert missing.cli.err.strip().endswith(
        "error: --server-command is required when scenarios don't specify docsDir"
    )
    assert run.cli.code == 0, run.cli.err
    result = run.result("own-server")
    assert result["passed"] and result["activated"]
    assert result["toolsCalled"]["mcp__acme-docs__acme_search_docs"] == 1
    assert result["toolsCalled"]["mcp__acme-docs__docs_feedback"] == 1  # answered by the harness
    assert result["feedbackResult"]["scores"]["confidence_score"] == 90.0
    (view,) = seen
    assert "mcp__acme-docs__acme_get_doc" in view.tools
