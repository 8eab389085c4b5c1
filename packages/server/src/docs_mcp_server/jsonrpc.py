"""The answer JSON-RPC 2.0 prescribes for a message a server cannot accept.

Every MCP message is a JSON-RPC 2.0 object. A server that receives something else must not stay
silent when the sender may be waiting for an answer:

- text that is not JSON gets ``-32700`` (Parse error);
- JSON that is not an acceptable message gets ``-32600`` (Invalid Request): a ``"jsonrpc"`` other
  than ``"2.0"``, a ``"method"`` that is not a string, ``"params"`` that are not an object, an
  ``"id"`` that is not a string or an integer (MCP also rules out ``null``), a batch (an array:
  MCP does not use them), anything but an object;
- a malformed *response* (``"result"``/``"error"`` without ``"method"``) is never answered.

The error carries the request's ``id`` when one can be recovered (from the parsed object, or by
scanning the text of one that could not be parsed, as with objects nested too deeply for a
recursive parser), and ``null`` otherwise, as the specification says.

:func:`screen` is the one check both transports (stdio and HTTP) put every incoming message through
before the MCP SDK sees it, so that both answer the same message the same way.

Standard library only at import time: the stdio transport uses this module before the MCP SDK has
finished importing (only :func:`screen` imports the SDK, when first called).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from docs_mcp_server.logs import log

LOGGED_EXCERPT_CHARS = 200  # of a rejected message, in the warning that logs it
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_BATCH_REASON = "batches are not supported; send each message by itself"
# a JSON string (to its closing quote, or to the end of an unterminated one) or a bracket; possessive,
# so that scanning any text is linear in its length
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|[{}\[\]]', re.DOTALL)
_KEY_SEPARATOR = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
_DECODER = json.JSONDecoder()


def is_request_id(value: Any) -> bool:
    """Whether ``value`` is a valid MCP request id: a string or an integer (not a boolean, not null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response (``request_id`` None gives ``"id": null``)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Rejection:
    """What to send back for a message that was not accepted, and why (for the log).

    ``answer`` is one error response, a list of them (for a batch), or None when JSON-RPC wants
    no answer (a malformed response from the client).
    """

    answer: dict[str, Any] | list[dict[str, Any]] | None
    code: int
    request_id: Any
    reason: str

    def log(self, message: str | bytes) -> None:
        """Log the rejection with the start of the ``message`` it answers, as both transports do."""
        head = message[:LOGGED_EXCERPT_CHARS]  # a line read over stdio, or an HTTP request's body
        excerpt = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head.rstrip("\n")
        log(
            logging.WARNING,
            "rejected a malformed JSON-RPC message",
            code=self.code,
            id=self.request_id,
            reason=self.reason,
            excerpt=excerpt,
        )


def screen(text: str | bytes) -> tuple[Any, Rejection | None]:
    """``(message, None)`` when the SDK accepts ``text`` as a JSON-RPC message (parsed as the SDK's
    ``JSONRPCMessage``), else ``(None, rejection)``.

    Beyond what the SDK refuses, a notification carrying an ``"id"`` is refused (the SDK would
    silently drop it, leaving a client that expects an answer waiting).
    """
    from mcp.types import JSONRPCNotification, jsonrpc_message_adapter
    from pydantic import ValidationError

    if text.lstrip()[:1] in ("[", b"["):
        return None, _reject_batch_text(text)
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        if isinstance(text, bytes):
            try:
                text.decode("utf-8")
            except UnicodeDecodeError as bad:
                return None, not_utf8(text, bad)
        errors = exc.errors(include_url=False, include_input=False)
        json_problem = next((e["msg"] for e in errors if e["type"] == "json_invalid"), None)
        detail = "; ".join(sorted({e["msg"] for e in errors})) or None
        decoded = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
        return None, reject(decoded, json_problem, detail)
    carries_id = b'"id"' in text if isinstance(text, bytes) else '"id"' in text
    if isinstance(message, JSONRPCNotification) and carries_id:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and "id" in parsed:
            return None, reject_message(parsed)
    return message, None


def _reject_batch_text(text: str | bytes) -> Rejection:
    """A batch is refused whatever it holds, without the SDK's parser (which took 300 MB to read
    the two million items of a 4 MB batch)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as bad:
            return not_utf8(text, bad)
    return reject(text)


def not_utf8(data: bytes, error: UnicodeDecodeError) -> Rejection:
    """The rejection of ``data``, a message that is not UTF-8 (JSON text exchanged between systems
    must be): a parse error naming the first bad byte, with the request's id when it can be read.
    Both transports refuse it rather than read a replacement character in place of the bytes: the
    client learns that it sent something else than it meant (a query or a chunk id with its bytes
    replaced matches nothing, or something else)."""
    request_id = top_level_id(data.decode("utf-8", errors="replace"))
    bad = data[error.start : error.start + 1].hex()
    return _parse_error(
        request_id,
        f"the message is not valid UTF-8 (byte 0x{bad} at offset {error.start}); encode it as UTF-8",
    )


def reject(text: str, json_problem: str | None = None, detail: str | None = None) -> Rejection:
    """The rejection of ``text``, a line that is not an acceptable JSON-RPC message.

    ``json_problem`` is set when a stricter JSON parser than Python's refused the text (unpaired
    surrogate escapes, nesting deeper than it allows): that is a parse error even if
    :func:`json.loads` reads it. ``detail`` is any other explanation to fall back on.
    """
    try:
        message = json.loads(text)
    except RecursionError:
        return _parse_error(top_level_id(text), "the message nests arrays or objects too deeply")
    except ValueError as exc:
        return _parse_error(top_level_id(text), _describe(str(exc)))
    if json_problem is not None:
        request_id = message.get("id") if isinstance(message, dict) else None
        return _parse_error(request_id if is_request_id(request_id) else None, _describe(json_problem))
    return reject_message(message, detail)


def reject_message(message: Any, detail: str | None = None) -> Rejection:
    """The rejection of a parsed message (an envelope problem of :func:`envelope_problem`, a batch, ...)."""
    if isinstance(message, list):
        return _reject_batch(message)
    if not isinstance(message, dict):
        return _invalid(None, "a message must be a JSON object")
    request_id = message.get("id")
    request_id = request_id if is_request_id(request_id) else None
    if "method" not in message and ("result" in message or "error" in message):
        return Rejection(None, INVALID_REQUEST, request_id, "a malformed response was ignored")
    return _invalid(request_id, envelope_problem(message) or detail or "not a valid JSON-RPC 2.0 message")


def envelope_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with a request or notification object's envelope, or None."""
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be exactly "2.0"'
    if "method" not in message:
        return 'a request needs a "method" member'
    if not isinstance(message["method"], str):
        return 'the "method" member must be a string'
    if "id" in message and not is_request_id(message["id"]):
        return 'the "id" member must be a string or an integer (not null, a fraction, an object, an array or a boolean)'
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return 'the "params" member must be an object'
    return None


def top_level_id(text: str) -> Any:
    """The ``"id"`` of the top-level object in ``text`` if it is a valid request id, else None.

    Reads the text without parsing it as a whole (so it works on text too deeply nested, or too
    broken, for a parser); linear in the length of the text.
    """
    if not text.lstrip().startswith("{"):
        return None
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first in "{[":
            depth += 1
        elif first in "}]":
            depth -= 1
        elif depth == 1 and token == '"id"':
            separator = _KEY_SEPARATOR.match(text, match.end())
            if separator is None:
                continue  # a value "id", not the key
            start = separator.end()
            if start >= len(text) or text[start] not in '"-0123456789':
                return None  # null, true, an object ...: not a valid id
            try:
                value, _ = _DECODER.raw_decode(text, start)
            except ValueError:
                return None
            return value if is_request_id(value) else None
    return None


def duplicate_id(request_id: Any) -> Rejection:
    """The rejection of a request whose id is that of a request still in flight on its session."""
    return _invalid(
        request_id,
        f"the id {json.dumps(request_id)} is already used by a request in flight on this session;"
        " give each request an id of its own",
    )


def too_long(request_id: Any, reason: str) -> Rejection:
    """The rejection of a message longer than the transport accepts (``request_id`` read from its start)."""
    return _invalid(request_id if is_request_id(request_id) else None, reason)


def _describe(json_problem: str) -> str:
    if "integer string conversion" in json_problem:  # Python's own advice is no use to a client
        digits = re.search(r"value has (\d+) digits", json_problem)
        return (
            f"a number in the message has {digits.group(1) if digits else 'more than 4,300'} digits,"
            " more than the 4,300 this server reads; send it as a string"
        )
    if "recursion limit" in json_problem:
        return f"the message nests arrays or objects too deeply ({json_problem})"
    if "escape" in json_problem or "surrogate" in json_problem:
        return f"a string is not valid Unicode: an unpaired surrogate escape such as \\ud800 ({json_problem})"
    return f"the message is not valid JSON ({json_problem})"


def _parse_error(request_id: Any, reason: str) -> Rejection:
    return Rejection(
        error_response(request_id, PARSE_ERROR, f"Parse error: {reason}"), PARSE_ERROR, request_id, reason
    )


def _invalid(request_id: Any, reason: str) -> Rejection:
    return Rejection(
        error_response(request_id, INVALID_REQUEST, f"Invalid Request: {reason}"),
        INVALID_REQUEST,
        request_id,
        reason,
    )


def _reject_batch(items: list[Any]) -> Rejection:
    """One error per distinct request id in the batch, and one with ``"id": null`` for all the
    items that have none (notifications get none): an answer per item made ``[1,1,1,...]`` (4 MB,
    two million items) take 272 MB of answer and 2 GB of memory to write."""
    if not items:
        return _invalid(None, "an empty batch")
    answers = []
    seen: set[tuple[str, Any]] = set()
    without_id = False
    for item in items:
        if isinstance(item, dict) and "method" not in item and ("result" in item or "error" in item):
            continue  # responses get no answer
        request_id = item.get("id") if isinstance(item, dict) else None
        if not is_request_id(request_id):
            without_id = without_id or not (isinstance(item, dict) and "id" not in item and "method" in item)
            continue
        key = (type(request_id).__name__, request_id)
        if key not in seen:
            seen.add(key)
            answers.append(_batch_error(request_id))
    if without_id:
        answers.append(_batch_error(None))
    return Rejection(answers or None, INVALID_REQUEST, None, _BATCH_REASON)


def _batch_error(request_id: Any) -> dict[str, Any]:
    return error_response(request_id, INVALID_REQUEST, f"Invalid Request: {_BATCH_REASON}")
