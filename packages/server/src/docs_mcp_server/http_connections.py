"""HTTP connections that slow, idle or too many clients cannot use to tie up the server.

uvicorn closes a kept-alive connection that stays idle after a response, but it has no deadline for
receiving a request: a connection that never sends anything, sends its headers a byte at a time
or trickles its body stays open for as long as the client likes, and nothing bounds how many there
are. :func:`guarded_protocol` returns uvicorn's HTTP/1.1 protocol (h11) with what is missing:

- the request's headers must be complete within ``header_timeout`` of the connection opening or
  of the previous response ending, and its body within ``body_timeout`` of the headers; when time
  is up the client gets ``408 Request Timeout`` (silence if it had sent nothing) and the connection
  is closed;
- at ``max_connections`` open connections (counting those the early responder still holds for
  uvicorn, :func:`waiting_for_takeover`), a new connection from a client (peer address) that held
  fewer connections than another takes the place of one of that other client's: the one open
  longest that is only waiting for a request (kept alive between requests, or still sending its
  request, which then gets ``503``) or lingers after its error answer; the client holding the most
  loses first. A client opening
  connections by the thousand is refused (its own are not closed for it) while others still get in
  (probe: 1,100 connections from one address sending their headers a byte a second, reopened as they
  were refused; another client was refused 91 times out of 92 in 10 s, now 0 out of 65). Otherwise
  the new connection is answered ``503`` and closed once its client has read it;
- a response its client does not read (the connection's buffers full, nothing taken) for
  ``send_timeout`` closes the connection: the request is no longer in flight, so its session can
  be ended (:mod:`docs_mcp_server.http_sessions`). (Probe: a client that pipelined 3,000 searches on
  one connection and read nothing kept its session busy, and a newcomer refused, for good.)
- a request whose line and headers exceed 16 KiB is refused with ``400`` however it arrives: h11
  enforces its limit only on a request still incomplete, so headers of any size that arrive in one
  write would pass;
- a chunked body whose chunks carry fewer than :data:`MIN_CHUNK_BYTES` bytes on average, past its
  first :data:`FREE_CHUNKS`, is refused with ``400`` saying so: h11 reads each chunk for about 5
  µs whatever it holds, and a read of 256 KiB is parsed in one go, so a few clients sending bodies
  a byte per chunk held the event loop for a quarter of a second at a time (probe: three such
  4 MiB bodies made ``/healthz`` wait 3.4 s, against 5 ms under three clients searching
  back to back; a 4 MiB body took 24 s of the server's CPU).

It also turns Nagle's algorithm off on every connection. asyncio does that only for sockets created
with ``IPPROTO_TCP`` as their protocol, which ``socket.create_server`` does not pass; with Nagle on,
a response written in two parts (headers, then body) waits for the client's delayed ACK of the
first, which costs every request after the first on a kept-alive connection about 40 ms.

(An MCP event stream is unaffected: its request is complete, only the response is long.)
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from docs_mcp_server.http_early import BUSY_RESPONSE, MAX_HEADER_BYTES, plain_response
from docs_mcp_server.logs import Throttled, log
from docs_mcp_server.options import HttpLimits

_HEADERS, _BODY = "headers", "body"
_REFUSAL_LOG_SECONDS = 10.0  # at most one warning per this many seconds while connections are refused
_WAITING = "docs_mcp_waiting_for_takeover"  # attribute of uvicorn's server state
_CLIENTS = "docs_mcp_connections_by_client"  # attribute of uvicorn's server state: address -> connections
_EVICTED = "docs_mcp_connections_closing"  # attribute of uvicorn's server state: closed to make room
_LINGER_SECONDS = 2.0  # after an error answer, input is read and dropped this long so the answer arrives

_TIMEOUT_RESPONSE = plain_response(b"408 Request Timeout", b"The request was not received in time.\n")
_STOPPING_RESPONSE = plain_response(
    b"503 Service Unavailable", b"The server is stopping; send the request again.\n"
)
FREE_CHUNKS = 1024  # chunks any chunked body may arrive in, whatever their size ...
MIN_CHUNK_BYTES = 256  # ... beyond them, the bytes a chunk must carry on average
_TINY_CHUNKS = (
    f"The request body arrives in chunks of fewer than {MIN_CHUNK_BYTES} bytes on average; send it "
    "with Content-Length, or in larger chunks.\n"
).encode()


class _HeadCappedConnection(h11.Connection):
    """An h11 connection that refuses a request head over :data:`MAX_HEADER_BYTES` even when it
    arrived complete, a request that gives both ``Transfer-Encoding`` and ``Content-Length``
    (uvicorn answers the ``RemoteProtocolError`` with 400 and closes), and a chunked body of tiny
    chunks (answered with :data:`_TINY_CHUNKS` by the protocol, which reads :attr:`refusal`).

    h11 reads such a body by its chunks; a proxy in front that reads it by its length would see
    another request where this server sees a body (request smuggling), so the request is refused,
    as RFC 9112 allows, rather than guessed at."""

    refusal: bytes | None = None  # the answer to the request refused, when it is not uvicorn's
    chunks = 0  # chunks of the request's body so far
    _body_bytes = 0

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Data):
            self._body_bytes += len(event.data)
            if event.chunk_start:
                self.chunks += 1
                if self.chunks > FREE_CHUNKS and self._body_bytes < MIN_CHUNK_BYTES * self.chunks:
                    self.refusal = _TINY_CHUNKS
                    raise h11.RemoteProtocolError("a body of tiny chunks", error_status_hint=400)
        elif isinstance(event, h11.Request):
            self.chunks = self._body_bytes = 0
            size = (
                len(event.method)
                + len(event.target)
                + sum(len(name) + len(value) + 4 for name, value in event.headers.raw_items())
            )
            if size > MAX_HEADER_BYTES:
                raise h11.RemoteProtocolError("request headers are too large", error_status_hint=431)
            names = {name for name, _ in event.headers}
            if b"transfer-encoding" in names and b"content-length" in names:
                raise h11.RemoteProtocolError(
                    "a request may not give both Transfer-Encoding and Content-Length", error_status_hint=400
                )
        return event


class _GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with request read deadlines and a cap on open connections."""

    limits: HttpLimits = HttpLimits()
    _refusals = Throttled(_REFUSAL_LOG_SECONDS)
    _eviction_reports = Throttled(_REFUSAL_LOG_SECONDS)
    _evictions = 0  # since the last log line about them

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _HeadCappedConnection(h11.SERVER, MAX_HEADER_BYTES)
        self._phase: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._received_in_phase = False
        self._closing = False  # answered with an error: what the client still sends is dropped
        self._evicted = False  # closed to make room for a new connection
        self._stall: asyncio.TimerHandle | None = None  # the send deadline while the client reads nothing
        self._address = "unknown"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        _no_delay(transport)
        self._address = str(self.client[0]) if self.client else "unknown"
        by_client = _by_client(self.server_state)
        by_client.setdefault(self._address, {})[self] = None
        state = self.server_state
        open_now = len(self.connections) + getattr(state, _WAITING, 0) - getattr(state, _EVICTED, 0)
        if open_now > self.limits.max_connections:
            victim = self._victim(by_client)
            if victim is None:
                self._warn_refused()
                self._answer_and_close(BUSY_RESPONSE)
                return
            victim._make_room(self._address, len(by_client.get(victim._address, ())))
        self._follow_request()

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        self._received_in_phase = True
        super().data_received(data)
        self._follow_request()

    def send_400_response(self, msg: str) -> None:
        refusal = self.conn.refusal
        if refusal is None:
            super().send_400_response(msg)
            return
        log(
            logging.INFO,
            "refused a request body of tiny chunks",
            client=self._address,
            chunks=self.conn.chunks,
        )
        self._answer_and_close(plain_response(b"400 Bad Request", refusal))

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.SEND_BODY:
            # answered before its body was read (413, 4xx): the rest of the body is worth nothing,
            # so the connection is closed once the client has read the answer, not at the body's
            # deadline
            self._answer_and_close(None)
            return
        self._follow_request()

    def shutdown(self) -> None:
        """At a stop, a request whose body is still arriving is answered ``503`` at once: its
        handler would wait for the body until the stop's time for requests in flight was up, be
        cancelled then (uvicorn logs an error), and its client get ``500``."""
        if self._phase == _BODY and not self._closing and not (self.cycle and self.cycle.response_started):
            self._answer_and_close(_STOPPING_RESPONSE)
            return
        super().shutdown()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.limits.send_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_stall()

    def _cancel_stall(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _stalled(self) -> None:
        self._stall = None
        log(
            logging.INFO,
            "closed a connection whose client stopped reading its response",
            client=f"{self.client[0]}:{self.client[1]}" if self.client else None,
            seconds=self.limits.send_timeout,
        )
        self.transport.abort()  # what is buffered for it will never be read

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self._cancel_stall()
        by_client = _by_client(self.server_state)
        mine = by_client.get(self._address)
        if mine is not None:
            mine.pop(self, None)
            if not mine:
                del by_client[self._address]
        if self._evicted:
            self._evicted = False
            setattr(self.server_state, _EVICTED, getattr(self.server_state, _EVICTED, 0) - 1)
        super().connection_lost(exc)

    # -- fair shares ---------------------------------------------------------------------------------

    def _waiting(self) -> bool:
        """Whether this connection is only waiting for (the rest of) a request, nothing being answered
        on it, or has had its error answer and lingers: closing it costs its client a reconnection
        and no answer."""
        if self._evicted or self.transport.is_closing():
            return False
        return self._closing or self._phase is not None

    def _victim(self, by_client: dict[str, dict[_GuardedH11Protocol, None]]) -> _GuardedH11Protocol | None:
        """The connection to close for this new one: of a client holding more connections than this
        one's client had, the waiting connection open longest (the client holding the most first);
        None when there is none (the new connection is then refused)."""
        had = len(by_client.get(self._address, ())) - 1
        others = [connections for address, connections in by_client.items() if address != self._address]
        for connections in sorted(others, key=len, reverse=True):
            if len(connections) <= had:
                break
            for connection in connections:  # oldest first
                if connection._waiting():
                    return connection
        return None

    def _make_room(self, new_client: str, held: int) -> None:
        """Close this waiting connection for a new one (``503`` if part of a request had arrived)."""
        self._evicted = True
        setattr(self.server_state, _EVICTED, getattr(self.server_state, _EVICTED, 0) + 1)
        if not self._closing and (self._received_in_phase or self._phase == _BODY):
            self.transport.write(BUSY_RESPONSE)
        self._closing = True
        self._cancel_deadline()
        self.transport.close()
        cls = _GuardedH11Protocol
        cls._evictions += 1
        if cls._eviction_reports.due():
            log(
                logging.INFO,
                "connections at the limit: closed the longest waiting connection of the client holding"
                " the most, to admit a new one",
                client=self._address,
                client_connections=held,
                new_client=new_client,
                max_connections=self.limits.max_connections,
                closed_since_last_report=cls._evictions,
            )
            cls._evictions = 0

    # -- deadlines ---------------------------------------------------------------------------------

    def _follow_request(self) -> None:
        """Arm the deadline of the part of a request the client owes now (none while it owes nothing)."""
        state = self.conn.their_state
        phase = _HEADERS if state is h11.IDLE else _BODY if state is h11.SEND_BODY else None
        if phase == self._phase or self._closing or self.transport.is_closing():
            return
        self._cancel_deadline()
        self._phase = phase
        self._received_in_phase = False
        if phase is not None:
            seconds = self.limits.header_timeout if phase == _HEADERS else self.limits.body_timeout
            self._deadline = self.loop.call_later(seconds, self._time_up, phase)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _time_up(self, phase: str) -> None:
        self._deadline = None
        if self._closing or self.transport.is_closing():
            return
        if phase == _HEADERS and not self._received_in_phase:
            self.transport.close()  # an idle connection: nothing to answer
            return
        log(
            logging.INFO,
            "closed a connection that was too slow to send its request",
            client=f"{self.client[0]}:{self.client[1]}" if self.client else None,
            waiting_for=phase,
            seconds=self.limits.header_timeout if phase == _HEADERS else self.limits.body_timeout,
        )
        started = self.cycle is not None and self.cycle.response_started
        self._answer_and_close(None if started else _TIMEOUT_RESPONSE)

    def _answer_and_close(self, answer: bytes | None) -> None:
        """Send ``answer``, end output, and close once the client has read it: closing at once
        while its request is still arriving would reset the connection and lose the answer."""
        self._closing = True
        self._cancel_deadline()
        if answer is not None:
            self.transport.write(answer)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_LINGER_SECONDS, self.transport.close)

    @classmethod
    def _warn_refused(cls) -> None:
        cls._refusals.log(
            logging.WARNING,
            "refusing connections: too many are open",
            max_connections=cls.limits.max_connections,
        )


def _no_delay(transport: asyncio.Transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # the connection is already gone
            pass


def _by_client(server_state: object) -> dict[str, dict[_GuardedH11Protocol, None]]:
    """The open connections of each client address, oldest first (kept on uvicorn's server state)."""
    table = getattr(server_state, _CLIENTS, None)
    if table is None:
        table = {}
        setattr(server_state, _CLIENTS, table)
    return table


def waiting_for_takeover(server_state: object, change: int) -> None:
    """Count ``change`` more (or fewer) connections that uvicorn has yet to take over from the
    early responder: they hold slots of the connection limit meanwhile."""
    setattr(server_state, _WAITING, getattr(server_state, _WAITING, 0) + change)


def guarded_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """The HTTP protocol class for uvicorn (``Config(http=...)``) enforcing ``limits``."""
    return type("GuardedH11Protocol", (_GuardedH11Protocol,), {"limits": limits})


_OUT_OF_RESOURCES = "socket.accept() out of system resource"  # asyncio's message


def quiet_descriptor_exhaustion(loop: asyncio.AbstractEventLoop) -> None:
    """Report the event loop's failures to accept for want of file descriptors once every
    :data:`_REFUSAL_LOG_SECONDS`, as a warning; other loop errors as before.

    CPython's accept loop (3.11) reports that failure once per connection waiting in the backlog
    (uvicorn's holds 2048), again each time the listener is readable: under a flood of connections
    beyond the open-file limit, tens of thousands of error records a second (probe: ``ulimit -n
    200``, 400 idle connections: 38,000 records in 5 seconds)."""
    previous = loop.get_exception_handler()
    reports = Throttled(_REFUSAL_LOG_SECONDS)

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != _OUT_OF_RESOURCES:
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        if reports.due():
            exc = context.get("exception")
            error = getattr(exc, "strerror", None) or str(exc)
            log(
                logging.WARNING, "out of file descriptors: new connections wait until some close", error=error
            )

    loop.set_exception_handler(handler)
