"""Waiting, boundedly, for work that must not wait on a named pipe."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest


def without_waiting_on(pipe: Path, work: Callable[[], object]) -> object:
    """``work()``'s result (or the exception it raised), failing the test if it waits on the named
    pipe ``pipe`` (which is then opened for writing, so that the waiting thread ends)."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(work())
        except Exception as exc:  # noqa: BLE001 - handed to the test, which checks its type
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    if thread.is_alive():
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))  # ends the wait: an empty file
        thread.join(timeout=10)
        pytest.fail(f"waited on the named pipe {pipe.name}")
    return outcome[0]
