"""Build progress for people and for CI logs.

On a terminal, a single self-updating line with a bar per phase; elsewhere (CI, pipes), plain
timestamped lines, one per step, and progress at most every ten seconds.
"""

from __future__ import annotations

import sys
import time


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} GiB"


class ConsoleReporter:
    """A :class:`docs_mcp_core.build.BuildReporter` for a terminal or a log."""

    def __init__(self, stream=None, interactive: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.started = time.perf_counter()
        self._last_plain = 0.0
        self._line_open = False

    def _elapsed(self) -> str:
        return f"{time.perf_counter() - self.started:6.1f}s"

    def _clear(self) -> None:
        if self._line_open:
            self.stream.write("\r\x1b[2K")
            self._line_open = False

    def step(self, message: str) -> None:
        self._clear()
        self.stream.write(f"[{self._elapsed()}] {message}\n")
        self.stream.flush()

    def warn(self, message: str) -> None:
        self._clear()
        self.stream.write(f"{message}\n")
        self.stream.flush()

    def progress(self, phase: str, done: int, total: int) -> None:
        if total <= 0:
            return
        if self.interactive:
            width = 30
            filled = int(width * done / total)
            elapsed = time.perf_counter() - self.started
            self.stream.write(
                f"\r\x1b[2K{phase:<10} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} ({elapsed:.1f}s)"
            )
            self.stream.flush()
            self._line_open = True
        else:
            now = time.perf_counter()
            if done >= total or now - self._last_plain >= 10:
                self._last_plain = now
                self.stream.write(f"[{self._elapsed()}] {phase}: {done}/{total}\n")
                self.stream.flush()

    def close(self) -> None:
        self._clear()
