"""``--workers N``: several server processes answering one HTTP port, so requests use every core.

One Python process answers at most one request at a time per core it can use, and the search is
CPU-bound, so a single process cannot use a second core. With ``--workers N`` the process started
from the command line becomes a small supervisor that never opens the index: it binds ``N``
listening sockets to the same address with ``SO_REUSEPORT`` (the kernel spreads new connections
over them; where the option is missing, the workers share one socket) and starts ``N`` copies of
the server, each handed one socket. Each worker opens the index read-only itself, so the index
files are shared through the page cache while each worker holds its own in-memory structures.

Sessions live in the memory of one worker while the next connection may reach another, so more
than one worker needs ``--stateless``. Cursors are signed with a secret derived from the index (or
``--cursor-secret``), so any worker accepts another's. SIGTERM or SIGINT stops the workers
gracefully (each lets its requests in flight finish); a worker that dies is logged and replaced,
unless it died within :data:`CRASH_SECONDS` of starting (``DOCS_MCP_WORKER_CRASH_SECONDS``), when
the supervisor stops the others and exits with status 1 rather than restart it forever.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from docs_mcp_server.errors import Interrupted
from docs_mcp_server.logs import log

__all__ = ["CRASH_SECONDS", "WORKER_ENV", "Worker", "listening_sockets", "supervise", "this_worker"]

WORKER_ENV = "DOCS_MCP_HTTP_WORKER"  # set by the supervisor for its workers: "<id>/<count>/<fd>/<its pid>"
CRASH_SECONDS = 10.0  # a worker that dies sooner after it started is not restarted
_PR_SET_PDEATHSIG = 1
_STOP_MARGIN_SECONDS = 5.0  # beyond the graceful timeout, before a worker that has not exited is killed


@dataclass(frozen=True)
class Worker:
    """What a worker process knows of its place: its number (from 0), how many there are, the
    listening socket it was given and the supervisor's process id."""

    id: int
    count: int
    fd: int
    supervisor: int

    def socket(self) -> socket.socket:
        sock = socket.socket(fileno=self.fd)
        sock.setblocking(False)
        return sock

    def describe(self) -> dict[str, int]:
        return {"id": self.id, "count": self.count, "pid": os.getpid()}

    def follow_parent(self) -> None:
        """Have the system send this worker SIGTERM when the supervisor dies (Linux), so that a
        killed supervisor leaves no workers serving on their own."""
        if not sys.platform.startswith("linux"):
            return
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != self.supervisor:  # the supervisor died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)


def crash_seconds() -> float:
    """How soon after its start a worker's death stops the server (rather than being replaced)."""
    try:
        return max(0.0, float(os.environ.get("DOCS_MCP_WORKER_CRASH_SECONDS") or CRASH_SECONDS))
    except ValueError:
        return CRASH_SECONDS


def this_worker() -> Worker | None:
    """The worker this process is, when a supervisor started it; ``None`` otherwise."""
    value = os.environ.get(WORKER_ENV)
    if not value:
        return None
    try:
        worker_id, count, fd, supervisor = (int(part) for part in value.split("/"))
    except ValueError:
        return None
    return Worker(worker_id, count, fd, supervisor)


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening sockets on ``host:port`` (port 0: one free port for all) with
    ``SO_REUSEPORT``; without it, one socket listed ``count`` times."""
    from docs_mcp_server.http_connections import bind_socket

    if not hasattr(socket, "SO_REUSEPORT"):
        sock = bind_socket(host, port)
        return [sock] * count
    first = bind_socket(host, port, reuse_port=True)
    chosen = first.getsockname()[1]
    sockets = [first]
    try:
        for _ in range(count - 1):
            sockets.append(bind_socket(host, chosen, reuse_port=True))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class _Pool:
    """The worker processes and the sockets they were given."""

    def __init__(self, argv: Sequence[str], sockets: list[socket.socket]) -> None:
        self.argv = list(argv)
        self.sockets = sockets
        self.procs: dict[int, tuple[subprocess.Popen[bytes], float]] = {}  # worker id -> (process, start)

    def start(self, worker_id: int) -> None:
        sock = self.sockets[worker_id]
        env = {**os.environ, WORKER_ENV: f"{worker_id}/{len(self.sockets)}/{sock.fileno()}/{os.getpid()}"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "docs_mcp_server", *self.argv],
            env=env,
            pass_fds=(sock.fileno(),),
            stdin=subprocess.DEVNULL,
            process_group=0,  # a terminal's Ctrl-C reaches the supervisor, which stops the workers in order
        )
        self.procs[worker_id] = (proc, time.monotonic())
        log(logging.DEBUG, "started an http worker process", worker=worker_id, pid=proc.pid)

    def worker_of(self, pid: int) -> int | None:
        return next((wid for wid, (proc, _) in self.procs.items() if proc.pid == pid), None)

    def stop(self, grace_seconds: float) -> None:
        """SIGTERM to every worker; those still running after the grace period are killed."""
        for proc, _ in self.procs.values():
            if proc.returncode is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace_seconds
        for worker_id, (proc, _) in self.procs.items():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log(logging.WARNING, "killing an http worker that did not stop in time", worker=worker_id)
                proc.kill()
                proc.wait()


def supervise(
    argv: Sequence[str], *, host: str, port: int, count: int, graceful_timeout: float = 10.0
) -> int:
    """Serve with ``count`` worker processes until SIGINT/SIGTERM (0) or a worker's crash at start (1).

    ``argv`` is the server's command line; each worker runs it with :data:`WORKER_ENV` set.
    """
    from docs_mcp_server.http import server_url

    sockets = listening_sockets(host, port, count)
    pool = _Pool(argv, sockets)
    url = server_url(sockets[0])
    log(logging.INFO, "started mcp server", url=url, port=sockets[0].getsockname()[1], workers=count)
    status = 0
    try:
        for worker_id in range(count):
            pool.start(worker_id)
        status = _watch(pool)
    except Interrupted as exc:
        log(logging.INFO, "shutting down http workers", signal=str(exc))
    finally:
        # no signal may cut the shutdown short: the workers get their grace period
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            pool.stop(graceful_timeout + _STOP_MARGIN_SECONDS)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for sock in set(sockets):
                sock.close()
    log(logging.INFO, "http server stopped", workers=count)
    return status


def _watch(pool: _Pool) -> int:
    """Wait for workers to exit, replacing each one that dies; 1 once one dies straight after it
    started. Returns only then; SIGINT/SIGTERM arrive as :class:`Interrupted`."""
    while True:
        pid, wait_status = os.wait()
        worker_id = pool.worker_of(pid)
        if worker_id is None:
            continue
        proc, started = pool.procs[worker_id]
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
        lived = time.monotonic() - started
        how = (
            f"signal {signal.Signals(-proc.returncode).name}"
            if proc.returncode < 0
            else f"status {proc.returncode}"
        )
        if lived < crash_seconds():
            log(
                logging.ERROR,
                f"http worker {worker_id} exited with {how} {lived:.1f} s after it started; stopping the server",
                worker=worker_id,
                pid=pid,
            )
            return 1
        log(
            logging.ERROR,
            f"http worker {worker_id} exited with {how}; starting another",
            worker=worker_id,
            pid=pid,
        )
        pool.start(worker_id)
