"""The ``docs-mcp`` process around a command: Ctrl-C while it starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration  # starts processes


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_ctrl_c_while_the_command_imports_ends_it_with_one_line() -> None:
    """The console script imports :mod:`docs_mcp_cli.entry` first: an interrupt before the command
    runs (here, right after that import) prints one line and exits 130, as an interrupted build
    does, instead of a ``KeyboardInterrupt`` traceback from a module being imported."""
    done = _python("import os, signal\nimport docs_mcp_cli.entry\nos.kill(os.getpid(), signal.SIGINT)\n")
    assert done.returncode == 130
    assert done.stderr == "error: interrupted\n"


def test_the_command_reports_ctrl_c_itself_once_it_runs() -> None:
    """``main()`` gives Ctrl-C back to Python's handler, so that a command's own reporting (an
    interrupted build says the previous index is untouched) sees ``KeyboardInterrupt``."""
    code = (
        "import signal, sys\n"
        "from docs_mcp_cli.entry import main\n"
        "import docs_mcp_cli.app as app\n"
        "def command():\n"
        "    print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
        "app.app = command\n"
        "main()\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
