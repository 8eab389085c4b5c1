"""The LanceDB of the original docs-mcp (``@lancedb/lancedb`` 0.26.2 for Node), run from the tests.

``tests/compat/node`` pins it with ``package.json`` and ``package-lock.json``; ``.ci/run`` installs it
with ``npm ci``. Without ``node``, or without that install, the tests here skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
LANCEDB_NODE_VERSION = "0.26.2"
NODE_SECONDS = 300


def build(docs: Path, out: Path, *extra: str) -> Path:
    """Run the real ``docs-mcp build``; fail the test with its stderr if it fails."""
    from tests.server.conftest import BUILD_COMMAND, server_env

    result = subprocess.run(
        [BUILD_COMMAND, "build", "--docs-dir", str(docs), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=900,
        env=server_env(),
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"docs-mcp build failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return out


@pytest.fixture(scope="session")
def examples_hash_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``examples/docs`` built with ``hash`` embeddings (flat vector search: too few rows for an index)."""
    return build(examples_docs, tmp_path_factory.mktemp("examples-hash"), "--embedding-provider", "hash")


@pytest.fixture(scope="session")
def sdk_docs_hash_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """``sdk-docs`` built with ``hash`` embeddings, enough rows for an IVF index on ``vector``."""
    docs = shared_dir / "corpora" / "sdk-docs"
    return build(docs, tmp_path_factory.mktemp("sdk-docs-hash"), "--embedding-provider", "hash")


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


def run_node(node: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run one of the scripts of ``tests/compat/node``; LanceDB's warnings go to stderr."""
    env = {**os.environ, "LANCEDB_LOG": "warn", "RUST_BACKTRACE": "0"}
    return subprocess.run(
        [node, str(NODE_DIR / script), *args],
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        env=env,
        check=False,
    )


def lance_complaints(stderr: str) -> list[str]:
    """LanceDB's warnings, errors and panics in a Node script's stderr."""
    return [line for line in stderr.splitlines() if any(w in line for w in (" WARN ", " ERROR ", "panicked"))]


def original_answers(node: str, db: Path, queries: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """The answers of LanceDB 0.26.2 to ``queries`` (see ``original_queries.mjs``) on the table in ``db``.

    Fails the test when the script fails (a panic ends it) or LanceDB complains on the way (an
    index it cannot read is skipped with a warning).
    """
    work.mkdir(parents=True, exist_ok=True)
    plan = work / "plan.json"
    plan.write_text(json.dumps({"db": str(db), "table": "chunks", "queries": queries}), encoding="utf-8")
    result = run_node(node, "original_queries.mjs", str(plan))
    if result.returncode != 0:
        pytest.fail(
            f"LanceDB {LANCEDB_NODE_VERSION} failed on {db} ({result.returncode}):\n{result.stderr[-4000:]}"
        )
    complaints = lance_complaints(result.stderr)
    assert not complaints, f"LanceDB {LANCEDB_NODE_VERSION} complained about {db}:\n" + "\n".join(complaints)
    answers = json.loads(result.stdout)
    assert answers["lancedb"] == LANCEDB_NODE_VERSION
    return answers
