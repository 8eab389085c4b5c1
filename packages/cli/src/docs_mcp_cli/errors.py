"""The command line's one error boundary: every failure ends as one ``error: ...`` line on stderr.

Exit status, for every command: 0 on success, 1 when the work failed, 2 for usage errors (typer's
own, or :func:`usage_error` for values typer cannot check), 130 when interrupted (Ctrl-C), 143 when
terminated (SIGTERM, inside :func:`sigterm_stops_like_ctrl_c`). Every command runs its work inside
:func:`reporting`, so no failure prints a traceback.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

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


_STOPS: dict[int, type[KeyboardInterrupt]] = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
_IMPORT_MACHINERY = frozenset(
    {
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "_frozen_importlib",
        "_frozen_importlib_external",
    }
)
_RETRY_SECONDS = 0.02  # how soon a stop not raised yet, or not received, is tried again


@contextmanager
def sigterm_stops_like_ctrl_c() -> Iterator[None]:
    """Turn the first SIGTERM into :class:`Terminated` (and Ctrl-C into ``KeyboardInterrupt``),
    raised once no import is under way and again until the work has it; later ones wait for the
    clean-up.

    An exception raised inside Python's import machinery can leave a module's import lock (or the
    global one) held by this thread while the clean-up runs, and a worker thread that imports the
    same module then waits for it forever, and the clean-up for that thread: the stop is kept and
    tried again every 20 ms until the import is over. One raised in a weakref callback or a
    ``__del__`` is dropped by Python: it is raised again 20 ms later, until the exception being
    handled is the stop (or one raised from it).
    """
    pending: list[int] = []
    raised: list[BaseException] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGALRM:  # a stop kept, or raised, tried again
            if not pending or (raised and _received(raised[0])):
                return
            signum = pending[0]
        elif pending:
            return  # a later stop: the first one is on its way, or its clean-up is running
        pending[:] = [signum]
        signal.setitimer(signal.ITIMER_REAL, _RETRY_SECONDS)
        if _importing(frame):
            return
        for ignored in _STOPS:
            signal.signal(ignored, signal.SIG_IGN)
        raised[:] = [_STOPS[signum]()]
        raise raised[0]

    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return
    previous = {signum: signal.signal(signum, stop) for signum in (*_STOPS, signal.SIGALRM)}
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def _received(stop: BaseException) -> bool:
    """Whether the exception being handled is ``stop``, or was raised while handling it."""
    seen: set[int] = set()
    pending = [sys.exc_info()[1]]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        if exc is stop:
            return True
        seen.add(id(exc))
        pending += [exc.__context__, exc.__cause__]
    return False


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` or one of its callers is Python's import machinery (an import under way)."""
    while frame is not None:
        if frame.f_globals.get("__name__") in _IMPORT_MACHINERY:
            return True
        frame = frame.f_back
    return False


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
