"""Shared fixtures. Tests that need ``../shared`` (corpora, upstream figures) skip cleanly without it."""

from __future__ import annotations

import os
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
