"""Serving an index over MCP stdio: JSON-RPC lines on stdin/stdout.

:class:`StdioWire` takes over file descriptors 0 and 1 for the protocol (stray output from libraries
is redirected to stderr so it can never corrupt the stream), reads lines in a background thread and
feeds them to the MCP SDK. It can be started *before* the SDK is imported: with an
:class:`~docs_mcp_server.handshake.EarlyHandshake` it answers the client's opening request at once,
then replays it into the SDK once that is running and drops the SDK's duplicate answer.

Every line is checked before the SDK sees it: one that is not an acceptable JSON-RPC message (not
JSON, nested too deeply, a batch, a wrong ``"jsonrpc"``, an id that is null or an object, ...) is
answered here with the error JSON-RPC 2.0 prescribes (see :mod:`docs_mcp_server.jsonrpc`), logged at
WARNING and dropped, so one bad message never ends the session or leaves a client waiting.

At end of input, and on SIGINT/SIGTERM, requests already received are answered first (bounded by
a grace period); then the SDK winds down and the process exits with status 0. A client that closes
the server's stdout (a broken pipe) has gone: the session ends at once, with one log line and
status 0, and answers still being computed are dropped.

A client that stops reading does not make the server buffer without bound: input is read only
while fewer than :data:`MAX_IN_FLIGHT` requests await their answer and less than
:data:`MAX_PENDING_OUTPUT_BYTES` of answers wait to be written. A request whose id is that
of a request still in flight is answered with ``-32600`` (two answers would carry one id). A line
longer than :data:`MAX_LINE_BYTES` (the HTTP body limit) is answered with ``-32600`` (its id when the start of
the line shows one) as soon as it passes the limit, and skipped without being held in memory; the
session goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import signal
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, cast

from docs_mcp_server import jsonrpc
from docs_mcp_server.handshake import EarlyHandshake
from docs_mcp_server.logs import log
from docs_mcp_server.stdio_frames import early_message, id_key, response_id, takes_at_once
from docs_mcp_server.stop_signals import STOP_SIGNALS

if TYPE_CHECKING:
    from docs_mcp_server.app import DocsMcpApp
    from docs_mcp_server.early_tools import EarlyTools

_EOF = None
MAX_LINE_BYTES = 4 * 1024 * 1024  # as an HTTP request body
MAX_IN_FLIGHT = 64  # requests read and not yet answered, before input is paused
MAX_PENDING_OUTPUT_BYTES = 16 * 1024 * 1024  # answers waiting for the client to read them
MAX_QUEUED_LINES = 16  # lines read and not yet taken by the SDK
_SKIP_CHUNK_BYTES = 64 * 1024


class StdioWire:
    """The protocol's ownership of stdin/stdout for one stdio server."""

    def __init__(
        self,
        early: EarlyHandshake | None = None,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        early_tools: EarlyTools | None = None,
    ) -> None:
        """``early_tools`` answers tool calls that arrive after an early opening answer and before
        the SDK runs (:mod:`docs_mcp_server.early_tools`)."""
        self._early = early
        self._early_tools = early_tools
        self._sdk_running = False
        self._stdin_fd = stdin_fd
        self._stdout_fd = stdout_fd
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._waker: Callable[[], None] | None = None  # wakes an async reader waiting for a line
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._room = threading.Condition(self._state_lock)  # signalled when input may be read again
        self._pending_output = 0  # bytes of answers being written or waiting for the writer
        self._gone = False  # the client closed our stdout: the session is over
        self._on_gone: Callable[[], None] | None = None
        self._opening_seen = False
        self._swallow: dict[tuple[str, Any], dict[str, Any]] = {}
        self._in_flight: set[tuple[str, Any]] = set()
        self._idle = threading.Event()
        self._idle.set()
        self._early_calls = 0  # tool calls being answered early, on the reader thread
        self._saved: dict[int, int] = {}
        self._reader: threading.Thread | None = None
        self._in: IO[bytes] | None = None
        self._out: IO[bytes] | None = None
        self.early_answered = False
        self.grace_seconds = 10.0

    # -- fd plumbing ---------------------------------------------------------------------------

    def start(self) -> None:
        """Claim the descriptors and start reading (idempotent)."""
        if self._reader is not None:
            return
        in_fd = os.dup(self._stdin_fd)
        out_fd = os.dup(self._stdout_fd)
        self._saved = {self._stdin_fd: os.dup(self._stdin_fd), self._stdout_fd: os.dup(self._stdout_fd)}
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(devnull, self._stdin_fd)
        finally:
            os.close(devnull)
        os.dup2(2, self._stdout_fd)
        self._in = os.fdopen(in_fd, "rb")
        self._out = os.fdopen(out_fd, "wb")
        self._reader = threading.Thread(target=self._read_loop, name="docs-mcp-stdin", daemon=True)
        self._reader.start()

    def restore(self) -> None:
        """Give fds 0 and 1 back to whoever had them (for servers run inside a larger process)."""
        for fd, saved in self._saved.items():
            try:
                os.dup2(saved, fd)
            finally:
                os.close(saved)
        self._saved = {}

    def stop_input(self) -> None:
        """Behave as if stdin reached end of file (used on SIGINT/SIGTERM)."""
        self._put(_EOF)

    @property
    def client_gone(self) -> bool:
        return self._gone

    def pending_output_bytes(self) -> int:
        """Bytes of answers being written and not yet taken by the client."""
        return self._pending_output

    def _put(self, raw: bytes | None) -> None:
        self._lines.put(raw)
        with self._state_lock:
            waker, self._waker = self._waker, None
        if waker is not None:
            try:
                waker()
            except RuntimeError:  # the event loop has already closed: nobody is waiting
                pass

    def poll_line(self, waker: Callable[[], None]) -> tuple[bool, bytes | None]:
        """Non-blocking: ``(True, line)`` when a line is queued, else ``(False, None)`` after
        arranging for ``waker`` to be called (once, from the reader thread) when one arrives."""
        with self._state_lock:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                self._waker = waker
                return False, None
            self._room.notify_all()
            return True, line

    def cancel_wake(self) -> None:
        with self._state_lock:
            self._waker = None

    # -- reading -------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        assert self._in is not None
        try:
            while self._wait_for_room():
                raw = self._in.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    self._refuse_long_line(raw)
                    continue
                if not raw.strip():
                    continue
                if not self._opening_seen:
                    self._consider_opening(raw)
                elif self._answers_early(
                    raw
                ):  # before the SDK can see the line: one answer reaches the client
                    continue  # a search answered early is not run again by the SDK
                self._put(raw)
        except (OSError, ValueError) as exc:
            log(logging.WARNING, "stdin read failed", error=str(exc))
        self._put(_EOF)

    def _wait_for_room(self) -> bool:
        """Block while the client is behind on reading answers; False once the session is over."""
        with self._room:
            paused = False
            while not self._gone and (
                len(self._in_flight) >= MAX_IN_FLIGHT
                or self._pending_output >= MAX_PENDING_OUTPUT_BYTES
                or self._lines.qsize() >= MAX_QUEUED_LINES
            ):
                if not paused:
                    paused = True
                    log(
                        logging.DEBUG,
                        "input paused until the client reads its answers",
                        in_flight=len(self._in_flight),
                        pending_output_bytes=self._pending_output,
                    )
                self._room.wait()
            return not self._gone

    def _refuse_long_line(self, start: bytes) -> None:
        """Answer a line over :data:`MAX_LINE_BYTES` at once, then skip the rest of it (never held
        whole): a line that never ends (``/dev/zero`` as input) is refused all the same."""
        assert self._in is not None
        text = start[: 64 * 1024].decode("utf-8", errors="replace")
        request_id = jsonrpc.top_level_id(text)
        reason = f"the message is longer than {MAX_LINE_BYTES} bytes, the limit (4 MiB)"
        self.reject(text, jsonrpc.too_long(request_id, reason))
        while True:
            chunk = self._in.readline(_SKIP_CHUNK_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                break

    def _consider_opening(self, raw: bytes) -> None:
        message = early_message(raw)
        if (
            not isinstance(message, dict)
            or "method" not in message
            or not jsonrpc.is_request_id(message.get("id"))
        ):
            return  # notifications and junk do not open a connection
        self._opening_seen = True
        if self._early is None:
            return
        response = self._early.answer(message)
        if response is None:
            return
        with self._state_lock:
            self._swallow[id_key(message["id"])] = response
        self._write_line(json.dumps(response, ensure_ascii=False, separators=(",", ":")))
        self.early_answered = True

    def _answers_early(self, raw: bytes) -> bool:
        """:meth:`_consider_tool` while the SDK is not running yet (after an early opening answer)."""
        if self._early_tools is None or not self.early_answered or self._sdk_running:
            return False
        with self._room:
            self._early_calls += 1
        try:
            return self._consider_tool(raw)
        finally:
            with self._room:
                self._early_calls -= 1
                self._room.notify_all()

    def wait_early_calls(self, timeout: float) -> bool:
        """Block while a tool call is being answered early (or ``timeout``); True when none is.

        The server imports the MCP SDK only after this, so that the import (pure Python, half a
        second of the interpreter's lock) does not slow the first search down."""
        with self._room:
            return self._room.wait_for(lambda: self._early_calls == 0, timeout)

    def _consider_tool(self, raw: bytes) -> bool:
        """Answer a tool request early when :class:`EarlyTools` can; True when it was (the SDK
        must not see it: run twice, a search would embed its query twice, which an embeddings API
        charges; a tool list replayed kept its id in flight after the client had its answer, so a
        ping reusing the id was refused, or answered with the SDK's tool list)."""
        message = early_message(raw)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        if not jsonrpc.is_request_id(message.get("id")) or self._early_tools is None:
            return False
        with self._state_lock:  # an early answer with this id awaits the SDK's duplicate, which
            if id_key(message["id"]) in self._swallow:  # would take this one's place: the SDK
                return False  # answers it (a tool list after initialize, both id 1: two lists)
        response = self._early_tools.answer(message)
        if response is None:
            return False
        self._write_line(json.dumps(response, ensure_ascii=False, separators=(",", ":")))
        log(
            logging.DEBUG,
            "answered before the MCP SDK was ready",
            method=message.get("method"),
            id=message["id"],
        )
        return True

    # -- writing -------------------------------------------------------------------------------

    def _write_line(self, text: str, *, only_if_ready: bool = False) -> bool:
        """Write ``text`` and a newline with as few system calls as the pipe allows (one, unless
        the client reads slower than the server writes): no buffer to copy into and flush.

        With ``only_if_ready``, write only what cannot block (no more than the pipe takes at once,
        into a pipe with room, no other write under way) and return False, having written nothing,
        otherwise: the event loop writes so, for a write blocked on a client that stopped reading
        kept it from ever seeing SIGTERM."""
        assert self._out is not None
        data = memoryview((text + "\n").encode("utf-8"))
        fd = self._out.fileno()
        if not only_if_ready:
            with self._write_lock:
                self._write_all(fd, data)
            return True
        if not self._write_lock.acquire(blocking=False):
            return False
        try:
            if not takes_at_once(fd, len(data)):
                return False
            self._write_all(fd, data)
            return True
        finally:
            self._write_lock.release()

    def _write_all(self, fd: int, data: memoryview) -> None:
        """Write ``data`` (the write lock held)."""
        size = len(data)
        with self._room:
            self._pending_output += size
        try:
            while data and not self._gone:
                data = data[os.write(fd, data) :]
        except OSError as exc:  # EPIPE, ECONNRESET ...: the client closed its end
            self._client_left(exc)
        finally:
            with self._room:
                self._pending_output -= size
                self._room.notify_all()

    def hold_output(self, size: int) -> None:
        """Count ``size`` bytes of an answer waiting for the writer against the output limit
        (``-size`` once it no longer waits): small answers tried inline left the in-flight count."""
        with self._room:
            self._pending_output += size
            self._room.notify_all()

    def _client_left(self, exc: OSError) -> None:
        """End the session: the client can no longer read answers (logged once)."""
        with self._room:
            first, self._gone = not self._gone, True
            self._room.notify_all()
            on_gone = self._on_gone
        if not first:
            return
        log(
            logging.INFO,
            "the client closed the connection; ending the session",
            error=exc.strerror or str(exc),
        )
        self._put(_EOF)
        if on_gone is not None:
            on_gone()

    def send(self, text: str, *, only_if_ready: bool = False) -> bool:
        """Write one serialised message, unless it duplicates an answer given early; False when
        ``only_if_ready`` and the write could block (see :meth:`_write_line`), nothing written."""
        answered_id = response_id(text)
        if answered_id is not None:
            self._answered(answered_id)
            with self._state_lock:
                early = self._swallow.pop(answered_id, None)
            if early is not None:
                message = json.loads(text)
                if message != early:
                    log(
                        logging.WARNING,
                        "early handshake answer differs from the MCP SDK's",
                        early=early,
                        sdk=message,
                    )
                return True
        return self._write_line(text, only_if_ready=only_if_ready)

    # -- checking what the SDK gets -------------------------------------------------------------

    def admit(self, message: Any) -> jsonrpc.Rejection | None:
        """Note a message the SDK accepted (a request in flight, a cancelled one answered), or
        return the rejection of a request whose id is that of a request still in flight: both
        answers would carry the one id (as over HTTP, :mod:`docs_mcp_server.http_checks`)."""
        from mcp.types import JSONRPCNotification, JSONRPCRequest

        if isinstance(message, JSONRPCRequest):
            key = id_key(message.id)
            with self._state_lock:
                if key in self._in_flight:
                    return jsonrpc.duplicate_id(message.id)
                self._in_flight.add(key)
                self._idle.clear()
        elif (
            isinstance(message, JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and message.params
        ):
            request_id = message.params.get("requestId")
            if jsonrpc.is_request_id(request_id):
                self._answered(id_key(request_id))  # a cancelled request gets no answer
        return None

    def id_freed(self, message: Any, timeout: float) -> bool:
        """Whether the id of ``message``, refused as that of a request in flight, is free now: at
        once, or once the SDK has answered the opening request replayed after its early answer
        (bounded by ``timeout``). The client had that answer and may reuse the id: a ping with
        the id of ``server/discover`` was refused as reusing an id in flight."""
        request_id = getattr(message, "id", None)
        if not jsonrpc.is_request_id(request_id):
            return False
        key = id_key(request_id)
        with self._room:
            if key in self._swallow:
                self._room.wait_for(lambda: key not in self._in_flight, timeout)
            return key not in self._in_flight

    def reject(self, text: str, rejection: jsonrpc.Rejection) -> None:
        """Answer a message that is not handed to the SDK (when JSON-RPC wants an answer) and log it."""
        rejection.log(text)
        if rejection.answer is None:
            return
        if isinstance(rejection.answer, dict) and rejection.request_id is not None:
            with self._state_lock:
                early = self._swallow.pop(id_key(rejection.request_id), None)
            if early is not None:
                return  # the client already has the early answer for this id
        self._write_line(json.dumps(rejection.answer, ensure_ascii=False, separators=(",", ":")))

    # -- in-flight requests (for a graceful stop) ----------------------------------------------

    def _answered(self, key: tuple[str, Any]) -> None:
        with self._room:
            self._in_flight.discard(key)
            self._room.notify_all()
            if not self._in_flight:
                self._idle.set()

    def wait_idle(self, timeout: float) -> bool:
        """Block until every forwarded request has been answered (or ``timeout``); True when idle."""
        return self._idle.wait(timeout)

    # -- serving -------------------------------------------------------------------------------

    async def serve(self, server: Any, *, grace_seconds: float = 10.0, handle_signals: bool = True) -> None:
        """Run ``server`` (an MCP ``Server``) on the wire until end of input or a signal."""
        import anyio

        self.start()
        self._sdk_running = True  # from now on the SDK answers tool calls as they come
        self.grace_seconds = grace_seconds
        from docs_mcp_server.stdio_streams import WireMessages, WireSink

        writer = anyio.CapacityLimiter(1)  # one thread writes what the event loop cannot at once
        messages = WireMessages(self, writer)
        sink = WireSink(self, writer)
        loop = asyncio.get_running_loop()
        async with anyio.create_task_group() as tg:
            scope = tg.cancel_scope

            def end_session() -> None:
                try:
                    loop.call_soon_threadsafe(scope.cancel)
                except RuntimeError:  # the loop has closed: the session is over anyway
                    pass

            with self._room:
                self._on_gone = end_session
            if self._gone:
                end_session()
            if handle_signals and threading.current_thread() is threading.main_thread():
                tg.start_soon(self._watch_signals, tg.cancel_scope, grace_seconds)
            await server.run(cast(Any, messages), cast(Any, sink), server.create_initialization_options())
            tg.cancel_scope.cancel()

    async def _watch_signals(self, scope: Any, grace_seconds: float) -> None:
        import anyio

        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async for signum in signals:
                log(logging.INFO, "shutting down stdio server", signal=signal.Signals(signum).name)
                break
        # Let requests already received finish (bounded), then behave as if stdin had closed.
        if not await anyio.to_thread.run_sync(self.wait_idle, grace_seconds, abandon_on_cancel=True):
            log(
                logging.WARNING,
                "requests still running at shutdown were cancelled",
                grace_seconds=grace_seconds,
            )
        self.stop_input()
        with anyio.move_on_after(grace_seconds):
            await anyio.sleep_forever()
        scope.cancel()


def run_stdio(app: DocsMcpApp, *, warm_up: bool = True) -> None:
    """Serve ``app`` on this process's stdin/stdout until end of input or SIGINT/SIGTERM (blocking)."""
    import anyio

    wire = StdioWire()
    if warm_up:
        app.engine.start_warm_up()
    try:
        anyio.run(lambda: wire.serve(app.server))
    finally:
        wire.restore()
