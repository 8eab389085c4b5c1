"""Serving an index over MCP streamable HTTP (``POST /mcp``), with health checks, CORS and auth.

The MCP SDK's Starlette app handles ``/mcp`` (stateful sessions with SSE-framed answers by default,
one throw-away transport per request answered with plain JSON with ``stateless=True``, Host/Origin checks against DNS rebinding when bound to
loopback, a request body limit). :class:`DocsHttpMiddleware` wraps it with what the original server
adds around it: ``GET /healthz`` with build info, a ``DOCS-MCP`` header on every response, permissive
CORS (preflight answered with 204), 404 for other paths, optional bearer-token auth on ``/mcp``,
request logs, and a JSON-RPC 500 body for unexpected failures. With ``playground=True`` it also serves
the web page of :mod:`docs_mcp_server.playground` (and its optional password login) at ``/``, and the
page's ``POST /api/highlight`` behind the same credentials as ``/mcp``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docs_mcp_server import http_checks
from docs_mcp_server.app import DocsMcpApp
from docs_mcp_server.auth import LoginThrottle, bearer_credential, client_address, secret_matches
from docs_mcp_server.http_connections import MCP_PATH, bind_socket, server_url
from docs_mcp_server.logs import log
from docs_mcp_server.options import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, KEEP_ALIVE_SECONDS, HttpLimits
from docs_mcp_server.playground import HIGHLIGHT_PATH

if TYPE_CHECKING:
    from docs_mcp_server.playground import Playground
    from docs_mcp_server.workers import Worker

HEALTH_PATH = "/healthz"
DOCS_MCP_HEADER = "DOCS-MCP"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


def _json_response_parts(status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None):
    payload = json.dumps(body, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    return status, headers + (extra or []), payload


def _jsonrpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": None}


class _Drain:
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
    ) -> None:
        self.inner = inner
        self.loopback = loopback  # bound to a loopback address: refuse foreign Host/Origin headers
        self.max_body_bytes = max_body_bytes
        self.worker = worker
        self.app = app
        self.stateless = stateless
        self.auth_token = auth_token or None
        self.playground = playground
        self.header_value = app.build_info.header_value().encode("latin-1", errors="replace")
        self.drain = _Drain()
        # wrong credentials on /mcp count against the same per-address budget as the login form
        self.throttle = playground.throttle if playground is not None else LoginThrottle()

    def _common_headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"docs-mcp", self.header_value),
            (b"access-control-allow-origin", b"*"),
            (b"access-control-expose-headers", b"DOCS-MCP, Mcp-Session-Id"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
                    *_json_response_parts(500, _jsonrpc_error(-32603, "Internal server error")),
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
            if method in ("GET", "HEAD"):
                await self._respond(send, *_json_response_parts(200, self.health()))
            else:
                await self._respond(
                    send, *_json_response_parts(405, {"error": "Method Not Allowed"}, [(b"allow", b"GET")])
                )
        elif path == MCP_PATH:
            if not await self._admit_mcp(scope, send):
                return
            if method == "GET" and self.stateless:
                # a stateless server pushes nothing: an event stream would only stay open forever
                await self._respond(
                    send,
                    *_json_response_parts(
                        405,
                        _jsonrpc_error(-32000, "Method Not Allowed: a stateless server has no event stream"),
                        [(b"allow", b"POST")],
                    ),
                )
                return
            if method != "POST":
                await self.inner(scope, receive, send)
                return
            self.drain.begin()
            try:
                receive, rejection = await http_checks.screen_body(scope, receive, self.max_body_bytes)
                if rejection is not None:
                    await self._respond(send, *http_checks.rejection_response(rejection))
                    return
                await self.inner(scope, receive, send)
            finally:
                self.drain.end()
        elif self.playground is not None and path == HIGHLIGHT_PATH:
            if await self._admit_mcp(scope, send):  # the page's API needs what /mcp needs
                await self.playground.highlight(receive, send, method)
        elif self.playground is not None and self.playground.serves(path):
            await self.playground(scope, receive, send)
        else:
            await self._respond(send, *_json_response_parts(404, {"error": "Not Found", "path": path}))

    def health(self) -> dict[str, Any]:
        """Build info, and the state and stats of the index generation being served (after a
        reload, the rebuilt one's; before the index is open, those of ``metadata.json`` at start)."""
        served = self.app.engine.served_metadata
        stats = served.stats.model_dump(mode="json") if served is not None else self.app.metadata.stats
        index: dict[str, Any] = {"status": self.app.engine.state, "stats": stats}
        generation = self.app.engine.served_generation
        if generation is not None:
            index["generation"] = generation
        health: dict[str, Any] = {"build": self.app.build_info.to_dict(), "index": index}
        if self.worker is not None:  # one of several processes (--workers): which one answered
            health["worker"] = self.worker
        return health

    async def _admit_mcp(self, scope: Scope, send: Send) -> bool:
        """Whether the request may use ``/mcp``; when not, it has been answered (421 or 403 for a
        foreign Host or Origin on a loopback-bound server, 401 or 429).

        The auth token and the login cookie are checked first: they let a request in even while its
        address is throttled, so another client's wrong guesses from the same address (a proxy, a
        NAT) never lock out valid ones. Only failures are throttled, and so is the playground
        password sent as a bearer credential, which people choose and others could guess.
        """
        if self.loopback:
            refusal = http_checks.rebinding_refusal(scope)
            if refusal is not None:
                status, message = refusal
                log(logging.WARNING, "refused a request naming a foreign host", reason=message)
                await self._respond(send, *_json_response_parts(status, _jsonrpc_error(-32000, message)))
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
                *_json_response_parts(
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
            *_json_response_parts(
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


def build_asgi_app(
    app: DocsMcpApp,
    *,
    stateless: bool = False,
    auth_token: str | None = None,
    host: str = DEFAULT_HTTP_HOST,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    playground: bool = False,
    playground_password: str | None = None,
    limits: HttpLimits | None = None,
    worker: dict[str, int] | None = None,
) -> DocsHttpMiddleware:
    """The complete ASGI application serving ``app`` (its lifespan starts the MCP session manager).

    ``playground`` adds the web page at ``/``; ``playground_password`` puts it and ``/mcp`` behind a
    login; ``limits`` bound the MCP sessions (the connection limits apply in :func:`serve_http`);
    ``worker`` (one of several processes) is shown by ``/healthz``.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    limits = limits or HttpLimits()
    inner = app.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=stateless,
        # a stateless POST carries one answer and nothing else: plain JSON spares the event stream's
        # machinery (about a third of the server's CPU per request)
        json_response=stateless,
        host=host,
        # Host/Origin are checked by DocsHttpMiddleware (every loopback address, case-insensitively)
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max_body_bytes,
        session_idle_timeout=limits.session_idle_timeout,
        max_sessions=limits.max_sessions,
    )
    page = None
    if playground:
        from docs_mcp_server.playground import Playground

        page = Playground(
            app.build_info, password=playground_password, auth_token=auth_token, read_query=app.parse_query
        )
    return DocsHttpMiddleware(
        inner,
        app,
        auth_token=auth_token,
        playground=page,
        stateless=stateless,
        worker=worker,
        loopback=http_checks.is_loopback_name(host),
        max_body_bytes=max_body_bytes,
    )


class _UvicornServer(uvicorn.Server):
    """uvicorn that shuts down gracefully on SIGINT/SIGTERM and then exits normally (no re-raise)."""

    def __init__(self, config: uvicorn.Config, drain: _Drain, *, handle_signals: bool) -> None:
        super().__init__(config)
        self.handle_signals = handle_signals
        self.drain = drain
        from sse_starlette.sse import AppStatus

        AppStatus.disable_automatic_graceful_drain()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        from sse_starlette.sse import AppStatus

        self.drain.stop()
        try:
            await super().shutdown(sockets)
        finally:
            AppStatus.should_exit = False

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if not self.handle_signals or threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, frame: object) -> None:
            log(logging.INFO, "shutting down http server", signal=signal.Signals(signum).name)
            self.handle_exit(signum, None)

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


@dataclass
class HttpServer:
    """A running HTTP server: its URL (``http://host:port/mcp``) and a way to stop it."""

    url: str
    port: int
    uvicorn_server: uvicorn.Server

    def stop(self) -> None:
        self.uvicorn_server.should_exit = True


def _uvicorn_config(asgi: DocsHttpMiddleware, graceful_timeout: float, limits: HttpLimits) -> uvicorn.Config:
    from docs_mcp_server.http_connections import guarded_protocol

    return uvicorn.Config(
        asgi,
        http=guarded_protocol(limits),
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=max(1, round(graceful_timeout)),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        server_header=False,
    )


def _allow_open_files(connections: int) -> None:
    """Raise this process's soft limit on open files, if it is lower, to fit ``connections``
    sockets plus the index's own files (a soft limit of 256 or 1024 is common)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return
    wanted = connections + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (OSError, ValueError):
        target = soft
    if target < wanted:
        log(
            logging.WARNING,
            "the open-file limit is below what --max-connections needs; connections beyond it fail",
            open_files=target,
            max_connections=connections,
        )


def _listen(
    app: DocsMcpApp,
    *,
    host: str,
    port: int,
    stateless: bool,
    auth_token: str | None,
    graceful_timeout: float,
    playground: bool,
    playground_password: str | None,
    handle_signals: bool,
    limits: HttpLimits | None,
    worker: Worker | None = None,
    listening: socket.socket | None = None,
) -> tuple[socket.socket, _UvicornServer]:
    """The bound socket (a worker's: the one it was given; ``listening``: one bound before the
    heavy imports) and the uvicorn server for ``app`` (shared by both ways to serve)."""
    limits = limits or HttpLimits()
    asgi = build_asgi_app(
        app,
        stateless=stateless,
        auth_token=auth_token,
        host=host,
        playground=playground,
        playground_password=playground_password,
        limits=limits,
        worker=worker.describe() if worker is not None else None,
    )
    if listening is not None:
        sock = listening
    else:
        sock = worker.socket() if worker is not None else bind_socket(host, port)
    _allow_open_files(limits.max_connections)
    config = _uvicorn_config(asgi, graceful_timeout, limits)
    return sock, _UvicornServer(config, asgi.drain, handle_signals=handle_signals)


def run_http(
    app: DocsMcpApp,
    *,
    host: str = DEFAULT_HTTP_HOST,
    port: int = DEFAULT_HTTP_PORT,
    stateless: bool = False,
    auth_token: str | None = None,
    graceful_timeout: float = 10.0,
    warm_up: bool = True,
    playground: bool = False,
    playground_password: str | None = None,
    limits: HttpLimits | None = None,
    worker: Worker | None = None,
    listening: socket.socket | None = None,
) -> None:
    """Serve ``app`` over HTTP until SIGINT/SIGTERM (blocking); in-flight requests finish first.

    ``worker``: this process is one of several started by :func:`~docs_mcp_server.workers.supervise`
    and serves the socket it was given. ``listening``: a socket already bound to ``host:port``
    (the command line binds it before importing the MCP SDK, so clients can connect at once)."""
    sock, server = _listen(
        app,
        host=host,
        port=port,
        stateless=stateless,
        auth_token=auth_token,
        graceful_timeout=graceful_timeout,
        playground=playground,
        playground_password=playground_password,
        handle_signals=True,
        limits=limits,
        worker=worker,
        listening=listening,
    )
    log(
        logging.INFO,
        "started http worker" if worker is not None else "started mcp server",
        url=server_url(sock),
        port=sock.getsockname()[1],
        stateless=stateless,
        auth=auth_token is not None,
        playground=server_url(sock).removesuffix(MCP_PATH) + "/" if playground else None,
        **({"worker": worker.id} if worker is not None else {}),
    )
    if warm_up:
        app.engine.start_warm_up()
    try:
        anyio.run(_serve_beating, server, sock, worker)
    finally:
        sock.close()
    log(logging.INFO, "http server stopped")


async def _serve_beating(server: uvicorn.Server, sock: socket.socket, worker: Worker | None) -> None:
    """Serve; a worker's event loop also beats for its supervisor's liveness check meanwhile."""
    async with anyio.create_task_group() as tasks:
        if worker is not None:
            tasks.start_soon(worker.heartbeat)
        await server.serve(sockets=[sock])
        tasks.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def serve_http(
    app: DocsMcpApp,
    *,
    host: str = DEFAULT_HTTP_HOST,
    port: int = 0,
    stateless: bool = False,
    auth_token: str | None = None,
    graceful_timeout: float = 5.0,
    warm_up: bool = True,
    playground: bool = False,
    playground_password: str | None = None,
    limits: HttpLimits | None = None,
) -> AsyncIterator[HttpServer]:
    """Run the HTTP server in the current event loop for the duration of the ``async with`` block.

    Example::

        async with serve_http(create_app("dist/index")) as http:
            async with Client(http.url) as client:
                print(await client.call_tool("search_docs", {"query": "retry"}))
    """
    sock, server = _listen(
        app,
        host=host,
        port=port,
        stateless=stateless,
        auth_token=auth_token,
        graceful_timeout=graceful_timeout,
        playground=playground,
        playground_password=playground_password,
        handle_signals=False,
        limits=limits,
    )
    handle = HttpServer(url=server_url(sock), port=sock.getsockname()[1], uvicorn_server=server)
    if warm_up:
        app.engine.start_warm_up()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.serve(sockets=[sock]))
            try:
                yield handle
            finally:
                handle.stop()
    finally:
        sock.close()
