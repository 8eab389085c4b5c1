"""Eval fixtures: ``docs-mcp-eval`` run in this process (the fake docs server and build it drives
are described in :mod:`tests.support.eval_cli`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from docs_mcp_eval.cli import main
from tests.support.eval_cli import CliResult, CliRunner


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
