"""Scripted model turns for the fake LLM servers (the OpenAI and Anthropic fakes share them).

A :class:`Script` plays one scenario: it is chosen by a marker string found in the user prompt, and
its steps are picked by the number of assistant turns already in the conversation the client sent.
That keeps the fakes stateless per request, so a client that retries after a fault gets the same
step again. Each step is a function of a :class:`View` (what a model would see: system prompt,
prompt, offered tools, the tool results so far) returning a :class:`Reply`: text and tool calls.

Usage::

    script = Script("[retry-policy]", [
        call_tool("search_docs", {"query": "retry backoff"}),
        lambda view: Reply(calls=[ToolCallSpec(view.tool("get_doc"), {"chunk_id": first_hit(view)})]),
        answer("The first retry waits 500 ms."),
    ])
    script.fail(turn=0, times=4, status=529)     # the first request is overloaded 4 times

Helpers return steps that degrade gracefully: :func:`call_tool` calls the offered tool whose name
ends with the given suffix and, when none is offered (a run without the docs server), answers
``fallback`` instead.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RawJson:
    """JSON text a fake sends as it is, where a value would be encoded (what a model may write but
    ``json.dumps`` cannot produce, such as arguments nested 100,000 deep)."""

    text: str


@dataclass(frozen=True)
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | RawJson


@dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: Sequence[ToolCallSpec] = ()
    input_tokens: int = 1000
    output_tokens: int = 100
    cache_read_tokens: int = 0


@dataclass(frozen=True)
class ToolResultView:
    name: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class View:
    system: str
    prompt: str
    tools: Sequence[str]
    results: Sequence[ToolResultView]
    turn: int
    model: str

    def tool(self, suffix: str) -> str | None:
        """The offered tool named ``suffix`` or ending with ``_suffix`` (``search_docs`` finds
        ``mcp__docs-mcp__search_docs`` and ``mcp__docs-mcp__acme_search_docs``)."""
        return next((name for name in self.tools if name == suffix or name.endswith("_" + suffix)), None)

    def last(self, suffix: str) -> ToolResultView | None:
        """The latest result of the tool ending with ``suffix``."""
        for result in reversed(self.results):
            if result.name == suffix or result.name.endswith("_" + suffix):
                return result
        return None


Step = Callable[[View], Reply]


@dataclass(frozen=True)
class Fault:
    """An HTTP error answered instead of a step (``retry-after-ms: 1`` keeps SDK retries quick)."""

    status: int = 529
    message: str = "Overloaded"
    kind: str = "overloaded_error"
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})


class Script:
    def __init__(self, marker: str, steps: Sequence[Step], *, repeat_last: bool = False) -> None:
        self.marker = marker
        self.steps = list(steps)
        self.repeat_last = repeat_last
        self._faults: dict[int, deque[Fault]] = {}
        self._lock = threading.Lock()
        self.requests = 0

    def fail(self, *, turn: int, times: int = 1, fault: Fault | None = None) -> Script:
        with self._lock:
            self._faults.setdefault(turn, deque()).extend([fault or Fault()] * times)
        return self

    def next_fault(self, turn: int) -> Fault | None:
        with self._lock:
            self.requests += 1
            queue = self._faults.get(turn)
            return queue.popleft() if queue else None

    def step(self, view: View) -> Reply:
        if view.turn < len(self.steps):
            return self.steps[view.turn](view)
        if self.repeat_last and self.steps:
            return self.steps[-1](view)
        return Reply(text=f"(the script for {self.marker} has no step {view.turn})")


def answer(text: str) -> Step:
    return lambda view: Reply(text=text)


def call_tool(suffix: str, arguments: dict[str, Any], *, fallback: str = "I could not look that up.") -> Step:
    def step(view: View) -> Reply:
        name = view.tool(suffix)
        if name is None:
            return Reply(text=fallback)
        return Reply(calls=[ToolCallSpec(name, arguments)])

    return step


def first_hit(view: View) -> dict[str, Any] | None:
    """The first hit of the latest ``search_docs`` result (parsed from its JSON text)."""
    result = view.last("search_docs")
    if result is None or result.is_error:
        return None
    try:
        hits = json.loads(result.text).get("hits") or []
    except (ValueError, AttributeError):
        return None
    return hits[0] if hits else None


def script_for(scripts: Sequence[Script], prompt: str) -> Script | None:
    return next((s for s in scripts if s.marker in prompt), None)
