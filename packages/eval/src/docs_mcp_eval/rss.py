"""Peak resident memory of the MCP server under test.

The MCP SDK spawns the server itself and does not expose its pid, so :func:`find_new_child` looks for
the process our own process started in the meantime (the SDK starts it as a session leader, which
tells it apart from unrelated children). :class:`RssSampler` then reads the resident set size of that
process *and its descendants* (so a wrapper such as ``uv run docs-mcp-server`` is measured with the
real server inside it) at start, every 200 ms on a background thread, and at stop, keeping the peak.

Linux reads ``/proc``; other systems fall back to ``ps``. Sampling is best-effort: a process that is
gone or unreadable contributes nothing, and an unknown pid gives a peak of 0, like the original.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SAMPLE_INTERVAL_S = 0.2
"""Time between two samples, as in the original harness."""

_PROC = Path("/proc")
_PS_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ProcInfo:
    """The few facts about a process that the sampler needs."""

    pid: int
    ppid: int
    session: int
    rss_kb: int


def _use_proc() -> bool:
    return sys.platform.startswith("linux") and _PROC.is_dir()


def _read_proc(pid: int) -> ProcInfo | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
        status = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        ppid, session = int(fields[1]), int(fields[3])
    except (IndexError, ValueError):
        return None
    rss_kb = 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            parts = line.split()
            rss_kb = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            break
    return ProcInfo(pid=pid, ppid=ppid, session=session, rss_kb=rss_kb)


def process_table() -> list[ProcInfo]:
    """Every visible process with its parent, session and resident size."""
    if _use_proc():
        infos: list[ProcInfo] = []
        for entry in _PROC.iterdir():
            if entry.name.isdigit():
                info = _read_proc(int(entry.name))
                if info is not None:
                    infos.append(info)
        return infos
    try:
        out = subprocess.run(
            ["ps", "-A", "-o", "pid=,ppid=,sess=,rss="],
            capture_output=True,
            text=True,
            timeout=_PS_TIMEOUT_S,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    infos = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and all(part.lstrip("-").isdigit() for part in parts):
            pid, ppid, session, rss = (int(part) for part in parts)
            infos.append(ProcInfo(pid=pid, ppid=ppid, session=session, rss_kb=rss))
    return infos


def child_pids(parent: int | None = None) -> set[int]:
    """Pids of the direct children of ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    return {info.pid for info in process_table() if info.ppid == parent}


def find_new_child(before: Iterable[int], parent: int | None = None) -> int | None:
    """The child of ``parent`` that did not exist in ``before``; session leaders are preferred.

    Returns ``None`` when there is no new child. When several appeared, the newest (highest pid among
    session leaders) is taken.
    """
    parent = os.getpid() if parent is None else parent
    known = set(before)
    fresh = [info for info in process_table() if info.ppid == parent and info.pid not in known]
    if not fresh:
        return None
    leaders = [info for info in fresh if info.session == info.pid]
    pool = leaders or fresh
    return max(info.pid for info in pool)


def tree_rss_kb(root: int) -> int:
    """Resident size of ``root`` plus all its descendants, in KiB (0 when ``root`` is gone)."""
    table = process_table()
    children: dict[int, list[ProcInfo]] = {}
    by_pid: dict[int, ProcInfo] = {}
    for info in table:
        children.setdefault(info.ppid, []).append(info)
        by_pid[info.pid] = info
    if root not in by_pid:
        return 0
    total = 0
    stack = [by_pid[root]]
    seen: set[int] = set()
    while stack:
        info = stack.pop()
        if info.pid in seen:
            continue
        seen.add(info.pid)
        total += info.rss_kb
        stack.extend(children.get(info.pid, []))
    return total


class RssSampler:
    """Samples a process tree's resident size on a background thread and remembers the peak."""

    def __init__(self, pid: int | None, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self._pid = pid
        self._interval = interval_s
        self._peak_kb = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._pid

    def sample(self) -> None:
        """Take one sample now."""
        if self._pid is None:
            return
        try:
            kb = tree_rss_kb(self._pid)
        except (OSError, ValueError):
            return
        with self._lock:
            self._peak_kb = max(self._peak_kb, kb)

    def start(self) -> None:
        """Sample once, then keep sampling every interval until :meth:`stop`."""
        if self._pid is None or self._thread is not None:
            return
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="docs-mcp-eval-rss", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample()

    def stop(self) -> float:
        """Take a last sample, stop the thread and return the peak in MiB (KiB / 1024)."""
        if self._thread is not None and not self._stop.is_set():
            self._stop.set()
            self._thread.join(timeout=5.0)
            self.sample()
        return self.peak_mb

    @property
    def peak_mb(self) -> float:
        with self._lock:
            return self._peak_kb / 1024
