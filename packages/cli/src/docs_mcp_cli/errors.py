"""The command line's one error boundary: every failure ends as one ``error: ...`` line on stderr.

Exit status, for every command: 0 on success, 1 when the work failed, 2 for usage errors (typer's
own, or :func:`usage_error` for values typer cannot check), 130 when interrupted (Ctrl-C), 143 when
terminated (SIGTERM, inside :func:`sigterm_stops_like_ctrl_c`). Every command runs its work inside
:func:`reporting`, so no failure prints a traceback.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from typer import TyperException

from docs_mcp_core.errors import DocsMcpError

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Terminated",
    "fail",
    "reporting",
    "sigterm_stops_like_ctrl_c",
    "usage_error",
]

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the work is so that it cleans up exactly as on Ctrl-C."""


@contextmanager
def sigterm_stops_like_ctrl_c() -> Iterator[None]:
    """Turn the first SIGTERM into :class:`Terminated`; later ones wait for the clean-up."""

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated

    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def fail(message: str, code: int = EXIT_FAILED) -> typer.Exit:
    """Print ``error: message`` on stderr; the returned exception ends the command with ``code``."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def usage_error(message: str, option: str) -> typer.BadParameter:
    """A usage error about ``option`` (a flag such as ``--filter``, or an argument such as ``QUERY``),
    reported the way typer reports the ones it finds itself (exit status 2)."""
    return typer.BadParameter(message, param_hint=f"'{option}'")


@contextmanager
def reporting(action: str, *, note: str = "", before: Callable[[], None] | None = None) -> Iterator[None]:
    """Run a command's work: a :class:`DocsMcpError` is reported with its message (and ``note``), an
    interrupt exits 130 (143 for :class:`Terminated`), anything else is reported as ``<action> failed
    unexpectedly``. ``before`` runs first whenever the work failed (e.g. to clear a progress line)."""
    try:
        yield
    except (typer.Exit, typer.Abort, TyperException):
        raise
    except DocsMcpError as exc:
        _run(before)
        raise fail(f"{exc}{note}") from None
    except KeyboardInterrupt as exc:
        _run(before)
        if isinstance(exc, Terminated):
            raise fail(f"terminated{note}", EXIT_TERMINATED) from None
        raise fail(f"interrupted{note}", EXIT_INTERRUPTED) from None
    except Exception as exc:  # noqa: BLE001 - never a bare traceback
        _run(before)
        raise fail(
            f"{action} failed unexpectedly: {type(exc).__name__}: {exc}{note}; "
            "please report this with the command you ran"
        ) from None


def _run(action: Callable[[], None] | None) -> None:
    if action is not None:
        action()
