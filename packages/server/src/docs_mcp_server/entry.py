"""The ``docs-mcp-server`` command's entry point (and ``python -m docs_mcp_server``'s).

Until :func:`docs_mcp_server.cli.run` installs the server's own signal handlers, Python's default
Ctrl-C handler raises ``KeyboardInterrupt`` in whatever module is being imported and prints its
traceback. For those first tens of milliseconds SIGINT ends the process as a signal does by
default, quietly; from ``run()``'s first line on, an interrupt ends the start with status 0.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_DFL)

from docs_mcp_server.cli import run  # noqa: E402 - after the handler, which must come first

__all__ = ["run"]
