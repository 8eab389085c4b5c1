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
gracefully (each lets its requests in flight finish); a worker that dies is logged and replaced.
A worker that dies within :data:`CRASH_SECONDS` of starting (``DOCS_MCP_WORKER_CRASH_SECONDS``) is
replaced once (it may have been killed from outside, by the OOM killer while its index loaded);
when its replacement dies as soon, the supervisor stops the others and exits with status 1 rather
than restart it forever.

A worker that is alive but hung (stopped, deadlocked, its event loop blocked) would keep its share
of new connections waiting in its socket's queue. Each worker's event loop therefore writes a byte
to a pipe every :data:`HEARTBEAT_SECONDS`; a worker the supervisor has not heard from for
:data:`LIVENESS_SECONDS` (``DOCS_MCP_WORKER_LIVENESS_SECONDS``; 0 turns the check off; the first
beat may take :data:`FIRST_BEAT_SECONDS`) is killed with SIGKILL and replaced, and the replacement
serves the same socket, connections already queued on it included. A worker killed so before its
first beat never started: as for a crash at start, its replacement is the last one, and when that
one is silent as long the supervisor stops the others and exits with status 1.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from docs_mcp_server.errors import Interrupted
from docs_mcp_server.logs import log
from docs_mcp_server.stop_signals import STOP_SIGNALS

__all__ = [
    "CRASH_SECONDS",
    "LIVENESS_SECONDS",
    "WORKER_ENV",
    "Worker",
    "listening_sockets",
    "supervise",
    "this_worker",
]

# set by the supervisor for its workers: "<id>/<count>/<socket fd>/<its pid>/<heartbeat fd>"
WORKER_ENV = "DOCS_MCP_HTTP_WORKER"
CRASH_SECONDS = 10.0  # a worker whose replacement also dies this soon after its start is not restarted
HEARTBEAT_SECONDS = 1.0  # how often a worker's event loop says it is alive
LIVENESS_SECONDS = 10.0  # a worker silent for longer is killed and replaced
FIRST_BEAT_SECONDS = 60.0  # a starting worker's first beat may take this long more (imports, app set-up)
_TICK_SECONDS = 0.25  # how often the supervisor looks at exits and silences
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
    heartbeat_fd: int | None = None

    def socket(self) -> socket.socket:
        sock = socket.socket(fileno=self.fd)
        sock.setblocking(False)
        return sock

    def describe(self) -> dict[str, int]:
        return {"id": self.id, "count": self.count, "pid": os.getpid()}

    async def heartbeat(self) -> None:
        """Write a byte to the supervisor's pipe every :data:`HEARTBEAT_SECONDS`, from the event
        loop, for as long as it runs (returns at once without a pipe)."""
        import anyio

        fd = self.heartbeat_fd
        if fd is None:
            return
        os.set_blocking(fd, False)
        while True:
            try:
                os.write(fd, b".")
            except BlockingIOError:
                pass  # the supervisor is behind: it has beats enough to read
            except OSError:
                return  # the supervisor is gone (this worker gets SIGTERM)
            await anyio.sleep(HEARTBEAT_SECONDS)

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
    return _seconds("DOCS_MCP_WORKER_CRASH_SECONDS", CRASH_SECONDS)


def first_beat_seconds() -> float:
    """How much longer than :func:`liveness_seconds` a starting worker has for its first beat."""
    return _seconds("DOCS_MCP_WORKER_FIRST_BEAT_SECONDS", FIRST_BEAT_SECONDS)


def liveness_seconds() -> float:
    """How long a worker may go without a heartbeat before it is replaced (0: never)."""
    return _seconds("DOCS_MCP_WORKER_LIVENESS_SECONDS", LIVENESS_SECONDS)


def _seconds(variable: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(variable) or default))
    except ValueError:
        return default


def this_worker() -> Worker | None:
    """The worker this process is, when a supervisor started it; ``None`` otherwise."""
    value = os.environ.get(WORKER_ENV)
    if not value:
        return None
    try:
        worker_id, count, fd, supervisor, heartbeat = (int(part) for part in value.split("/"))
    except ValueError:
        return None
    return Worker(worker_id, count, fd, supervisor, heartbeat if heartbeat >= 0 else None)


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening sockets on ``host:port`` (port 0: one free port for all) with
    ``SO_REUSEPORT``; without it, one socket listed ``count`` times."""
    from docs_mcp_server.http_early import bind_socket

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
    """The worker processes, the sockets they were given and the pipes they beat on."""

    def __init__(self, argv: Sequence[str], sockets: list[socket.socket]) -> None:
        self.argv = list(argv)
        self.sockets = sockets
        self.procs: dict[int, tuple[subprocess.Popen[bytes], float]] = {}  # worker id -> (process, start)
        self.beats: dict[int, int] = {}  # worker id -> read end of its heartbeat pipe
        self.last_beat: dict[int, float] = {}  # worker id -> when it was last heard (or may first be)
        self.early_deaths: dict[int, int] = {}  # worker id -> deaths in a row soon after starting
        self.heard: set[int] = set()  # the workers that beat since they were started

    def start(self, worker_id: int) -> None:
        sock = self.sockets[worker_id]
        self._close_pipe(worker_id)
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        env = {
            **os.environ,
            WORKER_ENV: f"{worker_id}/{len(self.sockets)}/{sock.fileno()}/{os.getpid()}/{write_end}",
        }
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "docs_mcp_server", *self.argv],
                env=env,
                pass_fds=(sock.fileno(), write_end),
                stdin=subprocess.DEVNULL,
                process_group=0,  # a terminal's Ctrl-C reaches the supervisor, which stops the workers in order
            )
        finally:
            os.close(write_end)
        now = time.monotonic()
        self.procs[worker_id] = (proc, now)
        self.beats[worker_id] = read_end
        self.last_beat[worker_id] = now + first_beat_seconds()
        self.heard.discard(worker_id)
        log(logging.DEBUG, "started an http worker process", worker=worker_id, pid=proc.pid)

    def _close_pipe(self, worker_id: int) -> None:
        fd = self.beats.pop(worker_id, None)
        if fd is not None:
            os.close(fd)

    def read_beats(self, timeout: float) -> None:
        """Wait up to ``timeout`` for heartbeats and note every worker heard from."""
        by_fd = {fd: worker_id for worker_id, fd in self.beats.items()}
        ready, _, _ = select.select(list(by_fd), [], [], timeout)
        now = time.monotonic()
        for fd in ready:
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                continue
            if data:
                self.last_beat[by_fd[fd]] = now
                self.heard.add(by_fd[fd])
            else:  # the worker exited (its exit is handled when it is reaped)
                self._close_pipe(by_fd[fd])

    def silent(self, limit: float) -> list[int]:
        """The workers still running that have not beaten for more than ``limit`` seconds."""
        now = time.monotonic()
        return [
            worker_id
            for worker_id, (proc, _) in self.procs.items()
            if proc.returncode is None and now - self.last_beat[worker_id] > limit
        ]

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
        for worker_id in list(self.beats):
            self._close_pipe(worker_id)


def supervise(
    argv: Sequence[str], *, host: str, port: int, count: int, graceful_timeout: float = 10.0
) -> int:
    """Serve with ``count`` worker processes until SIGINT/SIGTERM (0) or a worker's crash at start (1).

    ``argv`` is the server's command line; each worker runs it with :data:`WORKER_ENV` set.
    """
    from docs_mcp_server.http_early import server_url

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
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
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
    """Watch the workers, replacing each one that dies or stops beating; 1 once one dies (or stays
    silent) straight after it started, as its predecessor did. Returns only then; SIGINT/SIGTERM
    arrive as :class:`Interrupted`."""
    limit = liveness_seconds()
    while True:
        pool.read_beats(_TICK_SECONDS)
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if _exited(pool, pid, wait_status):
                return 1
        for worker_id in pool.silent(limit) if limit > 0 else []:
            if _replace_hung(pool, worker_id, limit):
                return 1


def _exited(pool: _Pool, pid: int, wait_status: int) -> bool:
    """Handle a worker's exit: True when it died straight after it started, for the second time in a
    row (stop the server)."""
    worker_id = pool.worker_of(pid)
    if worker_id is None:
        return False
    proc, started = pool.procs[worker_id]
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    lived = time.monotonic() - started
    how = (
        f"signal {signal.Signals(-proc.returncode).name}"
        if proc.returncode < 0
        else f"status {proc.returncode}"
    )
    early = pool.early_deaths[worker_id] = (
        pool.early_deaths.get(worker_id, 0) + 1 if lived < crash_seconds() else 0
    )
    if early >= 2:
        log(
            logging.ERROR,
            f"http worker {worker_id} exited with {how} {lived:.1f} s after it started, as its predecessor "
            "did; stopping the server",
            worker=worker_id,
            pid=pid,
        )
        return True
    if early:
        log(
            logging.ERROR,
            f"http worker {worker_id} exited with {how} {lived:.1f} s after it started; starting another "
            "once (the server stops if it dies as soon)",
            worker=worker_id,
            pid=pid,
        )
        pool.start(worker_id)
        return False
    log(
        logging.ERROR,
        f"http worker {worker_id} exited with {how}; starting another",
        worker=worker_id,
        pid=pid,
    )
    pool.start(worker_id)
    return False


def _replace_hung(pool: _Pool, worker_id: int, limit: float) -> bool:
    """Kill a worker that stopped beating (SIGKILL ends a stopped process too) and start another;
    True (stop the server) when it never beat, as its predecessor did not (a start that hangs was
    restarted every minute, forever, its socket's connections waiting)."""
    proc, _ = pool.procs[worker_id]
    never = worker_id not in pool.heard
    early = pool.early_deaths[worker_id] = pool.early_deaths.get(worker_id, 0) + 1 if never else 0
    if early >= 2:
        log(
            logging.ERROR,
            f"http worker {worker_id} has not answered since it started, as its predecessor did not; "
            "stopping the server",
            worker=worker_id,
            pid=proc.pid,
        )
    else:
        log(
            logging.ERROR,
            f"http worker {worker_id} has not answered for "
            + (f"{limit + first_beat_seconds():g} s since it started" if never else f"{limit:g} s")
            + "; killing it and starting another"
            + (" once (the server stops if it does not answer either)" if never else ""),
            worker=worker_id,
            pid=proc.pid,
        )
    proc.kill()
    try:
        proc.wait(timeout=_STOP_MARGIN_SECONDS)
    except subprocess.TimeoutExpired:
        log(logging.WARNING, "a killed http worker has not exited yet", worker=worker_id, pid=proc.pid)
    if early >= 2:
        return True
    pool.start(worker_id)
    return False
