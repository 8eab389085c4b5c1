"""The stdio wire on real pipes: a message larger than the pipe holds arrives whole; a request
whose id is in flight is refused."""

from __future__ import annotations

import json
import os
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from docs_mcp_server.handshake import EarlyHandshake
from docs_mcp_server.stdio import StdioWire
from docs_mcp_server.stdio_streams import WireMessages
from tests.support.protocol import INITIALIZE

PIPE_BOUND = 30.0


@dataclass
class _Pipes:
    wire: StdioWire
    stdin_write: int  # what the client writes
    stdout_read: int  # what the client reads


@contextmanager
def _piped_wire(**options: Any) -> Iterator[_Pipes]:
    """A started wire between two real pipes (``options`` as :class:`StdioWire` takes them); at the
    end, end of input (its reader stops), the wire restored and the pipes closed."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    wire = StdioWire(stdin_fd=stdin_read, stdout_fd=stdout_write, **options)
    wire.start()
    try:
        yield _Pipes(wire, stdin_write, stdout_read)
    finally:
        os.close(stdin_write)
        wire.restore()
        for fd in (stdin_read, stdout_read, stdout_write):
            os.close(fd)


def test_a_message_larger_than_the_pipe_arrives_whole_while_the_client_reads_slowly() -> None:
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "ünïcödé " * 200_000}})
    with _piped_wire() as pipes:
        writer = threading.Thread(target=pipes.wire.send, args=(message,))
        writer.start()
        received = bytearray()
        while not received.endswith(b"\n"):
            ready, _, _ = select.select([pipes.stdout_read], [], [], PIPE_BOUND)
            assert ready, f"the message stopped after {len(received)} bytes"
            chunk = os.read(pipes.stdout_read, 4096)  # a client that reads a little at a time
            assert chunk, "the wire closed its output"
            received += chunk
        writer.join(PIPE_BOUND)
        assert not writer.is_alive()
        assert bytes(received) == message.encode("utf-8") + b"\n"


class _HeldSearch:
    """Early tools whose search is held until the test lets it go (so the wire is caught mid-call)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def answer(self, message: Any) -> dict[str, Any] | None:
        if message.get("method") != "tools/call":
            return None
        self.started.set()
        assert self.release.wait(PIPE_BOUND)
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [], "isError": False}}


def test_the_sdk_waits_for_a_search_being_answered_early() -> None:
    held = _HeldSearch()
    early = EarlyHandshake("docs-mcp", "1.0")
    with _piped_wire(early=early, early_tools=cast(Any, held)) as pipes:
        try:
            wire = pipes.wire
            assert wire.wait_early_calls(0)  # nothing being answered yet
            os.write(pipes.stdin_write, (json.dumps(INITIALIZE) + "\n").encode())
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_docs"}}
            os.write(pipes.stdin_write, (json.dumps(call) + "\n").encode())
            assert held.started.wait(PIPE_BOUND)
            assert not wire.wait_early_calls(0.01)  # the SDK would import now, beside the search
            held.release.set()
            assert wire.wait_early_calls(PIPE_BOUND)
        finally:
            held.release.set()


def _line(stdout_read: int) -> dict[str, Any]:
    received = bytearray()
    while not received.endswith(b"\n"):
        ready, _, _ = select.select([stdout_read], [], [], PIPE_BOUND)
        assert ready, f"no whole line after {len(received)} bytes"
        received += os.read(stdout_read, 1)
    return json.loads(received)


def test_a_request_whose_id_is_in_flight_is_refused_and_the_id_is_free_again_once_answered() -> None:
    import anyio

    def ping(request_id: Any) -> None:
        os.write(
            pipes.stdin_write,
            (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}) + "\n").encode(),
        )

    async def session() -> None:
        with anyio.fail_after(PIPE_BOUND):
            ping(7)
            assert (await messages.receive()).message.id == 7  # the SDK has it: in flight
            ping(7)
            ping("7")  # the SDK's dispatcher takes "7" for 7 (it keys requests by int("7")), as HTTP does
            ping("seven")  # a string that is no integer is an id of its own
            assert (await messages.receive()).message.id == "seven"
            for refused in (7, "7"):
                refusal = _line(stdout_read)
                assert refusal["id"] == refused and refusal["error"]["code"] == -32600
                assert "already used by a request in flight" in refusal["error"]["message"]
            wire.send(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}))
            assert _line(stdout_read) == {"jsonrpc": "2.0", "id": 7, "result": {}}
            ping(7)  # answered: the id may be used again
            assert (await messages.receive()).message.id == 7

    with _piped_wire() as pipes:
        wire, stdout_read, messages = pipes.wire, pipes.stdout_read, WireMessages(pipes.wire)
        anyio.run(session)


def test_a_request_cancelled_by_its_id_written_as_a_string_is_no_longer_in_flight() -> None:
    """The SDK finds the request a ``notifications/cancelled`` names by ``int(requestId)``, so
    ``"7"`` cancels request ``7`` and it is never answered: it must leave the requests in flight
    (it stayed for good: its id was refused ever after, and end of input waited for it)."""
    import anyio

    def write(message: dict[str, Any]) -> None:
        os.write(pipes.stdin_write, (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())

    async def session() -> None:
        with anyio.fail_after(PIPE_BOUND):
            for request_id, cancelled_as in ((7, "7"), ("8", 8), (9, " 9")):
                write({"id": request_id, "method": "ping"})
                assert (await messages.receive()).message.id == request_id  # the SDK has it: in flight
                write({"method": "notifications/cancelled", "params": {"requestId": cancelled_as}})
                assert (await messages.receive()).message.method == "notifications/cancelled"
                write({"id": request_id, "method": "ping"})  # the SDK gives no answer: the id is free
                write({"id": f"after-{request_id}", "method": "ping"})
                assert (await messages.receive()).message.id == request_id, _line(stdout_read)
                assert (await messages.receive()).message.id == f"after-{request_id}"
            for request_id in (7, "8", 9, "after-7", "after-8", "after-9"):
                wire.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}))
                assert _line(stdout_read)["id"] == request_id
            assert wire.wait_idle(0)  # every request in flight was answered or cancelled

    with _piped_wire() as pipes:
        wire, stdout_read, messages = pipes.wire, pipes.stdout_read, WireMessages(pipes.wire)
        anyio.run(session)


def test_an_answer_with_a_huge_id_is_read_in_memory_of_its_size() -> None:
    import tracemalloc

    from docs_mcp_server.stdio_frames import response_id

    # every answer's id is read to route it; a ping with a 4 MB string id took 557 MB to answer
    request_id = "a" * 2_000_000
    text = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}, separators=(",", ":"))
    tracemalloc.start()
    try:
        found = response_id(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found is not None and found[1] == request_id
    assert peak < 5 * len(text)
