"""Fixtures of the core tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index


@pytest.fixture(scope="session")
def sdk_docs_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """The shared ``sdk-docs`` corpus built in this process (its chunking uses worker processes)."""
    out = tmp_path_factory.mktemp("sdk-docs-index")
    build_index(BuildOptions(docs_dir=shared_dir / "corpora" / "sdk-docs", out_dir=out))
    return out
