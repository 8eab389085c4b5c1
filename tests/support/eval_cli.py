"""The eval harness under test: its fake docs server and fake build (scripts in ``tests/eval``), and
the shape of an in-process ``docs-mcp-eval`` run (``agent-eval`` included)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import REPO_ROOT

EVAL_TESTS = REPO_ROOT / "tests" / "eval"
FAKE_SERVER = EVAL_TESTS / "fake_docs_server.py"
FAKE_BUILD = EVAL_TESTS / "fake_build.py"
FAKE_CASES = EVAL_TESTS / "cases" / "fake-cases.json"


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
SuiteWriter = Callable[..., Path]
"""Writes agent scenarios as a YAML file in the test's folder and returns its path."""


@dataclass
class AgentEvalRun:
    cli: CliResult
    output: dict[str, Any] | None
    """The ``--out`` JSON (``None`` when the command failed before writing it)."""

    def result(self, scenario_id: str) -> dict[str, Any]:
        assert self.output is not None, self.cli.err
        results = self.output.get("results") or []
        return next(r for r in results if r["id"] == scenario_id)


AgentEval = Callable[..., AgentEvalRun]
