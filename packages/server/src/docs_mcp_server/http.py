"""Serving an index over MCP streamable HTTP (``POST /mcp``) with uvicorn.

The MCP SDK's Starlette app handles ``/mcp`` (stateful sessions with SSE-framed answers by default,
one throw-away transport per request answered with plain JSON with ``stateless=True``, a request
body limit), wrapped by :class:`~docs_mcp_server.http_middleware.DocsHttpMiddleware` (health, headers,
CORS, auth, routing, logs; Host/Origin checks against DNS rebinding when bound to loopback). uvicorn
serves it with the connection limits of :mod:`docs_mcp_server.http_connections` (and the session
limits of :mod:`docs_mcp_server.http_sessions`), shuts down
gracefully, and takes over the connections an
:class:`~docs_mcp_server.http_early.EarlyResponder` held while it was being imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from docs_mcp_server import http_checks
from docs_mcp_server.app import DocsMcpApp
from docs_mcp_server.http_early import MCP_PATH, EarlyResponder, allow_open_files, bind_socket, server_url
from docs_mcp_server.http_middleware import DEFAULT_MAX_BODY_BYTES, DocsHttpMiddleware, Drain
from docs_mcp_server.http_sessions import SessionBudget
from docs_mcp_server.logs import log
from docs_mcp_server.options import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, KEEP_ALIVE_SECONDS, HttpLimits
from docs_mcp_server.stop_signals import STOP_SIGNALS

if TYPE_CHECKING:
    from docs_mcp_server.workers import Worker


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
        # a backstop: SessionBudget shares out max_sessions, making room for a newcomer by ending an
        # idle session, and the SDK counts an ended session until its task has wound down
        max_sessions=2 * limits.max_sessions,
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
        sessions=None if stateless else SessionBudget(limits, app.server.session_manager),
    )


class _UvicornServer(uvicorn.Server):
    """uvicorn that shuts down gracefully on SIGINT/SIGTERM and then exits normally (no re-raise)."""

    def __init__(
        self,
        config: uvicorn.Config,
        drain: Drain,
        *,
        handle_signals: bool,
        early: EarlyResponder | None = None,
    ) -> None:
        super().__init__(config)
        self.handle_signals = handle_signals
        self.drain = drain
        self.early = early
        from sse_starlette.sse import AppStatus

        AppStatus.disable_automatic_graceful_drain()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Take the connections the early responder held, start serving, then serve each of them
        with what had been read of it (their requests are answered as if uvicorn had read them).

        The responder stops before uvicorn listens (connections arriving meanwhile wait in the
        backlog), and the connections it held count against the connection limit until uvicorn
        has them: a connection accepted first must not take a slot that a held one has."""
        from docs_mcp_server.http_connections import quiet_descriptor_exhaustion, waiting_for_takeover

        quiet_descriptor_exhaustion(asyncio.get_running_loop())
        early, self.early = self.early, None
        held = [] if early is None else await asyncio.to_thread(early.hand_over)
        waiting_for_takeover(self.server_state, len(held))
        await super().startup(sockets)
        if not self.started:
            for connection in held:
                connection.sock.close()
            return
        loop = asyncio.get_running_loop()
        config = self.config
        protocol_class: Any = config.http_protocol_class  # made as uvicorn's own startup makes it
        state = self.server_state

        def taken() -> None:  # the slot a held connection kept becomes the connection's own
            waiting_for_takeover(state, -1)

        for connection in held:
            made: list[_Replayed] = []

            def protocol(data: bytes = connection.data, made: list[_Replayed] = made) -> asyncio.Protocol:
                inner = protocol_class(config=config, server_state=state, app_state=self.lifespan.state)
                made.append(_Replayed(inner, data, taken))
                return made[-1]

            try:
                await loop.connect_accepted_socket(protocol, connection.sock)
            except OSError as exc:  # the client has gone meanwhile
                log(logging.DEBUG, "a held connection closed before uvicorn took it", error=str(exc))
                connection.sock.close()
            if not (made and made[0].counted):
                taken()
        if held:
            log(logging.DEBUG, "connections taken over from the early responder", count=len(held))

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

        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _Replayed(asyncio.Protocol):
    """uvicorn's protocol for a connection it takes over, fed first with the bytes already read."""

    def __init__(self, inner: Any, data: bytes, taken: Callable[[], None]) -> None:
        self.inner = inner
        self.data = data
        self.taken = taken  # called as uvicorn counts the connection among its own
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.counted = True
        self.taken()
        self.inner.connection_made(transport)
        data, self.data = self.data, b""
        if data:
            self.inner.data_received(data)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


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
    early: EarlyResponder | None = None,
) -> tuple[socket.socket, _UvicornServer]:
    """The bound socket (a worker's: the one it was given; ``listening``: one bound before the
    heavy imports; ``early``: the one its responder serves, whose connections uvicorn takes over)
    and the uvicorn server for ``app`` (shared by both ways to serve)."""
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
    if early is not None:
        sock = early.listener
    elif listening is not None:
        sock = listening
    else:
        sock = worker.socket() if worker is not None else bind_socket(host, port)
    if early is None:  # else raised before the early responder started
        allow_open_files(limits.max_connections)
    config = _uvicorn_config(asgi, graceful_timeout, limits)
    return sock, _UvicornServer(config, asgi.drain, handle_signals=handle_signals, early=early)


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
    early: EarlyResponder | None = None,
) -> None:
    """Serve ``app`` over HTTP until SIGINT/SIGTERM (blocking); in-flight requests finish first.

    ``worker``: this process is one of several started by :func:`~docs_mcp_server.workers.supervise`
    and serves the socket it was given. ``listening``: a socket already bound to ``host:port``
    (the command line binds it before importing the MCP SDK, so clients can connect at once);
    ``early``: the responder serving such a socket meanwhile, whose connections uvicorn takes over."""
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
        early=early,
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
    early: EarlyResponder | None = None,
) -> AsyncIterator[HttpServer]:
    """Run the HTTP server in the current event loop for the duration of the ``async with`` block
    (``early``: serve the socket of this responder, and take over its connections).

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
        early=early,
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
