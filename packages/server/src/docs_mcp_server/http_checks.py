"""Checks on a ``/mcp`` request before the MCP SDK sees it.

- **DNS rebinding.** A server bound to a loopback address (any of 127.0.0.0/8, ``::1``,
  ``localhost``) answers only requests whose ``Host`` names a loopback address (421 otherwise) and
  whose ``Origin``, when present, is a loopback origin (403 otherwise); host names are compared
  case-insensitively and a trailing dot is ignored. The SDK's own check is turned off: it knows
  only three spellings of loopback and compares them case-sensitively.
- **The JSON-RPC screen.** The body of ``POST /mcp`` goes through :func:`docs_mcp_server.jsonrpc.screen`,
  the check the stdio transport uses, so a malformed message gets the same answer over both:
  ``-32700``/``-32600`` with the request's id when it can be read, as one line of JSON (status 400).
- **A protocol version this server speaks.** A request whose ``MCP-Protocol-Version`` header names
  no version the server knows gets 400 with ``-32600`` naming the header and the versions it
  accepts (the SDK would take it for a 2026-07-28 request and ask for that revision's
  ``params._meta`` envelope, which misleads a client that only sent a wrong header).
- **One request per id on a session.** A request whose id is that of a request still in flight on
  the same session is refused with ``-32600`` (status 400): the SDK routes each answer by its id
  (as a string), so the earlier request would never get its answer and would hold its connection
  and its session open for good.
- **An answer the SDK abandoned is finished.** A session ended (``DELETE /mcp``, a client
  closing it, or :mod:`docs_mcp_server.http_sessions` ending it to admit another) while one of its
  requests was in flight: the SDK had sent the 200 of an event stream and then returned without
  ending it, so the client read a truncated response. The request now
  gets an event with a JSON-RPC error carrying its id (:data:`SESSION_ENDED`), and the stream ends.
- **A JSON body.** A ``POST /mcp`` whose ``Content-Type`` is not ``application/json`` (or is missing)
  gets 415 with a JSON-RPC error, as the original server answers it (the SDK's 400 was the bare
  text ``Invalid Content-Type header``, with no content type, which a JSON-RPC client cannot read).
- **No session for a refused opening.** A request without ``mcp-session-id`` that is refused (any
  status from 400) established no session, so its answer carries no session id.
"""

from __future__ import annotations

import ipaddress
import json
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Message, Receive, Scope, Send

from docs_mcp_server import jsonrpc
from docs_mcp_server.handshake import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

SESSION_HEADER = b"mcp-session-id"
PROTOCOL_VERSION_HEADER = b"mcp-protocol-version"


def is_loopback_name(name: str) -> bool:
    """Whether ``name`` (a host name or an IP address, brackets allowed) is a loopback address."""
    name = name.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _host_name(host: str) -> str:
    """The name part of a ``Host`` header value (``[::1]:8000`` → ``::1``, ``localhost.:80`` →
    ``localhost.``)."""
    host = host.strip()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else ""
    name, colon, port = host.rpartition(":")
    return name if colon and (port.isdigit() or not port) else host


def rebinding_refusal(scope: Scope) -> tuple[int, str] | None:
    """``(status, message)`` when a request to a loopback-bound server names a foreign Host or
    Origin, else None."""
    headers = {key: value for key, value in scope.get("headers", []) if key in (b"host", b"origin")}
    host = headers.get(b"host", b"").decode("latin-1")
    if not host or not is_loopback_name(_host_name(host)):
        return 421, f"Invalid Host header: {host!r} is not a loopback address"
    origin = headers.get(b"origin")
    if origin is not None:
        text = origin.decode("latin-1")
        try:
            parts = urlsplit(text)
            name = parts.hostname or ""
        except ValueError:
            parts, name = None, ""
        if parts is None or parts.scheme not in ("http", "https") or not is_loopback_name(name):
            return 403, f"Invalid Origin header: {text!r} is not a loopback origin"
    return None


def protocol_version_refusal(scope: Scope) -> str | None:
    """Why a request's ``MCP-Protocol-Version`` header is refused (a version this server does not
    speak), or None (no such header, or a known version)."""
    value = next((v for k, v in scope.get("headers", []) if k == PROTOCOL_VERSION_HEADER), None)
    if value is None:
        return None
    version = value.decode("latin-1")
    known = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
    if version in known:
        return None
    return (
        f"Bad Request: unsupported MCP-Protocol-Version header {json.dumps(version)}; send the version"
        f" initialize agreed on, one of {', '.join(known)}"
    )


def _declared_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


UNSUPPORTED_MEDIA_TYPE = "Unsupported Media Type: Content-Type must be application/json"


def json_body(scope: Scope) -> bool:
    """Whether the request says its body is JSON (``Content-Type: application/json``, any parameters)."""
    for key, value in scope.get("headers", []):
        if key == b"content-type":
            return value.split(b";")[0].strip().lower() == b"application/json"
    return False


def json_type_lowered(scope: Scope) -> Scope:
    """``scope`` with the media type of its ``Content-Type`` in lower case. Media types are
    case-insensitive, and :func:`json_body` reads them so, but the MCP SDK compares them as written:
    a body sent as ``Application/JSON`` was refused with 415 after it had been screened as JSON."""
    headers = scope.get("headers", [])
    lowered = []
    for key, value in headers:
        if key == b"content-type":
            media, semicolon, parameters = value.partition(b";")
            value = media.lower() + semicolon + parameters
        lowered.append((key, value))
    return scope if lowered == headers else {**scope, "headers": lowered}


async def screen_body(
    scope: Scope, receive: Receive, limit: int
) -> tuple[Receive | None, Any, jsonrpc.Rejection | None]:
    """Read a ``POST /mcp`` body (at most ``limit`` bytes) and screen it as stdio screens a line.

    Returns a ``receive`` that replays what was read (for the SDK), the message as the SDK parsed
    it (None when the body was not screened or was rejected) and the rejection of a body that is
    not an acceptable message. Bodies the SDK refuses anyway (not JSON by content type, larger
    than ``limit``) are passed on unread or unscreened. ``receive`` is None when the connection
    closed before the body was in (no one is left to answer; the SDK logged it as an error).
    """
    declared = _declared_length(scope)
    if not json_body(scope) or (declared is not None and declared > limit):
        return receive, None, None
    chunks: list[bytes] = []
    size = 0
    more = True
    while more and size <= limit:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect
            return None, None, None
        body = message.get("body", b"")
        chunks.append(body)
        size += len(body)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed: deque[Message] = deque([{"type": "http.request", "body": body, "more_body": more}])

    async def replay() -> Message:
        return replayed.popleft() if replayed else await receive()

    if more:
        return replay, None, None  # too large: the SDK answers 413
    message, rejection = jsonrpc.screen(body)
    if rejection is not None:
        rejection.log(body)
    return replay, message, rejection


SESSION_ENDED = (
    "the session ended (DELETE /mcp, or the server ended it to admit another) while this request"
    " was in flight, so it was not answered;"
    " open a new session and send it again"
)
_ANSWER_MARKS = (b'"result"', b'"error"')  # an event stream that carried the request's answer


class ResponseWatch:
    """The ``send`` of the answer to a ``POST /mcp`` request with id ``request_id``, watched so that
    an event stream that ends, or is abandoned, without the request's answer ends with an error
    event for it (:data:`SESSION_ENDED`) instead of leaving the client waiting for an answer. With
    ``request_id`` None (a ``GET /mcp`` event stream) an abandoned stream is only ended."""

    def __init__(self, send: Send, request_id: Any) -> None:
        self._send = send
        self._request_id = request_id
        self.started = self.ended = self.event_stream = self.answered = False
        self.cut = False  # whether the error event was sent

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.event_stream = any(
                key.lower() == b"content-type" and value.startswith(b"text/event-stream")
                for key, value in message.get("headers", [])
            )
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            self.answered = self.answered or any(mark in body for mark in _ANSWER_MARKS)
            self.ended = not message.get("more_body", False)
            if self.ended:
                message = {**message, "body": self._unanswered() + body}
        await self._send(message)

    async def finish(self) -> bool:
        """End an answer the SDK started and left open (True when there was one to end)."""
        if not self.started or self.ended:
            return False
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        return True

    def _unanswered(self) -> bytes:
        """The error event for a request whose event stream ends without its answer, else ``b""``."""
        if not self.event_stream or self.answered or self._request_id is None:
            return b""
        self.cut = True
        error = jsonrpc.error_response(self._request_id, -32000, SESSION_ENDED)
        return b"event: message\r\ndata: " + json.dumps(error).encode() + b"\r\n\r\n"


class InFlightIds:
    """The ids of the requests in flight on each session, so that no id is in flight twice."""

    def __init__(self) -> None:
        self._held: set[tuple[bytes, str]] = set()

    def claim(self, scope: Scope, message: Any) -> tuple[tuple[bytes, str] | None, jsonrpc.Rejection | None]:
        """Hold the id of ``message`` (a request sent on a session) until :meth:`release`: its key,
        or the rejection of a request whose id is held already. ``(None, None)`` for a message
        without a session id, a notification or a response."""
        session = next((value for key, value in scope.get("headers", []) if key == SESSION_HEADER), None)
        request_id = getattr(message, "id", None)
        if session is None or getattr(message, "method", None) is None or request_id is None:
            return None, None
        key = (session, str(request_id))  # the SDK's own key for the answer's stream
        if key in self._held:
            rejection = jsonrpc.duplicate_id(request_id)
            rejection.log(json.dumps({"id": request_id, "method": message.method}))
            return None, rejection
        self._held.add(key)
        return key, None

    def release(self, key: tuple[bytes, str] | None) -> None:
        if key is not None:
            self._held.discard(key)


def rejection_response(rejection: jsonrpc.Rejection) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The HTTP answer to a screened-out message: 400 with the JSON-RPC error on one line (202 and
    no body for a malformed response, which JSON-RPC never answers)."""
    if rejection.answer is None:
        return 202, [(b"content-length", b"0")], b""
    payload = json.dumps(rejection.answer, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    return 400, headers, payload


def opens_session(scope: Scope) -> bool:
    """Whether a ``/mcp`` request carries no session id (it could only open a session)."""
    return not any(key == SESSION_HEADER for key, _ in scope.get("headers", []))


def without_session_id(headers: list[Any]) -> list[Any]:
    """``headers`` without ``mcp-session-id`` (for the answer to a refused opening)."""
    return [(key, value) for key, value in headers if key.lower() != SESSION_HEADER]


def without_resumption(scope: Scope) -> Scope:
    """``scope`` without its ``Last-Event-ID`` header: this server keeps no events to replay, so an
    event stream a client asks to resume is opened afresh. The MCP SDK answered such a ``GET /mcp``
    (without an event store) with nothing at all, which uvicorn turned into a 500."""
    headers = scope.get("headers", [])
    if not any(key == b"last-event-id" for key, _ in headers):
        return scope
    return {**scope, "headers": [(key, value) for key, value in headers if key != b"last-event-id"]}
