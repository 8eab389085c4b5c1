"""The ``anthropic`` provider: the Messages API with tool use, through the official ``anthropic`` SDK.

The harness runs its own agent loop on the Messages API rather than driving Claude Code through the
Claude Agent SDK: both providers then share one loop, one set of workspace tools and one way of
counting turns, tokens and cost, and the whole path can be tested against a local server that speaks
the Messages protocol (``--base-url`` or ``ANTHROPIC_BASE_URL``), with no Node program involved.

Requests are not streamed, so ``max_tokens`` stays at 8,192, the SDK's limit for non-streamed requests
to every model. The system prompt (with the tools before it) and the latest message carry
``cache_control`` breakpoints, so each turn re-reads the conversation from the prompt cache.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic import AsyncAnthropic

from docs_mcp_eval.agent.pricing import Usage
from docs_mcp_eval.agent.provider import (
    DEEP_ARGUMENTS,
    MAX_RETRIES,
    ModelReply,
    ProviderName,
    ToolCall,
    classify_status,
    connection_failure,
    error_detail,
    is_retryable_status,
    too_deep,
    unreadable_answer,
)
from docs_mcp_eval.agent.workspace import ToolOutcome, ToolSpec

MAX_OUTPUT_TOKENS = 8_192
REQUEST_TIMEOUT_S = 600.0
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicMessagesProvider:
    name: ProviderName = "anthropic"

    def __init__(self, *, model: str, api_key: str | None, base_url: str | None) -> None:
        self.model = model
        self._client = AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=MAX_RETRIES, timeout=REQUEST_TIMEOUT_S
        )
        self.base_url = str(self._client.base_url).rstrip("/")

    def start(self, *, system: str, prompt: str, tools: Sequence[ToolSpec]) -> _MessagesConversation:
        return _MessagesConversation(self, system=system, prompt=prompt, tools=tools)

    async def aclose(self) -> None:
        await self._client.close()

    async def create(self, **request: Any) -> Any:
        try:
            return await self._client.messages.create(
                model=self.model, max_tokens=MAX_OUTPUT_TOKENS, **request
            )
        except anthropic.APIStatusError as exc:
            raise classify_status(
                provider=self.name,
                base_url=self.base_url,
                model=self.model,
                status=exc.status_code,
                detail=error_detail(exc.body, exc.message),
                retryable=is_retryable_status(exc.status_code),
            ) from None
        except anthropic.APIConnectionError as exc:
            raise connection_failure(exc) from None
        except (RecursionError, ValueError) as exc:
            failure = unreadable_answer(exc)
            if failure is None:
                raise
            raise failure from None


class _MessagesConversation:
    def __init__(
        self, provider: AnthropicMessagesProvider, *, system: str, prompt: str, tools: Sequence[ToolSpec]
    ) -> None:
        self._provider = provider
        self._system = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
        self._tools = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for t in tools
        ]
        self._messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": prompt}]}
        ]

    async def next_reply(self) -> ModelReply:
        request: dict[str, Any] = {"system": self._system, "messages": _with_breakpoint(self._messages)}
        if self._tools:
            request["tools"] = self._tools
        started = time.perf_counter()
        message = await self._provider.create(**request)
        duration_ms = (time.perf_counter() - started) * 1000
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                error = _input_error(block.input)
                calls.append(ToolCall(block.id, block.name, {} if error else dict(block.input), error))
        # an input answered as an error goes back as {} (pydantic cannot even dump one nested deep)
        content = [
            b.model_copy(update={"input": {}}) if b.type == "tool_use" and _input_error(b.input) else b
            for b in message.content
        ]
        self._messages.append(
            {"role": "assistant", "content": [b.model_dump(mode="json", exclude_none=True) for b in content]}
        )
        return ModelReply(
            text="\n".join(t for t in texts if t),
            tool_calls=calls,
            usage=_usage(message.usage),
            stop_reason=str(message.stop_reason or ""),
            duration_ms=duration_ms,
        )

    def add_tool_results(self, results: Sequence[tuple[ToolCall, ToolOutcome]]) -> None:
        blocks: list[dict[str, Any]] = []
        for call, outcome in results:
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": outcome.text}
            if outcome.is_error:
                block["is_error"] = True
            blocks.append(block)
        self._messages.append({"role": "user", "content": blocks})


def _input_error(value: object) -> str | None:
    if not isinstance(value, dict):
        return "the tool input must be a JSON object"
    return DEEP_ARGUMENTS if too_deep(value) else None


def _with_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose last content block is a cache breakpoint (the history is untouched)."""
    if not messages:
        return messages
    last = messages[-1]
    blocks = [dict(b) for b in last["content"]]
    if blocks:
        blocks[-1]["cache_control"] = _EPHEMERAL
    return [*messages[:-1], {**last, "content": blocks}]


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        cache_read_input_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
        cache_creation_input_tokens=int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
    )
