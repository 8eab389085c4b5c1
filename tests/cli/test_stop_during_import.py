"""A stop (SIGTERM, Ctrl-C) that comes while the build's main thread is inside Python's import
machinery is raised once the import is over, so it never leaves an import lock held; one that Python
drops (raised in a ``__del__`` or a weakref callback) is raised again.

Raised there, it could leave the module's lock taken by the main thread for as long as the stop
propagates; the build's clean-up runs meanwhile, and a worker thread importing that module (as the
heading embedding's may) waited for it forever, and so did the build. The child process below
delivers the signal at the one moment that did it: inside ``_ModuleLock.acquire`` just after the
lock was taken, through a trace function, so the race is the same on every run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # starts processes

BOUND_SECONDS = 10  # a worker's import that waited for a lock left held would wait this long and fail

CHILD = r"""
import importlib, json, pathlib, signal, sys, threading, time
import importlib._bootstrap as bootstrap
from docs_mcp_cli.errors import sigterm_stops_like_ctrl_c

signum, bound = int(sys.argv[1]), float(sys.argv[2])
code = bootstrap._ModuleLock.acquire.__code__
source = (pathlib.Path(importlib.__file__).parent / "_bootstrap.py").read_text().splitlines()
taken = next(n for n in range(code.co_firstlineno, len(source)) if source[n - 1].strip() == "return True")


def tracer(frame, event, arg):
    lock = frame.f_locals.get("self") if frame.f_code is code else None
    if event == "line" and frame.f_lineno == taken and getattr(lock, "name", "") == "late_module":
        sys.settrace(None)
        signal.raise_signal(signum)  # the handler runs here, the module's lock just taken
    return tracer


result = {"raised": None, "during_import": None, "worker_imported": None}
with sigterm_stops_like_ctrl_c():
    try:
        sys.settrace(tracer)
        try:
            import late_module
        finally:
            sys.settrace(None)
        result["during_import"] = False
        threading.Event().wait(bound)  # the stop comes here, once the import is over
    except KeyboardInterrupt as exc:  # as a build's clean-up, with the stop still in flight
        result["raised"] = type(exc).__name__
        if result["during_import"] is None:
            result["during_import"] = True
        worker = threading.Thread(target=importlib.import_module, args=("late_module",), daemon=True)
        worker.start()
        worker.join(bound)
        result["worker_imported"] = not worker.is_alive()
print(json.dumps(result))
"""

DROPPED = r"""
import json, signal, sys, threading
from docs_mcp_cli.errors import sigterm_stops_like_ctrl_c

signum, bound = int(sys.argv[1]), float(sys.argv[2])


class Dropped:
    def __del__(self):
        signal.raise_signal(signum)  # the handler runs here: Python drops what a __del__ raises


result = {"raised": None, "went_on": False}
with sigterm_stops_like_ctrl_c():
    try:
        Dropped()
        result["went_on"] = True
        threading.Event().wait(bound)  # the stop comes again here
    except KeyboardInterrupt as exc:
        result["raised"] = type(exc).__name__
print(json.dumps(result))
"""


@pytest.mark.parametrize(
    ("sig", "raised"),
    [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stop_during_an_import_is_raised_after_it_and_leaves_no_import_lock_held(
    tmp_path: Path, sig: signal.Signals, raised: str
) -> None:
    (tmp_path / "late_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    result = _run_child(tmp_path, CHILD, sig)
    assert result == {"raised": raised, "during_import": False, "worker_imported": True}


@pytest.mark.parametrize(
    ("sig", "raised"),
    [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stop_python_drops_is_raised_again(tmp_path: Path, sig: signal.Signals, raised: str) -> None:
    assert _run_child(tmp_path, DROPPED, sig) == {"raised": raised, "went_on": True}


def _run_child(folder: Path, source: str, sig: signal.Signals) -> dict[str, object]:
    script = folder / "child.py"
    script.write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(int(sig)), str(BOUND_SECONDS)],
        capture_output=True,
        text=True,
        timeout=6 * BOUND_SECONDS,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result
