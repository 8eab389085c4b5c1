"""The ``docs-mcp`` command's entry point.

Importing the command's modules (Typer, Rich, the core package) takes a few hundred milliseconds,
and Python's default Ctrl-C handler would raise ``KeyboardInterrupt`` in whichever of them is being
imported and print its traceback. Until :func:`docs_mcp_cli.app.main` restores that handler, an
interrupt ends the command with the one line and the status (130) an interrupted build prints:
nothing has been read or written yet.
"""

import os
import signal
from types import FrameType


def _interrupted(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"error: interrupted\n")
    os._exit(130)


signal.signal(signal.SIGINT, _interrupted)

from docs_mcp_cli.app import main  # noqa: E402 - after the handler, which must come first

__all__ = ["main"]
