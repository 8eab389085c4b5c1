"""Peak-RSS sampling of a real process tree."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator

import pytest

from docs_mcp_eval.rss import RssSampler, child_pids, find_new_child, tree_rss_kb

BALLAST_MB = 48
HOLD = (
    "import sys\n"
    f"ballast = bytearray({BALLAST_MB} * 1024 * 1024)\n"
    "for i in range(0, len(ballast), 4096):\n"
    "    ballast[i] = 1\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
)
# A wrapper that holds no ballast itself and runs the holder as its own child (like `uv run server`).
WRAPPER = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', sys.argv[1]], stdin=sys.stdin)\n"
    "child.wait()\n"
)


def wait_ready(proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], timeout)
    assert readable, "child did not report ready in time"
    assert proc.stdout.readline().strip() == "ready"


@pytest.fixture
def wrapped_holder() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, HOLD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_ready(proc)
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.mark.integration
def test_finds_the_new_session_leader_child(wrapped_holder: subprocess.Popen[str]) -> None:
    others = child_pids() - {wrapped_holder.pid}
    assert wrapped_holder.pid in child_pids()
    assert find_new_child(others) == wrapped_holder.pid
    assert find_new_child(child_pids()) is None


@pytest.mark.integration
def test_tree_rss_includes_descendants(wrapped_holder: subprocess.Popen[str]) -> None:
    assert tree_rss_kb(wrapped_holder.pid) / 1024 > BALLAST_MB


@pytest.mark.integration
def test_sampler_reports_peak_in_mib(wrapped_holder: subprocess.Popen[str]) -> None:
    sampler = RssSampler(wrapped_holder.pid, interval_s=0.05)
    sampler.start()
    peak = sampler.stop()
    assert BALLAST_MB < peak < BALLAST_MB + 500
    assert sampler.stop() == peak  # stopping twice is harmless


def test_unknown_pid_gives_zero() -> None:
    sampler = RssSampler(None)
    sampler.start()
    assert sampler.stop() == 0.0
    assert tree_rss_kb(2**22 + 12345) == 0
