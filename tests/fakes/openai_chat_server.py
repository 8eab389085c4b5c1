"""A local server speaking the OpenAI Chat Completions protocol (``POST /v1/chat/completions``, tool
calling, no streaming), answering with scripted turns (:mod:`tests.fakes.agent_script`).

It checks what a real server would refuse: a missing or wrong bearer key, streaming, malformed tools
(function names must match ``^[a-zA-Z0-9_-]{1,64}$``, parameters must be an object schema), tool
messages that answer no pending call, and assistant tool calls left unanswered. Such requests get a
400 and are listed in :attr:`violations`.

Usage::

    with FakeChatCompletions([script], model="gpt-4.1-mini") as api:
        ... --provider openai --base-url {api.base_url} ...
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.fakes.agent_script import RawJson, Reply, ToolResultView, View, script_for
from tests.fakes.llm_http import Answer, FakeLLMServer

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class FakeChatCompletions(FakeLLMServer):
    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def respond(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        if path.rstrip("/") != "/v1/chat/completions":
            return Answer(404, _error(f"unknown path {path}"), {})
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return Answer(401, _error("Incorrect API key provided", code="invalid_api_key"), {})
        if not isinstance(body, dict):
            return self.reject("body is not a JSON object", _error("body is not JSON"))
        if body.get("stream"):
            return self.reject("streaming was requested", _error("this fake does not stream"))
        problem = self._check(body)
        if problem:
            return self.reject(problem, _error(problem))
        view = self._view(body)
        script = script_for(self.scripts, view.prompt)
        if script is None:
            return self.reject(f"no script for prompt {view.prompt[:60]!r}", _error("no script"))
        fault = script.next_fault(view.turn)
        if fault is not None:
            return Answer(fault.status, _error(fault.message, fault.kind), dict(fault.headers))
        return Answer(200, self._completion(body, script.step(view)), {})

    def _check(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "model is missing"
        for tool in body.get("tools") or []:
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
                return f"malformed tool {tool!r}"
            if not _NAME.match(str(function.get("name"))):
                return f"invalid function name {function.get('name')!r}"
            if (function.get("parameters") or {}).get("type") != "object":
                return f"parameters of {function.get('name')} must be an object schema"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages must be a non-empty list"
        pending: set[str] = set()
        for index, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            if role == "tool":
                call_id = message.get("tool_call_id")
                if call_id not in pending:
                    return f"messages[{index}] answers unknown tool call {call_id!r}"
                if not isinstance(message.get("content"), str):
                    return f"messages[{index}].content must be a string"
                pending.discard(call_id)
                continue
            if pending:
                return f"messages[{index}]: tool calls {sorted(pending)} were not answered"
            if role not in ("system", "developer", "user", "assistant"):
                return f"messages[{index}] has role {role!r}"
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    try:
                        json.loads(call["function"]["arguments"])
                    except (KeyError, TypeError, ValueError):
                        return f"messages[{index}] has a tool call with invalid arguments"
                    pending.add(call["id"])
        if pending:
            return f"tool calls {sorted(pending)} were not answered"
        return None

    def _view(self, body: dict[str, Any]) -> View:
        messages = body["messages"]
        system = next((m["content"] for m in messages if m.get("role") in ("system", "developer")), "")
        prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        turn = 0
        for message in messages:
            if message.get("role") == "assistant":
                turn += 1
                for call in message.get("tool_calls") or []:
                    names[call["id"]] = call["function"]["name"]
            elif message.get("role") == "tool":
                text = message["content"]
                results.append(
                    ToolResultView(names[message["tool_call_id"]], text, text.startswith("Error: "))
                )
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        return View(
            system=str(system),
            prompt=str(prompt),
            tools=tools,
            results=results,
            turn=turn,
            model=body["model"],
        )

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": self.new_id("call"),
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c.arguments)},
                }
                for c in reply.calls
            ]
        prompt_tokens = reply.input_tokens + reply.cache_read_tokens
        return {
            "id": self.new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": prompt_tokens + reply.output_tokens,
                "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens},
            },
        }


def _arguments(arguments: dict[str, Any] | RawJson) -> str:
    return arguments.text if isinstance(arguments, RawJson) else json.dumps(arguments)
