"""The listening socket, bound before the heavy imports, and what answers on it until uvicorn runs.

``docs-mcp-server --transport http`` binds its port before it imports uvicorn and the MCP SDK, so
clients can connect at once; importing them takes longer than opening the index from its derived
files. :class:`EarlyResponder` serves the socket meanwhile, in one thread, with the standard library:

- ``GET``/``HEAD /healthz`` is answered with the body uvicorn will answer
  (:func:`~docs_mcp_server.http_health.health_body`): ``ready`` once the index is open, ``loading``
  before, so a load balancer can send traffic as soon as a search would be answered;
- every other request (``/mcp``, the playground, an unknown path, a request this module is not sure
  how to read) is held: its connection is neither answered nor closed, and what was read of it is
  kept. When uvicorn starts serving the socket it takes each held connection over with those
  bytes (:meth:`EarlyResponder.hand_over`), so nothing a client sent is lost and every request is
  answered by the real application;
- connections beyond ``max_connections`` are answered ``503`` and closed once the client has
  closed its side or :data:`_LINGER_SECONDS` have passed (what it sends meanwhile is read and
  dropped), as uvicorn does. While ``max_connections`` refused connections wait so, no further
  connection is accepted: new ones wait in the kernel's backlog until one of them closes (closing
  them at once would reset them before their client reads the ``503``);
- the connections it keeps never take the process's last :data:`_DESCRIPTOR_RESERVE` file
  descriptors (of its ``RLIMIT_NOFILE``), which the start-up still needs to import modules and
  open the index: beyond that, and for a second after an ``accept`` that found none left, new
  connections wait in the backlog (before, a flood of connections made the start-up fail with
  "Too many open files", the thread retrying ``accept`` and logging a warning in a busy loop).

Every turn of the thread reads what clients sent and sees which closed **before** it accepts, and
accepts a few connections at most: a client that reconnects as fast as it is refused cannot keep
the thread from seeing that a slot has been freed.

A kept-alive connection stays open after its ``/healthz`` answer and is handed over like the rest.
"""

from __future__ import annotations

import errno
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import TYPE_CHECKING, Any

from docs_mcp_server import http_checks
from docs_mcp_server.http_health import HEALTH_PATH, common_headers, json_response_parts
from docs_mcp_server.logs import log

if TYPE_CHECKING:
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.metadata_view import MetadataView
    from docs_mcp_server.options import ServerOptions

MCP_PATH = "/mcp"  # where the MCP endpoint is served
MAX_HEADER_BYTES = 16 * 1024  # h11's and uvicorn's limit on a request head
_SEND_SECONDS = 2.0  # an answer the client does not take in this long closes its connection
_READ_BYTES = 64 * 1024
_LINGER_SECONDS = 2.0  # a refused connection's input is read and dropped this long, then it is closed
_ACCEPTS_PER_TURN = 8  # connections accepted before the thread looks at its open ones again
_DESCRIPTOR_RESERVE = 64  # descriptors left to the rest of the process (imports, the index, models)
_ACCEPT_RETRY_SECONDS = 1.0  # after the process ran out of descriptors, as asyncio waits


def plain_response(status: bytes, text: bytes, extra: bytes = b"") -> bytes:
    """A complete ``text/plain`` answer that closes its connection."""
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
        + extra
        + b"content-length: "
        + str(len(text)).encode()
        + b"\r\n\r\n"
        + text
    )


BUSY_RESPONSE = plain_response(
    b"503 Service Unavailable", b"Too many open connections; retry later.\n", b"retry-after: 1\r\n"
)


def server_url(sock: socket.socket) -> str:
    """``http://host:port/mcp`` for a listening socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def bind_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A listening socket on ``host:port``; port 0 picks a free port. ``reuse_port`` lets other
    sockets of this user listen on the same port (the kernel spreads connections over them).

    A busy port raises ``OSError`` (``EADDRINUSE``) rather than moving to another port: a client
    configured for this one would otherwise talk to whatever holds it.
    """
    try:
        family = socket.getaddrinfo(host, port or None, type=socket.SOCK_STREAM)[0][0]
    except UnicodeError:  # --host $'\xff' (IDNA cannot encode it) ended the server with a traceback
        raise OSError(errno.EINVAL, f"{host!r} is not a host name or address") from None
    try:
        sock = socket.create_server((host, port), family=family, backlog=512, reuse_port=reuse_port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(errno.EADDRINUSE, f"port {port} on {host} is already in use") from exc
        raise
    sock.setblocking(False)
    return sock


@dataclass
class HeldConnection:
    """A connection for uvicorn to take over, and the bytes already read from it (its request, or
    the start of it; empty for a kept-alive connection between requests)."""

    sock: socket.socket
    data: bytes = b""


@dataclass
class _Connection:
    sock: socket.socket
    buffer: bytearray = field(default_factory=bytearray)


@dataclass(frozen=True)
class _HealthRequest:
    method: str
    keep_alive: bool


def read_health_request(head: bytes, *, loopback: bool = False) -> _HealthRequest | None:
    """The ``GET``/``HEAD /healthz`` request whose head (request line and headers, without the blank
    line) is ``head``, or None for anything else, including a request uvicorn would refuse: those
    are left to it. That includes a head over :data:`MAX_HEADER_BYTES` (uvicorn answers 400) and,
    on a ``loopback``-bound server, one naming a foreign Host or Origin, which the application refuses."""
    if len(head) > MAX_HEADER_BYTES:
        return None
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[0] not in (b"GET", b"HEAD") or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        return None
    if parts[1].split(b"?", 1)[0] != HEALTH_PATH.encode():
        return None
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or name.lower() in headers:
            return None  # folded, malformed or repeated: uvicorn decides
        headers[name.lower()] = value.strip()
    if headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers:
        return None  # a body: not a plain health check
    if parts[2] == b"HTTP/1.1" and not headers.get(b"host"):
        return None  # uvicorn answers 400
    if loopback and b"host" in headers and http_checks.rebinding_refusal({"headers": list(headers.items())}):
        return None  # the application answers 421 or 403
    tokens = {token.strip().lower() for token in headers.get(b"connection", b"").split(b",")}
    keep_alive = b"close" not in tokens and (parts[2] == b"HTTP/1.1" or b"keep-alive" in tokens)
    return _HealthRequest(parts[0].decode(), keep_alive)


class EarlyResponder:
    """Answers ``/healthz`` on a listening socket and holds every other connection, in a thread,
    until :meth:`hand_over` (see the module's docstring)."""

    def __init__(
        self,
        sock: socket.socket,
        health: Callable[[], dict[str, Any]],
        header_value: bytes,
        *,
        max_connections: int,
        loopback: bool = False,
    ) -> None:
        self._listener = sock
        self._loopback = loopback  # bound to a loopback address: foreign Host/Origin headers go to the app
        self._health = health
        self._headers = common_headers(header_value)
        self._max_connections = max_connections
        self._selector = selectors.DefaultSelector()
        self._open: dict[int, _Connection] = {}  # being read, or kept alive after an answer
        self._held: list[HeldConnection] = []
        # answered 503: read and dropped until closed, or until the deadline (monotonic seconds)
        self._refused: dict[int, tuple[socket.socket, float]] = {}
        self._accepting = False  # the listener is registered (not while the refused are too many)
        self._descriptors = _descriptor_budget(max_connections)  # sockets this responder may keep
        self._paused_until: float | None = None  # accept found no descriptor: wait until then
        self._wake_read, self._wake_write = socket.socketpair()
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def listener(self) -> socket.socket:
        """The listening socket served."""
        return self._listener

    def start(self) -> None:
        """Serve the socket in a background thread."""
        self._listen(True)
        self._selector.register(self._wake_read, selectors.EVENT_READ, self._wake_read)
        self._thread = threading.Thread(target=self._serve, name="docs-mcp-early-http", daemon=True)
        self._thread.start()

    def hand_over(self) -> list[HeldConnection]:
        """Stop answering and return every open connection with what was read from it, for uvicorn
        to take over (the thread has ended when this returns; it never sleeps or blocks for long:
        at most one answer a client is slow to take, :data:`_SEND_SECONDS`). Once only: later calls
        return nothing."""
        if self._stopping:
            return []
        self._stopping = True
        self._wake_write.send(b"x")
        if self._thread is not None:
            self._thread.join()
        held = self._held + [HeldConnection(c.sock, bytes(c.buffer)) for c in self._open.values()]
        self._open.clear()
        self._held = []
        if self._refused:  # their input is still read and dropped a while, so their 503 arrives
            refused = [sock for sock, _ in self._refused.values()]
            threading.Thread(
                target=_drain_then_close, args=(refused,), name="docs-mcp-refused", daemon=True
            ).start()
        self._refused.clear()
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()
        return held

    def _serve(self) -> None:
        try:
            while not self._stopping:
                events = self._selector.select(self._next_deadline())
                for key, _ in events:  # reads and closes first: they may free a slot
                    if isinstance(key.data, socket.socket):
                        if key.data is not self._wake_read:
                            self._drain(key.data)
                    elif key.data is not None:
                        self._read(key.data)
                self._expire_refused()
                if self._paused_until is not None and time.monotonic() >= self._paused_until:
                    self._paused_until = None
                    self._listen(self._has_room())
                if any(key.data is None for key, _ in events):
                    self._accept()
        except Exception as exc:  # noqa: BLE001 - uvicorn will answer what is held; never lose the thread's connections
            log(logging.ERROR, "the early HTTP responder failed", error=f"{type(exc).__name__}: {exc}")

    def _listen(self, accepting: bool) -> None:
        """Watch the listener for connections, or stop watching it (they wait in the backlog)."""
        if accepting != self._accepting:
            self._accepting = accepting
            if accepting:
                self._selector.register(self._listener, selectors.EVENT_READ, None)
            else:
                self._selector.unregister(self._listener)

    def _has_room(self) -> bool:
        """Whether to accept connections: fewer refused ones than the limit, a descriptor to spare."""
        kept = len(self._open) + len(self._held) + len(self._refused)
        return (
            self._paused_until is None
            and len(self._refused) < self._max_connections
            and kept < self._descriptors
        )

    def _next_deadline(self) -> float | None:
        """Seconds until the first refused connection's deadline or the end of a pause (``None``: none)."""
        deadlines = [deadline for _, deadline in self._refused.values()]
        if self._paused_until is not None:
            deadlines.append(self._paused_until)
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def _expire_refused(self) -> None:
        now = time.monotonic()
        for sock, deadline in list(self._refused.values()):
            if deadline <= now:
                self._close_refused(sock)

    def _accept(self) -> None:
        for _ in range(_ACCEPTS_PER_TURN):
            if self._stopping or not self._accepting:
                return
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors, a connection reset before it was taken ...
                log(logging.WARNING, "accepting a connection failed", error=exc.strerror or str(exc))
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._paused_until = time.monotonic() + _ACCEPT_RETRY_SECONDS
                    self._listen(False)
                return
            sock.setblocking(False)
            if len(self._open) + len(self._held) >= self._max_connections:
                self._refuse(sock)
            else:
                connection = _Connection(sock)
                self._open[sock.fileno()] = connection
                self._selector.register(sock, selectors.EVENT_READ, connection)
            self._listen(self._has_room())

    def _refuse(self, sock: socket.socket) -> None:
        """Answer ``503`` and end output, then read and drop what the client sends until it closes
        (or uvicorn takes over): closing with its request unread would reset the connection, and
        the client would lose the answer."""
        if not self._send(sock, BUSY_RESPONSE):
            sock.close()
            return
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        self._refused[sock.fileno()] = (sock, time.monotonic() + _LINGER_SECONDS)
        self._selector.register(sock, selectors.EVENT_READ, sock)

    def _drain(self, sock: socket.socket) -> None:
        if _client_closed(sock):
            self._close_refused(sock)

    def _close_refused(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        self._refused.pop(sock.fileno(), None)
        sock.close()
        self._listen(self._has_room())

    def _read(self, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(_READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""  # reset by the client: nothing to answer
            connection.buffer.clear()
        if not data:  # the client closed its side: hand over what it sent (uvicorn sees the end too)
            if connection.buffer:
                self._hold(connection)
            else:
                self._forget(connection)
                connection.sock.close()
            return
        connection.buffer += data
        self._answer(connection)

    def _answer(self, connection: _Connection) -> None:
        """Answer the request in the buffer if it is a health check sent on its own; hold the
        connection when it is anything else."""
        end = connection.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(connection.buffer) > MAX_HEADER_BYTES:
                self._hold(connection)  # uvicorn refuses it
            return
        request = read_health_request(bytes(connection.buffer[:end]), loopback=self._loopback)
        if request is None or end + 4 != len(connection.buffer):  # another request, or several
            self._hold(connection)
            return
        started = time.perf_counter()
        connection.buffer.clear()
        status, headers, body = json_response_parts(200, self._health())
        extra = [] if request.keep_alive else [(b"connection", b"close")]
        head = [b"HTTP/1.1 200 OK", b"date: " + formatdate(usegmt=True).encode()]
        head += [name + b": " + value for name, value in headers + self._headers + extra]
        answer = b"\r\n".join(head) + b"\r\n\r\n" + (body if request.method == "GET" else b"")
        sent = self._send(connection.sock, answer)
        if not sent or not request.keep_alive:
            self._forget(connection)
            connection.sock.close()
        log(
            logging.INFO,
            "response",
            method=request.method,
            path=HEALTH_PATH,
            status=status,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            before_uvicorn=True,
        )

    def _send(self, sock: socket.socket, data: bytes) -> bool:
        try:
            sock.settimeout(_SEND_SECONDS)
            sock.sendall(data)
            sock.setblocking(False)
        except OSError:
            return False
        return True

    def _hold(self, connection: _Connection) -> None:
        self._forget(connection)
        self._held.append(HeldConnection(connection.sock, bytes(connection.buffer)))

    def _forget(self, connection: _Connection) -> None:
        self._selector.unregister(connection.sock)
        self._open.pop(connection.sock.fileno(), None)
        self._listen(self._has_room())


def allow_open_files(connections: int) -> None:
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


def _descriptor_budget(max_connections: int) -> int:
    """How many sockets the responder may keep: ``max_connections``, less when the process may
    open too few files to hold them and still start (:data:`_DESCRIPTOR_RESERVE`)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit here (Windows)
        return max_connections
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(1, min(max_connections, soft - _DESCRIPTOR_RESERVE))


def _drain_then_close(socks: list[socket.socket]) -> None:
    """Read and drop what each socket's client sends until it closes its side or
    :data:`_LINGER_SECONDS` have passed, then close them all."""
    deadline = time.monotonic() + _LINGER_SECONDS
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        while selector.get_map() and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if _client_closed(sock):
                    selector.unregister(sock)
    for sock in socks:
        sock.close()


def _client_closed(sock: socket.socket) -> bool:
    """Read and drop what ``sock`` has to read; whether its client has closed its side (or reset it)."""
    try:
        return not sock.recv(_READ_BYTES)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def respond_early(
    sock: socket.socket,
    options: ServerOptions,
    metadata: MetadataView,
    engine: LazyEngine,
    *,
    max_connections: int,
) -> EarlyResponder:
    """Start answering ``/healthz`` on ``sock`` for the server of ``options`` (see the module's docstring)."""
    from docs_mcp_server.http_health import header_value, health_body

    allow_open_files(max_connections)  # before the responder counts the descriptors it may keep
    build = options.build_info()
    responder = EarlyResponder(
        sock,
        lambda: health_body(build, engine, metadata.stats),
        header_value(build),
        max_connections=max_connections,
        loopback=http_checks.is_loopback_name(sock.getsockname()[0]),
    )
    responder.start()
    log(
        logging.INFO,
        "listening; /healthz answers while the server starts",
        url=server_url(sock),
        port=sock.getsockname()[1],
    )
    return responder
