"""A local server speaking the Anthropic Messages protocol (``POST /v1/messages``, tool use, no
streaming), answering with scripted turns (:mod:`tests.fakes.agent_script`).

It checks what the real API refuses: a wrong key (``x-api-key`` or ``Authorization: Bearer``), no ``anthropic-version`` header,
streaming, a missing ``max_tokens``, messages that do not alternate user/assistant starting with the
user, tool names outside ``^[a-zA-Z0-9_-]{1,128}$`` or without an object ``input_schema``, tool
results that answer no ``tool_use`` of the previous assistant message (or leave one unanswered), and
more than four ``cache_control`` breakpoints. Such requests get a 400 and are listed in
:attr:`violations`. Faults are answered as the API does (``{"type": "error", "error": {...}}``, 529
for ``overloaded_error``).
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.agent_script import Reply, ToolResultView, View, script_for
from tests.fakes.llm_http import Answer, FakeLLMServer

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
MAX_BREAKPOINTS = 4


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    return "".join(b.get("text", "") for b in _blocks(content) if b.get("type") == "text")


class FakeAnthropic(FakeLLMServer):
    @property
    def base_url(self) -> str:
        return self.url

    def respond(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        if path.rstrip("/") != "/v1/messages":
            return Answer(404, _error(f"unknown path {path}", "not_found_error"), {})
        # the key travels as x-api-key, or as a bearer token (what recent SDKs send)
        keys = {headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")}
        if self.api_key not in keys:
            return Answer(401, _error("invalid x-api-key", "authentication_error"), {})
        if not headers.get("anthropic-version"):
            return self.reject(
                "anthropic-version header missing", _error("anthropic-version header is required")
            )
        if not isinstance(body, dict):
            return self.reject("body is not a JSON object", _error("body is not JSON"))
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
        return Answer(200, self._message(body, script.step(view)), {})

    def _check(self, body: dict[str, Any]) -> str | None:
        if body.get("stream"):
            return "streaming was requested"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "model is missing"
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens must be a positive integer"
        breakpoints = 0
        system = body.get("system")
        if system is not None:
            if not isinstance(system, str | list):
                return "system must be a string or a list of text blocks"
            breakpoints += sum(1 for b in _blocks(system) if "cache_control" in b)
        for tool in body.get("tools") or []:
            if not isinstance(tool, dict) or not _NAME.match(str(tool.get("name"))):
                return f"invalid tool {tool!r}"
            if (tool.get("input_schema") or {}).get("type") != "object":
                return f"input_schema of {tool.get('name')} must be an object schema"
            breakpoints += 1 if "cache_control" in tool else 0
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages must be a non-empty list"
        open_calls: set[str] = set()
        for index, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            expected = "user" if index % 2 == 0 else "assistant"
            if role != expected:
                return f"messages[{index}] must have role {expected}, got {role!r}"
            blocks = _blocks(message.get("content"))
            if not blocks:
                return f"messages[{index}] has no content"
            breakpoints += sum(1 for b in blocks if "cache_control" in b)
            if role == "user":
                answered = {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}
                if answered - open_calls:
                    return f"messages[{index}] answers unknown tool_use ids {sorted(answered - open_calls)}"
                if open_calls - answered:
                    return f"messages[{index}] leaves tool_use ids {sorted(open_calls - answered)} unanswered"
                open_calls = set()
            else:
                open_calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        if breakpoints > MAX_BREAKPOINTS:
            return f"{breakpoints} cache_control breakpoints (at most {MAX_BREAKPOINTS})"
        return None

    def _view(self, body: dict[str, Any]) -> View:
        messages = body["messages"]
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for message in messages:
            for block in _blocks(message["content"]):
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result":
                    content = block.get("content", "")
                    text = content if isinstance(content, str) else _text(content)
                    results.append(
                        ToolResultView(names[block["tool_use_id"]], text, bool(block.get("is_error")))
                    )
        return View(
            system=_text(body.get("system") or ""),
            prompt=_text(messages[0]["content"]),
            tools=[t["name"] for t in body.get("tools") or []],
            results=results,
            turn=sum(1 for m in messages if m["role"] == "assistant"),
            model=body["model"],
        )

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            content.append(
                {"type": "tool_use", "id": self.new_id("toolu"), "name": call.name, "input": call.arguments}
            )
        return {
            "id": self.new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens,
                "cache_read_input_tokens": reply.cache_read_tokens,
                "cache_creation_input_tokens": 0,
            },
        }
