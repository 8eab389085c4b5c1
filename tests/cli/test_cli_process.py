"""The ``docs-mcp`` process around a command: Ctrl-C while it starts, output that cannot be written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.programs import build_with_cli, cli_env, docs_mcp_command

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


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device that is always full")
@pytest.mark.parametrize("command", ["validate", "fix --dry-run", "search"])
def test_output_to_a_full_disk_is_one_error_line(tmp_path: Path, examples_docs: Path, command: str) -> None:
    """Standard output on a full disk (``> /dev/full``, or a file on a disk that fills up): the
    work was done but its output lost, which is an error, said in one line. It was a traceback
    ending in ``OSError: [Errno 28] No space left on device``."""
    words = command.split()
    if words[0] == "search":
        args = ["search", "--index-dir", str(build_with_cli(examples_docs, tmp_path / "idx")), "retry"]
    else:
        args = [*words, "--docs-dir", str(examples_docs)]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*docs_mcp_command(), *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            timeout=180,
        )
    assert done.returncode == 1
    assert done.stderr == "error: the output could not be written (No space left on device)\n"
