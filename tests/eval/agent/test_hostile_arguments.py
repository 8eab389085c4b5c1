"""``agent-eval`` with a model whose tool call holds arguments nested deep (against local fakes of
both providers' APIs): never a traceback that ends the whole run. Arguments nested more than 64
levels are answered as an error the model reads, and the conversation goes on. Past Python's
recursion limit the OpenAI API's arguments (text) are answered so too; the Anthropic SDK parses
them with its answer, so that scenario fails saying the answer cannot be read, and the next runs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.agent_script import RawJson, Reply, Script, ToolCallSpec, View, answer
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_chat_server import FakeChatCompletions
from tests.support.eval_cli import AgentEval, SuiteWriter

pytestmark = [pytest.mark.integration, pytest.mark.slow]

UNREADABLE = 100_000
DEEP = 500  # read by json and pydantic, but not dumped by pydantic


def _nested(depth: int) -> RawJson:
    return RawJson('{"path": ' + "[" * depth + "]" * depth + "}")


def _scripts(seen: list[View], depth: int = UNREADABLE) -> list[Script]:
    def nested(view: View) -> Reply:
        return Reply(calls=[ToolCallSpec("read_file", _nested(depth))])

    def after(view: View) -> Reply:
        seen.append(view)
        return Reply(text="recovered")

    return [Script("[nested]", [nested, after]), Script("[plain]", [answer("fine")])]


def _run(agent_eval: AgentEval, write_suite: SuiteWriter, api: Any, provider: str, model: str) -> Any:
    suite = write_suite(
        {
            "nested": {
                "prompt": "[nested] read it",
                "assertions": [{"type": "contains", "value": "recovered"}],
            },
            "plain": {"prompt": "[plain] then this", "assertions": [{"type": "contains", "value": "fine"}]},
        }
    )
    args = ("--provider", provider, "--base-url", api.base_url, "--model", model, "--max-concurrency", "1")
    return agent_eval("--scenarios", str(suite), "--no-mcp", *args)


@pytest.mark.parametrize(
    ("provider", "depth", "error"),
    [
        ("openai", UNREADABLE, "cannot be read: it nests arrays or objects too deeply to read"),
        ("openai", DEEP, "nest arrays or objects more than 64 levels deep"),
        ("anthropic", DEEP, "nest arrays or objects more than 64 levels deep"),
    ],
)
def test_arguments_nested_too_deep_are_an_error_the_model_reads(
    agent_eval: AgentEval,
    write_suite: SuiteWriter,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    depth: int,
    error: str,
) -> None:
    seen: list[View] = []
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", "test-key")
    fake, model = (
        (FakeChatCompletions, "gpt-4.1-mini") if provider == "openai" else (FakeAnthropic, "claude-haiku-4-5")
    )
    with fake(_scripts(seen, depth), model=model) as api:
        run = _run(agent_eval, write_suite, api, provider, model)
        assert api.violations == []  # the conversation sent back stayed valid
    assert run.cli.code == 0, run.cli.err[-2000:]
    nested = run.result("nested")
    assert nested["passed"], nested
    (call,) = nested["toolCallTrace"]
    assert call["isError"] and error in call["result"], call
    assert seen and seen[0].results[0].is_error  # the model was told, and answered after
    assert run.result("plain")["passed"]


def test_anthropic_answer_nested_too_deep_fails_its_scenario_only(
    agent_eval: AgentEval, write_suite: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(_scripts([]), model="claude-haiku-4-5") as api:
        run = _run(agent_eval, write_suite, api, "anthropic", "claude-haiku-4-5")
    assert "Traceback" not in run.cli.err, run.cli.err[-2000:]
    nested = run.result("nested")
    assert not nested["passed"] and nested["resultSubtype"] == "error_during_execution"
    assert nested["errors"] == [
        "API Error: the answer cannot be read: it nests arrays or objects too deeply to read"
    ]
    assert run.result("plain")["passed"]
