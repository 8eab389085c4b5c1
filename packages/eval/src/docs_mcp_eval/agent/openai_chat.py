"""The ``openai`` provider: the Chat Completions API with function calling, through the ``openai`` SDK.

Any server that speaks the OpenAI Chat Completions protocol works: pass ``--base-url`` (or set
``OPENAI_BASE_URL``) for vLLM, Ollama (``http://localhost:11434/v1``), llama.cpp's server and the
like; a local server that needs no key gets a placeholder. Requests are not streamed. Token counts
come from the response's ``usage``; cached prompt tokens (``prompt_tokens_details.cached_tokens``) are
counted as cache reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import openai
from openai import AsyncOpenAI

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
from docs_mcp_eval.errors import ProviderFailure, json_limit

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_KEY = "not-needed"
REQUEST_TIMEOUT_S = 600.0


class OpenAIChatProvider:
    name: ProviderName = "openai"

    def __init__(self, *, model: str, api_key: str | None, base_url: str | None) -> None:
        self.model = model
        self._client = AsyncOpenAI(
            api_key=api_key or LOCAL_PLACEHOLDER_KEY,
            base_url=base_url,
            max_retries=MAX_RETRIES,
            timeout=REQUEST_TIMEOUT_S,
        )
        self.base_url = str(self._client.base_url).rstrip("/")

    def start(self, *, system: str, prompt: str, tools: Sequence[ToolSpec]) -> _ChatConversation:
        return _ChatConversation(self, system=system, prompt=prompt, tools=tools)

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
        create: Any = self._client.chat.completions.create  # plain dicts, not the SDK's TypedDicts
        try:
            return await create(**request)
        except openai.APIStatusError as exc:
            raise classify_status(
                provider=self.name,
                base_url=self.base_url,
                model=self.model,
                status=exc.status_code,
                detail=error_detail(exc.body, exc.message),
                retryable=is_retryable_status(exc.status_code),
            ) from None
        except openai.APIConnectionError as exc:
            raise connection_failure(exc) from None
        except (RecursionError, ValueError) as exc:
            failure = unreadable_answer(exc)
            if failure is None:
                raise
            raise failure from None


class _ChatConversation:
    def __init__(
        self, provider: OpenAIChatProvider, *, system: str, prompt: str, tools: Sequence[ToolSpec]
    ) -> None:
        self._provider = provider
        self._messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ]
        self._tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in tools
        ]

    async def next_reply(self) -> ModelReply:
        started = time.perf_counter()
        completion = await self._provider.complete(self._messages, self._tools)
        duration_ms = (time.perf_counter() - started) * 1000
        if not getattr(completion, "choices", None):
            raise ProviderFailure("API Error: the response has no choices", infrastructure=False)
        choice = completion.choices[0]
        message = choice.message
        text = message.content or ""
        calls: list[ToolCall] = []
        raw_calls: list[dict[str, Any]] = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue  # a custom (non-function) tool call: we offer none
            calls.append(_tool_call(call.id, function.name, function.arguments))
            # arguments that could not be read go back as {} (the error result says why): the API
            # may refuse a conversation holding them, as it may a tool call without an object
            readable = calls[-1].argument_error is None
            arguments = (function.arguments or "{}") if readable else "{}"
            raw_calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": function.name, "arguments": arguments},
                }
            )
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
        if raw_calls:
            assistant["tool_calls"] = raw_calls
        self._messages.append(assistant)
        return ModelReply(
            text=text,
            tool_calls=calls,
            usage=_usage(completion.usage),
            stop_reason=str(choice.finish_reason or ""),
            duration_ms=duration_ms,
        )

    def add_tool_results(self, results: Sequence[tuple[ToolCall, ToolOutcome]]) -> None:
        for call, outcome in results:
            content = f"Error: {outcome.text}" if outcome.is_error else outcome.text
            self._messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def _tool_call(call_id: str, name: str, raw: str | None) -> ToolCall:
    try:
        arguments = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return ToolCall(
            call_id, name, {}, f"the arguments are not valid JSON ({exc.msg}); send a JSON object"
        )
    except (RecursionError, ValueError) as exc:  # ended the whole run in a traceback
        return ToolCall(call_id, name, {}, f"the arguments cannot be read: {json_limit(exc)}")
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, {}, "the arguments must be a JSON object")
    if too_deep(arguments):
        return ToolCall(call_id, name, {}, DEEP_ARGUMENTS)
    return ToolCall(call_id, name, arguments)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cache_read_input_tokens=cached,
    )
