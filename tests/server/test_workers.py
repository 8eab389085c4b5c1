"""``--workers N``: one HTTP port served by several processes, started, replaced and stopped together."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_server.workers import WORKER_ENV
from tests.support.server_process import (
    WAIT_SECONDS,
    ServerProcess,
    post_mcp,
    request,
    run_server,
    start_http_server,
)

pytestmark = pytest.mark.integration  # starts processes and listens on ports


def health(port: int) -> dict[str, Any]:
    status, _, body = request(port, "GET", "/healthz")
    assert status == 200, body
    return json.loads(body)


def workers_seen(port: int, count: int) -> dict[int, int]:
    """Worker id -> pid, from ``/healthz`` on new connections until ``count`` workers answered
    (bounded: the kernel spreads connections by their ports, so a few dozen reach every worker)."""
    seen: dict[int, int] = {}
    for _ in range(400):
        worker = health(port)["worker"]
        assert worker["count"] == count
        seen[worker["id"]] = worker["pid"]
        if len(seen) == count:
            return seen
    raise AssertionError(f"only workers {sorted(seen)} answered")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"workers {[p for p in pids if alive(p)]} still running"
        time.sleep(0.05)


def search(port: int, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_docs", "arguments": arguments}}  # fmt: skip
    status, _, messages = post_mcp(port, call)
    assert status == 200
    result = messages[-1]["result"]
    assert not result["isError"], result
    return result["structuredContent"]


@pytest.fixture(scope="module")
def two_workers(built_index: Path) -> Iterator[tuple[ServerProcess, int]]:
    server, port = start_http_server(built_index, "--stateless", "--workers", "2")
    try:
        yield server, port
    finally:
        server.stop()


def test_every_worker_answers_on_the_one_port(two_workers: tuple[ServerProcess, int]) -> None:
    server, port = two_workers
    pids = workers_seen(port, 2)
    assert len(set(pids.values())) == 2
    assert server.proc.pid not in pids.values()
    for pid in pids.values():
        assert os.getpgid(pid) != os.getpgid(server.proc.pid)  # a terminal's Ctrl-C goes to the supervisor


def test_a_cursor_from_one_worker_is_accepted_by_every_worker(two_workers: tuple[ServerProcess, int]) -> None:
    _, port = two_workers
    first = search(port, {"query": "retry", "limit": 1})
    assert first["next_cursor"]
    # each request is a new connection, spread over both workers: none may reject the cursor
    pages = [search(port, {"query": "retry", "limit": 1, "cursor": first["next_cursor"]}) for _ in range(12)]
    assert all(page["hits"] == pages[0]["hits"] for page in pages)
    assert pages[0]["hits"][0]["chunk_id"] != first["hits"][0]["chunk_id"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_stops_every_worker_and_exits_cleanly(
    built_index: Path, signum: signal.Signals
) -> None:
    server, port = start_http_server(built_index, "--stateless", "--workers", "2")
    try:
        pids = list(workers_seen(port, 2).values())
        server.proc.send_signal(signum)
        assert server.wait() == 0
        wait_until_gone(pids)
        assert any("shutting down http workers" in line for line in server.stderr_lines)
    finally:
        server.stop()


def test_a_killed_supervisor_takes_its_workers_with_it(built_index: Path) -> None:
    server, port = start_http_server(built_index, "--stateless", "--workers", "2")
    try:
        pids = list(workers_seen(port, 2).values())
        server.proc.kill()
        server.wait()
        wait_until_gone(pids)
    finally:
        server.stop()


def test_a_worker_that_dies_is_reported_and_replaced(built_index: Path) -> None:
    server, port = start_http_server(
        built_index, "--stateless", "--workers", "2", env={"DOCS_MCP_WORKER_CRASH_SECONDS": "0"}
    )
    try:
        before = workers_seen(port, 2)
        os.kill(before[0], signal.SIGKILL)
        record = server.wait_for_log(lambda r: "starting another" in r.get("message", ""))
        assert record["level"] == "ERROR" and "SIGKILL" in record["message"]
        deadline = time.monotonic() + WAIT_SECONDS
        while (after := workers_seen(port, 2))[0] == before[0]:
            assert time.monotonic() < deadline
        assert after[1] == before[1] and alive(after[0])
    finally:
        server.stop()


def test_a_worker_that_dies_at_once_is_replaced_once_and_if_that_dies_too_the_server_stops(
    built_index: Path,
) -> None:
    server, port = start_http_server(
        built_index, "--stateless", "--workers", "2", env={"DOCS_MCP_WORKER_CRASH_SECONDS": "600"}
    )
    try:
        pids = workers_seen(port, 2)
        os.kill(pids[1], signal.SIGKILL)  # killed from outside while starting: one more try
        record = server.wait_for_log(lambda r: "starting another once" in r.get("message", ""))
        assert record["level"] == "ERROR" and "SIGKILL" in record["message"]
        deadline = time.monotonic() + WAIT_SECONDS
        while (after := workers_seen(port, 2))[1] == pids[1]:
            assert time.monotonic() < deadline
        os.kill(after[1], signal.SIGKILL)  # and its replacement as soon: a crash at start
        assert server.wait() == 1
        wait_until_gone([*pids.values(), after[1]])
        assert any("as its predecessor did; stopping the server" in line for line in server.stderr_lines)
    finally:
        server.stop()


def test_a_hung_worker_is_killed_and_replaced_and_no_connection_is_lost(built_index: Path) -> None:
    """A stopped worker (SIGSTOP) keeps its socket's share of new connections waiting: the
    supervisor hears no heartbeat, kills it and starts another on the same socket, which answers
    the connections queued meanwhile."""
    server, port = start_http_server(
        built_index, "--stateless", "--workers", "2", env={"DOCS_MCP_WORKER_LIVENESS_SECONDS": "3"}
    )
    before = workers_seen(port, 2)
    try:
        os.kill(before[0], signal.SIGSTOP)
        with concurrent.futures.ThreadPoolExecutor(20) as pool:  # 20 new connections, bounded by 60 s each
            answers = list(pool.map(lambda _: request(port, "GET", "/healthz")[0], range(20)))
        assert answers == [200] * 20
        record = server.wait_for_log(lambda r: "has not answered" in r.get("message", ""))
        assert record["level"] == "ERROR" and record["properties"] == {"worker": 0, "pid": before[0]}
        wait_until_gone([before[0]])
        after = workers_seen(port, 2)
        assert after[0] != before[0] and after[1] == before[1]  # only the hung one was replaced
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(before[0], signal.SIGKILL)
        server.stop()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--transport", "http", "--workers", "2"], "--workers 2 needs --stateless"),
        (["--transport", "http", "--stateless", "--workers", "0"], "--workers must be 1 or more"),
        (["--workers", "3"], "--workers only applies to --transport http"),
        (
            [
                "--transport",
                "http",
                "--stateless",
                "--workers",
                "2",
                "--playground",
                "--playground-password",
                "pw",
            ],
            "cannot keep a playground login",
        ),
    ],
)
def test_workers_that_cannot_work_are_usage_errors(built_index: Path, args: list[str], expected: str) -> None:
    done = run_server(["--index-dir", str(built_index), *args])
    assert done.returncode == 2
    assert expected in done.stderr


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
        return {int(p) for p in fh.read().split()}


def _stop_the_next_worker(supervisor: int, known: set[int]) -> int:
    """SIGSTOP the next worker the supervisor starts, long before its first heartbeat (a start that
    hangs: its imports alone take most of a second)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not (new := _children(supervisor) - known):
        assert time.monotonic() < deadline, "no worker was started"
        time.sleep(0.002)
    (pid,) = new
    # not before it runs the worker's program: stopped between fork and exec, it would hold the
    # supervisor in its wait for the exec (the worker's environment shows once it has run it)
    while f"{WORKER_ENV}=".encode() not in _environ(pid):
        assert time.monotonic() < deadline, "the new worker did not start"
        time.sleep(0.002)
    os.kill(pid, signal.SIGSTOP)
    return pid


def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read()
    except OSError:  # gone, or not readable yet
        return b""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="finds the workers through /proc")
def test_a_worker_that_hangs_at_start_is_replaced_once_and_if_that_hangs_too_the_server_stops(
    built_index: Path,
) -> None:
    env = {
        "DOCS_MCP_WORKER_CRASH_SECONDS": "0",
        # long enough that the worker left running is heard however busy the machine is
        "DOCS_MCP_WORKER_LIVENESS_SECONDS": "5",
        "DOCS_MCP_WORKER_FIRST_BEAT_SECONDS": "0",
    }
    server, port = start_http_server(built_index, "--stateless", "--workers", "2", env=env)
    stopped: list[int] = []
    try:
        pids = workers_seen(port, 2)
        os.kill(pids[1], signal.SIGKILL)  # its replacement hangs at start, and so does the next
        stopped.append(_stop_the_next_worker(server.proc.pid, set(pids.values())))
        record = server.wait_for_log(lambda r: "since it started; killing it" in r.get("message", ""))
        assert record["level"] == "ERROR" and "starting another once" in record["message"]
        stopped.append(_stop_the_next_worker(server.proc.pid, {*pids.values(), *stopped}))
        assert server.wait() == 1  # was: a hung worker started again every minute, forever
        wait_until_gone([*pids.values(), *stopped])
        assert any("as its predecessor did not; stopping the server" in line for line in server.stderr_lines)
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server.stop()
