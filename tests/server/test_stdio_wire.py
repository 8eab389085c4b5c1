"""The stdio wire's writes on real pipes: a message larger than the pipe holds arrives whole."""

from __future__ import annotations

import json
import os
import select
import threading

from docs_mcp_server.stdio import StdioWire

PIPE_BOUND = 30.0


def test_a_message_larger_than_the_pipe_arrives_whole_while_the_client_reads_slowly() -> None:
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    wire = StdioWire(stdin_fd=stdin_read, stdout_fd=stdout_write)
    wire.start()
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "ünïcödé " * 200_000}})
    writer = threading.Thread(target=wire.send, args=(message,))
    try:
        writer.start()
        received = bytearray()
        while not received.endswith(b"\n"):
            ready, _, _ = select.select([stdout_read], [], [], PIPE_BOUND)
            assert ready, f"the message stopped after {len(received)} bytes"
            chunk = os.read(stdout_read, 4096)  # a client that reads a little at a time
            assert chunk, "the wire closed its output"
            received += chunk
        writer.join(PIPE_BOUND)
        assert not writer.is_alive()
        assert bytes(received) == message.encode("utf-8") + b"\n"
    finally:
        os.close(stdin_write)  # end of input: the wire's reader stops
        wire.restore()
        for fd in (stdin_read, stdout_read, stdout_write):
            os.close(fd)
