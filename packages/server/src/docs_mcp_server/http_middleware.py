"""The HTTP layer around the MCP SDK's app: health, headers, CORS, auth, routing and request logs.

:class:`DocsHttpMiddleware` wraps the SDK's Starlette app (which handles ``/mcp``) with what the
original server adds around it: ``GET /healthz`` with build info, a ``DOCS-MCP`` header on every
response, permissive CORS (preflight answered with 204), 404 for other paths, optional bearer-token
auth on ``/mcp``, request logs, and a JSON-RPC 500 body for unexpected failures. With a playground
it also serves the web page of :mod:`docs_mcp_server.playground` (and its optional password login)
at ``/``, and the page's ``POST /api/highlight`` behind the same credentials as ``/mcp``. A stateful
server's sessions are shared out by :class:`~docs_mcp_server.http_sessions.SessionBudget`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import time
from typing import TYPE_CHECKING, Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docs_mcp_server import http_checks
from docs_mcp_server.auth import LoginThrottle, bearer_credential, client_address, secret_matches
from docs_mcp_server.http_early import MCP_PATH
from docs_mcp_server.http_health import (
    HEALTH_PATH,
    common_headers,
    header_value,
    health_body,
    json_response_parts,
)
from docs_mcp_server.http_sessions import REFUSAL_RETRY_SECONDS, SessionBudget, opens_a_session, session_id
from docs_mcp_server.logs import log
from docs_mcp_server.playground import HIGHLIGHT_PATH

if TYPE_CHECKING:
    from docs_mcp_server.app import DocsMcpApp
    from docs_mcp_server.playground import Playground

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


def _jsonrpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": None}


class Drain:
    """Graceful shutdown of SSE-framed responses.

    sse-starlette normally cuts every open event stream as soon as uvicorn starts shutting down,
    which would truncate answers still being computed. The server disables that and instead lets
    in-flight ``POST /mcp`` requests finish; once none is left, the remaining long-lived streams
    (``GET /mcp``) are released.
    """

    def __init__(self) -> None:
        self.in_flight = 0
        self.stopping = False

    def begin(self) -> None:
        self.in_flight += 1

    def end(self) -> None:
        self.in_flight -= 1
        self._release_if_idle()

    def stop(self) -> None:
        self.stopping = True
        self._release_if_idle()

    def _release_if_idle(self) -> None:
        if self.stopping and self.in_flight == 0:
            from sse_starlette.sse import AppStatus

            AppStatus.should_exit = True


def _presents_credentials(scope: Scope) -> bool:
    """Whether the request carries an ``Authorization`` header or a cookie (a credential to check)."""
    return any(key in (b"authorization", b"cookie") for key, _ in scope.get("headers", []))


def _has_host(scope: Scope) -> bool:
    return any(key == b"host" for key, _ in scope.get("headers", []))


class DocsHttpMiddleware:
    """ASGI wrapper adding health, headers, CORS, auth, routing and logs around the MCP app."""

    def __init__(
        self,
        inner: ASGIApp,
        app: DocsMcpApp,
        *,
        auth_token: str | None = None,
        playground: Playground | None = None,
        stateless: bool = False,
        worker: dict[str, int] | None = None,
        loopback: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        sessions: SessionBudget | None = None,
    ) -> None:
        self.inner = inner
        self.sessions = None if stateless else sessions
        self.loopback = loopback  # bound to a loopback address: refuse foreign Host/Origin headers
        self.max_body_bytes = max_body_bytes
        self.worker = worker
        self.app = app
        self.stateless = stateless
        self.auth_token = auth_token or None
        self.playground = playground
        self.header_value = header_value(app.build_info)
        self.drain = Drain()
        self.in_flight_ids = http_checks.InFlightIds()
        # wrong credentials on /mcp count against the same per-address budget as the login form
        self.throttle = playground.throttle if playground is not None else LoginThrottle()

    def _common_headers(self) -> list[tuple[bytes, bytes]]:
        return common_headers(self.header_value)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" and self.sessions is not None:
            async with anyio.create_task_group() as tasks:  # the idle rule runs as long as the server
                tasks.start_soon(self.sessions.run)
                await self.inner(scope, receive, send)
                tasks.cancel_scope.cancel()
            return
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        started = time.perf_counter()
        status_seen: list[int] = []
        log(logging.DEBUG, "request", method=method, path=path)
        opening = path == MCP_PATH and http_checks.opens_session(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_seen.append(message["status"])
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"docs-mcp"]
                if opening and message["status"] >= 400:  # no session was made
                    headers = http_checks.without_session_id(headers)
                message = {**message, "headers": headers + self._common_headers()}
            await send(message)

        try:
            await self._route(scope, receive, send_with_headers, method, path)
        except Exception as exc:  # noqa: BLE001 - last-resort handler: answer 500 instead of dropping the connection
            log(
                logging.ERROR,
                "unhandled error",
                method=method,
                path=path,
                error=f"{type(exc).__name__}: {exc}",
            )
            if not status_seen:
                await self._respond(
                    send_with_headers,
                    *json_response_parts(500, _jsonrpc_error(-32603, "Internal server error")),
                )
        finally:
            log(
                logging.INFO,
                "response",
                method=method,
                path=path,
                status=status_seen[0] if status_seen else None,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    async def _route(self, scope: Scope, receive: Receive, send: Send, method: str, path: str) -> None:
        if method == "OPTIONS":
            await self._preflight(scope, send)
        elif path == HEALTH_PATH:
            # a health checker may send no Host (HTTP/1.0); a browser always does
            if self.loopback and _has_host(scope) and not await self._same_host(scope, send):
                return
            if method in ("GET", "HEAD"):
                await self._respond(send, *json_response_parts(200, self.health()))
            else:
                await self._respond(
                    send, *json_response_parts(405, {"error": "Method Not Allowed"}, [(b"allow", b"GET")])
                )
        elif path == MCP_PATH:
            if not await self._admit_mcp(scope, send):
                return
            unsupported = http_checks.protocol_version_refusal(scope)
            if unsupported is not None:
                await self._respond(send, *json_response_parts(400, _jsonrpc_error(-32600, unsupported)))
                return
            if method == "GET" and self.stateless:
                # a stateless server pushes nothing: an event stream would only stay open forever
                await self._respond(
                    send,
                    *json_response_parts(
                        405,
                        _jsonrpc_error(-32000, "Method Not Allowed: a stateless server has no event stream"),
                        [(b"allow", b"POST")],
                    ),
                )
                return
            if method != "POST":
                # a GET /mcp event stream the SDK leaves open at a stop is ended (the chunked body's
                # last chunk), not cut: a client read an incomplete body, uvicorn logged an error
                watch = http_checks.ResponseWatch(send, None)
                with self._session_request(scope, method):
                    await self.inner(http_checks.without_resumption(scope), receive, watch.send)
                await watch.finish()
                return
            await self._post_mcp(scope, receive, send)
        elif self.playground is not None and path == HIGHLIGHT_PATH:
            if await self._admit_mcp(scope, send):  # the page's API needs what /mcp needs
                await self.playground.highlight(receive, send, method)
        elif self.playground is not None and self.playground.serves(path):
            await self.playground(scope, receive, send)
        else:
            await self._respond(send, *json_response_parts(404, {"error": "Not Found", "path": path}))

    async def _post_mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /mcp`` (its Host, Origin, credentials and protocol version checked): the body is
        screened, its id held while in flight, and a new session admitted before the SDK has it."""
        if not http_checks.json_body(scope):
            error = _jsonrpc_error(-32000, http_checks.UNSUPPORTED_MEDIA_TYPE)
            await self._respond(send, *json_response_parts(415, error))
            return
        scope = http_checks.json_type_lowered(scope)
        self.drain.begin()
        held = opening = None
        try:
            screened, message, rejection = await http_checks.screen_body(scope, receive, self.max_body_bytes)
            if screened is None:
                return  # the client went away before its body was in: no one to answer
            receive = screened
            if rejection is None and not self.stateless:
                held, rejection = self.in_flight_ids.claim(scope, message)
            if rejection is not None:
                await self._respond(send, *http_checks.rejection_response(rejection))
                return
            if self.sessions is not None and opens_a_session(scope, message):
                opening = await self.sessions.admit(client_address(scope))
                if opening is None:
                    await self._too_many_sessions(send)
                    return
                send = functools.partial(opening.send, send)
            watch = http_checks.ResponseWatch(send, getattr(message, "id", None))
            with self._session_request(scope, "POST"):
                await self.inner(scope, receive, watch.send)
            await watch.finish()
            if watch.cut:
                log(logging.WARNING, "a request's session ended while it was in flight", id=message.id)
        finally:
            if opening is not None:
                opening.close()
            self.in_flight_ids.release(held)
            self.drain.end()

    def _session_request(self, scope: Scope, method: str) -> contextlib.AbstractContextManager[None]:
        """While a request on a session is served (see :meth:`SessionBudget.request`)."""
        if self.sessions is None:
            return contextlib.nullcontext()
        return self.sessions.request(session_id(scope), method)

    async def _too_many_sessions(self, send: Send) -> None:
        assert self.sessions is not None
        limit = self.sessions.limits.max_sessions
        message = (
            f"Too many open sessions: all {limit} (--max-sessions) have a request in flight; retry later"
        )
        await self._respond(
            send,
            *json_response_parts(
                503, _jsonrpc_error(-32603, message), [(b"retry-after", str(REFUSAL_RETRY_SECONDS).encode())]
            ),
        )

    def health(self) -> dict[str, Any]:
        """The ``/healthz`` body (:func:`~docs_mcp_server.http_health.health_body`)."""
        return health_body(self.app.build_info, self.app.engine, self.app.metadata.stats, self.worker)

    async def _same_host(self, scope: Scope, send: Send) -> bool:
        """Whether a request to this loopback-bound server names a loopback Host and Origin; when
        not, it has been answered 421 or 403 (a page on another site, by DNS rebinding, reads
        nothing: not the tools, not even the build information of ``/healthz``)."""
        refusal = http_checks.rebinding_refusal(scope)
        if refusal is None:
            return True
        status, message = refusal
        log(logging.WARNING, "refused a request naming a foreign host", reason=message)
        await self._respond(send, *json_response_parts(status, _jsonrpc_error(-32000, message)))
        return False

    async def _admit_mcp(self, scope: Scope, send: Send) -> bool:
        """Whether the request may use ``/mcp``; when not, it has been answered (421 or 403 for a
        foreign Host or Origin on a loopback-bound server, 401 or 429).

        The auth token and the login cookie are checked first: they let a request in even while its
        address is throttled, so another client's wrong guesses from the same address (a proxy, a
        NAT) never lock out valid ones. Only failures are throttled, and so is the playground
        password sent as a bearer credential, which people choose and others could guess.
        """
        if self.loopback and not await self._same_host(scope, send):
            return False
        token_guard = self.auth_token is not None
        page = self.playground if self.playground is not None and self.playground.protects_mcp else None
        if not token_guard and page is None:
            return True
        if token_guard and self._token_matches(scope):
            return True
        if page is not None and page.has_login_cookie(scope):
            return True
        if not _presents_credentials(scope):  # not a guess: asked to authenticate even when throttled
            await self._unauthorized(send)
            return False
        client = client_address(scope)
        wait = self.throttle.retry_after(client)
        if wait > 0:
            seconds = str(max(1, math.ceil(wait))).encode()
            await self._respond(
                send,
                *json_response_parts(
                    429,
                    _jsonrpc_error(-32000, "Too many failed authentications"),
                    [(b"retry-after", seconds)],
                ),
            )
            return False
        if page is not None and page.bearer_is_password(scope):
            return True
        self.throttle.failed(client)
        await self._unauthorized(send)
        return False

    async def _unauthorized(self, send: Send) -> None:
        await self._respond(
            send,
            *json_response_parts(
                401, _jsonrpc_error(-32000, "Unauthorized"), [(b"www-authenticate", b"Bearer")]
            ),
        )

    def _token_matches(self, scope: Scope) -> bool:
        assert self.auth_token is not None
        sent = bearer_credential(scope)
        return sent is not None and secret_matches(sent, self.auth_token)

    async def _preflight(self, scope: Scope, send: Send) -> None:
        requested = next(
            (v for k, v in scope.get("headers", []) if k == b"access-control-request-headers"), b"*"
        )
        headers = [
            (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
            (b"access-control-allow-headers", requested or b"*"),
            (b"access-control-max-age", b"86400"),
            (b"content-length", b"0"),
        ]
        await self._respond(send, 204, headers, b"")

    @staticmethod
    async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
