"""Standard streams for a command started without one of them.

A program started with descriptor 0, 1 or 2 closed (by a supervisor, a shell's ``>&-``, a client
that spawns it so) finds Python's ``sys.stdout`` or ``sys.stderr`` set to ``None`` (a build's
progress reporter and the commands' final flush fail on it), and the first file it opens takes the
free number: native code writing to descriptor 2 would write into that file, and a stdio server's
copy of stdin would become its stdout. :func:`fill_missing_standard_streams` puts ``/dev/null`` in
each missing place before anything is opened: no stdin reads as end of input, output to a missing
stdout or stderr goes nowhere, and the command runs as usual.
"""

from __future__ import annotations

import os
import sys

__all__ = ["fill_missing_standard_streams"]


def fill_missing_standard_streams() -> None:
    """Open ``/dev/null`` as each of descriptors 0, 1 and 2 that is closed (see the module's docstring)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:  # Python leaves these None when the descriptor was missing
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
