"""Shared fixtures. Tests that need ``../shared`` (corpora, upstream figures) skip cleanly without it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DOCS = REPO_ROOT / "examples" / "docs"
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()

# Lance prints Rust WARN lines to stderr on every query without this.
os.environ.setdefault("LANCEDB_LOG", "error")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def examples_docs() -> Path:
    return EXAMPLES_DOCS


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED_DIR / "corpora" / "sdk-docs").is_dir():
        pytest.skip(f"shared corpora not found at {SHARED_DIR}")
    return SHARED_DIR


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build_with_cli(docs: Path, out: Path) -> Path:
    """Run the real ``docs-mcp build`` (no embeddings); fail the test with its stderr if it fails."""
    from tests.server.conftest import BUILD_COMMAND, server_env

    result = subprocess.run(
        [BUILD_COMMAND, "build", "--docs-dir", str(docs), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=server_env(),
    )
    if result.returncode != 0:
        pytest.fail(f"docs-mcp build failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return out


@pytest.fixture(scope="session")
def built_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``examples/docs`` built by the real ``docs-mcp build`` (no embeddings), shared by the session."""
    return build_with_cli(examples_docs, tmp_path_factory.mktemp("examples-index"))
