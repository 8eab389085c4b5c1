"""Helpers for the eval tests: the fake MCP docs server and an in-process CLI runner."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from docs_mcp_eval.cli import main

HERE = Path(__file__).parent
FAKE_SERVER = HERE / "fake_docs_server.py"
FAKE_BUILD = HERE / "fake_build.py"
FAKE_CASES = HERE / "cases" / "fake-cases.json"


def fake_server_command(*flags: str) -> str:
    """Shell-style command line starting the fake docs server with ``flags``."""
    return shlex.join([sys.executable, str(FAKE_SERVER), *flags])


def fake_build_command(*flags: str) -> str:
    return shlex.join([sys.executable, str(FAKE_BUILD), *flags])


@dataclass
class CliResult:
    code: int
    out: str
    err: str


CliRunner = Callable[[Sequence[str]], CliResult]


@pytest.fixture
def run_cli(capfd: pytest.CaptureFixture[str]) -> CliRunner:
    """Run ``docs-mcp-eval`` in this process; capture stdout/stderr at the file-descriptor level."""

    def invoke(args: Sequence[str]) -> CliResult:
        capfd.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capfd.readouterr()
        return CliResult(code=code, out=out, err=err)

    return invoke
