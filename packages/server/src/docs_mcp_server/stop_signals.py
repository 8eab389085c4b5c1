"""The signals that stop a server gracefully: SIGINT (Ctrl-C), SIGTERM (``kill``, ``docker stop``, a
process manager) and SIGHUP (the terminal or session that started the server went away).

On each of them a server answers what it has already received and then exits with status 0: over
stdio it ends as at the end of its input, over HTTP it stops accepting and lets requests in flight
finish, and a supervisor of ``--workers`` gives every worker its grace period. Before, SIGHUP ended
the process at once by the system's default action: requests in flight were cut off and the
server's snapshot of the index stayed behind until the next server removed it. A server started
with SIGHUP ignored (``nohup``) keeps ignoring it.
"""

from __future__ import annotations

import signal

__all__ = ["STOP_SIGNALS"]

_HANGUP = getattr(signal, "SIGHUP", None)  # none on Windows
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM) + (
    (_HANGUP,) if _HANGUP is not None and signal.getsignal(_HANGUP) is not signal.SIG_IGN else ()
)
"""SIGINT, SIGTERM and SIGHUP, unless the platform has none or the process was started with it
ignored (read when this module is first imported, before the server installs its handlers)."""
