"""The three programs behave alike: -h and --help, --version, flags shown without a type."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = ("docs-mcp", "docs-mcp-server", "docs-mcp-eval")
VERSION = re.compile(r"^(docs-mcp(?:-server|-eval)?) \d+\.\d+\.\d+\S*\n$")


def _run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / program
    command = [str(script)] if script.exists() else [shutil.which(program) or program]
    env = dict(os.environ, COLUMNS="200", LANCEDB_LOG="error")
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


@pytest.mark.integration
@pytest.mark.parametrize("program", PROGRAMS)
def test_every_program_prints_its_version(program: str) -> None:
    done = _run(program, "--version")
    assert done.returncode == 0, done.stderr
    match = VERSION.match(done.stdout)
    assert match is not None and match.group(1) == program, done.stdout


@pytest.mark.integration
@pytest.mark.parametrize(
    ("module", "program"),
    [
        ("docs_mcp_cli", "docs-mcp"),
        ("docs_mcp_server", "docs-mcp-server"),
        ("docs_mcp_eval", "docs-mcp-eval"),
    ],
)
def test_every_program_runs_as_a_python_module(module: str, program: str) -> None:
    # for a Python whose scripts folder is not on PATH; docs_mcp_cli had no __main__
    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    match = VERSION.match(done.stdout)
    assert match is not None and match.group(1) == program, done.stdout


@pytest.mark.integration
@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_program_takes_h_and_help(program: str, flag: str) -> None:
    done = _run(program, flag)
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower()
    assert "<bool>" not in done.stdout


@pytest.mark.integration
@pytest.mark.parametrize(
    ("program", "command"),
    [("docs-mcp", "build"), ("docs-mcp", "fix"), ("docs-mcp-eval", "run"), ("docs-mcp-eval", "agent-eval")],
)
def test_commands_take_h_and_show_flags_without_a_type(program: str, command: str) -> None:
    done = _run(program, command, "-h")
    assert done.returncode == 0, done.stderr
    assert "--help" in done.stdout and "<bool>" not in done.stdout
