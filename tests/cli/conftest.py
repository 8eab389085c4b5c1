"""CLI fixtures: an index of ``examples/docs`` built once per session by ``docs-mcp build`` in a child
process (the helpers that run the program are in :mod:`tests.support.programs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.programs import run_docs_mcp


@pytest.fixture(scope="session")
def cli_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``docs-mcp build --docs-dir examples/docs --out DIR`` (asserted to succeed); returns DIR."""
    out = tmp_path_factory.mktemp("cli-index") / "idx"
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out)
    assert done.returncode == 0, done.stderr
    return out
