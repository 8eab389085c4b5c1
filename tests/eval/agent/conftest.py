"""Fixtures for the agent-eval tests: no provider keys from the environment, one index cache per
session (``examples/docs`` is built once by the real ``docs-mcp build``), and a runner for the command.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from docs_mcp_eval.cli import main
from tests.support.eval_cli import AgentEval, AgentEvalRun, CliResult, SuiteWriter

PROVIDER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing may reach a real API: keys and base URLs come only from the tests."""
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def agent_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``--cache-dir`` shared by the session, so each docs folder is indexed once."""
    return tmp_path_factory.mktemp("agent-cache")


@pytest.fixture
def write_suite(tmp_path: Path) -> SuiteWriter:
    """Write scenarios as a YAML file in the test's folder (``name.yaml``) and return its path."""

    def write(scenarios: dict[str, Any], name: str = "suite") -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(scenarios, sort_keys=False), encoding="utf-8")
        return path

    return write


@pytest.fixture
def eval_cli(capfd: pytest.CaptureFixture[str]) -> Callable[[Sequence[str]], CliResult]:
    """``docs-mcp-eval`` run in this process; stdout and stderr captured at the descriptor level."""

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


@pytest.fixture
def agent_eval(
    eval_cli: Callable[[Sequence[str]], CliResult], tmp_path: Path, agent_cache: Path
) -> AgentEval:
    """Run ``docs-mcp-eval agent-eval`` in process with the session cache and a per-test results folder."""

    def invoke(*args: str, results_dir: Path | None = None, extra: Sequence[str] = ()) -> AgentEvalRun:
        out = tmp_path / "out.json"
        if out.exists():
            out.unlink()
        # workspaces go under the test's folder, not into the system's temporary folder
        workspaces = [] if "--workspace-dir" in args else ["--workspace-dir", str(tmp_path / "workspaces")]
        argv = [
            "agent-eval",
            *args,
            *workspaces,
            "--cache-dir",
            str(agent_cache),
            "--results-dir",
            str(results_dir or tmp_path / "results"),
            "--out",
            str(out),
            *extra,
        ]
        cli = eval_cli(argv)
        output = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
        return AgentEvalRun(cli=cli, output=output)

    return invoke
