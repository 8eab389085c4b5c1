"""The LanceDB of the original docs-mcp (``@lancedb/lancedb`` 0.26.2 for Node) and its markdown
parser (remark-parse 11, remark-gfm 4), run from the tests.

``tests/compat/node`` pins them with ``package.json`` and ``package-lock.json``; ``.ci/run`` installs
them with ``npm ci``. Without ``node``, or without that install, the tests here skip and say why.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.compat import LANCEDB_NODE_VERSION, NODE_DIR
from tests.support.programs import build_with_cli


@pytest.fixture(scope="session")
def sdk_docs_hash_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """``sdk-docs`` built with ``hash`` embeddings, enough rows for an IVF index on ``vector``."""
    docs = shared_dir / "corpora" / "sdk-docs"
    return build_with_cli(
        docs, tmp_path_factory.mktemp("sdk-docs-hash"), "--embedding-provider", "hash", timeout=900
    )


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable, once ``@lancedb/lancedb`` 0.26.2 is installed beside the scripts."""
    executable = shutil.which("node")
    if executable is None:
        pytest.skip("node is not installed: these tests run the original's LanceDB (0.26.2 for Node)")
    package = NODE_DIR / "node_modules" / "@lancedb" / "lancedb" / "package.json"
    if not package.is_file():
        pytest.skip(f"@lancedb/lancedb is not installed: run `npm ci --prefix {NODE_DIR}`")
    installed = json.loads(package.read_text(encoding="utf-8"))["version"]
    assert installed == LANCEDB_NODE_VERSION, (
        f"{package} is {installed}, the lock file pins {LANCEDB_NODE_VERSION}: run `npm ci --prefix {NODE_DIR}`"
    )
    return executable
