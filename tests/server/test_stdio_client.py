"""A stdio client that goes away, stops reading or sends an enormous line, against real server
subprocesses (raw pipes, so that a test can close or stop reading them as such a client would).

Every wait is bounded; memory is the process's peak resident size (``VmHWM``), which does not
depend on when it is sampled.
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from tests.support.programs import SERVER_COMMAND, build_with_cli, server_env
from tests.support.protocol import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.integration

WAIT = 60.0
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def big_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file whose sections make a parent section of about 200 KB (get_doc scope parent)."""
    docs = tmp_path_factory.mktemp("big-docs")
    paragraph = "Retries back off exponentially between attempts of a failed request. " * 70
    sections = "".join(f"## Part {n}\n\n{paragraph}\n\n" for n in range(40))
    (docs / "guide.md").write_text(f"# Guide\n\n{paragraph}\n\n{sections}", encoding="utf-8")
    out = tmp_path_factory.mktemp("big-index")
    build_index(BuildOptions(docs_dir=docs, out_dir=out))
    return out


class RawServer:
    """``docs-mcp-server`` over stdio with raw pipes and a thread collecting stderr."""

    def __init__(self, index: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [SERVER_COMMAND, "--index-dir", str(index), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(),
        )
        self.stderr: list[str] = []
        self._log_seen = threading.Condition()
        assert self.proc.stderr is not None
        threading.Thread(target=self._collect, args=(self.proc.stderr,), daemon=True).start()

    def _collect(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            with self._log_seen:
                self.stderr.append(line.decode("utf-8", errors="replace").rstrip("\n"))
                self._log_seen.notify_all()

    def wait_for_log(self, message: str) -> None:
        with self._log_seen:
            found = self._log_seen.wait_for(lambda: any(message in line for line in self.stderr), WAIT)
        assert found, f"no {message!r} in the log:\n" + "\n".join(self.stderr[-30:])

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "\n".join(self.stderr)
        return json.loads(line)

    def open_session(self) -> None:
        self.send(INITIALIZE)
        assert self.receive()["id"] == 1
        self.send(INITIALIZED)

    def status(self, field: str) -> int:
        """A number from /proc/<pid>/status (``VmHWM`` and ``VmRSS`` in kB, ``Threads``)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(field)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


@pytest.fixture
def server(built_index: Path) -> Iterator[RawServer]:
    raw = RawServer(built_index)
    try:
        yield raw
    finally:
        raw.stop()


def _search(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": "retry a request"}}}  # fmt: skip


def _assert_ended_quietly(server: RawServer) -> None:
    assert server.proc.wait(WAIT) == 0, "\n".join(server.stderr)
    log = "\n".join(server.stderr)
    assert "Traceback" not in log and '"ERROR"' not in log, log
    assert sum("the client closed the connection" in line for line in server.stderr) == 1, log
    # the session ended when the pipe broke, not after the end-of-input grace period
    assert "requests still running at end of input were cancelled" not in log, log


def test_an_answer_written_after_the_client_closed_stdout_ends_the_session(server: RawServer) -> None:
    server.open_session()
    assert server.proc.stdout is not None
    server.proc.stdout.close()
    server.send(_search(2))  # stdin stays open: only the broken pipe can end the session
    _assert_ended_quietly(server)


def test_forty_requests_in_flight_when_the_client_closes_its_pipes(server: RawServer) -> None:
    server.open_session()
    server.send(_search(1000))  # the index is open before the flood (answers come within the grace)
    assert server.receive()["id"] == 1000
    assert server.proc.stdout is not None and server.proc.stdin is not None
    server.proc.stdout.close()
    for request_id in range(2, 42):
        server.send(_search(request_id))
    server.proc.stdin.close()
    _assert_ended_quietly(server)


def _get_parent(request_id: int) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
               "params": {"name": "get_doc", "arguments": {"chunk_id": "guide.md#guide/part-1", "scope": "parent",
                                                           "max_tokens": 1_000_000}}}  # fmt: skip
    return json.dumps(message).encode() + b"\n"


FLOOD = 500  # requests sent to a client that stops reading


def _flood(server: RawServer, lines: Iterable[bytes]) -> threading.Thread:
    """A thread writing ``lines`` to the server's stdin, each flushed, until all are written or the
    server stops taking them (the test reads nothing meanwhile)."""

    def write() -> None:
        assert server.proc.stdin is not None
        try:
            for line in lines:
                server.proc.stdin.write(line)
                server.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_client_that_stops_reading_does_not_grow_the_server(big_index: Path) -> None:
    server = RawServer(big_index, "--log-level", "debug")
    try:
        server.open_session()
        assert server.proc.stdin is not None and server.proc.stdout is not None
        server.proc.stdin.write(_get_parent(2))
        server.proc.stdin.flush()
        first = server.receive()
        answer_bytes = len(json.dumps(first))
        assert answer_bytes > 150_000, first  # each answer is large
        baseline_kb = server.status("VmHWM")

        writer = _flood(server, (_get_parent(request_id) for request_id in range(3, FLOOD + 3)))
        server.wait_for_log("input paused until the client reads its answers")
        threads_while_paused = server.status("Threads")
        ids = set()
        for _ in range(FLOOD):
            ids.add(server.receive()["id"])
        writer.join(WAIT)
        assert ids == set(range(3, FLOOD + 3))
        growth_mb = (server.status("VmHWM") - baseline_kb) / 1024
        # 500 answers of ~200 KB: without backpressure the server held most of them (1,000 grew it by
        # 1.16 GB, so about 580 MB here)
        assert growth_mb < 250, growth_mb
        assert threads_while_paused < 100, threads_while_paused
    finally:
        server.stop()


def test_a_client_that_stops_reading_small_answers_does_not_grow_the_server(
    examples_docs: Path, tmp_path: Path
) -> None:
    # a small answer left the in-flight count when it was first tried and then waited for the
    # writer uncounted: 20,000 tool calls unread grew the server by 360 MB and input never paused
    server = RawServer(build_with_cli(examples_docs, tmp_path / "idx"))
    try:
        server.open_session()  # the index opens under the flood, while the first calls wait for it
        baseline_kb = server.status("VmHWM")
        count = 20_000
        calls = (
            json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "get_doc", "arguments": {"chunk_id": f"guides/errors.md#missing-{i}", "context": 5}}}).encode()
            + b"\n"
            for i in range(100, count + 100)
        )  # fmt: skip
        lines = list(calls)
        writer = _flood(server, (b"".join(lines[i : i + 100]) for i in range(0, count, 100)))
        # the flood is taken whole at once by a server without the bound (and held); with it, the
        # server stops reading and this thread waits on the pipe until the answers below are read
        writer.join(10)
        ids = {server.receive()["id"] for _ in range(count)}
        writer.join(WAIT)
        assert ids == set(range(100, count + 100))
        growth_mb = (server.status("VmHWM") - baseline_kb) / 1024
        assert growth_mb < 200, growth_mb  # opening the index takes ~110 MB; without the bound, 360
    finally:
        server.stop()


def test_an_over_long_line_is_refused_without_being_held_and_the_session_goes_on(server: RawServer) -> None:
    server.open_session()
    server.send(_search(76))  # the index is open: what follows measures the line alone
    assert server.receive()["id"] == 76
    # only the MCP SDK answers prompts/list: once it has, the SDK's own import is behind the baseline
    server.send({"jsonrpc": "2.0", "id": 75, "method": "prompts/list"})
    assert server.receive()["id"] == 75
    baseline_kb = server.status("VmHWM")
    assert server.proc.stdin is not None
    head = b'{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"'
    server.proc.stdin.write(head)
    chunk = b"a" * MIB
    for _ in range(64):
        server.proc.stdin.write(chunk)
    server.proc.stdin.write(b'"}}}\n')
    server.proc.stdin.flush()
    refused = server.receive()
    assert refused["id"] == 77 and refused["error"]["code"] == -32600, refused
    assert "longer than 4194304 bytes, the limit" in refused["error"]["message"]
    server.send(_search(78))
    answer = server.receive()
    assert answer["id"] == 78 and "result" in answer
    growth_mb = (server.status("VmHWM") - baseline_kb) / 1024
    assert growth_mb < 40, growth_mb  # a 64 MiB line, never held whole


def test_a_line_that_never_ends_is_refused_once_it_passes_the_limit(server: RawServer) -> None:
    # /dev/zero as input, or a client streaming one endless line: the refusal cannot wait for its end
    server.open_session()
    assert server.proc.stdin is not None and server.proc.stdout is not None
    server.proc.stdin.write(b'{"jsonrpc":"2.0","id":79,"method":"tools/call","params":{"query":"')
    for _ in range(5):
        server.proc.stdin.write(b"\0" * MIB)
    server.proc.stdin.flush()
    assert select.select([server.proc.stdout], [], [], WAIT)[0], "no answer while the line goes on"
    refused = server.receive()
    assert refused["id"] == 79 and refused["error"]["code"] == -32600, refused
    assert "longer than 4194304 bytes, the limit" in refused["error"]["message"]
    server.proc.stdin.write(b"\0" * MIB + b"\n")  # the line ends at last: the session goes on
    server.send(_search(80))
    answer = server.receive()
    assert answer["id"] == 80 and "result" in answer


def _tools_list(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}).encode() + b"\n"


@pytest.mark.parametrize("end", ["SIGTERM", "end of input"])
def test_a_client_that_stops_reading_small_answers_does_not_keep_the_server_from_ending(
    built_index: Path, end: str
) -> None:
    # answers of a few KB were written on the event loop: once the pipe was full, it waited there
    # for good and neither SIGTERM nor the end of input ever stopped the server
    server = RawServer(built_index, "--log-level", "debug")
    try:
        _stop_reading(server, end)
    finally:
        server.stop()


def _stop_reading(server: RawServer, end: str) -> None:
    server.open_session()
    server.send({"jsonrpc": "2.0", "id": 1000, "method": "prompts/list"})  # only the MCP SDK answers it:
    assert server.receive()["id"] == 1000  # what follows is the SDK's to answer, not the early tools'
    assert server.proc.stdin is not None

    writer = _flood(server, (_tools_list(request_id) for request_id in range(2, 300)))
    server.wait_for_log("input paused until the client reads its answers")
    if end == "SIGTERM":
        server.proc.send_signal(signal.SIGTERM)
    else:
        writer.join(WAIT)
        server.proc.stdin.close()
    # ended after the grace period (10 s) given to the answers the client does not read
    assert server.proc.wait(30) == 0, "\n".join(server.stderr)
    writer.join(WAIT)


def test_answers_waiting_for_a_slow_client_at_end_of_input_are_all_written(server: RawServer) -> None:
    server.open_session()
    assert server.proc.stdin is not None
    server.proc.stdin.write(b"".join(_tools_list(request_id) for request_id in range(2, 42)))
    server.proc.stdin.close()  # 40 answers of 3.5 KB: more than the pipe holds, read only now
    ids = {server.receive()["id"] for _ in range(40)}
    assert ids == set(range(2, 42))
    assert server.proc.wait(WAIT) == 0
