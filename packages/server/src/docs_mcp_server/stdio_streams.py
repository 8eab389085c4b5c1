"""The MCP SDK's read and write streams on a :class:`~docs_mcp_server.stdio.StdioWire`.

:class:`WireMessages` hands the SDK each accepted line, parsed once (the SDK's own stdio transport
would parse it a second time and pass it through a task of its own); :class:`WireSink` writes each
answer as the SDK hands it over: on the event loop when the write cannot block, else in the one
thread that writes (so the loop, which must see SIGTERM, never waits on a client that stopped
reading). At end of input, the answers waiting for that thread are written first (bounded).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from docs_mcp_server import jsonrpc
from docs_mcp_server.logs import log

INLINE_WRITE_CHARS = 16 * 1024
WAITING_ANSWER_BYTES = 16 * 1024  # what an answer waiting for the writer holds besides its text (~11 KB)


class StdioWire(Protocol):
    """What the streams use of :class:`docs_mcp_server.stdio.StdioWire`."""

    grace_seconds: float

    def poll_line(self, waker: Callable[[], None]) -> tuple[bool, bytes | None]: ...
    def cancel_wake(self) -> None: ...
    def wait_idle(self, timeout: float) -> bool: ...
    def reject(self, text: str, rejection: jsonrpc.Rejection) -> None: ...
    def id_freed(self, message: Any, timeout: float) -> bool: ...
    def admit(self, message: Any) -> jsonrpc.Rejection | None: ...
    def send(self, text: str, *, only_if_ready: bool = False) -> bool: ...
    def hold_output(self, size: int) -> None: ...


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class WireMessages:
    """The MCP SDK's read stream: the messages it will accept, each parsed once.

    The SDK's own stdio transport would parse every line a second time and hand it over through a
    task of its own; the wire gives the dispatcher the parsed message directly.
    """

    def __init__(self, wire: StdioWire, writer: Any = None) -> None:
        """``writer``: the limiter of the thread that writes answers (see :class:`WireSink`)."""
        import anyio

        self._wire = wire
        self._done = False
        self._writer = writer or anyio.CapacityLimiter(1)

    def __aiter__(self) -> WireMessages:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def receive(self) -> Any:
        """The next accepted message as the SDK's ``SessionMessage``; ``anyio.EndOfStream`` at the end."""
        import anyio
        from mcp.shared.message import SessionMessage

        if self._done:
            raise anyio.EndOfStream
        while True:
            raw = await self._next_line()
            if raw is None:
                # End of input: answer what was already asked (bounded), then let the SDK wind down.
                if not await anyio.to_thread.run_sync(
                    self._wire.wait_idle, self._wire.grace_seconds, abandon_on_cancel=True
                ):
                    log(
                        logging.WARNING,
                        "requests still running at end of input were cancelled",
                        grace_seconds=self._wire.grace_seconds,
                    )
                with anyio.move_on_after(self._wire.grace_seconds) as waited:
                    async with self._writer:  # its turn comes after the answers waiting to be written
                        pass
                if waited.cancelled_caught:
                    log(
                        logging.WARNING,
                        "answers the client did not read at end of input were dropped",
                        grace_seconds=self._wire.grace_seconds,
                    )
                self._done = True
                raise anyio.EndOfStream
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:  # answered as HTTP answers it: not read with U+FFFD
                await self._reject(raw.decode("utf-8", errors="replace"), jsonrpc.not_utf8(raw, exc))
                continue
            message, rejection = self._accepted(text)
            if rejection is not None and await anyio.to_thread.run_sync(
                self._wire.id_freed, message, self._wire.grace_seconds, abandon_on_cancel=True
            ):
                message, rejection = self._accepted(text)  # its id is free once the SDK has answered
            if rejection is not None:
                await self._reject(text, rejection)
            elif message is not None:
                return SessionMessage(message)

    async def aclose(self) -> None:
        self._done = True

    async def __aenter__(self) -> WireMessages:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _accepted(self, text: str) -> tuple[Any, jsonrpc.Rejection | None]:
        """The parsed message when the SDK gets ``text``, else the rejection of a line it would drop."""
        message, rejection = jsonrpc.screen(text)
        if rejection is None:
            rejection = self._wire.admit(message)  # an id already in flight
        return message, rejection

    async def _reject(self, text: str, rejection: jsonrpc.Rejection) -> None:
        """Answer a rejected line off the event loop (the client may have stopped reading)."""
        import anyio

        await anyio.to_thread.run_sync(
            self._wire.reject, text, rejection, abandon_on_cancel=True, limiter=self._writer
        )

    async def _next_line(self) -> bytes | None:
        """The next line, awaited on the event loop: the reader thread wakes it directly."""
        loop = asyncio.get_running_loop()
        while True:
            arrived: asyncio.Future[None] = loop.create_future()

            def wake(arrived: asyncio.Future[None] = arrived) -> None:
                loop.call_soon_threadsafe(_resolve, arrived)

            ready, raw = self._wire.poll_line(wake)
            if ready:
                return raw
            try:
                await arrived
            finally:
                self._wire.cancel_wake()


NOT_INITIALIZED = (
    "Invalid request parameters: the session is not initialized;"
    " send initialize (then notifications/initialized) before other requests"
)


def _named(message: Any) -> Any:
    """``message``, or the SDK's error for a request sent before ``initialize``, which says only
    "Invalid request parameters" (with empty data), saying so (its code unchanged)."""
    from mcp.types import JSONRPCError

    if isinstance(message, JSONRPCError):
        error = message.error
        if error.code == -32602 and error.message == "Invalid request parameters" and not error.data:
            return message.model_copy(update={"error": error.model_copy(update={"message": NOT_INITIALIZED})})
    return message


class WireSink:
    """The MCP SDK's write stream: each message serialised and written as the SDK hands it over
    (no writer task in between)."""

    def __init__(self, wire: StdioWire, writer: Any = None) -> None:
        """``writer``: a limiter of one thread, for what cannot be written at once (writes take
        turns anyway): threads writing to a client that stopped reading took all 40 of anyio's,
        and the wait for the end of requests at SIGTERM, which needs one, never began."""
        import anyio

        self._wire = wire
        self._closed = False
        self._writer = writer or anyio.CapacityLimiter(1)

    async def send(self, item: Any) -> None:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        text = _named(item.message).model_dump_json(by_alias=True, exclude_unset=True)
        if len(text) <= INLINE_WRITE_CHARS and self._wire.send(text, only_if_ready=True):
            return  # written at once: a thread would only add its hand-over
        # a write that may wait for the client stays off the event loop (which must see SIGTERM),
        # and is given up at the end of the session; while it waits, it counts against the output
        # limit that pauses input (20,000 pings unread grew a server by 220 MB, input never paused)
        waiting = len(text) + WAITING_ANSWER_BYTES
        self._wire.hold_output(waiting)
        try:
            await anyio.to_thread.run_sync(
                self._wire.send, text, abandon_on_cancel=True, limiter=self._writer
            )
        finally:
            self._wire.hold_output(-waiting)

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> WireSink:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
