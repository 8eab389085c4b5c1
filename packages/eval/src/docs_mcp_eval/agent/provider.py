"""What the agent loop needs from a model API, and how API failures are classified.

A provider starts a :class:`Conversation` (system prompt, user prompt, tools); each call of
:meth:`Conversation.next_reply` sends the conversation so far and returns the model's text, its tool
calls and the tokens used; :meth:`Conversation.add_tool_results` appends the answers to those calls.
Two providers implement it: ``openai`` (Chat Completions, any OpenAI-compatible server) and
``anthropic`` (the Messages API).

Failures fall into three kinds:

* :class:`~docs_mcp_eval.errors.AgentProviderError`: nothing can work (key rejected, unknown model,
  no permission): the whole run stops with that message;
* infrastructure failures (overloaded, rate-limited or failing API, network down) that persisted
  through the SDK's retries: the scenario ends and counts as *skipped*, not failed. Their messages
  read ``API Error: ... (Repeated N times)``, which the original's skip rule
  (``/529|overload|API Error.*Repeated/i``) recognises;
* any other rejected request (e.g. HTTP 400): the scenario ends with that error and fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from docs_mcp_eval.agent.pricing import Usage
from docs_mcp_eval.agent.workspace import ToolOutcome, ToolSpec
from docs_mcp_eval.errors import AgentProviderError, ProviderFailure, json_limit

ProviderName = Literal["anthropic", "openai"]
MAX_RETRIES = 3
"""Retries of one model request by the SDK (with backoff, honouring Retry-After) before giving up."""

DEFAULT_MODELS: Mapping[ProviderName, str] = {"anthropic": "claude-opus-4-6", "openai": "gpt-4.1"}
"""The model used when ``--model`` is not given (Anthropic's default is the original's)."""

INFRA_ERROR_PATTERN = re.compile(r"529|overload|API Error.*Repeated", re.IGNORECASE)
_FATAL_STATUSES = {401: "rejected the API key", 403: "refused access", 404: "does not know the model"}


MAX_ARGUMENT_DEPTH = 64
"""Levels of arrays and objects a tool call's arguments may nest: deeper ones (a model's runaway
output) are answered as an error, so that no later step (the history sent back, the results file)
meets them."""
DEEP_ARGUMENTS = f"the arguments nest arrays or objects more than {MAX_ARGUMENT_DEPTH} levels deep; send a flat JSON object"


def too_deep(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (found without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    argument_error: str | None = None
    """Set when the model's arguments were not a JSON object (or one nested too deeply); the call is
    answered with this error."""


@dataclass(frozen=True, kw_only=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    duration_ms: float = 0.0


class Conversation(Protocol):
    async def next_reply(self) -> ModelReply: ...

    def add_tool_results(self, results: Sequence[tuple[ToolCall, ToolOutcome]]) -> None: ...


class ModelProvider(Protocol):
    name: ProviderName
    model: str

    def start(self, *, system: str, prompt: str, tools: Sequence[ToolSpec]) -> Conversation: ...

    async def aclose(self) -> None: ...


def is_infrastructure_error(message: str) -> bool:
    return INFRA_ERROR_PATTERN.search(message) is not None


def classify_status(
    *, provider: ProviderName, base_url: str, model: str, status: int, detail: str, retryable: bool
) -> Exception:
    """The exception for an HTTP error status the SDK gave up on (after its retries if ``retryable``)."""
    if status in _FATAL_STATUSES:
        return AgentProviderError(
            f"the {provider} API at {base_url} {_FATAL_STATUSES[status]} (HTTP {status}, model {model!r}): "
            f"{detail}"
        )
    if retryable:
        return ProviderFailure(
            f"API Error: {status} {detail} (Repeated {MAX_RETRIES + 1} times)", infrastructure=True
        )
    return ProviderFailure(f"API Error: {status} {detail}", infrastructure=False)


def connection_failure(exc: BaseException) -> ProviderFailure:
    detail = str(exc) or type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause):
        detail = f"{detail} ({cause})"
    return ProviderFailure(
        f"API Error: connection failed: {detail} (Repeated {MAX_RETRIES + 1} times)", infrastructure=True
    )


def unreadable_answer(exc: RecursionError | ValueError) -> ProviderFailure | None:
    """The failure of an answer the SDK could not parse (JSON nested past the recursion limit, an
    integer of over 4,300 digits), which ended the whole run in a traceback; ``None`` for another
    ``ValueError``. The scenario fails; the run goes on."""
    if isinstance(exc, ValueError) and "integer string conversion" not in str(exc):
        return None
    return ProviderFailure(
        f"API Error: the answer cannot be read: {json_limit(exc, advice=False)}", infrastructure=False
    )


def is_retryable_status(status: int) -> bool:
    """The statuses both SDKs retry: timeouts, lock conflicts, rate limits and server errors."""
    return status in (408, 409, 429) or status >= 500


def error_detail(body: object, fallback: str) -> str:
    """``type: message`` from an OpenAI or Anthropic error body, else ``fallback``."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
            kind = inner.get("type") or inner.get("code")
            if isinstance(message, str) and message:
                return f"{kind}: {message}" if isinstance(kind, str) and kind else message
    return fallback
