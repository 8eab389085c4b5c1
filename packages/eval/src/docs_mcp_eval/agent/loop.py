"""The agent loop: ask the model, run the tools it calls, hand back the results, until it answers.

One *turn* is one model response. The loop stops when

* the model answers without calling a tool (``success``; that text is the final answer);
* ``max_turns`` responses have been used and the model still wants tools (``error_max_turns``);
* the run's cost has reached ``max_budget_usd`` and the model still wants tools
  (``error_max_budget_usd``; no further request is made, so spending stops at the response that
  crossed the line). An unpriced model cannot be stopped by the budget;
* the API fails for good (``error_during_execution``, with the API's message in ``errors``).

Tool calls of one response run one after the other, in the order the model gave them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docs_mcp_eval.agent.pricing import Price, Usage, cost_usd
from docs_mcp_eval.agent.provider import ModelProvider, ToolCall
from docs_mcp_eval.agent.toolbox import Toolbox
from docs_mcp_eval.agent.workspace import ToolOutcome
from docs_mcp_eval.errors import ProviderFailure

AgentEventCallback = Callable[[str, str], None]
"""Called with (kind, summary): ``text``, ``tool_call``, ``tool_result``, ``result``."""

_PREVIEW = 160


@dataclass(frozen=True, kw_only=True)
class AgentLimits:
    max_turns: int
    max_budget_usd: float
    price: Price | None


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord:
    name: str
    args: dict[str, Any]
    result: str
    is_error: bool
    duration_ms: float
    timestamp_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": self.args,
            "result": self.result,
            "isError": self.is_error,
            "durationMs": round(self.duration_ms, 3),
            "timestampMs": round(self.timestamp_ms, 3),
        }


@dataclass(kw_only=True)
class AgentRun:
    final_answer: str = ""
    result_subtype: str = "success"
    num_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    duration_ms: float = 0.0
    """Wall time of the whole loop: model calls and tool calls (the docs server was already running)."""
    duration_api_ms: float = 0.0
    tools_called: dict[str, int] = field(default_factory=dict)
    trace: list[ToolCallRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    infrastructure_failure: bool = False


async def run_agent(
    provider: ModelProvider,
    *,
    system: str,
    prompt: str,
    toolbox: Toolbox,
    limits: AgentLimits,
    on_event: AgentEventCallback | None = None,
) -> AgentRun:
    """Run one conversation to its end and return what happened (never raises for API failures,
    except :class:`~docs_mcp_eval.errors.AgentProviderError`, which stops the whole evaluation)."""
    emit = on_event or (lambda kind, summary: None)
    run = AgentRun()
    conversation = provider.start(system=system, prompt=prompt, tools=toolbox.specs())
    started = time.perf_counter()
    while True:
        if run.num_turns >= limits.max_turns:
            run.result_subtype = "error_max_turns"
            run.errors.append(f"Max turns limit reached ({run.num_turns} turns)")
            break
        try:
            reply = await conversation.next_reply()
        except ProviderFailure as failure:
            run.result_subtype = "error_during_execution"
            run.errors.append(failure.message)
            run.infrastructure_failure = failure.infrastructure
            break
        run.num_turns += 1
        run.usage = run.usage + reply.usage
        run.cost_usd = cost_usd(run.usage, limits.price)
        run.duration_api_ms += reply.duration_ms
        if reply.text.strip():
            run.final_answer = reply.text
            emit("text", _preview(reply.text))
        if not reply.tool_calls:
            break
        if limits.price is not None and run.cost_usd >= limits.max_budget_usd:
            run.result_subtype = "error_max_budget_usd"
            run.errors.append(f"Budget limit reached (${run.cost_usd:.4f} of ${limits.max_budget_usd:.2f})")
            break
        results: list[tuple[ToolCall, ToolOutcome]] = []
        for call in reply.tool_calls:
            outcome = await _execute(call, toolbox, run, started, emit)
            results.append((call, outcome))
        conversation.add_tool_results(results)
    run.duration_ms = (time.perf_counter() - started) * 1000
    emit("result", f"{run.result_subtype} (${run.cost_usd:.4f}, {run.num_turns} turns)")
    return run


async def _execute(
    call: ToolCall, toolbox: Toolbox, run: AgentRun, started: float, emit: AgentEventCallback
) -> ToolOutcome:
    run.tools_called[call.name] = run.tools_called.get(call.name, 0) + 1
    emit("tool_call", f"{call.name}({_preview(json.dumps(call.arguments, ensure_ascii=False))})")
    call_started = time.perf_counter()
    if call.argument_error is not None:
        outcome = ToolOutcome(call.argument_error, is_error=True)
    else:
        outcome = await toolbox.call(call.name, call.arguments)
    finished = time.perf_counter()
    run.trace.append(
        ToolCallRecord(
            name=call.name,
            args=dict(call.arguments),
            result=outcome.text,
            is_error=outcome.is_error,
            duration_ms=(finished - call_started) * 1000,
            timestamp_ms=(call_started - started) * 1000,
        )
    )
    emit("tool_result", ("error: " if outcome.is_error else "") + _preview(outcome.text))
    return outcome


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 3] + "..."
