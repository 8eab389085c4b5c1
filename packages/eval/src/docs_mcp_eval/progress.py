"""A one-line progress display on stderr: ``[12/60] MRR@5 0.4521``, redrawn in place.

Shown only when stderr is a terminal, so logs and CI output stay clean.
"""

from __future__ import annotations

import sys
from typing import TextIO

from docs_mcp_eval.formatting import to_fixed


class Progress:
    """Redraws one status line; call :meth:`close` to clear it."""

    def __init__(self, stream: TextIO, label: str | None = None) -> None:
        self._stream = stream
        self._prefix = f"{label}: " if label else ""
        self._width = 0

    @classmethod
    def for_stderr(cls, label: str | None = None) -> Progress | None:
        """A progress line on stderr when it is a terminal, else ``None`` (stay quiet)."""
        stream = sys.stderr
        try:
            interactive = stream.isatty()
        except (AttributeError, ValueError):
            interactive = False
        return cls(stream, label) if interactive else None

    def update(self, done: int, total: int, running_mrr: float) -> None:
        text = f"{self._prefix}case {done} of {total}  MRR@5 {to_fixed(running_mrr, 4)}"
        self._stream.write("\r" + text.ljust(self._width))
        self._stream.flush()
        self._width = max(self._width, len(text))

    def close(self) -> None:
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0
