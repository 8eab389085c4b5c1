"""CLI fixtures: the ``docs-mcp`` executable, a subprocess runner, and an index of ``examples/docs``
built once per session by ``docs-mcp build`` in a child process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN_DIR = Path(sys.executable).parent


def docs_mcp_command() -> list[str]:
    """How to start the installed ``docs-mcp`` command (the console script of this environment)."""
    script = BIN_DIR / "docs-mcp"
    if script.exists():
        return [str(script)]
    found = shutil.which("docs-mcp")
    if found:
        return [found]
    return [sys.executable, "-c", "from docs_mcp_cli.app import main; main()"]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("LANCEDB_LOG", "error")
    env["COLUMNS"] = "400"  # no wrapping of long tmp paths in messages
    return env


def run_docs_mcp(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run ``docs-mcp ARGS`` to completion and capture its output."""
    return subprocess.run(
        [*docs_mcp_command(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=cli_env(),
    )


@pytest.fixture(scope="session")
def cli_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``docs-mcp build --docs-dir examples/docs --out DIR`` (asserted to succeed); returns DIR."""
    out = tmp_path_factory.mktemp("cli-index") / "idx"
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out)
    assert done.returncode == 0, done.stderr
    return out
